#!/usr/bin/env bash
# Container functions: the per-container cost of `kpt fn render` (which
# shells out to `docker run`) and of `krmgraph render` (the Engine API), on
# the same tree of N packages that each run one container function (an
# identity function in a FROM-scratch image built here, pull policy never),
# and the speed-up from running containers in parallel (`--jobs`).
#
# Usage: benches/containers.sh [packages] [resources] [runs]
# (default 16 10 3: a root and 15 subpackages, 10 resources each, best of
# 3 runs per line). Needs kpt and a Docker engine.
set -euo pipefail
cd "$(dirname "$0")/.."
packages=${1:-16} resources=${2:-10} runs=${3:-3}
cargo build --release -q -p krmgraph -p krmgraph-benches
RUSTFLAGS='-C target-feature=+crt-static' cargo build --release -q --locked \
  --manifest-path testdata/functions/krm-test-fn/Cargo.toml --target-dir target/krm-test-fn
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# A copy, so that a rebuild during the run cannot pull the binary away.
cp target/release/krmgraph "$work/krmgraph-bin"

# The image: the test function's `echo` mode, tagged by its content.
mkdir -p "$work/rootfs/etc"
cp target/krm-test-fn/release/krm-test-fn "$work/rootfs/fn"
printf 'nobody:x:65534:65534:nobody:/:/fn\n' >"$work/rootfs/etc/passwd"
image=krmgraph-test/fn:bench-echo-$(sha256sum "$work/rootfs/fn" | cut -c1-16)
docker image inspect "$image" >/dev/null 2>&1 ||
  tar --owner=0 --group=0 -C "$work/rootfs" -c . |
  docker import --change 'ENTRYPOINT ["/fn","echo"]' - "$image" >/dev/null

target/release/gen-monorepo "$work/src" --fanout $((packages - 1)) --depth 1 \
  --resources "$resources" --fn "- image: $image"

# best of $runs wall-clock seconds of a render of a fresh copy
measure() { # label, tool...
  local label=$1 best= secs; shift
  for _ in $(seq "$runs"); do
    rm -rf "$work/$label" && cp -r "$work/src" "$work/$label"
    /usr/bin/time -f %e -o "$work/time" "$@" "$work/$label" >/dev/null 2>"$work/err" || {
      echo "$label failed:"; tail -5 "$work/err"; exit 1; }
    secs=$(cat "$work/time")
    if [ -z "$best" ] || [ "$(echo "$secs < $best" | bc)" = 1 ]; then best=$secs; fi
  done
  printf '%-14s %7.2f s  %6.0f ms/container\n' "$label" "$best" "$(echo "1000*$best/$packages" | bc -l)"
  echo "$best" >"$work/$label.best"
}
echo "$packages packages, one container function each ($image), best of $runs:"
measure kpt kpt fn render --image-pull-policy never
for jobs in 1 2 4 8; do
  measure "krmgraph-j$jobs" "$work/krmgraph-bin" render --no-cache --image-pull-policy never --jobs "$jobs"
done
diff -r "$work/kpt" "$work/krmgraph-j1" >/dev/null && diff -r "$work/kpt" "$work/krmgraph-j8" >/dev/null &&
  echo "outputs: identical" || { echo "outputs DIFFER"; exit 1; }
kpt_s=$(cat "$work/kpt.best")
for jobs in 1 2 4 8; do
  s=$(cat "$work/krmgraph-j$jobs.best")
  printf 'krmgraph -j%s: %.1fx kpt, %.1fx krmgraph -j1\n' "$jobs" \
    "$(echo "$kpt_s/$s" | bc -l)" "$(echo "$(cat "$work/krmgraph-j1.best")/$s" | bc -l)"
done
