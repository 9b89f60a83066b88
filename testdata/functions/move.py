#!/usr/bin/env python3
# move.py [--legacy] NAME=PATH[:INDEX]...: moves resources between files by
# rewriting their path (and index) annotations, as text. By default only
# the internal.config.kubernetes.io/{path,index} annotations change (kpt
# brings the legacy ones along); with --legacy only the legacy
# config.kubernetes.io/{path,index} ones do.
# move.py --strip: removes every path, index and package-path annotation
# (kpt then names every file <ns>/<kind>_<name>.yaml in the package whose
# pipeline ran).
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

args = sys.argv[1:]
if args == ["--strip"]:
    head, items, tail = _krm.split(_krm.read())
    keys = ["config.kubernetes.io/path", "config.kubernetes.io/index",
            "internal.config.kubernetes.io/path", "internal.config.kubernetes.io/index",
            "internal.config.kubernetes.io/package-path"]
    _krm.write(_krm.join(head, [_krm.drop_annotations(c, keys) for c in items], tail))
    sys.exit(0)
prefix = "internal.config.kubernetes.io/"
if args and args[0] == "--legacy":
    prefix = "config.kubernetes.io/"
    args = args[1:]
moves = {}
for a in args:
    name, _, where = a.partition("=")
    path, _, index = where.partition(":")
    moves[name] = (path, index)
head, items, tail = _krm.split(_krm.read())
out = []
for chunk in items:
    name = _krm.meta(chunk, "name")
    if name in moves:
        path, index = moves[name]
        if path:
            chunk = _krm.set_annotation(chunk, prefix + "path", path)
        if index:
            chunk = _krm.set_annotation(chunk, prefix + "index", index)
    out.append(chunk)
_krm.write(_krm.join(head, out, tail))
