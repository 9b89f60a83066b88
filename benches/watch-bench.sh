#!/usr/bin/env bash
# `krmgraph watch` on a generated monorepo: a cold `krmgraph render`
# (empty cache), then one watch process and six edits of one value in the
# deepest package's first file, one at a time. Prints each re-render's time
# as watch reports it (from the end of the debounce to the tree written),
# and against the cold render: the first edit, and the median of the other
# five (the steady state, as benches/cache-bench.sh's "one edit").
#
# Usage: benches/watch-bench.sh [--builtins] [--dir DIR] [fanout depth resources]
# (defaults as benches/cache-bench.sh: 4 4 20, `exec: cat`, work directory
# under $TMPDIR or /tmp; `--dir /dev/shm` for tmpfs).
set -euo pipefail
cd "$(dirname "$0")/.."
. benches/tree-args.sh "$@"
cargo build --release -q -p krmgraph -p krmgraph-benches
work=$(mktemp -d "$dir/watch-bench.XXXXXX")
echo "work directory: $work ($(df --output=fstype "$work" | tail -1))"
watch_pid=
trap '[ -n "$watch_pid" ] && kill "$watch_pid" 2>/dev/null; rm -rf "$work"' EXIT
cp target/release/krmgraph "$work/krmgraph-bin"
krmgraph=$work/krmgraph-bin
export KRMGRAPH_CACHE_DIR="$work/cache"
. benches/monorepo-fns.sh
target/release/gen-monorepo "$work/tree" --fanout "$fanout" --depth "$depth" --resources "$resources" "${fns[@]}"

start=$(date +%s%N)
"$krmgraph" render "$work/tree" --allow-exec >/dev/null 2>&1
cold_ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "cold render: $cold_ms ms"

"$krmgraph" watch "$work/tree" --allow-exec 2>"$work/watch.err" >/dev/null &
watch_pid=$!
renders() { grep -c '^krmgraph watch: rendered' "$work/watch.err" || true; }
wait_for_renders() { # n
  local deadline=$(( $(date +%s) + 120 ))
  while [ "$(renders)" -lt "$1" ]; do
    if grep -q '^krmgraph watch: the render failed' "$work/watch.err" || [ "$(date +%s)" -gt "$deadline" ]; then
      echo "watch did not render:"; tail -20 "$work/watch.err"; exit 1
    fi
    sleep 0.02
  done
}
wait_for_renders 1
leaf=$(find "$work/tree" -name Kptfile -printf '%d %h\n' | sort -n | tail -1 | cut -d' ' -f2)
file=$(find "$leaf" -maxdepth 1 -name '*.yaml' | sort | head -1)
n=1
for replicas in 7 8 9 10 11 12; do
  sed -i "0,/replicas: [0-9]*/s//replicas: $replicas/" "$file"
  n=$((n + 1))
  wait_for_renders "$n"
done
# "rendered in 493.35ms" / "rendered in 1.36s" → milliseconds.
grep '^krmgraph watch: rendered' "$work/watch.err" | tail -n +2 |
  sed -E 's/.*rendered in ([0-9.]+)(ms|s|µs).*/\1 \2/' |
  awk '{ print ($2 == "s") ? $1 * 1000 : ($2 == "µs") ? $1 / 1000 : $1 }' >"$work/edits.ms"
echo "watch re-renders (ms): $(tr '\n' ' ' <"$work/edits.ms")"
# The first edit follows the cold render, which rewrote every file of the
# generated tree, so nothing it reads matches a record yet; the other five
# are the steady state.
first=$(head -1 "$work/edits.ms")
median=$(tail -n +2 "$work/edits.ms" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
printf 'first edit %.0f ms = %.0f%% of the cold render; steady state (median of 5) %.0f ms = %.0f%%\n' \
  "$first" "$(echo "100*$first/$cold_ms" | bc -l)" "$median" "$(echo "100*$median/$cold_ms" | bc -l)"
