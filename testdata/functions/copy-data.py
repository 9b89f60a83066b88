#!/usr/bin/env python3
# copy-data.py FROM TO KEY...: copies data.KEY of the ConfigMap named FROM
# into the ConfigMap named TO (both must be in the input; otherwise the
# items pass unchanged). The porch nested-package test in this form: a
# parent pipeline writes into a child's ConfigMap, which the child's own
# pipeline then reads. Re-serialises with PyYAML.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

src, dst, keys = sys.argv[1], sys.argv[2], sys.argv[3:]
rl = _krm.load(_krm.read())
items = rl.get("items") or []
by_name = {i.get("metadata", {}).get("name"): i for i in items if i.get("kind") == "ConfigMap"}
if src in by_name and dst in by_name:
    data = by_name[dst].setdefault("data", {})
    for k in keys:
        if k in (by_name[src].get("data") or {}):
            data[k] = by_name[src]["data"][k]
_krm.write(_krm.dump(rl))
