#!/usr/bin/env python3
# stderr-results.py [--legacy] [LINES]: passes the items through unchanged,
# writes LINES (default 6) lines to stderr and returns `results:` using
# every field (severity error/warning/info/none, resourceRef, field, file
# with and without index, tags, a multi-line message). Exits 0: results
# never fail a function. --legacy writes the old format kpt still accepts:
# `results: {items: [...]}`, resourceRef.metadata.{name,namespace} and
# field.suggestedValue.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

args = sys.argv[1:]
legacy = bool(args) and args[0] == "--legacy"
if legacy:
    args = args[1:]
n = int(args[0]) if args else 6
head, items, tail = _krm.split(_krm.read())
for i in range(n):
    sys.stderr.write("stderr line %d of %d: \"quoted\" \\ tab\there\n" % (i + 1, n))
first = _krm.item_value(items[0]) if items else {}
m = first.get("metadata") or {} if isinstance(first, dict) else {}
ann = m.get("annotations") or {}
ref = {"apiVersion": first.get("apiVersion", ""), "kind": first.get("kind", ""), "name": m.get("name", "")}
if m.get("namespace"):
    ref["namespace"] = m["namespace"]
path = ann.get("internal.config.kubernetes.io/path", "")
results = [
    {"message": "error with everything", "severity": "error", "resourceRef": dict(ref),
     "field": {"path": "metadata.name", "currentValue": ref["name"], "proposedValue": "x"},
     "file": {"path": path, "index": 1}, "tags": {"t1": "v1", "a": "b"}},
    {"message": "a warning", "severity": "warning", "file": {"path": path}},
    {"message": "info on a field", "severity": "info", "field": {"path": "spec.x"}},
    {"message": "no severity\nsecond line", "resourceRef": dict(ref)},
    {"message": "fifth result", "severity": "info"},
]
out = {"results": results}
if legacy:
    for r in results:
        ref = r.get("resourceRef")
        if ref:
            md = {"name": ref.pop("name")}
            if "namespace" in ref:
                md["namespace"] = ref.pop("namespace")
            ref["metadata"] = md
        f = r.get("field")
        if f and "proposedValue" in f:
            f["suggestedValue"] = f.pop("proposedValue")
    out = {"results": {"name": "legacy", "items": results}}
text = _krm.join(head, items, tail)
if not text.endswith("\n"):
    text += "\n"
_krm.write(text + _krm.dump(out, aliases=False, sort_keys=False))
