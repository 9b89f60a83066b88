#!/usr/bin/env bash
# Dev-only: regenerates engine/kyaml/src/openapi_v1_21_2.json from kyaml's
# embedded schemas (kyaml/openapi/kubernetesapi/v1_21_2/swagger.go and
# kyaml/openapi/kustomizationapi/swagger.go; the same v1.21.2 swagger ships
# with kyaml v0.15.0, the version under kpt 1.0.0-beta.56).
#   tools/kyaml-openapi/build.sh [path/to/kyaml]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
kyaml=${1:-/work/reference/sigs.k8s.io/kustomize/kyaml}
work=$(mktemp -d)
python3 "$here/extract.py" "$kyaml/openapi/kubernetesapi/v1_21_2/swagger.go" "$work/swagger.pb"
python3 "$here/extract.py" "$kyaml/openapi/kustomizationapi/swagger.go" "$work/kust.json"
(cd "$here" && python3 gen.py "$here/../../engine/kyaml/src/openapi_v1_21_2.json" "$work/swagger.pb" "$work/kust.json")
echo "wrote engine/kyaml/src/openapi_v1_21_2.json"
