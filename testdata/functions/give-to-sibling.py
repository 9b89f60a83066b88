#!/usr/bin/env python3
# give-to-sibling.py NAME SIBLING: moves the resource NAME to the sibling
# package SIBLING by rewriting its package-path annotation (the running
# package's path with its last element replaced). Breadth-first, porch then
# hands the resource to that package: an output that leaves the running
# package's subtree. Other items are passed through as text.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

name, sibling = sys.argv[1], sys.argv[2]
KEY = "internal.config.kubernetes.io/package-path"
head, items, tail = _krm.split(_krm.read())
out = []
for chunk in items:
    if _krm.meta(chunk, "name") == name:
        own = _krm.item_value(chunk)["metadata"]["annotations"][KEY]
        chunk = _krm.set_annotation(chunk, KEY, os.path.join(os.path.dirname(own), sibling))
    out.append(chunk)
_krm.write(_krm.join(head, out, tail))
