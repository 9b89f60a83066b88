#!/usr/bin/env bash
# The shared remote cache (issue 31) on the generated monorepo (default
# 4 4 20: 341 packages, identity `exec: cat`), against loopback BuildGrid
# (grpc) and nginx (http), each started here and stopped by its pid:
#   cold        a render with an empty local cache, uploading to the remote
#   local no-op the same tree rendered again with that local cache
#   local edit  one leaf edited, rendered with that local cache
#   (a) fresh   a fresh checkout, empty local cache, remote warm: unchanged
#   (b) edit    a fresh checkout, empty local cache, one leaf edited
#   (b0) floor  the same edit in another fresh checkout, no remote, with a
#               copy of the first checkout's local cache (every record
#               (b) fetched is local): what (b) costs without the remote
#   (c) bytes   what the remote holds after the cold render (nginx: its
#               files; BuildGrid: the bytes uploaded), against the tree
# Usage: benches/remote-cache.sh [fanout depth resources]
set -euo pipefail
cd "$(dirname "$0")/.."
fanout=${1:-4} depth=${2:-4} resources=${3:-20}
cargo build --release -q -p krmgraph -p krmgraph-benches
bin=${CARGO_TARGET_DIR:-target}/release
work=$(mktemp -d "${TMPDIR:-/tmp}/remote-bench.XXXXXX")
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"' EXIT
cp $bin/krmgraph "$work/krmgraph-bin"
k=$work/krmgraph-bin
builtins=
. benches/monorepo-fns.sh
$bin/gen-monorepo "$work/src/tree" --fanout "$fanout" --depth "$depth" --resources "$resources" "${fns[@]}" >/dev/null
tree_bytes=$(du -sb "$work/src/tree" | cut -f1)
echo "load: $(uptime)"
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }

t() { # label, dir, args...: prints seconds, keeps the summary line
  local label=$1 dir=$2; shift 2
  local s=$(date +%s%N)
  (cd "$dir" && KRMGRAPH_CACHE_DIR="$dir/cache" KRMGRAPH_NO_CACHE=0 "$k" render tree --allow-exec --explain "$@" >/dev/null 2>"$work/$label.err") \
    || { echo "$label failed"; tail -5 "$work/$label.err"; exit 1; }
  local secs=$(echo "($(date +%s%N)-$s)/1000000000" | bc -l)
  printf '%-14s %8.3f s  %s\n' "$label" "$secs" "$(grep -o 'remote: .*' "$work/$label.err" | tail -1)" >&2
  echo "$secs"
}
edit() { # a leaf's first Deployment gets $2 replicas
  local leaf=$(find "$1/tree" -name Kptfile -printf '%d %h\n' | sort -n | tail -1 | cut -d' ' -f2)
  local file=$(find "$leaf" -maxdepth 1 -name '*.yaml' | sort | head -1)
  sed -i "0,/replicas: [0-9]*/s//replicas: $2/" "$file"
}
checkout() { mkdir -p "$work/$1"; cp -r "$work/src/tree" "$work/$1/tree"; }

run() { # name url [data dir]
  local name=$1 url=$2 data=${3:-}
  echo "== $name ($url)"
  checkout $name-a
  cold=$(t cold "$work/$name-a" --remote-cache "$url")
  if [ -n "$data" ]; then
    held=$(du -sb "$data" | cut -f1)
  else
    held=$(grep -o 'remote: .*' "$work/cold.err" | sed -E 's/.*, ([0-9.]+ [KMG]?i?B) up.*/\1/')
  fi
  noop=$(t local-no-op "$work/$name-a" --remote-cache "$url")
  edit "$work/$name-a" 7
  t local-edit-1 "$work/$name-a" --remote-cache "$url" >/dev/null
  edit "$work/$name-a" 8
  ledit=$(t local-edit "$work/$name-a" --remote-cache "$url")
  checkout $name-b
  fresh=$(t "(a) fresh" "$work/$name-b" --remote-cache "$url")
  checkout $name-c
  edit "$work/$name-c" 7
  fedit=$(t "(b) edit" "$work/$name-c" --remote-cache "$url")
  checkout $name-d
  cp -r "$work/$name-a/cache" "$work/$name-d/cache"
  edit "$work/$name-d" 7
  floor=$(t "(b0) floor" "$work/$name-d")
  diff -r "$work/$name-a/tree" "$work/$name-b/tree" >/dev/null 2>&1 || true
  printf '(a) fresh checkout, unchanged: %.1fx faster than cold, %.1fx the local no-op\n' \
    "$(echo "$cold/$fresh" | bc -l)" "$(echo "$fresh/$noop" | bc -l)"
  printf '(b) fresh checkout, one edit: %.2fx the local one-edit time; %.2fx the same edit in a fresh checkout with the records local (b0: %.2fx the local edit)\n' \
    "$(echo "$fedit/$ledit" | bc -l)" "$(echo "$fedit/$floor" | bc -l)" "$(echo "$floor/$ledit" | bc -l)"
  if [ -n "$data" ]; then
    echo "(c) remote holds $held bytes after the cold render: $(echo "$held/$tree_bytes" | bc -l | xargs printf '%.2f')x the tree ($tree_bytes bytes)"
  else
    echo "(c) the cold render sent $held; the tree is $tree_bytes bytes"
  fi
}

if command -v bgd >/dev/null; then
  p=$(port)
  cat > "$work/bgd.yml" <<YML
server:
  - !channel
    address: "127.0.0.1:$p"
    insecure-mode: true
storages:
  - !lru-storage &cas
    size: 2048M
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 1000000
    allow-updates: true
    cache-failed-actions: false
instances:
  - name: ''
    services:
      - !action-cache
        cache: *ac
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
YML
  bgd server start "$work/bgd.yml" >"$work/bgd.log" 2>&1 & pids+=($!)
  until (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; do sleep 0.2; done
  run grpc "grpc://127.0.0.1:$p"
fi
if command -v nginx >/dev/null; then
  p=$(port); n=$work/nginx; mkdir -p $n/data $n/tmp $n/logs
  cat > $n/nginx.conf <<NGX
daemon off; master_process off; worker_processes 1; pid nginx.pid;
error_log logs/error.log; events { worker_connections 256; }
http { access_log off; client_body_temp_path tmp;
  server { listen 127.0.0.1:$p; location /cache/ { root data; dav_methods PUT; create_full_put_path on; client_max_body_size 1G; } } }
NGX
  nginx -p "$n/" -c nginx.conf -e logs/error.log & pids+=($!)
  until (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; do sleep 0.1; done
  run http "http://127.0.0.1:$p/cache" "$n/data"
fi
