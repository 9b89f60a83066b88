#!/bin/sh
# garbage.sh: a broken KRM function: exits 0 but writes text that is not
# YAML at all on stdout.
cat >/dev/null
printf 'this is: not: valid: yaml\n  - [\n{{{\n'
