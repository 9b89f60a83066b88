#!/bin/sh
# as-list.sh: returns its input re-wrapped as a `kind: List` (kpt accepts a
# List as well as a ResourceList on a function's stdout).
exec sed 's/^kind: ResourceList$/kind: List/'
