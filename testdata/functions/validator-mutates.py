#!/usr/bin/env python3
# validator-mutates.py: meant to run as a validator; changes every resource
# (adds metadata.labels.mutated-by-validator and a new top-level key) and
# exits 0. kpt discards a validator's output, so nothing changes.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

rl = _krm.load(_krm.read())
for item in rl.get("items") or []:
    md = item.setdefault("metadata", {})
    labels = md.get("labels")
    if not isinstance(labels, dict):
        labels = md["labels"] = {}
    labels["mutated-by-validator"] = "yes"
    item["validatorWasHere"] = True
_krm.write(_krm.dump(rl, sort_keys=False))
