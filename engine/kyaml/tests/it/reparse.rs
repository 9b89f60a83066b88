//! `yaml::reparse` against the real round trip: for generated trees whose
//! scalars have adversarial values, tags and styles, whenever
//! [`reparse::restyle`] accepts a tree, the tree it gives must equal what
//! parsing the emitted text gives (source positions and comments aside:
//! the model does not move comments). Checked in a plain document and as
//! an item of a function's ResourceList, the place the built-ins use it.

#[path = "../../../yaml/tests/it/common.rs"]
mod common;
use common::{strip_positions, yaml_files};
use krmgraph_kyaml::byteio::{ByteReader, ByteWriter};
use krmgraph_yaml::node::{tag, Kind, Node, Style};
use krmgraph_yaml::reparse::{restyle, restyle_keeping_comments};
use krmgraph_yaml::resolve::resolve_tag;
use krmgraph_yaml::{parse_documents, Encoder};
use proptest::prelude::*;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The model without positions and comments.
fn strip(n: &Node) -> Node {
    let mut n = n.clone();
    fn walk(n: &mut Node) {
        n.line = 0;
        n.column = 0;
        n.head_comment_mut().clear();
        n.line_comment_mut().clear();
        n.foot_comment_mut().clear();
        n.content.iter_mut().for_each(walk);
    }
    walk(&mut n);
    n
}

fn reparsed_document(root: &Node) -> Node {
    let mut e = Encoder::new();
    e.set_indent(2);
    e.encode(&Node::document(root.clone())).expect("emits");
    let text = e.finish().expect("emits");
    let docs = parse_documents(&text)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&text)));
    docs[0].content[0].clone()
}

/// `root` as a function's `functionConfig`, read back.
fn reparsed_config(root: &Node) -> Node {
    let bytes = ByteWriter::resource_list(Some(root.clone()))
        .write(&[])
        .expect("writes");
    let out = ByteReader::default().read(&bytes).expect("reads");
    out.function_config.expect("a functionConfig")
}

fn item_text(root: &Node) -> String {
    let bytes = ByteWriter::resource_list(None)
        .write(std::slice::from_ref(root))
        .expect("writes");
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Each node's comments on a line, in document order.
fn debug_comments(n: &Node) -> String {
    fn walk(n: &Node, depth: usize, out: &mut String) {
        out.push_str(&format!(
            "{}{:?} {:?} h={:?} l={:?} f={:?}\n",
            "  ".repeat(depth),
            n.kind,
            n.value,
            n.head_comment(),
            n.line_comment(),
            n.foot_comment()
        ));
        n.content.iter().for_each(|c| walk(c, depth + 1, out));
    }
    let mut out = String::new();
    walk(n, 0, &mut out);
    out
}

fn reparsed_item(root: &Node) -> Node {
    let bytes = ByteWriter::resource_list(None)
        .write(std::slice::from_ref(root))
        .expect("writes");
    let mut out = ByteReader::default().read(&bytes).expect("reads");
    out.nodes.remove(0)
}

const CHARS: &[char] = &[
    'a', 'Z', '0', '1', ' ', ' ', '\t', '\n', '\n', ':', '#', '-', '?', ',', '[', ']', '{', '}',
    '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`', '~', '.', '\\', 'é', '☃', '\u{7f}', '\u{1}',
    '\u{feff}',
];

/// Characters the model declines; rare, so that whole trees still pass.
const RARE_CHARS: &[char] = &['\r', '\u{85}', '\u{2028}'];

const WORDS: &[&str] = &[
    "",
    " ",
    "-",
    "---",
    "...",
    "- a",
    "? x",
    ": y",
    "<<",
    "~",
    "null",
    "Null",
    "true",
    "yes",
    "off",
    "y",
    "123",
    "-0",
    "0x1F",
    "0o17",
    "0755",
    "1e3",
    "1_000",
    ".inf",
    ".NaN",
    "1.5",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "12:30",
    "a: b",
    "a #b",
    "a# b",
    "#a",
    "line1\nline2\n",
    "line1\n\n  indented\n",
    "\nlead",
    " lead\n",
    "trail\n\n",
    "trail \n",
    "x\n",
    "tab\there",
    "key",
    "apiVersion",
    "metadata",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => proptest::sample::select(WORDS).prop_map(str::to_string),
        2 => proptest::collection::vec(proptest::sample::select(CHARS), 0..12)
            .prop_map(|cs| cs.into_iter().collect()),
        1 => (proptest::sample::select(RARE_CHARS), "[a-z]{0,3}")
            .prop_map(|(c, s)| format!("{s}{c}{s}")),
        1 => "[a-z][a-z0-9.-]{0,140}",
    ]
}

fn scalar() -> impl Strategy<Value = Node> {
    // What the parser gives (the resolved tag), what functions set
    // (`!!str`, or nothing), and now and then a tag that does not fit.
    let tags = prop_oneof![
        30 => Just(Some(tag::STR)),
        10 => Just(None),
        5 => Just(Some("")),
        1 => Just(Some(tag::INT)),
        1 => Just(Some(tag::NULL)),
        1 => Just(Some("!custom")),
    ];
    let styles = prop_oneof![
        40 => Just(Style::NONE),
        10 => Just(Style::DOUBLE_QUOTED),
        10 => Just(Style::SINGLE_QUOTED),
        10 => Just(Style::LITERAL),
        10 => Just(Style::FOLDED),
        1 => Just(Style::TAGGED),
    ];
    (text(), tags, styles).prop_map(|(value, tag, style)| {
        let mut n = Node::new(Kind::Scalar);
        n.tag = tag.unwrap_or_else(|| resolve_tag(&value)).into();
        n.value = value.into();
        n.style = style;
        n
    })
}

/// Comment texts a function could write (from a config's value, say)
/// that go-yaml does not read back as they were.
const ODD_COMMENTS: &[&str] = &[
    "#a\rb",
    "# a\u{2028}b",
    "# a\u{85}b",
    "no hash",
    "# \u{1}x",
    "# tab\tx",
    "# é☃",
    "#",
];

fn comment(lines: usize, weight_empty: u32) -> impl Strategy<Value = String> {
    // Odd texts are rare, so that whole trees still pass.
    prop_oneof![
        weight_empty * 40 => Just(String::new()),
        40 => proptest::collection::vec("# [a-z]{1,5}", 1..=lines)
            .prop_map(|lines| lines.join("\n")),
        1 => proptest::sample::select(ODD_COMMENTS).prop_map(str::to_string),
    ]
}

/// How often nodes get comments: the weight of "none" against one, for
/// head, line and foot comments.
#[derive(Clone, Copy)]
struct Odds {
    head: u32,
    line: u32,
    foot: u32,
}

/// Comments anywhere, foot comments rare.
const HOSTILE: Odds = Odds {
    head: 4,
    line: 4,
    foot: 60,
};

/// Comments mostly where files have them; the rest rare.
const REALISTIC: Odds = Odds {
    head: 12,
    line: 3,
    foot: 400,
};

/// `node` with head, line and foot comments, each often empty.
fn commented(node: impl Strategy<Value = Node>, odds: Odds) -> impl Strategy<Value = Node> {
    let comments = (
        comment(2, odds.head),
        comment(1, odds.line),
        comment(2, odds.foot),
    );
    (node, comments).prop_map(|(mut n, (head, line, foot))| {
        n.set_head_comment(head);
        n.set_line_comment(line);
        n.set_foot_comment(foot);
        n
    })
}

/// A mapping key: the parser gives keys head comments, and line comments
/// before a block collection (`key: # c` then the entries); a key's line
/// comment before anything else is for the model to decline.
fn key() -> impl Strategy<Value = Node> {
    (scalar(), comment(2, 3), comment(1, 8)).prop_map(|(mut k, head, line)| {
        k.set_head_comment(head);
        k.set_line_comment(line);
        k
    })
}

fn tree(odds: Odds) -> impl Strategy<Value = Node> {
    commented(scalar(), odds).prop_recursive(4, 40, 5, move |inner| {
        commented(
            prop_oneof![
                (
                    proptest::collection::vec((key(), inner.clone()), 0..5),
                    any::<bool>()
                )
                    .prop_map(|(pairs, flow)| {
                        let mut m = Node::mapping();
                        let mut seen = std::collections::HashSet::new();
                        for (k, v) in pairs {
                            if seen.insert(k.value.clone()) {
                                m.content.push(k);
                                m.content.push(v);
                            }
                        }
                        if flow {
                            m.style = Style::FLOW;
                        }
                        m
                    }),
                (proptest::collection::vec(inner, 0..4), any::<bool>()).prop_map(
                    |(items, flow)| {
                        let mut s = Node::sequence();
                        s.content = items;
                        if flow {
                            s.style = Style::FLOW;
                        }
                        s
                    }
                ),
            ],
            odds,
        )
    })
}

/// A resource-like root: a block mapping holding the generated trees.
fn resource(odds: Odds) -> impl Strategy<Value = Node> {
    (tree(odds), tree(odds)).prop_map(|(a, b)| {
        let mut m = Node::mapping();
        m.content = vec![
            Node::string("apiVersion"),
            Node::string("v1"),
            Node::string("kind"),
            Node::string("ConfigMap"),
            Node::string("spec"),
            a,
            Node::string("data"),
            b,
        ];
        m
    })
}

static ACCEPTED: AtomicUsize = AtomicUsize::new(0);
/// `KRMGRAPH_REPARSE_CASES` runs more (the default keeps CI short).
fn cases() -> u32 {
    std::env::var("KRMGRAPH_REPARSE_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    fn restyle_matches_the_round_trip(root in resource(HOSTILE)) {
        let mut mine = root.clone();
        if restyle(&mut mine) {
            ACCEPTED.fetch_add(1, Ordering::Relaxed);
            prop_assert_eq!(strip(&mine), strip(&reparsed_document(&root)));
            prop_assert_eq!(strip(&mine), strip(&reparsed_item(&root)));
        }
    }
}

static KEPT: AtomicUsize = AtomicUsize::new(0);

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    fn restyle_keeping_comments_matches_the_round_trip(root in resource(REALISTIC)) {
        let mut mine = root.clone();
        if restyle_keeping_comments(&mut mine) {
            KEPT.fetch_add(1, Ordering::Relaxed);
            let back = reparsed_item(&root);
            prop_assert!(
                strip_positions(&mine) == strip_positions(&back),
                "round trip of\n{}\nmodel:\n{}\nparsed back:\n{}",
                item_text(&root),
                debug_comments(&mine),
                debug_comments(&back)
            );
            let config = reparsed_config(&root);
            prop_assert!(
                strip_positions(&mine) == strip_positions(&config),
                "as functionConfig\nmodel:\n{}\nparsed back:\n{}",
                debug_comments(&mine),
                debug_comments(&config)
            );
        } else {
            prop_assert_eq!(&mine, &root, "a declined tree is left as it was");
        }
    }
}

/// The comment-keeping model against the round trip, comments compared
/// too, in a function's ResourceList; not vacuous either.
#[test]
fn restyle_keeping_comments_matches_the_round_trip_on_generated_trees() {
    restyle_keeping_comments_matches_the_round_trip();
    let kept = KEPT.load(Ordering::Relaxed);
    eprintln!(
        "restyle_keeping_comments accepted {kept} of {} generated trees",
        cases()
    );
    assert!(kept >= cases() as usize / 20, "only {kept} accepted");
}

/// Runs the property, then checks it was not vacuous: a share of the
/// generated trees (which are hostile on purpose) must be ones the model
/// accepts.
#[test]
fn restyle_matches_the_round_trip_on_generated_trees() {
    restyle_matches_the_round_trip();
    let accepted = ACCEPTED.load(Ordering::Relaxed);
    eprintln!("restyle accepted {accepted} of {} generated trees", cases());
    assert!(
        accepted >= cases() as usize / 20,
        "only {accepted} accepted"
    );
}

/// The property above says nothing if the model declines everything: on
/// resources of ordinary strings and numbers it must accept.
#[test]
fn restyle_accepts_ordinary_resources() {
    let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x # c\n  labels: {}\ndata:\n  a: 'b'\n  n: 3\n  s: \"x: y\"\n  list: [a, 'b c']\n  script: |\n    echo\n";
    let doc = parse_documents(text.as_bytes()).unwrap().remove(0);
    let mut root = doc.content[0].clone();
    assert!(restyle(&mut root));
    assert_eq!(strip(&root), strip(&reparsed_item(&doc.content[0])));
}

/// Every resource of the project's fixtures and the conformance corpus, as
/// kpt reads it from its file: where the comment-keeping model accepts it,
/// it is what the ResourceList round trip gives, comments included; and it
/// accepts most of them.
#[test]
fn restyle_keeping_comments_matches_the_round_trip_on_fixtures() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    yaml_files(&root.join("testdata"), &mut files);
    yaml_files(&root.join("../shared/conformance"), &mut files);
    let (mut kept, mut total) = (0, 0);
    for file in files {
        let bytes = std::fs::read(&file).unwrap();
        let reader = ByteReader {
            preserve_seq_indent: true,
            ..ByteReader::default()
        };
        let Ok(read) = reader.clone().read(&bytes) else {
            continue;
        };
        for node in &read.nodes {
            total += 1;
            let root = krmgraph_kyaml::rnode::y_node(node);
            let mut mine = root.clone();
            if restyle_keeping_comments(&mut mine) {
                kept += 1;
                assert_eq!(
                    strip_positions(&mine),
                    strip_positions(&reparsed_item(root)),
                    "{}",
                    file.display()
                );
            }
        }
    }
    eprintln!("restyle_keeping_comments accepted {kept} of {total} resources");
    assert!(kept * 10 > total * 7, "accepted {kept} of {total}");
}
