#!/usr/bin/env python3
# echo.py input|config NAME: passes the items through and appends a
# ConfigMap NAME whose data.text is, verbatim, the ResourceList this
# function received (`input`) or only its functionConfig section
# (`config`), as a literal block scalar. The exact bytes kpt sends to a
# function (annotations, ids, quoting, flow styles) thus end up in a file
# that the differential tests compare. kpt's working directory (absolute
# package paths start with it) is replaced by <CWD>, and the data of the
# ConfigMap kpt synthesizes from a `configMap:` is sorted by key: kpt
# writes it in Go map order, which changes from run to run.
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

what, name = sys.argv[1], sys.argv[2]


def sort_function_input(tail):
    """`data: {b: x, a: y}` of the function-input ConfigMap, sorted."""
    if "name: function-input" not in tail:
        return tail
    root = _krm.compose(tail)
    fc = next(v for k, v in root.value if k.value == "functionConfig")
    data = next((v for k, v in fc.value if k.value == "data"), None)
    if data is None or not data.flow_style or not data.value:
        return tail
    pairs = sorted((k.value, tail[k.start_mark.index:v.end_mark.index]) for k, v in data.value)
    flow = "{" + ", ".join(p for _, p in pairs) + "}"
    return tail[: data.start_mark.index] + flow + tail[data.end_mark.index:]


text = _krm.read()
head, items, tail = _krm.split(text)
tail = sort_function_input(tail)
shown = head + "".join(items) + tail if what == "input" else tail
shown = shown.replace(os.getcwd(), "<CWD>")
if not shown.strip():
    shown = "(none)\n"
if not shown.endswith("\n"):
    shown += "\n"
keep = "+" if shown.endswith("\n\n") else ""
body = "".join("      " + line if line.strip() else line for line in shown.splitlines(keepends=True))
items.append(
    "- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: %s\n  data:\n    what: %s\n    text: |%s\n%s"
    % (name, what, keep, body)
)
_krm.write(_krm.join(head, items, tail))
