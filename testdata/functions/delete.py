#!/usr/bin/env python3
# delete.py NAME...: deletes every resource whose metadata.name is one of
# NAME (kpt then prunes files left without resources). Other items are
# passed through as text.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

names = set(sys.argv[1:])
head, items, tail = _krm.split(_krm.read())
items = [c for c in items if _krm.meta(c, "name") not in names]
_krm.write(_krm.join(head, items, tail))
