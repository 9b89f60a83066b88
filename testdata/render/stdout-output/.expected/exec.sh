set -eo pipefail
kpt fn render --allow-exec -o stdout > rendered.out
kpt fn render --allow-exec -o unwrap > unwrapped.out
