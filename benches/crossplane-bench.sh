#!/usr/bin/env bash
# The crossplane render bench (docs/crossplane.md): 50 XRs through a
# two-step pipeline of one Development-runtime function written with the
# Python SDK (testdata/crossplane/functions/sdk_function.py), each call
# taking 20 ms (as a function's own work would; sleepMs), best of 3,
#   cold, one XR at a time (--jobs 1, no cache),
#   cold, at once (default --jobs, no cache),
#   cold into an empty cache (--pinned-development),
#   after one XR is edited (the cache replays the other 49).
# Usage: benches/crossplane-bench.sh [PYTHON]   (PYTHON has the SDK)
set -euo pipefail
cd "$(dirname "$0")/.."
python="${1:-${KRMGRAPH_CROSSPLANE_PYTHON:-python3}}"
bin=target/release/krmgraph
[ -x "$bin" ] || cargo build --release -p krmgraph --quiet
work="$(mktemp -d)"
port_file="$work/port"
"$python" testdata/crossplane/functions/sdk_function.py > "$port_file" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do [ -s "$port_file" ] && break; sleep 0.1; done
port="$(head -1 "$port_file")"
sed "s/TARGET_SDK/127.0.0.1:$port/" testdata/crossplane/functions.yaml > "$work/functions.yaml"
mkdir "$work/xrs"
for i in $(seq -w 1 50); do
  printf 'apiVersion: example.crossplane.io/v1\nkind: XBucket\nmetadata:\n  name: bucket-%s\nspec:\n  size: 1\n' "$i" > "$work/xrs/xr-$i.yaml"
done
comp="$work/composition.yaml"
sed 's/^      name: \(bucket\|status\)$/      name: \1\n      sleepMs: 20/' \
  testdata/crossplane/cache/composition.yaml > "$comp"
once() { # args...: seconds
  local start end
  start=$(date +%s.%N)
  "$bin" crossplane render "$work/xrs" "$comp" "$work/functions.yaml" "$@" > "$work/out.yaml"
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
run() { # label, args...: best of 3
  local label="$1"; shift
  local best=""
  for _ in 1 2 3; do
    t=$(once "$@")
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  printf '%-40s %6.3f s  (%s documents)\n' "$label" "$best" "$(grep -c '^---$' "$work/out.yaml")"
}
# One warm-up so the server's imports are loaded.
run "warm-up (discarded)" --no-cache > /dev/null
run "cold, --jobs 1" --no-cache --jobs 1
run "cold, default --jobs" --no-cache
printf '%-40s %6.3f s\n' "cold, empty cache (pinned)" \
  "$(once --pinned-development --cache-dir "$work/cache")"
n=2
edit() { sed -i "s/size: .*/size: $n/" "$work/xrs/xr-07.yaml"; n=$((n + 1)); }
best=""
for _ in 1 2 3; do
  edit
  t=$(once --pinned-development --cache-dir "$work/cache")
  if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
done
printf '%-40s %6.3f s\n' "one XR edited (pinned, cached)" "$best"
run "nothing edited (pinned, cached)" --pinned-development --cache-dir "$work/cache"
