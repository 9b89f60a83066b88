#!/bin/sh
# Echoes its input and says six lines on stderr (--truncate-output keeps four).
for i in 1 2 3 4 5 6; do echo "line $i" >&2; done
cat
