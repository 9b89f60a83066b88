#!/usr/bin/env python3
# sort-keys.py: re-emits the ResourceList with PyYAML, every mapping's keys
# sorted and aliases expanded. kpt's SyncOrder puts the keys back in the
# input order.
# With an argument NEW, also adds the key `zz-NEW: added` and `aa-NEW: added`
# to every resource but Kptfiles (new keys: kpt appends them after the
# existing ones, in the function's order).
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

rl = _krm.load(_krm.read())
if len(sys.argv) > 1:
    for item in rl.get("items") or []:
        if item.get("kind") == "Kptfile":
            continue  # kpt rejects unknown Kptfile fields on the next render
        item["zz-" + sys.argv[1]] = "added"
        item["aa-" + sys.argv[1]] = "added"
_krm.write(_krm.dump(rl, aliases=False, sort_keys=True))
