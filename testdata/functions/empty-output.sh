#!/bin/sh
# empty-output.sh [whitespace]: exits 0 and writes nothing at all on stdout
# (with `whitespace`: only blank lines and spaces).
cat >/dev/null
if [ "$1" = whitespace ]; then
  printf '\n  \n\n'
fi
