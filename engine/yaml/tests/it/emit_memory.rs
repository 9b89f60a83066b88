//! The encoder on Node trees built in memory, as a function's output would
//! be: no positions, `!!str` values that need quotes, keys appended, styles
//! and comments set by code. No YAML text parses to some of these trees, so
//! the expected outputs come from go-yaml itself through the dev tool
//! `yamlv3-encode-dump` (tools/yamlv3-oracle/build_encode_dump.sh), which
//! encodes trees given in the oracle's dump format. Where that tool is
//! installed every expectation is re-checked against it; elsewhere the
//! expectations below stand alone.

use std::io::Write;
use std::process::{Command, Stdio};

use krmgraph_yaml::encode::to_string;
use krmgraph_yaml::node::{Kind, Node, Style};
use krmgraph_yaml::Encoder;

const HELPER: &str = "yamlv3-encode-dump";

// ---- building trees ----

fn s(v: &str) -> Node {
    Node::string(v)
}

fn scalar(tag: &str, v: &str) -> Node {
    {
        let mut n = Node::new(Kind::Scalar);
        n.tag = tag.into();
        n.value = v.into();
        n
    }
}

fn styled(mut n: Node, style: Style) -> Node {
    n.style = style;
    n
}

fn map(pairs: Vec<(Node, Node)>) -> Node {
    let mut m = Node::mapping();
    for (k, v) in pairs {
        m.content.push(k);
        m.content.push(v);
    }
    m
}

fn kv(k: &str, v: Node) -> (Node, Node) {
    (s(k), v)
}

fn seq(items: Vec<Node>) -> Node {
    let mut q = Node::sequence();
    q.content = items;
    q
}

// ---- the helper ----

/// Go `%q`-compatible quoting (accepted by `strconv.Unquote`).
fn quote(v: &str) -> String {
    let mut out = String::from("\"");
    for c in v.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The tree in `yamlv3-oracle dump` format.
fn dump(node: &Node, depth: usize, out: &mut String) {
    let kind = match node.kind {
        Kind::Document => "Document",
        Kind::Sequence => "Sequence",
        Kind::Mapping => "Mapping",
        Kind::Scalar => "Scalar",
        Kind::Alias => "Alias",
    };
    out.push_str(&"  ".repeat(depth));
    out.push_str(&format!(
        "{kind} style={} tag={}",
        node.style.0,
        quote(&node.tag)
    ));
    if !node.anchor().is_empty() {
        out.push_str(&format!(" anchor={}", quote(node.anchor())));
    }
    match node.kind {
        Kind::Scalar => out.push_str(&format!(" value={}", quote(&node.value))),
        Kind::Alias => out.push_str(&format!(" alias={}", quote(&node.value))),
        _ => {}
    }
    for (key, c) in [
        ("head", &node.head_comment()),
        ("line", &node.line_comment()),
        ("foot", &node.foot_comment()),
    ] {
        if !c.is_empty() {
            out.push_str(&format!(" {key}={}", quote(c)));
        }
    }
    out.push_str(&format!(" @{}:{}\n", node.line, node.column));
    for child in &node.content {
        dump(child, depth + 1, out);
    }
}

/// go-yaml's output for `docs` (or its error line), if the helper is
/// installed.
fn go_yaml(docs: &[&Node], compact: bool, indent: usize) -> Option<String> {
    let mut text = String::new();
    for doc in docs {
        dump(doc, 0, &mut text);
        text.push_str("---\n");
    }
    let mode = if compact { "compact" } else { "wide" };
    let mut child = Command::new(HELPER)
        .args([mode, &indent.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    Some(String::from_utf8(out.stdout).unwrap())
}

/// Encode `docs` and compare with `want` (`Err` text for an error, as the
/// helper prints `ENCODE ERROR: yaml: ...`); re-check `want` with go-yaml.
fn check_docs(docs: &[&Node], compact: bool, indent: usize, want: &str) {
    let mut enc = Encoder::new();
    enc.set_indent(indent);
    enc.set_compact_seq_indent(compact);
    let mut got = String::new();
    let mut failed = false;
    for doc in docs {
        if let Err(e) = enc.encode(doc) {
            got = format!("ENCODE ERROR: {e}\n");
            failed = true;
            break;
        }
    }
    if !failed {
        match enc.finish() {
            Ok(out) => got = String::from_utf8(out).unwrap(),
            Err(e) => got = format!("CLOSE ERROR: {e}\n"),
        }
    }
    if let Some(go) = go_yaml(docs, compact, indent) {
        assert_eq!(go, want, "expectation disagrees with go-yaml");
    }
    assert_eq!(got, want);
}

fn check(node: &Node, compact: bool, want: &str) {
    check_docs(&[node], compact, 2, want);
}

#[test]
fn strings_that_need_quotes() {
    let m = map(vec![
        kv("int", s("123")),
        kv("bool", s("true")),
        kv("null", s("null")),
        kv("tilde", s("~")),
        kv("empty", s("")),
        kv("float", s("1.5")),
        kv("exp", s("1e3")),
        kv("inf", s(".inf")),
        kv("octal", s("0755")),
        kv("hex", s("0x1F")),
        kv("time", s("2001-12-14")),
        kv("yes", s("yes")),
        kv("on", s("on")),
        kv("merge", s("<<")),
        kv("colon", s("a: b")),
        kv("hash", s("a #b")),
        kv("lead", s(" x")),
        kv("dash", s("- x")),
        kv("star", s("*x")),
        kv("version", s("1.14.2")),
        kv("image", s("nginx:1.14.2")),
        kv("port", s("8080")),
        (s("123"), s("int key")),
        (s(""), s("empty key")),
    ]);
    check(
        &m,
        true,
        r#"int: "123"
bool: "true"
"null": "null"
tilde: "~"
empty: ""
float: "1.5"
exp: "1e3"
inf: ".inf"
octal: "0755"
hex: "0x1F"
time: "2001-12-14"
yes: yes
on: on
merge: <<
colon: 'a: b'
hash: 'a #b'
lead: ' x'
dash: '- x'
star: '*x'
version: 1.14.2
image: nginx:1.14.2
port: "8080"
"123": int key
"": empty key
"#,
    );
}

#[test]
fn typed_scalars_and_tags() {
    let m = map(vec![
        kv("int", scalar("!!int", "3")),
        kv("untagged", scalar("", "3")),
        kv("bool", scalar("!!bool", "false")),
        kv("null", scalar("!!null", "")),
        kv("float_as_int", scalar("!!float", "1")),
        kv("int_as_str", scalar("!!int", "abc")),
        kv("tagged", styled(s("x"), Style::TAGGED)),
        kv("custom", scalar("!custom", "v")),
        kv("long", scalar("tag:yaml.org,2002:str", "7")),
        kv("binary", scalar("!!binary", "aGVsbG8=")),
        kv("merge", scalar("!!merge", "<<")),
        kv("ts", scalar("!!timestamp", "2001-12-14")),
    ]);
    check(
        &m,
        false,
        r#"int: 3
untagged: 3
bool: false
"null":
float_as_int: !!float 1
int_as_str: !!int abc
tagged: !!str x
custom: !custom v
long: "7"
binary: !!binary aGVsbG8=
merge: !!merge <<
ts: 2001-12-14
"#,
    );
}

#[test]
fn multiline_and_block_styles() {
    let m = map(vec![
        kv("script", s("echo a\necho b\n")),
        kv("no_final_break", s("a\nb")),
        kv("two_breaks", s("a\n\n")),
        kv("lead_space", s("  indented\nnext\n")),
        kv("trailing_space", s("a \nb")),
        kv("folded", styled(s("one two\nthree\n"), Style::FOLDED)),
        kv("folded_more", styled(s("a\n  b\nc\n"), Style::FOLDED)),
        kv("literal_single", styled(s("x"), Style::LITERAL)),
        kv("dq", styled(s("plain"), Style::DOUBLE_QUOTED)),
        kv("sq", styled(s("it's"), Style::SINGLE_QUOTED)),
        kv("sq_nl", styled(s("a\nb"), Style::SINGLE_QUOTED)),
        kv("tab", s("a\tb")),
        kv("ctrl", s("bell\u{7}")),
        kv("emoji", s("hi 😀")),
        kv("unicode", s("grüße")),
    ]);
    check(
        &m,
        true,
        r#"script: |
  echo a
  echo b
no_final_break: |-
  a
  b
two_breaks: |+
  a

lead_space: |2
    indented
  next
trailing_space: "a \nb"
folded: >
  one two

  three

folded_more: >
  a

    b
  c

literal_single: |-
  x
dq: "plain"
sq: 'it''s'
sq_nl: 'a

  b'
tab: "a\tb"
ctrl: "bell\a"
emoji: "hi \U0001F600"
unicode: grüße
"#,
    );
}

#[test]
fn long_strings_are_not_wrapped() {
    let long = (0..40)
        .map(|i| format!("word{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let key = "k".repeat(129);
    let m = map(vec![
        kv("plain", s(&long)),
        kv("quoted", s(&format!("{long}: x"))),
        kv("double", s(&format!("{long}\t"))),
        kv(&key, s("complex key over 128 bytes")),
    ]);
    let want = format!(
        "plain: {long}\nquoted: '{long}: x'\ndouble: \"{long}\\t\"\n? {key}\n: complex key over 128 bytes\n"
    );
    check(&m, true, &want);
}

#[test]
fn sequences_compact_and_wide() {
    let m = map(vec![
        kv(
            "items",
            seq(vec![
                s("a"),
                map(vec![kv("b", s("1")), kv("c", seq(vec![s("d")]))]),
            ]),
        ),
        kv("nested", seq(vec![seq(vec![s("x"), s("y")]), seq(vec![])])),
        kv("empty_map", Node::mapping()),
        kv("empty_seq", Node::sequence()),
        kv(
            "flow",
            styled(
                seq(vec![s("a"), s("123"), map(vec![kv("k", s("v"))])]),
                Style::FLOW,
            ),
        ),
        kv(
            "flow_map",
            styled(
                map(vec![kv("x", s("")), kv("y", seq(vec![s("z")]))]),
                Style::FLOW,
            ),
        ),
    ]);
    let compact = r#"items:
- a
- b: "1"
  c:
  - d
nested:
- - x
  - y
- []
empty_map: {}
empty_seq: []
flow: [a, "123", {k: v}]
flow_map: {x: "", y: [z]}
"#;
    check(&m, true, compact);
    let wide = r#"items:
  - a
  - b: "1"
    c:
      - d
nested:
  - - x
    - y
  - []
empty_map: {}
empty_seq: []
flow: [a, "123", {k: v}]
flow_map: {x: "", y: [z]}
"#;
    check(&m, false, wide);
    let root = seq(vec![map(vec![kv("a", seq(vec![s("b")]))]), s("c")]);
    check(&root, true, "- a:\n  - b\n- c\n");
    check(&root, false, "- a:\n    - b\n- c\n");
}

#[test]
fn indentation_settings() {
    let m = map(vec![kv(
        "a",
        map(vec![kv("b", seq(vec![s("c"), map(vec![kv("d", s("e"))])]))]),
    )]);
    check_docs(&[&m], false, 4, "a:\n    b:\n        - c\n        - d: e\n");
    check_docs(&[&m], true, 4, "a:\n    b:\n      - c\n      - d: e\n");
    // 0 means go-yaml's default of 4.
    check_docs(&[&m], false, 0, "a:\n    b:\n        - c\n        - d: e\n");
    check_docs(&[&m], false, 3, "a:\n   b:\n      - c\n      - d: e\n");
}

#[test]
fn comments_set_by_code() {
    let mut name = s("name");
    name.set_head_comment("head of name");
    let mut value = s("app");
    value.set_line_comment("# kpt-set: ${name}");
    let mut added = s("added");
    added.set_head_comment("# line one\n# line two");
    added.set_foot_comment("# foot of added key");
    let mut list = seq(vec![s("a"), s("b")]);
    // go-yaml puts a sequence's line comment on SEQUENCE-END, where a block
    // sequence never writes it: it is lost.
    list.set_line_comment("# seq line");
    list.content[1].set_foot_comment("# foot of b");
    let mut m = map(vec![(name, value), (added, s("x")), kv("list", list)]);
    m.set_foot_comment("# end");
    let mut doc = Node::document(m);
    doc.set_head_comment("# Copyright");
    check(
        &doc,
        true,
        r#"# Copyright

# head of name
name: app # kpt-set: ${name}
# line one
# line two
added: x
# foot of added key

list:
- a
- b
# foot of b

# end
"#,
    );
}

#[test]
fn anchors_and_aliases() {
    let mut base = map(vec![kv("a", s("1"))]);
    base.set_anchor("base");
    let alias = {
        let mut n = Node::new(Kind::Alias);
        n.value = "base".into();
        n
    };
    let merge = scalar("!!merge", "<<");
    let m = map(vec![
        kv("base", base),
        kv(
            "derived",
            map(vec![(merge, alias.clone()), kv("b", s("2"))]),
        ),
        kv("ref", alias),
    ]);
    check(
        &m,
        true,
        "base: &base\n  a: \"1\"\nderived:\n  !!merge <<: *base\n  b: \"2\"\nref: *base\n",
    );
}

#[test]
fn several_documents_and_switching_sequence_style() {
    let a = map(vec![kv("a", seq(vec![s("x")]))]);
    let b = Node::document(map(vec![kv("b", seq(vec![s("y")]))]));
    let c = s("scalar doc");
    check_docs(
        &[&a, &b, &c],
        true,
        2,
        "a:\n- x\n---\nb:\n- y\n---\nscalar doc\n",
    );
    // kyaml switches per resource; go-yaml reads the flag as it emits.
    let mut enc = Encoder::new();
    enc.set_indent(2);
    enc.set_compact_seq_indent(true);
    enc.encode(&a).unwrap();
    enc.set_compact_seq_indent(false);
    enc.encode(&b).unwrap();
    let out = String::from_utf8(enc.finish().unwrap()).unwrap();
    assert_eq!(out, "a:\n- x\n---\nb:\n  - y\n");
}

#[test]
fn to_string_convenience() {
    let m = map(vec![kv("a", seq(vec![s("b")]))]);
    assert_eq!(to_string(&m, 2, true).unwrap(), "a:\n- b\n");
    assert_eq!(to_string(&m, 2, false).unwrap(), "a:\n  - b\n");
    // go-yaml's zero Node{} encodes as null (the dump format cannot carry
    // Go's kind 0, so this one is not re-checked with the helper).
    assert_eq!(to_string(&Node::default(), 2, true).unwrap(), "null\n");
}

#[test]
fn errors_carry_go_yaml_messages() {
    // A document node with nothing in it (but a comment, so it is not the
    // zero node).
    let mut empty_doc = Node::new(Kind::Document);
    empty_doc.set_head_comment("# x");
    check(
        &empty_doc,
        true,
        "ENCODE ERROR: yaml: expected SCALAR, SEQUENCE-START, MAPPING-START, or ALIAS, but got document end\n",
    );
    let alias = Node::new(Kind::Alias);
    check(
        &alias,
        true,
        "ENCODE ERROR: yaml: alias value must not be empty\n",
    );
    let mut bad_anchor = s("x");
    bad_anchor.set_anchor("a b");
    check(
        &bad_anchor,
        true,
        "ENCODE ERROR: yaml: anchor value must contain alphanumerical characters only\n",
    );
    check_docs(&[], true, 2, "CLOSE ERROR: yaml: expected STREAM-START\n");
    // The error sticks, as go-yaml's emitter stays stuck on the bad event.
    let mut enc = Encoder::new();
    assert!(enc.encode(&Node::new(Kind::Alias)).is_err());
    assert_eq!(
        enc.encode(&s("ok")).unwrap_err().to_string(),
        "yaml: alias value must not be empty"
    );
}

/// go-yaml parses up to 10000 nested levels; encoding them must not
/// depend on the thread's stack (2 MiB here, Rust's default for threads).
#[test]
fn deep_nesting_does_not_overflow() {
    let out = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let mut flow = s("leaf");
            for _ in 0..20_000 {
                flow = styled(map(vec![kv("k", seq(vec![flow]))]), Style::FLOW);
            }
            let mut block = s("leaf");
            for _ in 0..2_000 {
                block = map(vec![kv("k", block)]);
            }
            let out = (to_string(&flow, 2, true), to_string(&block, 2, false));
            // Dropping the trees recurses (Node's own Drop); not under test.
            std::mem::forget((flow, block));
            out
        })
        .unwrap()
        .join()
        .unwrap();
    let flow = out.0.unwrap();
    assert!(flow.starts_with("{k: [{k: [{k: ["));
    assert!(flow.contains("{k: [leaf]}]}"));
    assert!(flow.ends_with("]}]}]}\n"));
    assert_eq!(flow.len(), 20_000 * "{k: []}".len() + "leaf\n".len());
    assert!(out.1.unwrap().ends_with("k: leaf\n"));
}
