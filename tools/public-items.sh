#!/usr/bin/env bash
# Counts each crate's public API: the items reachable from its root as
# rustdoc's JSON output lists them (modules, functions and methods, types,
# traits, constants, statics, re-exports; impls, fields and variants not
# counted). rustdoc's JSON output is unstable: RUSTC_BOOTSTRAP=1 lets the
# stable toolchain produce it.
#   tools/public-items.sh krmgraph-yaml krmgraph-kyaml ...
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
for crate in "$@"; do
  RUSTC_BOOTSTRAP=1 cargo rustdoc --quiet -p "$crate" --lib -- \
    -Z unstable-options --output-format json 2>/dev/null
  python3 - "$target/doc/${crate//-/_}.json" "$crate" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
kinds = {"module", "function", "struct", "enum", "trait", "type_alias",
         "constant", "static", "use", "macro", "union", "trait_alias"}
n = sum(1 for item in doc["index"].values()
        if item["crate_id"] == 0 and next(iter(item["inner"])) in kinds)
print(f"{sys.argv[2]}\t{n}")
PY
done
