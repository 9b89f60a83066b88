# Sourced by benches/cache-bench.sh and benches/watch-bench.sh: the
# pipeline every package of the generated monorepo runs, as gen-monorepo
# --fn arguments in the array `fns`. With `builtins` set: set-namespace +
# set-labels built in (kustomize-era); otherwise the identity `exec: cat`.
if [ -n "${builtins:-}" ]; then
  fns=(--fn $'- image: gcr.io/kpt-fn/set-namespace:v0.1.3\n      configMap:\n        namespace: prod'
       --fn $'- image: gcr.io/kpt-fn/set-labels:v0.1.4\n      configMap:\n        tier: backend')
else
  fns=(--fn '- exec: cat')
fi
