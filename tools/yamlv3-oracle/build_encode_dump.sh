#!/usr/bin/env bash
# Dev-only: builds `yamlv3-encode-dump`, which encodes Node trees given in the
# `yamlv3-oracle dump` format with go-yaml v3 + kyaml's compact-seq patch
# (`yamlv3-encode-dump [compact|wide] [indent] < trees`). The emitter's in-memory tests
# (engine/yaml/tests/it/emit_memory.rs) check their expected output with it.
#   apt-get install -y golang-go golang-gopkg-yaml.v3-dev && tools/yamlv3-oracle/build_encode_dump.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$work/goyaml" "$work/cmd/encodedump"
cp /usr/share/gocode/src/gopkg.in/yaml.v3/*.go "$work/goyaml/"
rm -f "$work"/goyaml/*_test.go
cp "$here/encode_dump.go.txt" "$work/cmd/encodedump/main.go"
printf 'module oracle\ngo 1.19\n' >"$work/go.mod"
python3 "$here/patch_compact.py" "$work/goyaml"
(cd "$work" && go build -o "${1:-/usr/local/bin/yamlv3-encode-dump}" ./cmd/encodedump)
echo "built ${1:-/usr/local/bin/yamlv3-encode-dump}"
