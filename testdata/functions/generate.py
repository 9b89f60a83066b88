#!/usr/bin/env python3
# generate.py SPEC...: appends one new ConfigMap/Service/... per SPEC,
# without path annotations (kpt names the file <ns>/<kind>_<name>.yaml,
# relative to the configPath directory). The input items are kept as text.
# SPEC = KIND:NAME | KIND:NAMESPACE/NAME, optionally @PATH to give the new
# resource an explicit internal.config.kubernetes.io/path (e.g. ../x.yaml).
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _krm

API = {"ConfigMap": "v1", "Service": "v1", "Secret": "v1", "Deployment": "apps/v1",
       "Role": "rbac.authorization.k8s.io/v1"}

head, items, tail = _krm.split(_krm.read())
for spec in sys.argv[1:]:
    spec, _, path = spec.partition("@")
    kind, _, name = spec.partition(":")
    ns, _, name = name.rpartition("/")
    text = "- apiVersion: %s\n  kind: %s\n  metadata:\n    name: %s\n" % (API.get(kind, "example.com/v1"), kind, name)
    if ns:
        text += "    namespace: %s\n" % ns
    if path:
        text += "    annotations:\n      internal.config.kubernetes.io/path: '%s'\n" % path
    text += "  data:\n    generated-by: generate.py\n    spec: '%s'\n" % spec
    items.append(text)
_krm.write(_krm.join(head, items, tail))
