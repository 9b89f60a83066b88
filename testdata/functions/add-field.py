#!/usr/bin/env python3
# add-field.py [VALUE]: adds to every resource, as text (the rest of the
# item keeps its formatting): the annotation example.com/added-VALUE: VALUE,
# a label added-VALUE: VALUE when the resource has no labels yet, and (but
# in Kptfiles) a new top-level key added-VALUE: VALUE. Block and flow items
# are both handled.
# The keys carry VALUE so that two runs with different values never write
# the same key twice; a resource that has the annotation already is left
# alone.
import os, re, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

value = sys.argv[1] if len(sys.argv) > 1 else "yes"
ID = re.compile(r"(?<![\w./-])config\.k8s\.io/id: '[^']*'")
head, items, tail = _krm.split(_krm.read())
out = []
for chunk in items:
    res = _krm.item_value(chunk)
    md = res.get("metadata") if isinstance(res, dict) else None
    has_labels = isinstance(md, dict) and "labels" in md
    ann = md.get("annotations") if isinstance(md, dict) else None
    if isinstance(ann, dict) and "example.com/added-" + value in ann:
        out.append(chunk)  # already there (a second render): idempotent
        continue
    m = ID.search(chunk)
    if m:
        at = m.end()
        line_start = chunk.rfind("\n", 0, m.start()) + 1
        before = chunk[line_start:m.start()]
        if before.strip():  # flow annotations: {..., config.k8s.io/id: 'n'}
            chunk = chunk[:at] + ", example.com/added-%s: '%s'" % (value, value) + chunk[at:]
            close = chunk.index("}", at)
            if not has_labels:
                if chunk[close + 1:close + 2] in ("\n", ""):  # block metadata
                    indent = before[: len(before) - len(before.lstrip())]
                    add = "\n%slabels: {added-%s: '%s'}" % (indent, value, value)
                else:  # flow metadata
                    add = ", labels: {added-%s: '%s'}" % (value, value)
                chunk = chunk[: close + 1] + add + chunk[close + 1:]
        else:  # block annotations, one per line
            indent = before
            add = "\n%sexample.com/added-%s: '%s'" % (indent, value, value)
            if not has_labels:
                add += "\n%slabels:\n%s  added-%s: '%s'" % (indent[:-2], indent[:-2], value, value)
            chunk = chunk[:at] + add + chunk[at:]
    node = _krm.compose(chunk).value[0]
    if isinstance(res, dict) and res.get("kind") == "Kptfile":
        pass  # no top-level field: kpt rejects unknown Kptfile fields
    elif node.flow_style:  # - {...}: add before the closing brace
        end = node.end_mark.index - 1
        chunk = chunk[:end] + ", added-%s: '%s'" % (value, value) + chunk[end:]
    else:  # a block item: append at the item's indentation (2)
        chunk = chunk.rstrip("\n") + "\n  added-%s: '%s'\n" % (value, value)
    out.append(chunk)
_krm.write(_krm.join(head, out, tail))
