"""Reduce kyaml's built-in Kubernetes v1.21.2 swagger (gnostic protobuf) plus its
Kustomization swagger to what CopyComments' walker reads: types, $ref, items,
properties, additionalProperties, patch strategy/merge keys and GVKs."""
import pb, json, sys
def msgs(v):
    d = {}
    for f, w, vv in pb.fields(v):
        d.setdefault(f, []).append(vv)
    return d
def yaml_scalar_or_list(s):
    s = s.decode()
    if s.startswith('- '):
        items = []
        for line in s.splitlines():
            if line.startswith('- '): items.append(line[2:].strip())
        return items
    return s.strip()
def gvk_list(s):
    out = []; cur = None
    for line in s.decode().splitlines():
        if line.startswith('- '): cur = {}; out.append(cur); line = line[2:]
        line = line.strip()
        k, v = line.split(':', 1); v = v.strip()
        if v == '""': v = ''
        cur[k] = v
    return out
def schema(v):
    d = msgs(v); out = {}
    if 1 in d: out['$ref'] = d[1][0].decode()
    if 22 in d: out['type'] = [x.decode() for x in msgs(d[22][0]).get(1, [])]
    if 23 in d:
        its = msgs(d[23][0]).get(1, [])
        assert len(its) == 1
        out['items'] = schema(its[0])
    if 25 in d:
        props = {}
        for nv in msgs(d[25][0]).get(1, []):
            nd = msgs(nv); props[nd[1][0].decode()] = schema(nd[2][0])
        out['properties'] = props
    if 21 in d:
        a = msgs(d[21][0])
        if 1 in a: out['additionalProperties'] = schema(a[1][0])
        else: out['additionalProperties'] = bool(pb.varint(d[21][0], 1)[0]) if False else False
    for ev in d.get(31, []):
        e = msgs(ev); name = e[1][0].decode().lower(); val = msgs(e[2][0])[2][0]
        if name in ('x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key'):
            out[name] = yaml_scalar_or_list(val)
        elif name == 'x-kubernetes-list-map-keys':
            out[name] = yaml_scalar_or_list(val)
        elif name == 'x-kubernetes-group-version-kind':
            out[name] = gvk_list(val)
    return out
b = open(sys.argv[2], 'rb').read()
top = msgs(b)
defs = {}
for nv in msgs(top[9][0]).get(1, []):
    nd = msgs(nv); defs[nd[1][0].decode()] = schema(nd[2][0])
kust = json.load(open(sys.argv[3]))['definitions']
def strip(s):
    if not isinstance(s, dict): return s
    out = {}
    for k, v in s.items():
        if k in ('$ref', 'type', 'x-kubernetes-patch-strategy', 'x-kubernetes-patch-merge-key', 'x-kubernetes-list-map-keys', 'x-kubernetes-group-version-kind'):
            out[k] = v if k != 'type' or isinstance(v, list) else [v]
        elif k == 'items': out[k] = strip(v)
        elif k == 'properties': out[k] = {pk: strip(pv) for pk, pv in v.items()}
        elif k == 'additionalProperties': out[k] = strip(v) if isinstance(v, dict) else v
    return out
for k, v in kust.items(): defs[k] = strip(v)
json.dump({'definitions': dict(sorted(defs.items()))}, open(sys.argv[1], 'w'), separators=(',', ':'), sort_keys=True)
