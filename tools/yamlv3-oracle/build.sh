#!/usr/bin/env bash
# Dev-only: builds `yamlv3-oracle`, go-yaml v3 (Debian's golang-gopkg-yaml.v3-dev)
# with kyaml's compact-sequence patch, which dumps tokens, events and node
# trees and round-trips YAML the way kyaml's encoder does. Used to check the
# port in engine/yaml/src line by line; kpt itself stays the test oracle.
#   apt-get install -y golang-go golang-gopkg-yaml.v3-dev && tools/yamlv3-oracle/build.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
mkdir -p "$work/goyaml" "$work/cmd/oracle"
cp /usr/share/gocode/src/gopkg.in/yaml.v3/*.go "$work/goyaml/"
rm -f "$work"/goyaml/*_test.go
cp "$here/oracle_dump.go.txt" "$work/goyaml/oracle_dump.go"
cp "$here/main.go.txt" "$work/cmd/oracle/main.go"
printf 'module oracle\ngo 1.19\n' >"$work/go.mod"
python3 "$here/patch_compact.py" "$work/goyaml"
(cd "$work" && go build -o "${1:-/usr/local/bin/yamlv3-oracle}" ./cmd/oracle)
echo "built ${1:-/usr/local/bin/yamlv3-oracle}"
