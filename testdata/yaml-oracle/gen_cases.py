#!/usr/bin/env python3
"""Writes the hand-written YAML oracle corpus into cases/ (one file per case).

Run from this directory; then regenerate expected outputs with
`regen_expected.sh` (needs the dev oracle, tools/yamlv3-oracle).
"""
import os

C = {}

# --- KRM-style snippets with comments everywhere -------------------------
C["krm_basic"] = b"""apiVersion: v1
kind: ConfigMap
metadata:
  name: cm # the name
  namespace: default
  labels:
    app: web
data:
  key: value
"""
C["krm_head_comments"] = b"""# Copyright header
# second line

# head of apiVersion
apiVersion: apps/v1 # line on apiVersion
# head of kind
kind: Deployment
metadata:
  # head of name
  name: nginx
  # foot of name?

  # head of labels
  labels:
    app: nginx # line
    # foot at labels level
  # foot at metadata level
# foot at root level
spec:
  replicas: 3
"""
C["krm_foot_dedent"] = b"""a:
  b:
    c: 1
    # foot c
  # foot b
# foot a
d: 2
"""
C["krm_foot_blank_lines"] = b"""a:
  b: 1

  # separated head of c

  c: 2
# trailing

# more trailing
"""
C["krm_seq_comments"] = b"""items:
  # head item 1
  - name: one # line one
    # inside item 1
    value: 1
  # between items
  - name: two
  # after item two
- not: valid?
"""
C["krm_seq_comments2"] = b"""items:
# head item 1
- one # line one
# between
- two
# foot
other: x
"""
C["seq_entry_line_comment_head"] = b"""- # The comment
  - Some data
- # another
  key: value
- # third
  scalar
"""
C["nested_seq_comments"] = b"""a:
  - - x # lx
    - y
    # foot y
  - # stem
    - z
  # foot outer
"""
C["flow_comments"] = b"""a: [1, 2, # after two
  3 # after three
  ] # after close
b: {x: 1, # c1
  y: 2,
  # inside before close
  }
c: [
  # head of first
  one,
  two
  # foot in flow
]
"""
C["after_doc_start"] = b"""--- # comment after doc start
a: 1
--- !!map
# head
b: 2
...
# after document end
---
c: 3
... # end comment
"""
C["comment_only"] = b"""# just a comment
# another
"""
C["comment_only_docs"] = b"""# first
---
# second doc only comment
---
a: 1
"""
C["empty"] = b""
C["only_newlines"] = b"\n\n\n"
C["only_spaces"] = b"   \n  \n"
C["doc_markers"] = b"---\n...\n---\n---\na\n...\n"
C["comment_after_value_block"] = b"""key: |  # comment on literal
  text
  more
# after
next: >- # folded
  folded
  text

  para
"""
C["head_comment_split_doc"] = b"""# doc head

# value head
key: value
"""
C["head_comment_no_blank"] = b"""# doc head
# value head
key: value
"""
C["comments_column"] = b"""a:
    b: 1
  # odd indent comment
    c: 2
 # one space
d: 3
"""
C["comments_mapping_in_seq"] = b"""- a: 1
  # foot a
  b: 2
  # foot b
- c: 3
# foot c
"""
C["comment_deep_unroll"] = b"""l1:
  l2:
    l3:
      l4: v
      # foot l4
    # foot l3
  # foot l2
# foot l1
top: 1
"""
C["kptfile"] = b"""apiVersion: kpt.dev/v1
kind: Kptfile
metadata:
  name: app
  annotations:
    config.kubernetes.io/local-config: "true"
info:
  description: sample description
pipeline:
  mutators:
    - image: gcr.io/kpt-fn/set-labels:v0.1
      configMap:
        app: web # the app
  validators:
    # validators run after mutators
    - image: gcr.io/kpt-fn/kubeval:v0.1
"""
C["multi_resource"] = b"""apiVersion: v1
kind: Service
metadata:
  name: s
spec:
  ports:
  - port: 80
    targetPort: 8080
---
apiVersion: v1
kind: Namespace
metadata:
  name: ns
---
# comment-led doc
apiVersion: v1
kind: Secret
stringData:
  password: "p@ss: word"
"""

# --- anchors, aliases, merge keys ----------------------------------------
C["anchors"] = b"""base: &base
  a: 1
  b: 2
derived:
  <<: *base
  c: 3
list: &l [1, 2]
ref: *l
scalar: &s hello
again: *s
"""
C["anchor_across_docs"] = b"a: &x 1\n---\nb: *x\n"
C["unknown_anchor"] = b"a: 1\nb: *nope\n"
C["unknown_anchor_second_doc"] = b"a: 1\n---\nb: *nope\n"
C["anchor_on_key"] = b"&k key: value\n*k : other\n"
C["merge_list"] = b"""a: &a {x: 1}
b: &b {y: 2}
c:
  <<: [*a, *b]
  z: 3
"""
C["anchor_bad"] = b"a: &\nb: 1\n"
C["alias_bad"] = b"a: *\n"

# --- tags ---------------------------------------------------------------
C["tags"] = b"""a: !!str 123
b: !!int "42"
c: !custom value
d: !<tag:example.com,2000:x> v
e: ! nonspecific
f: !!binary aGVsbG8=
g: !!map {x: 1}
h: !!seq [1]
i: !local
"""
C["tag_directive"] = b"""%TAG !e! tag:example.com,2000:app/
---
a: !e!foo bar
b: !!str x
"""
C["yaml_directive"] = b"%YAML 1.1\n---\na: 1\n"
C["yaml_directive_12"] = b"%YAML 1.2\n---\na: 1\n"
C["tag_undefined_handle"] = b"a: !x!foo bar\n"
C["tag_uri_escape"] = b"a: !e%21x v\nb: !<%C3%A9> w\n"
C["tag_bad_escape"] = b"a: !<%zz> v\n"
C["directive_unknown"] = b"%FOO bar\n---\na: 1\n"
C["tag_dup_directive"] = b"%TAG !a! x\n%TAG !a! y\n---\nb: 1\n"

# --- block scalars -----------------------------------------------------------
C["block_scalars"] = b"""lit: |
  line1
   indented
  line3

clip_trail: |

  leading blank


strip: |-
  text

keep: |+
  text


indent2: |2
    two extra
  base
folded: >
  a
  b

  c
    more indented
  d
folded_strip: >-
  x
  y
last: end
"""
C["block_scalar_top"] = b"|\n  top level literal\n"
C["block_scalar_eof"] = b"a: |\n  no newline at end"
C["block_scalar_tab"] = b"a: |\n\tbad\n"
C["block_scalar_indent0"] = b"a: |0\n  x\n"
C["block_scalar_in_seq"] = b"- |\n  one\n- >-\n  two\n  three\n"
C["block_scalar_more_indented_first"] = b"a: |\n    deeper\n  shallower\n"

# --- multi-line plain and quoted scalars --------------------------------------
C["multiline_plain"] = b"""a: this is
  a multi line
  plain scalar

  with blank
b: x
"""
C["multiline_quoted"] = b"""a: "double
  quoted \\
  continued\\tesc \\u00e9 \\x41 \\U0001F600"
b: 'single
  quoted ''x''

  para'
c: "esc \\0 \\a \\b \\e \\f \\n \\r \\v \\N \\_ \\L \\P \\/ \\ "
"""
C["quoted_errors"] = b'a: "unclosed\n'
C["single_unclosed"] = b"a: 'unclosed\nb: 2\n"
C["bad_escape"] = b'a: "\\q"\n'
C["bad_hex_escape"] = b'a: "\\xZZ"\n'
C["surrogate_escape"] = b'a: "\\ud800"\n'
C["quoted_doc_indicator"] = b'a: "x\n---\n"\n'

# --- sequences, complex keys ------------------------------------------------
C["compact_nested_seq"] = b"- - a\n  - b\n- - - c\n"
C["indentless_seq"] = b"a:\n- 1\n- 2\nb:\n  - 3\n"
C["complex_keys"] = b"""? k
: v
? [a, b]
: seq key
? |
  block key
: x
? only key
"""
C["flow_complex"] = b"{a: 1, ? b : 2, c, [x]: y, {p: q}: r}\n[a: 1, b, ? c : d]\n"
C["flow_nested"] = b"a: [[1, 2], {b: [3, {c: 4}]}, []]\nd: {}\n"
C["empty_values"] = b"a:\nb: ~\nc: null\nd: ''\ne:\n  - \n  -\n"
C["scalars_resolve"] = b"""- 123
- -1.5
- .inf
- 0x1F
- 0o17
- 017
- true
- yes
- No
- ~
- 2001-12-14t21:59:43.10-05:00
- 2002-12-14
- 1_000
- +12
- .NaN
- <<
- "123"
"""
C["long_key"] = b"k" * 1100 + b": v\n"
C["key_multiline_error"] = b"a\nb: 1\n"

# --- CRLF, BOM, encodings -----------------------------------------------------
C["crlf"] = b"a: 1\r\n# comment\r\nb:\r\n  - x # lc\r\n  - y\r\n\r\n# foot\r\nc: |\r\n  lit\r\n  two\r\n"
C["cr_only"] = b"a: 1\rb: 2\r"
C["bom"] = b"\xef\xbb\xbfa: 1\n"
C["bom_mid"] = b"a: 1\n---\n\xef\xbb\xbfb: 2\n"
C["utf16le"] = "a: b\n# c\n".encode("utf-16-le")
C["utf16le_bom"] = b"\xff\xfe" + "a: \u00e9\n".encode("utf-16-le")
C["utf16be_bom"] = b"\xfe\xff" + "a: \U0001F600\n".encode("utf-16-be")
C["utf16_odd"] = b"\xff\xfea\x00:"
C["unicode"] = "name: caf\u00e9\nemoji: \U0001F600\ncjk: \u65e5\u672c\nnbsp: \"a\u00a0b\"\nls: x\u2028y\n".encode()
C["nel_break"] = "a: 1\u0085b: 2\n".encode()

# --- invalid input -----------------------------------------------------------------
C["invalid_utf8_lead"] = b"a: \xff\n"
C["invalid_utf8_trail"] = b"a: \xc3\x28\n"
C["invalid_utf8_incomplete"] = b"a: \xe2\x82"
C["invalid_utf8_overlong"] = b"a: \xc0\xaf\n"
C["invalid_surrogate_utf8"] = b"a: \xed\xa0\x80\n"
C["control_char"] = b"a: \x01\n"
C["nul_char"] = b"a: b\x00c\n"
C["del_char"] = b"a: \x7f\n"
C["c1_control"] = "a: \u0090\n".encode()
C["fffe"] = "a: \ufffe\n".encode()
C["invalid_late_doc"] = b"a: 1\n---\n" + b"b: 2\n" * 200 + b"c: \xff\n"
C["invalid_after_comment"] = b"a: 1 # c\n" + b" " * 30 + b"\n\xff"
C["invalid_at_chunk_edge"] = b"k: " + b"x" * 508 + b"\xc3\xa9\n"
C["invalid_split_char_chunk"] = b"k: " + b"x" * 508 + b"\xe2\x82\xac\xff\n"

# --- tabs ------------------------------------------------------------------------
C["tabs_ok"] = b"a:\t1\nb: [1,\t2]\nc: \"x\ty\"\n"
C["tab_indent"] = b"a:\n\tb: 1\n"
C["tab_in_plain_continuation"] = b"a: x\n\t y\n"
C["tab_after_dash"] = b"-\ta\n"

# --- errors ------------------------------------------------------------------------
C["err_missing_colon"] = b"a: b\nc d\n"
C["err_bad_indent"] = b"a:\n  b: 1\n c: 2\n"
C["err_mapping_values"] = b"a: b: c\n"
C["err_block_entries"] = b"a: 1\n- b\n"
C["err_unclosed_flow"] = b"a: [1, 2\n"
C["err_unclosed_map"] = b"a: {x: 1\n"
C["err_flow_seq"] = b"[a b]\n"
C["err_flow_map"] = b"{a: 1 b}\n"
C["err_bad_char"] = b"a: @x\n"
C["err_backtick"] = b"`x\n"
C["err_doc_content"] = b"--- a\nb: c\n"
C["err_key_too_long"] = b"a" * 1030 + b": b\n"
C["err_dash_in_flow"] = b"[- a]\n"
C["err_directive_no_doc"] = b"%YAML 1.1\na: 1\n"
C["err_dup_yaml_directive"] = b"%YAML 1.1\n%YAML 1.1\n---\na\n"
C["err_version_long"] = b"%YAML 123.1\n---\na\n"
C["err_second_doc"] = b"a: 1\n---\nb: [\n"
C["err_line_zero"] = b"]\n"
C["err_seq_indent"] = b"- a\n - b\n"
C["err_question_in_value"] = b"a: ? b\n"
C["err_anchor_then_colon"] = b"&a : b\n"

# --- deep nesting ---------------------------------------------------------------------
C["deep_flow"] = b"[" * 60 + b"]" * 60 + b"\n"

C["deep_block"] = b"".join(b"  " * i + b"k%d:\n" % i for i in range(40)) + b"  " * 40 + b"v\n"
C["deep_compact_seq"] = b"- " * 40 + b"x\n"

# --- misc edge cases ------------------------------------------------------------------
C["plain_with_colons"] = b"url: http://x.y/z?a=b#frag\ntime: 12:30:00\nk: a:b\n"
C["hash_in_plain"] = b"a: b#c\nd: e #f\n"
C["question_plain"] = b"a: ?x\n? \n: y\n"
C["dash_plain"] = b"a: -x\nb: - \n"
C["doc_end_then_content"] = b"a: 1\n...\nb: 2\n"
C["comment_then_docstart"] = b"a: 1\n# c\n---\nb: 2\n"
C["trailing_spaces"] = b"a: 1   \nb:   \n  c: 2  \n"
C["windows_comment_blank"] = b"a: 1\r\n\r\n# head b\r\nb: 2\r\n"
C["no_trailing_newline"] = b"a: 1\nb: 2"
C["seq_of_maps_kpt"] = b"""resources:
- apiVersion: v1 # api
  kind: A
  # meta head
  metadata: {name: a}
- apiVersion: v1
  kind: B

  # separated
  metadata:
    name: b
# end
"""
C["key_with_comment_value"] = b"a: # comment on key\n  b: 1\nc: # on c\n  - x\n"
C["value_on_next_line"] = b"a:\n  value\nb:\n  # head\n  value2\n"
C["empty_flow_with_comments"] = b"a: [] # empty\nb: {} # empty map\n"
C["comment_in_flow_multiline_map"] = b"a: {\n  # head x\n  x: 1, # lx\n  y: 2 # ly\n}\n"
C["alias_as_key_and_value"] = b"- &a x\n- *a\n- {*a : *a}\n"
C["tag_on_seq_and_map_entries"] = b"- !!str\n- !t\n  a: 1\n- !t [x]\n"
C["explicit_doc_with_comment_foot"] = b"---\na: 1\n# foot of doc\n...\n"
C["head_comment_before_seq"] = b"# doc\n\n# seq head\n- a\n- b\n"
C["mixed_indent_seq_in_map"] = b"a:\n    - 1\n    -   2\n    - - 3\n      - 4\n"
C["comment_after_key_before_seq"] = b"list:\n  # head of first item\n  - a\n  # head of second\n  - b\n"
C["foot_after_nested_in_seq"] = b"- a:\n    b: 1\n    # foot b\n  # foot a\n# foot item\n"

# --- go-yaml is_bom quirk: a BOM at a buffer refill point (harvested) -------
C["bom_at_refill_0"] = b'k0: [a, b]\n# comment 1\n# comment 2\n- item 3\n- item 4\nkey5: value\n# comment 6\nk7: [a, b]\nkey8: value\n# comment 9\nkey10: value\nk11: [a, b]\n- item 12\nk13: [a, b]\nk14: [a, b]\n- item 15\n- item 16\n- item 17\nkey18: value\nkey19: value\n- item 20\nkey21: value\nk22: [a, b]\nkey23: value\n# comment 24\n- item 25\n- item 26\nk27: [a, b]\nkey28: value\n# comment 29\n- item 30\nk31: [a, b]\n# comment 32\n# comment 33\nkey34: value\n- item 35\nkey36: value\nk37: [a, b]\nkey38: value\nk39: [a, b]\nk40: [a, b]\n- item 41\nkey42: value\n\xef\xbb\xbf- item 43\nk44: [a, b]\nkey45: value\nkey46: value\nkey47: value\n- item 48\n- item 49\n# comment 50\nkey51: value\n'
C["bom_at_refill_1"] = b'- item 0\nkey1: value\nkey2: value\nk3: [a, b]\n- item 4\nk5: [a, b]\nkey6: value\nk7: [a, b]\n- item 8\nkey9: value\n- item 10\n- item 11\nkey12: value\nkey13: value\n# comment 14\n- item 15\n# comment 16\nkey17: value\nkey18: value\nk19: [a, b]\n- item 20\n- item 21\nkey22: value\n# comment 23\nkey24: value\n# comment 25\nkey26: value\n# comment 27\nk28: [a, b]\n- item 29\nk30: [a, b]\n- item 31\nkey32: value\nk33: [a, b]\n# comment 34\nkey35: value\nk36: [a, b]\nkey37: value\n- item 38\n- item 39\nk40: [a, b]\n# comment 41\n# comment 42\nkey43: value\n\xef\xbb\xbf# comment 44\n# comment 45\nkey46: value\nkey47: value\nkey48: value\nk49: [a, b]\nk50: [a, b]\n'
C["bom_at_refill_2"] = b'# comment 0\n- item 1\nkey2: value\nk3: [a, b]\n- item 4\nkey5: value\nk6: [a, b]\n# comment 7\n# comment 8\n- item 9\n# comment 10\n- item 11\n# comment 12\nkey13: value\nkey14: value\n- item 15\n# comment 16\n- item 17\nkey18: value\n- item 19\nkey20: value\nkey21: value\nkey22: value\nk23: [a, b]\n- item 24\nk25: [a, b]\n# comment 26\nkey27: value\n# comment 28\n# comment 29\n- item 30\nk31: [a, b]\n# comment 32\n- item 33\nkey34: value\n# comment 35\nkey36: value\nkey37: value\nk38: [a, b]\nk39: [a, b]\n- item 40\nk41: [a, b]\n\xef\xbb\xbf- item 42\n# comment 43\nk44: [a, b]\n# comment 45\nkey46: value\nkey47: value\n# comment 48\n- item 49\n- item 50\n'

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "cases")
os.makedirs(out, exist_ok=True)
for name, data in C.items():
    with open(os.path.join(out, name + ".yaml"), "wb") as f:
        f.write(data)
print(len(C), "cases")
