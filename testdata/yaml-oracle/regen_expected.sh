#!/usr/bin/env bash
# Dev-only: regenerates expected/NAME.out for every cases/NAME.yaml from the
# go-yaml oracle (tools/yamlv3-oracle). Each .out holds the oracle's tokens,
# events and dump output under "=== MODE" headers; engine/yaml/tests/it/oracle.rs
# compares the Rust port against these files (and against the live oracle
# when it is installed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
oracle=${YAMLV3_ORACLE:-/usr/local/bin/yamlv3-oracle}
mkdir -p "$here/expected"
for f in "$here"/cases/*.yaml; do
  name=$(basename "$f" .yaml)
  {
    for mode in tokens events dump; do
      echo "=== $mode"
      "$oracle" "$mode" <"$f" || true
    done
  } >"$here/expected/$name.out"
done
echo "regenerated $(ls "$here"/expected | wc -l) files"
