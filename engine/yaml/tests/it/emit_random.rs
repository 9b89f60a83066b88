//! Differential test of the encoder against go-yaml on random Node trees:
//! awkward scalars (indicators, breaks, quotes, tabs, NEL/LS, BOM, emoji),
//! every style flag, tags, anchors, aliases and comments everywhere. Needs
//! the dev tool `yamlv3-encode-dump` (tools/yamlv3-oracle/
//! build_encode_dump.sh) and is skipped without it. `YAML_EMIT_RANDOM_N`
//! sets the number of trees (default 3000).

use std::io::Write;
use std::process::{Command, Stdio};

use krmgraph_yaml::node::{Kind, Node, Style};
use krmgraph_yaml::Encoder;

const HELPER: &str = "yamlv3-encode-dump";

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const PIECES: &[&str] = &[
    "a",
    "b",
    "word",
    " ",
    "  ",
    "\n",
    "\n\n",
    "#",
    " #",
    ": ",
    ":",
    "-",
    "- ",
    "'",
    "\"",
    "\t",
    "é",
    "✓",
    "😀",
    "\u{85}",
    "\u{2028}",
    "\u{a0}",
    "\r\n",
    "{",
    "}",
    "[",
    "]",
    ",",
    "?",
    "*",
    "&",
    "!",
    "|",
    ">",
    "%",
    "@",
    "`",
    "0",
    "12",
    ".",
    "~",
    "\u{feff}",
    "\\",
    "\u{7}",
    "\u{1b}",
    "---",
    "...",
    "<<",
    "true",
    "null",
    "1.5",
    "0x1F",
    "2001-12-14",
    "yes",
];

const WHOLE: &[&str] = &[
    "",
    "123",
    "true",
    "null",
    "~",
    "1e3",
    ".inf",
    "0755",
    "2001-12-14",
    "yes",
    "<<",
    "a: b",
    "a #b",
    " x",
    "x ",
    "- x",
    "---",
    "...",
    "line\n",
    "a\nb",
    "a\n\n",
    "\n",
    "  a\nb\n",
    "a \nb",
    "a\n b",
    "a\n\n  b\nc\n",
    "\ta",
    "nginx:1.14.2",
    "=",
];

const TAGS: &[&str] = &[
    "!!str",
    "!!str",
    "!!str",
    "",
    "!!int",
    "!!bool",
    "!!null",
    "!!float",
    "!custom",
    "!!binary",
    "!!timestamp",
    "!!merge",
    "tag:example.com,2000:x",
    "!",
];

const COMMENTS: &[&str] = &[
    "# c",
    "c without pound",
    "# multi\n# line",
    "#",
    "#x",
    "# a\n\n# b",
    "# trailing ",
];

fn scalar_value(rng: &mut Rng) -> String {
    if rng.chance(30) {
        return rng.pick(WHOLE).to_string();
    }
    let n = 1 + rng.below(5);
    (0..n).map(|_| *rng.pick(PIECES)).collect()
}

fn comments(rng: &mut Rng, node: &mut Node) {
    if rng.chance(12) {
        node.set_head_comment(*rng.pick(COMMENTS));
    }
    if rng.chance(12) {
        node.set_line_comment(*rng.pick(COMMENTS));
    }
    if rng.chance(8) {
        node.set_foot_comment(*rng.pick(COMMENTS));
    }
}

fn gen(rng: &mut Rng, depth: usize, flow: bool) -> Node {
    let roll = rng.below(100);
    let mut node = if depth == 0 || roll < 55 {
        let mut n = Node::new(Kind::Scalar);
        n.value = scalar_value(rng).into();
        n.tag = (*rng.pick(TAGS)).into();
        n.style = *rng.pick(&[
            Style::NONE,
            Style::NONE,
            Style::NONE,
            Style::DOUBLE_QUOTED,
            Style::SINGLE_QUOTED,
            Style::LITERAL,
            Style::FOLDED,
            Style::TAGGED,
        ]);
        n
    } else if roll < 60 {
        let mut n = Node::new(Kind::Alias);
        n.value = rng
            .pick(&["a1", "base", "x-y_z", "a1", "base", "bad name", ""])
            .to_string()
            .into();
        n
    } else {
        let mapping = roll < 82;
        let mut n = if mapping {
            Node::mapping()
        } else {
            Node::sequence()
        };
        if rng.chance(10) {
            n.tag = (*rng.pick(&["", "!custom", "!!map", "!!seq"])).into();
        }
        let flow = flow || rng.chance(15);
        if flow {
            n.style = Style::FLOW;
        }
        let len = rng.below(4);
        for _ in 0..len {
            if mapping {
                let key_depth = if rng.chance(85) { 0 } else { depth - 1 };
                let key = gen(rng, key_depth, flow);
                n.content.push(key);
            }
            n.content.push(gen(rng, depth - 1, flow));
        }
        n
    };
    if rng.chance(6) && node.kind != Kind::Alias {
        node.set_anchor(*rng.pick(&["a1", "base", "a1", "base", "é"]));
    }
    comments(rng, &mut node);
    node
}

fn gen_doc(rng: &mut Rng) -> Node {
    let depth = 1 + rng.below(4);
    let root = gen(rng, depth, false);
    if rng.chance(50) {
        let mut doc = Node::document(root);
        if rng.chance(30) {
            doc.set_head_comment(*rng.pick(COMMENTS));
        }
        if rng.chance(20) {
            doc.set_foot_comment(*rng.pick(COMMENTS));
        }
        doc
    } else {
        root
    }
}

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
    out.push_str(" @0:0\n");
    for child in &node.content {
        dump(child, depth + 1, out);
    }
}

fn go_yaml(docs: &[Node], compact: bool) -> String {
    let mut text = String::new();
    for doc in docs {
        dump(doc, 0, &mut text);
        text.push_str("---\n");
    }
    let mut child = Command::new(HELPER)
        .arg(if compact { "compact" } else { "wide" })
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// Our output in the helper's terms: the YAML, or its error line (the
/// helper prints nothing else when `Encode` fails).
fn ours(docs: &[Node], compact: bool) -> String {
    let mut enc = Encoder::new();
    enc.set_indent(2);
    enc.set_compact_seq_indent(compact);
    for doc in docs {
        if let Err(e) = enc.encode(doc) {
            return format!("ENCODE ERROR: {e}\n");
        }
    }
    match enc.finish() {
        Ok(out) => String::from_utf8(out).unwrap(),
        Err(e) => format!("CLOSE ERROR: {e}\n"),
    }
}

#[test]
fn random_trees_match_go_yaml() {
    if Command::new(HELPER)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_err()
    {
        eprintln!(
            "skipped: {HELPER} not found (dev tool, tools/yamlv3-oracle/build_encode_dump.sh)"
        );
        return;
    }
    let n: usize = std::env::var("YAML_EMIT_RANDOM_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3000);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let docs: Vec<Node> = (0..n).map(|_| gen_doc(&mut rng)).collect();
    let mut failures = Vec::new();
    let (mut identical, mut errors) = (0, 0);
    for (i, chunk) in docs.chunks(100).enumerate() {
        for compact in [true, false] {
            if go_yaml(chunk, compact) == ours(chunk, compact) {
                continue;
            }
            // Find the documents that differ on their own.
            for (j, doc) in chunk.iter().enumerate() {
                let one = std::slice::from_ref(doc);
                let (want, got) = (go_yaml(one, compact), ours(one, compact));
                if want != got {
                    let mut text = String::new();
                    dump(doc, 0, &mut text);
                    failures.push(format!(
                        "tree {} (compact={compact}):\n{text}want: {want:?}\ngot:  {got:?}",
                        i * 100 + j
                    ));
                }
            }
        }
    }
    for doc in &docs {
        for compact in [true, false] {
            let out = ours(std::slice::from_ref(doc), compact);
            if out.starts_with("ENCODE ERROR") {
                errors += 1;
            } else {
                identical += 1;
            }
        }
    }
    eprintln!(
        "random trees: {n} trees x 2 modes, {} mismatches ({errors} encodings were go-yaml errors, {identical} outputs)",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{}",
        failures
            .iter()
            .take(5)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n\n")
    );
}

#[test]
#[ignore]
fn print_sample() {
    let mut rng = Rng(7);
    for _ in 0..8 {
        let doc = gen_doc(&mut rng);
        println!("{}", ours(std::slice::from_ref(&doc), true));
    }
}
