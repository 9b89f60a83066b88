#!/usr/bin/env bash
# Validation throughput of the built-in validators (issue 34), the cache
# off, best of three renders each:
#   kubeval     the generated monorepo with every Kptfile running kubeval
#               (strict; ConfigMaps skipped, since the generated ones hold
#               lists and maps in `data`, which the schema refuses and
#               which would stop the render; the Kptfiles have no schema and
#               are ignored). A package's function sees its whole subtree,
#               so a render validates sum over packages of the subtree's
#               Deployments (15,930 for the default 341 packages: 1,593
#               subtree runs of 10 Deployments).
#   gatekeeper  one package holding all the tree's resources (6,820 by
#               default) and a policy: one template, one `warn` constraint
#               on Deployments (a violation for each).
# Throughput = resources / (render - the same tree running the built-in
# no-op). kubeval's image cannot be built here (no registry), so the
# comparison is with the render machinery alone.
#
# Usage: benches/validators-bench.sh [--dir DIR] [fanout depth resources]
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/tree-args.sh "$@"
cargo build --release -q -p krmgraph -p krmgraph-benches
bin=${CARGO_TARGET_DIR:-target}/release
work=$(mktemp -d "$dir/validators-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
kubeval=$'- image: gcr.io/kpt-fn/kubeval:v0.1.1\n      configMap:\n        strict: "true"\n        ignore_missing_schemas: "true"\n        skip_kinds: ConfigMap'
gatekeeper=$'- image: gcr.io/kpt-fn/gatekeeper:v0.1.3'
noop=$'- image: gcr.io/kpt-functions/no-op'

# The gatekeeper package's policy: every Deployment should have a `team`
# label (none has: one warning per Deployment).
policy() {
  cat >"$1/policy.yaml" <<'POLICY'
apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: k8srequiredlabels
spec:
  crd:
    spec:
      names:
        kind: K8sRequiredLabels
  targets:
  - target: admission.k8s.gatekeeper.sh
    rego: |-
      package k8srequiredlabels
      violation[{"msg": msg}] {
        not input.review.object.metadata.labels.team
        msg := "team label missing"
      }
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRequiredLabels
metadata:
  name: team
spec:
  enforcementAction: warn
  match:
    kinds:
    - apiGroups: ["apps"]
      kinds: ["Deployment"]
POLICY
}

best_of_three() { # tree -> seconds
  local best=
  for _ in 1 2 3; do
    rm -rf "$work/run" && cp -r "$1" "$work/run"
    local start end t
    start=$(date +%s.%N)
    if ! KRMGRAPH_NO_CACHE=1 "$bin/krmgraph" render "$work/run" >/dev/null 2>"$work/stderr"; then
      tail -20 "$work/stderr" >&2
      echo "the render of $1 failed" >&2
      exit 1
    fi
    end=$(date +%s.%N)
    t=$(echo "$end - $start" | bc)
    if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then best=$t; fi
  done
  echo "$best"
}

validated=0 packages=0
for ((level = 0, n = 1; level <= depth; level++, n *= fanout)); do
  subtree=0
  for ((l = level, m = 1; l <= depth; l++, m *= fanout)); do subtree=$((subtree + m)); done
  validated=$((validated + n * subtree * ((resources + 1) / 2)))
  packages=$((packages + n))
done
total=$((packages * resources))

for name in noop kubeval; do
  "$bin/gen-monorepo" "$work/$name" --fanout "$fanout" --depth "$depth" \
    --resources "$resources" --fn "${!name}" >/dev/null
done
for name in flat-noop gatekeeper; do
  fn=$noop; [ "$name" = gatekeeper ] && fn=$gatekeeper
  "$bin/gen-monorepo" "$work/$name" --depth 0 --resources "$total" --fn "$fn" >/dev/null
done
policy "$work/gatekeeper"
rate() { echo "$1 / ($2 - $3)" | bc; }
t_noop=$(best_of_three "$work/noop")
t_kubeval=$(best_of_three "$work/kubeval")
echo "tree: no-op ${t_noop} s, kubeval ${t_kubeval} s: $validated Deployments validated, $(rate "$validated" "$t_kubeval" "$t_noop") resources/s"
t_flat=$(best_of_three "$work/flat-noop")
t_gk=$(best_of_three "$work/gatekeeper")
echo "one package: no-op ${t_flat} s, gatekeeper ${t_gk} s: $total resources reviewed, $(rate "$total" "$t_gk" "$t_flat") resources/s"
