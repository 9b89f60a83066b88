#!/usr/bin/env bash
# The build-graph benchmarks (issue 5) on one generated monorepo, kpt and
# krmgraph in the same run:
#   cold      kpt fn render vs krmgraph render with an empty cache
#   no-op     krmgraph render of the tree it just rendered, vs the time to
#             read and blake3-hash every file of the tree (hash-tree); and
#             render --check of the same tree, vs the no-op
#   first edit  krmgraph render after one leaf resource changed, right
#             after the cold render: that render rewrote every file, so no
#             subtree or step input matches a record yet
#   one edit  the same again (another value in the same leaf): the steady
#             state, where the tree was left by a render the cache saw;
#             best of three
# with wall time and peak memory (/usr/bin/time). RUNS=N (default 1)
# renders cold N times, each on a fresh copy with an empty cache, and the
# median counts (the issue-35 runs use RUNS=3: one cold render of a second
# moves by 10-20 % from the next). KRMGRAPH_BIN=PATH measures that binary
# (an earlier build, for a before/after pair) instead of this tree's.
#
# Usage: benches/cache-bench.sh [--builtins] [--no-kpt] [--foot-comment] [--dir DIR] [fanout depth resources]
# (default 4 4 20: 341 packages, 6,820 resources, every Kptfile running the
# identity `exec: cat`; --builtins: set-namespace + set-labels built in,
# which kpt cannot run here, so it implies --no-kpt; --dir: where the
# work directory goes, default $TMPDIR or /tmp — `--dir /dev/shm` runs both
# tools on tmpfs, out of reach of the disk's state, see docs/performance.md;
# --foot-comment: one commented-out line after the last entry of a block,
# in one resource of the deepest package, as real configs have them).
set -euo pipefail
cd "$(dirname "$0")/.."
builtins= kpt=1 foot= dir=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
  case "$1" in
    --builtins) builtins=1; kpt=; shift ;;
    --no-kpt) kpt=; shift ;;
    --foot-comment) foot=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    *) break ;;
  esac
done
fanout=${1:-4} depth=${2:-4} resources=${3:-20}
cargo build --release -q -p krmgraph -p krmgraph-benches
bin=${CARGO_TARGET_DIR:-target}/release
work=$(mktemp -d "$dir/cache-bench.XXXXXX")
echo "work directory: $work ($(df --output=fstype "$work" | tail -1))"
trap 'rm -rf "$work"' EXIT
# A copy, so that a rebuild during the run cannot pull the binary away.
cp "${KRMGRAPH_BIN:-$bin/krmgraph}" "$work/krmgraph-bin"
krmgraph=$work/krmgraph-bin
export KRMGRAPH_CACHE_DIR="$work/cache"
. benches/monorepo-fns.sh
$bin/gen-monorepo "$work/src" --fanout "$fanout" --depth "$depth" --resources "$resources" "${fns[@]}"
if [ -n "$foot" ]; then
  deepest=$(find "$work/src" -name Kptfile -printf '%d %h\n' | sort -n | tail -1 | cut -d' ' -f2)
  commented=$(find "$deepest" -maxdepth 1 -name '*.yaml' | sort | sed -n 2p)
  sed -i '0,/^\( *\)protocol: TCP$/s//&\n\1# hostPort: 80/' "$commented"
  grep -c '# hostPort: 80' "$commented" >/dev/null || { echo "--foot-comment: no place for the comment"; exit 1; }
fi

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M %U %S" -o "$work/$label.time" "$@" >/dev/null 2>"$work/$label.err" || {
    echo "$label failed:"; tail -5 "$work/$label.err"; exit 1; }
  read -r secs kb user sys <"$work/$label.time"
  printf '%-20s %8.2f s  %8.2f s CPU  %8.1f MB peak\n' "$label" "$secs" "$(echo "$user+$sys" | bc -l)" "$(echo "$kb/1024" | bc -l)"
}
secs() { cut -d' ' -f1 "$work/$1.time"; }
kb() { cut -d' ' -f2 "$work/$1.time"; }
cpu() { echo "$(cut -d' ' -f3 "$work/$1.time")+$(cut -d' ' -f4 "$work/$1.time")" | bc -l; }

if [ -n "$kpt" ]; then
  cp -r "$work/src" "$work/kpt"
  measure kpt-cold kpt fn render "$work/kpt" --allow-exec
fi
runs=${RUNS:-1}
for i in $(seq 1 "$runs"); do
  rm -rf "$work/krmgraph" "$work/cache"
  cp -r "$work/src" "$work/krmgraph"
  measure krmgraph-cold-$i "$krmgraph" render "$work/krmgraph" --allow-exec
done
median=$(for i in $(seq 1 "$runs"); do echo "$(secs krmgraph-cold-$i) $i"; done | sort -n | sed -n "$(( (runs + 1) / 2 ))p" | cut -d' ' -f2)
cp "$work/krmgraph-cold-$median.time" "$work/krmgraph-cold.time"
if [ "$runs" -gt 1 ]; then echo "krmgraph cold: median of $runs is run $median: $(secs krmgraph-cold) s"; fi
if [ -n "$kpt" ]; then
  diff -r "$work/kpt" "$work/krmgraph" >/dev/null && echo "outputs: identical" || { echo "outputs DIFFER"; exit 1; }
fi
measure krmgraph-no-op "$krmgraph" render "$work/krmgraph" --allow-exec
# /usr/bin/time counts in hundredths of a second, as coarse as the no-op
# itself: ten more no-op renders, timed together in nanoseconds.
start=$(date +%s%N)
for _ in 1 2 3 4 5 6 7 8 9 10; do "$krmgraph" render "$work/krmgraph" --allow-exec >/dev/null 2>&1; done
noop_s=$(echo "($(date +%s%N)-$start)/10/1000000000" | bc -l)
# render --check of the same, rendered tree: must answer "nothing would
# change" (exit 0) within 2x of the no-op (issue 30).
start=$(date +%s%N)
for _ in 1 2 3 4 5 6 7 8 9 10; do
  "$krmgraph" render --check "$work/krmgraph" --allow-exec >/dev/null 2>&1 || { echo "render --check: not rendered?"; exit 1; }
done
check_s=$(echo "($(date +%s%N)-$start)/10/1000000000" | bc -l)
$bin/hash-tree "$work/krmgraph" | tee "$work/hash.txt"
# One leaf edit: the first Deployment of the deepest package gets 7
# replicas, then 8.
leaf=$(find "$work/krmgraph" -name Kptfile -printf '%d %h\n' | sort -n | tail -1 | cut -d' ' -f2)
file=$(find "$leaf" -maxdepth 1 -name '*.yaml' | sort | head -1)
sed -i '0,/replicas: [0-9]*/s//replicas: 7/' "$file"
measure krmgraph-first-edit "$krmgraph" render "$work/krmgraph" --allow-exec
# The steady state, three times (8, 9, 10 replicas); the best counts.
for n in 8 9 10; do
  sed -i "0,/replicas: [0-9]*/s//replicas: $n/" "$file"
  KRMGRAPH_CACHE_LOG="$work/one-edit.log" measure krmgraph-one-edit-$n "$krmgraph" render "$work/krmgraph" --allow-exec
done
best=$(for n in 8 9 10; do echo "$(secs krmgraph-one-edit-$n) $n"; done | sort -n | head -1 | cut -d' ' -f2)
cp "$work/krmgraph-one-edit-$best.time" "$work/krmgraph-one-edit.time"
best=$(secs krmgraph-one-edit)
echo "one edit: $(grep -c '^ran ' "$work/one-edit.log") step(s) run, $(grep -c '^replayed [^s]' "$work/one-edit.log") replayed, $(grep -c '^replayed subtree' "$work/one-edit.log") subtree(s) replayed whole; best of 3: $best s"

hash_s=$(sed -E 's/.* in ([0-9.]+) s.*/\1/' "$work/hash.txt")
printf 'no-op render %.4f s (mean of 10), read+hash %.4f s: %.1fx\n' "$noop_s" "$hash_s" "$(echo "$noop_s/$hash_s" | bc -l)"
printf 'render --check %.4f s (mean of 10): %.2fx the no-op\n' "$check_s" "$(echo "$check_s/$noop_s" | bc -l)"
printf 'first edit / cold: %.0f%%   one edit / cold: %.0f%% (CPU: %.0f%%)\n' \
  "$(echo "100*$(secs krmgraph-first-edit)/$(secs krmgraph-cold)" | bc -l)" \
  "$(echo "100*$(secs krmgraph-one-edit)/$(secs krmgraph-cold)" | bc -l)" \
  "$(echo "100*$(cpu krmgraph-one-edit)/$(cpu krmgraph-cold)" | bc -l)"
if [ -n "$kpt" ]; then
  printf 'cold speed-up vs kpt: %.1fx   peak memory: %.0f%% of kpt\n' \
    "$(echo "$(secs kpt-cold)/$(secs krmgraph-cold)" | bc -l)" "$(echo "100*$(kb krmgraph-cold)/$(kb kpt-cold)" | bc -l)"
fi
