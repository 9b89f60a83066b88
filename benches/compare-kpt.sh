#!/usr/bin/env bash
# Renders the same generated monorepo with `kpt fn render` and with
# `krmgraph render`, checks that both wrote identical trees, and prints wall
# time, peak memory and the ratio.
#
# Usage: benches/compare-kpt.sh [--builtins] [--dir DIR] [fanout depth resources]
# (default 4 4 20: 341 packages, 6,820 resources; --dir: where the work
# directory goes, default $TMPDIR or /tmp; `--dir /dev/shm` puts both trees
# on tmpfs, out of reach of the disk's state, see docs/performance.md).
#
# Default: every Kptfile runs the same `exec: cat` identity function in
# both tools. With --builtins: every Kptfile runs set-namespace and
# set-labels; krmgraph runs them built in (`image: ...`), kpt runs the same
# built-ins as processes (`exec: krmgraph fn run <image>`), which is the
# fastest way kpt can run them here (no registry, so no container). The
# kpt tree's Kptfiles are spelled back to `image:` before comparing.
#
# kpt renders once (it takes ~100x longer, so drift hardly moves it);
# krmgraph renders RUNS times (default 5), each on a fresh copy of the
# tree, and the ratio uses the median: on these machines one run of a
# second or two can be 20 % off the next.
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/tree-args.sh "$@"
namespace_image=${NAMESPACE_IMAGE:-gcr.io/kpt-fn/set-namespace:v0.1.3}
labels_image=${LABELS_IMAGE:-gcr.io/kpt-fn/set-labels:v0.1.4}
cargo build --release -q -p krmgraph -p krmgraph-benches
work=$(mktemp -d "$dir/compare-kpt.XXXXXX")
echo "work directory: $work ($(df --output=fstype "$work" | tail -1))"
trap 'rm -rf "$work"' EXIT
# A copy, so that a rebuild during the run cannot pull the binary away.
cp target/release/krmgraph "$work/krmgraph-bin"
krmgraph=$work/krmgraph-bin

gen() { # out, function items...
  local out=$1; shift
  local args=()
  for f in "$@"; do args+=(--fn "$f"); done
  target/release/gen-monorepo "$out" --fanout "$fanout" --depth "$depth" --resources "$resources" "${args[@]}"
}
# A function as each tool names it: $1 is "image: " or "exec: ... fn run ".
ns_item() { printf -- '- %s%s\n      configMap:\n        namespace: prod' "$1" "$namespace_image"; }
labels_item() { printf -- '- %s%s\n      configMap:\n        tier: backend\n        team: platform' "$1" "$labels_image"; }
if [ -n "$builtins" ]; then
  gen "$work/krmgraph" "$(ns_item "image: ")" "$(labels_item "image: ")" >/dev/null
  gen "$work/kpt" "$(ns_item "exec: $krmgraph fn run ")" "$(labels_item "exec: $krmgraph fn run ")"
else
  gen "$work/kpt" '- exec: cat'
  cp -r "$work/kpt" "$work/krmgraph"
fi

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/$label.time" "$@" >/dev/null 2>"$work/$label.err" || {
    echo "$label failed:"; tail -5 "$work/$label.err"; exit 1; }
  read -r secs kb <"$work/$label.time"
  printf '%-9s %8.2f s  %8.1f MB peak\n' "$label" "$secs" "$(echo "$kb/1024" | bc -l)"
}
runs=${RUNS:-5}
cp -r "$work/krmgraph" "$work/pristine"
measure kpt kpt fn render "$work/kpt" --allow-exec
for i in $(seq 1 "$runs"); do
  rm -rf "$work/krmgraph"
  cp -r "$work/pristine" "$work/krmgraph"
  # An empty cache each time: a cache the previous run left would replay.
  KRMGRAPH_CACHE_DIR="$work/cache-$i" measure "krmgraph-$i" "$krmgraph" render "$work/krmgraph" --allow-exec
done
# The median run's time and the largest peak.
sort -n "$work"/krmgraph-*.time | sed -n "$(( (runs + 1) / 2 ))p" | cut -d' ' -f1 >"$work/median"
echo "$(cat "$work/median") $(cut -d' ' -f2 "$work"/krmgraph-*.time | sort -n | tail -1)" >"$work/krmgraph.time"
printf 'krmgraph  %8.2f s median of %d\n' "$(cat "$work/median")" "$runs"
if [ -n "$builtins" ]; then
  find "$work/kpt" -name Kptfile -exec sed -i "s|exec: $krmgraph fn run |image: |" {} +
fi
diff -r "$work/kpt" "$work/krmgraph" >/dev/null && echo "outputs: identical" || { echo "outputs DIFFER"; diff -r "$work/kpt" "$work/krmgraph" | head -20; exit 1; }
read -r kpt_s kpt_kb <"$work/kpt.time"
read -r krm_s krm_kb <"$work/krmgraph.time"
printf 'speed-up: %.1fx   memory: %.0f%% of kpt\n' "$(echo "$kpt_s/$krm_s" | bc -l)" "$(echo "100*$krm_kb/$kpt_kb" | bc -l)"
