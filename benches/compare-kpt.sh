#!/usr/bin/env bash
# Renders the same generated monorepo with `kpt fn render` and with
# `krmgraph render`, using the same `exec:` identity function, checks that
# both wrote identical trees, and prints wall time, peak memory and the
# ratio. Usage: benches/compare-kpt.sh [fanout depth resources]
# (default 4 4 20: 341 packages, 6,820 resources).
set -euo pipefail
cd "$(dirname "$0")/.."
fanout=${1:-4} depth=${2:-4} resources=${3:-20}
cargo build --release -q -p krmgraph -p krmgraph-benches
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
target/release/gen-monorepo "$work/src" --fanout "$fanout" --depth "$depth" --resources "$resources" --fn '- exec: cat'
cp -r "$work/src" "$work/kpt"
cp -r "$work/src" "$work/krmgraph"

measure() { # label, command...
  local label=$1; shift
  /usr/bin/time -f "%e %M" -o "$work/$label.time" "$@" >/dev/null 2>"$work/$label.err" || {
    echo "$label failed:"; tail -5 "$work/$label.err"; exit 1; }
  read -r secs kb <"$work/$label.time"
  printf '%-9s %8.2f s  %8.1f MB peak\n' "$label" "$secs" "$(echo "$kb/1024" | bc -l)"
}
measure kpt kpt fn render "$work/kpt" --allow-exec
measure krmgraph target/release/krmgraph render "$work/krmgraph" --allow-exec
diff -r "$work/kpt" "$work/krmgraph" >/dev/null && echo "outputs: identical" || { echo "outputs DIFFER"; exit 1; }
read -r kpt_s kpt_kb <"$work/kpt.time"
read -r krm_s krm_kb <"$work/krmgraph.time"
printf 'speed-up: %.1fx   memory: %.0f%% of kpt\n' "$(echo "$kpt_s/$krm_s" | bc -l)" "$(echo "100*$krm_kb/$kpt_kb" | bc -l)"
