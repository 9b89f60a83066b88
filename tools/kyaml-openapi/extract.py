"""Extract the gzip payload of a go-bindata Go file (kyaml's embedded swagger)."""
import gzip
import re
import sys

src = open(sys.argv[1]).read()
m = re.search(r'= \[\]byte\("((?:\\x[0-9a-f]{2})+)"\)', src)
data = bytes(int(h, 16) for h in re.findall(r'\\x([0-9a-f]{2})', m.group(1)))
open(sys.argv[2], 'wb').write(gzip.decompress(data))
