# Sourced, with the script's arguments, by benches/compare-kpt.sh and
# benches/watch-bench.sh: `[--builtins] [--dir DIR] [fanout depth resources]`
# into `builtins` (set by --builtins), `dir` (default $TMPDIR or /tmp) and
# `fanout`, `depth`, `resources` (default 4 4 20: 341 packages, 6,820
# resources).
builtins= dir=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
  case "$1" in
    --builtins) builtins=1; shift ;;
    --dir) dir=$2; shift 2 ;;
    *) break ;;
  esac
done
fanout=${1:-4} depth=${2:-4} resources=${3:-20}
