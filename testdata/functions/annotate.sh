#!/bin/sh
# annotate.sh: adds `test.krmgraph.dev/by: exec` to every item's
# annotations, as text (kyaml's layout: an item's annotations at four
# spaces). Self-contained, so a function catalog can serve it over HTTP.
exec sed 's/^    annotations:$/    annotations:\n      test.krmgraph.dev\/by: exec/'
