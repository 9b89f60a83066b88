import sys
def varint(b, i):
    r = 0; s = 0
    while True:
        c = b[i]; i += 1
        r |= (c & 0x7f) << s; s += 7
        if c < 0x80: return r, i
def fields(b):
    i = 0; out = []
    while i < len(b):
        k, i = varint(b, i); f, w = k >> 3, k & 7
        if w == 0: v, i = varint(b, i)
        elif w == 2:
            l, i = varint(b, i); v = b[i:i+l]; i += l
        elif w == 1: v = b[i:i+8]; i += 8
        elif w == 5: v = b[i:i+4]; i += 4
        else: raise ValueError(w)
        out.append((f, w, v))
    return out
def show(b, depth=0, maxd=6):
    for f, w, v in fields(b):
        if w == 2:
            try:
                if depth < maxd and len(v) > 0:
                    sub = fields(v)
                    print('  '*depth + f'{f}: <msg {len(v)}>')
                    show(v, depth+1, maxd); continue
            except Exception: pass
            print('  '*depth + f'{f}: {v[:80]!r}')
        else:
            print('  '*depth + f'{f}: {v}')
