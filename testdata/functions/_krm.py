"""Helpers shared by the Python test functions in this directory.

Not a function itself. Two ways to handle a ResourceList:

* text level (`split`/`join`): the ResourceList kpt writes has its top-level
  keys at column 0 and every item starting with `- ` at column 0, so items
  can be cut, dropped and appended without re-serialising anything (kpt
  then sees exactly the formatting it sent, plus the edit);
* PyYAML level (`load`/`dump`): a SafeLoader that tolerates unknown local
  tags (`!mytag x` loads as the untagged value) and anchors redefined in
  the same document (YAML 1.2 allows it; kpt sends every resource in one
  document, so two resources may define the same anchor name); libyaml's
  loader is used when it accepts the input.
"""
import re
import sys

import yaml


def read():
    return sys.stdin.read()


def split(text):
    """Returns (head, items, tail): `head` ends with the `items:` line,
    `items` are the item chunks (each starting with its `- ` line), `tail`
    is everything after the items (usually `functionConfig:`). Boundaries
    come from PyYAML's node positions, so multi-line scalars whose lines
    start at column 0 stay inside their item."""
    root = compose(text)
    if not isinstance(root, yaml.MappingNode):
        return text.rstrip("\n") + "\nitems:\n", [], ""
    pairs = root.value
    at = next((i for i, (k, _) in enumerate(pairs) if k.value == "items"), None)
    if at is None:
        return (text if text.endswith("\n") or not text else text + "\n") + "items:\n", [], ""

    def line_start(index):
        return text.rfind("\n", 0, index) + 1

    key, seq = pairs[at]
    head_end = text.find("\n", key.start_mark.index)
    head_end = len(text) if head_end < 0 else head_end + 1
    tail_start = line_start(pairs[at + 1][0].start_mark.index) if at + 1 < len(pairs) else len(text)
    head = text[: line_start(key.start_mark.index)] + "items:\n"
    if not isinstance(seq, yaml.SequenceNode) or not seq.value:
        return head, [], text[tail_start:]
    starts = []
    floor = head_end
    for node in seq.value:
        i = line_start(node.start_mark.index)
        # the item's dash line: the nearest column-0 `-` at or before it
        while i > floor and not text.startswith("-", i):
            i = line_start(i - 1)
        # column-0 comments right above the dash belong to this item
        while i > floor and text.startswith("#", line_start(i - 1)):
            i = line_start(i - 1)
        starts.append(i)
        floor = max(floor, node.end_mark.index)
    bounds = starts + [tail_start]
    items = [text[bounds[j]:bounds[j + 1]] for j in range(len(starts))]
    return head, items, text[tail_start:]


def join(head, items, tail):
    if not items:
        head = head[: -len("items:\n")] + "items: []\n"
    out = head + "".join(items)
    if out and not out.endswith("\n"):
        out += "\n"
    return out + tail


class Loader(yaml.SafeLoader):
    def compose_node(self, parent, index):
        event = self.peek_event()
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.AliasEvent):
            self.anchors.pop(anchor, None)
        return super().compose_node(parent, index)


def _untagged(loader, suffix, node):
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_mapping(node, deep=True)


Loader.add_multi_constructor("!", _untagged)

# libyaml's loader is several times faster; it refuses redefined anchors,
# so the pure-Python Loader above takes over then (same results).
_LOADERS = [Loader]
if getattr(yaml, "CSafeLoader", None) is not None:
    class CLoader(yaml.CSafeLoader):
        pass

    CLoader.add_multi_constructor("!", _untagged)
    _LOADERS.insert(0, CLoader)


def _with_loaders(fn, text):
    for i, loader in enumerate(_LOADERS):
        try:
            return fn(text, Loader=loader)
        except yaml.composer.ComposerError:
            if i + 1 == len(_LOADERS):
                raise


def compose(text):
    return _with_loaders(yaml.compose, text)


def load(text):
    return _with_loaders(yaml.load, text)


class _NoAliasDumper(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


def dump(data, aliases=True, **kw):
    if aliases:
        return yaml.safe_dump(data, **kw)
    return yaml.dump(data, Dumper=_NoAliasDumper, **kw)


def item_value(chunk):
    """The resource of one item chunk, as Python data."""
    loaded = load(chunk)
    return loaded[0] if loaded else {}


def meta(chunk, key):
    res = item_value(chunk)
    if not isinstance(res, dict):
        return None
    m = res.get("metadata")
    return m.get(key) if isinstance(m, dict) else None


# a quoted value, or a plain one up to the end of the line, a comment, or
# (flow style) the next `,` or `}` (plain values may contain spaces)
_VALUE = r"('[^']*'|\"[^\"]*\"|[^\s'\"][^,}\n]*?(?=[ \t]*(?:[,}\n]|[ \t]#|$)))"


def set_annotation(chunk, key, value):
    """Replaces the value of an existing annotation `key` in an item chunk
    (block or flow style); returns the new chunk."""
    pattern = re.compile(r"(?<![\w./-])(" + re.escape(key) + r"): " + _VALUE)
    return pattern.sub(lambda m: m.group(1) + ": '" + value + "'", chunk, count=1)


def drop_annotations(chunk, keys):
    """Removes the annotations `keys` from an item chunk: whole lines in
    block style, `key: value` entries in flow style."""
    for key in keys:
        k = r"(?<![\w./-])" + re.escape(key) + r": " + _VALUE
        chunk = re.sub(r"(?m)^[ ]+" + k + r"[ ]*\n", "", chunk)  # block
        chunk = re.sub(r",[ ]*" + k, "", chunk)  # flow, not first
        chunk = re.sub(r"(?<=\{)" + k + r",[ ]*", "", chunk)  # flow, first
        chunk = re.sub(r"(?<=\{)" + k + r"(?=\})", "", chunk)  # flow, only
    return chunk


def write(text):
    sys.stdout.write(text)
