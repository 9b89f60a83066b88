#!/usr/bin/env python3
# trail.py NAME: appends NAME to the annotation example.com/trail of every
# resource, a comma list that records which pipelines saw the resource and
# in which order (the order tests of BFS and DFS rendering read it). A
# resource whose trail has NAME already is left alone, so renders stay
# idempotent. Re-serialises with PyYAML (kpt restores comments and order).
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

name = sys.argv[1]
rl = _krm.load(_krm.read())
for item in rl.get("items") or []:
    meta = item.setdefault("metadata", {})
    ann = meta.get("annotations") or {}
    trail = [t for t in ann.get("example.com/trail", "").split(",") if t]
    if name not in trail:
        ann["example.com/trail"] = ",".join(trail + [name])
    meta["annotations"] = ann
_krm.write(_krm.dump(rl))
