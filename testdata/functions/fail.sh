#!/bin/sh
# fail.sh CODE [LINES]: writes LINES (default 3) lines to stderr and half a
# ResourceList to stdout, then exits with CODE (kpt reports the failure,
# keeps nothing of the output and exits 1).
code=${1:-1}
n=${2:-3}
cat >/dev/null
i=1
while [ "$i" -le "$n" ]; do
  echo "fail.sh: problem $i of $n" >&2
  i=$((i + 1))
done
printf 'apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n'
exit "$code"
