//! Differential tests over GENERATED package trees: a seeded pseudo-random
//! generator builds a package hierarchy (nested packages, subpackages in
//! plain directories, multi-document `.yaml`/`.yml`/`.json` files, hidden
//! files, `.krmignore`, the formatting facts of kpt-render.md §5) with
//! pipelines of the exec functions in `testdata/functions/` (configMap,
//! configPath in subdirectories and `functions/` dirs, selectors, exclude),
//! renders it with kpt and with krmgraph, in place and with `-o stdout`,
//! `-o unwrap` and `-o <dir>`, then renders kpt's in-place result once
//! more, and asserts identical trees, exit codes, stdout, `results.yaml`
//! and (normalised) stderr.
//!
//! One fixed tree goes through the same harness so that a failing validator
//! is always covered, not only when a seed picks one:
//! [`failing_validator_matches_kpt`].
//!
//! * `KRMGRAPH_DIFF_SEEDS=N` runs seeds `0..N` (default [`DEFAULT_SEEDS`]);
//!   `KRMGRAPH_DIFF_SEED=S[,S...]` (or `A..B`) runs those seeds only (to
//!   reproduce a failure, or to explore more); `KRMGRAPH_DIFF_WRITE=DIR`
//!   also writes every generated tree to `DIR/<seed>/pkg`.
//! * The functions run with the directory of the `python3` that has PyYAML
//!   first on PATH (version-manager shims cost ~100 ms a call).
//! * A failing seed leaves its tree, the commands and the difference under
//!   `target/diff-failures/<seed>/`.
//! * Skips with a printed reason when kpt (or python3 with PyYAML, which
//!   the functions need) is missing; fails instead under
//!   `KRMGRAPH_REQUIRE_KPT=1`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use crate::kpt_diff::{describe_difference, read_tree, render_with_env, Rendered};
use crate::util::{kpt_available, repo_root};

/// Seeds run by default: about 75 s in a debug build on an idle two-core
/// machine (about 105 s of CPU; every seed is rendered 5 times by each
/// tool, most of the time goes to the Python functions).
pub const DEFAULT_SEEDS: u64 = 16;

// ---------------------------------------------------------------------------
// A tiny deterministic PRNG (xorshift64*).

/// xorshift64*: deterministic across platforms, no crates needed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        let mut r = Rng((seed ^ 0x9E37_79B9_7F4A_7C15).wrapping_mul(0xBF58_476D_1CE4_E5B9) | 1);
        for _ in 0..4 {
            r.next();
        }
        r
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next() >> 11) % n as u64) as usize
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

// ---------------------------------------------------------------------------
// A small YAML document model, written out as text with chosen styles.

#[derive(Clone, Debug)]
enum Node {
    /// A scalar written verbatim (plain, quoted, tagged, ...).
    Scalar(String),
    /// A block scalar: header (`|`, `>-`, `|2`, ...) and content lines
    /// relative to the content indentation (`""` = empty line).
    Block(String, Vec<String>),
    Map(Vec<Entry>),
    Seq(Vec<Item>),
    /// A flow collection written verbatim (`{a: b}`, `[1, 2]`).
    Flow(String),
    Alias(String),
}

#[derive(Clone, Debug)]
struct Entry {
    key: String,
    value: Node,
    anchor: Option<String>,
    comment: Option<String>,
    head: Vec<String>,
    blank_before: bool,
}

impl Entry {
    fn new(key: &str, value: Node) -> Self {
        Entry {
            key: key.to_string(),
            value,
            anchor: None,
            comment: None,
            head: vec![],
            blank_before: false,
        }
    }
}

#[derive(Clone, Debug)]
struct Item {
    value: Node,
    comment: Option<String>,
    head: Vec<String>,
}

impl Item {
    fn new(value: Node) -> Self {
        Item {
            value,
            comment: None,
            head: vec![],
        }
    }
}

#[derive(Clone, Copy, Debug)]
struct Style {
    /// Mapping indentation (2 or 4).
    indent: usize,
    /// Wide (`key:\n  - a`) or compact (`key:\n- a`) sequences.
    wide: bool,
    /// Flip `wide` after the first sequence of the document (a later list
    /// in the other style: kpt applies the first one's style to all).
    flip_after_first: bool,
}

struct Emitter {
    out: String,
    style: Style,
    seqs: usize,
}

fn sp(n: usize) -> String {
    " ".repeat(n)
}

impl Emitter {
    fn wide(&mut self) -> bool {
        let w = if self.style.flip_after_first && self.seqs > 0 {
            !self.style.wide
        } else {
            self.style.wide
        };
        self.seqs += 1;
        w
    }

    fn comment(c: &Option<String>) -> String {
        c.as_ref().map(|c| format!(" # {c}")).unwrap_or_default()
    }

    fn block(&mut self, header: &str, lines: &[String], parent: usize) {
        let content = match header.chars().find(|c| c.is_ascii_digit()) {
            Some(d) => parent + d.to_digit(10).unwrap() as usize,
            None => parent + self.style.indent,
        };
        for l in lines {
            if l.is_empty() {
                self.out.push('\n');
            } else {
                let _ = writeln!(self.out, "{}{l}", sp(content));
            }
        }
    }

    /// Entries of a mapping at column `col`; with `first_prefix` the first
    /// entry goes on the line of a sequence dash.
    fn map(&mut self, entries: &[Entry], col: usize, first_prefix: Option<String>) {
        for (i, e) in entries.iter().enumerate() {
            let inline = i == 0 && first_prefix.is_some();
            if !inline {
                if e.blank_before {
                    self.out.push('\n');
                }
                for h in &e.head {
                    let _ = writeln!(self.out, "{}# {h}", sp(col));
                }
            }
            let prefix = if inline {
                first_prefix.clone().unwrap()
            } else {
                sp(col)
            };
            let anchor = e
                .anchor
                .as_ref()
                .map(|a| format!(" &{a}"))
                .unwrap_or_default();
            let comment = Self::comment(&e.comment);
            match &e.value {
                Node::Scalar(s) | Node::Flow(s) => {
                    // continuation lines of a multi-line scalar: indented
                    let s = s.replace('\n', &format!("\n{}", sp(col + self.style.indent)));
                    let _ = writeln!(self.out, "{prefix}{}:{anchor} {s}{comment}", e.key);
                }
                Node::Alias(a) => {
                    let _ = writeln!(self.out, "{prefix}{}: *{a}{comment}", e.key);
                }
                Node::Block(header, lines) => {
                    let _ = writeln!(self.out, "{prefix}{}:{anchor} {header}{comment}", e.key);
                    self.block(header, lines, col);
                }
                Node::Map(m) => {
                    let _ = writeln!(self.out, "{prefix}{}:{anchor}{comment}", e.key);
                    self.map(m, col + self.style.indent, None);
                }
                Node::Seq(items) => {
                    let _ = writeln!(self.out, "{prefix}{}:{anchor}{comment}", e.key);
                    let wide = self.wide();
                    self.seq(items, if wide { col + self.style.indent } else { col });
                }
            }
        }
    }

    fn seq(&mut self, items: &[Item], col: usize) {
        for it in items {
            for h in &it.head {
                let _ = writeln!(self.out, "{}# {h}", sp(col));
            }
            let comment = Self::comment(&it.comment);
            match &it.value {
                Node::Scalar(s) | Node::Flow(s) => {
                    let s = s.replace('\n', &format!("\n{}", sp(col + 2)));
                    let _ = writeln!(self.out, "{}- {s}{comment}", sp(col));
                }
                Node::Alias(a) => {
                    let _ = writeln!(self.out, "{}- *{a}{comment}", sp(col));
                }
                Node::Block(header, lines) => {
                    let _ = writeln!(self.out, "{}- {header}{comment}", sp(col));
                    self.block(header, lines, col);
                }
                Node::Map(m) => self.map(m, col + 2, Some(format!("{}- ", sp(col)))),
                Node::Seq(inner) => {
                    // nested sequences of scalars: `- - a` or `- [a, b]`
                    let texts: Vec<String> = inner
                        .iter()
                        .map(|i| match &i.value {
                            Node::Scalar(s) | Node::Flow(s) => s.replace('\n', " "),
                            _ => "x".to_string(),
                        })
                        .collect();
                    if texts.len() > 1 && texts.len().is_multiple_of(2) {
                        for (i, t) in texts.iter().enumerate() {
                            let lead = if i == 0 {
                                format!("{}- ", sp(col))
                            } else {
                                sp(col + 2)
                            };
                            let _ = writeln!(self.out, "{lead}- {t}");
                        }
                    } else {
                        let _ = writeln!(self.out, "{}- [{}]{comment}", sp(col), texts.join(", "));
                    }
                }
            }
        }
    }
}

/// A YAML document: comment groups before it (blank line between groups),
/// the top-level mapping, and foot comment lines.
struct Doc {
    head: Vec<Vec<String>>,
    body: Vec<Entry>,
    foot: Vec<String>,
    style: Style,
}

impl Doc {
    fn text(&self) -> String {
        let mut e = Emitter {
            out: String::new(),
            style: self.style,
            seqs: 0,
        };
        for (i, group) in self.head.iter().enumerate() {
            if i > 0 {
                e.out.push('\n');
            }
            for c in group {
                let _ = writeln!(e.out, "# {c}");
            }
        }
        e.map(&self.body, 0, None);
        for c in &self.foot {
            let _ = writeln!(e.out, "# {c}");
        }
        e.out
    }
}

// ---------------------------------------------------------------------------
// The package-tree generator.

/// Scalars in every style kpt must leave alone (kpt-render.md §5.3).
const SCALARS: &[&str] = &[
    "plain value",
    "'single quoted'",
    "\"double quoted\"",
    "\"123\"",
    "\"true\"",
    "yes",
    "on",
    "0755",
    "1.0",
    "null",
    "~",
    "\"\"",
    "''",
    "2021-01-01",
    "\"a: b\"",
    "\"a #b\"",
    "\"héllo ☃\"",
    "\"line1\\nline2\"",
    "!!str 123",
    "!mytag foo",
    "0x1F",
    "1e3",
    "12345678901234567890",
    "'it''s'",
    "true",
    "42",
    "-17",
    "\"tab\\there\"",
    "'multi word single'",
    "value-with-dashes",
    "http://example.com/a?b=c",
    "a-very-long-plain-scalar-that-goes-on-and-on well past eighty columns so that no emitter may fold it \
     - kpt never wraps lines",
    "\"a long double-quoted scalar with escapes \\t \\u00e9 and \\\" quotes that runs past eighty columns too\"",
    "plain\ncontinued on the next line",
    "\"double\nfolded in the source\"",
    "value\twith tab and trailing spaces   ",
    "!!binary aGVsbG8=",
    "\"x\ty\"",
];

const COMMENTS: &[&str] = &[
    "comment",
    "a longer comment: with colon",
    "TODO(someone) fix",
    "héllo",
    "#double hash",
    "kpt-set: ${x}",
];

/// What the generator knows about one resource it wrote.
#[derive(Clone, Debug)]
struct Res {
    name: String,
    kind: String,
    api_version: String,
    #[allow(dead_code)]
    namespace: Option<String>,
    /// The owning package (relative to the root).
    pkg: String,
    /// Path relative to the owning package.
    file: String,
    index: usize,
    app: Option<String>,
    /// A config file of a `configPath`: never moved or deleted.
    config: bool,
}

/// What the generator knows about a package.
struct PkgInfo {
    /// Resources of the package and of all its subpackages.
    all: Vec<Res>,
}

/// A generated test case.
pub struct Case {
    pub seed: u64,
    /// Relative path → file content (everything under the root package).
    pub files: BTreeMap<String, Vec<u8>>,
    /// Relative path → symlink target.
    pub links: BTreeMap<String, String>,
    /// Extra render flags (e.g. `--truncate-output=false`).
    pub flags: Vec<String>,
    /// Whether a function that fails on purpose is in some pipeline.
    pub expect_failure: bool,
}

struct Gen {
    rng: Rng,
    n: usize,
    fns: String,
    files: BTreeMap<String, Vec<u8>>,
    expect_failure: bool,
    /// Package names (Kptfile metadata.name) in the tree.
    pkg_names: Vec<String>,
    /// Subpackage directories of the package whose pipeline is being
    /// generated (relative to it).
    cur_subs: Vec<String>,
    /// Relative path → symlink target.
    links: BTreeMap<String, String>,
}

/// `s` as one word of an `exec:` command line (kpt splits it like a shell).
fn shell_word(s: &str) -> String {
    if s.contains(' ') {
        format!("\"{s}\"")
    } else {
        s.to_string()
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl Gen {
    fn id(&mut self) -> usize {
        self.n += 1;
        self.n
    }

    fn scalar(&mut self) -> Node {
        let s = self.rng.pick(SCALARS);
        Node::Scalar(s.to_string())
    }

    fn maybe_comment(&mut self, percent: usize) -> Option<String> {
        if self.rng.chance(percent) {
            Some(self.rng.pick(COMMENTS).to_string())
        } else {
            None
        }
    }

    fn heads(&mut self, percent: usize) -> Vec<String> {
        let mut v = vec![];
        while self.rng.chance(percent) && v.len() < 2 {
            v.push(self.rng.pick(COMMENTS).to_string());
        }
        v
    }

    fn block_scalar(&mut self) -> Node {
        let header = *self.rng.pick(&["|", "|-", "|+", "|2", ">", ">-", "|", ">"]);
        let mut lines = vec![];
        let n = self.rng.range(1, 3);
        for i in 0..n {
            if header == "|2" && i == 0 {
                lines.push("  indented more".to_string());
            }
            lines.push(format!("line {i} of {n}: text"));
            if self.rng.chance(20) && i + 1 < n {
                lines.push(String::new());
            }
        }
        if header == "|+" {
            lines.push(String::new());
        }
        Node::Block(header.to_string(), lines)
    }

    /// A value: scalar, block scalar, flow collection, small map or list.
    fn value(&mut self, depth: usize) -> Node {
        match self.rng.below(if depth > 1 { 4 } else { 7 }) {
            0 | 1 => self.scalar(),
            2 => self.block_scalar(),
            3 => Node::Flow(
                self.rng
                    .pick(&[
                        "{a: b, c: d}",
                        "[1, 2, 3]",
                        "[]",
                        "{}",
                        "{x: [1, 2], y: {z: w}}",
                        "['q', \"d\"]",
                        "[\n1,  # one\n2\n]",
                        "{\na: b,\nc: [x, y]\n}",
                        "!!map {a: b}",
                        "!!set {a, b}",
                    ])
                    .to_string(),
            ),
            4 => {
                let n = self.rng.range(1, 3);
                let items = (0..n)
                    .map(|_| {
                        let v = if self.rng.chance(80) {
                            self.scalar()
                        } else {
                            self.block_scalar()
                        };
                        Item {
                            value: v,
                            comment: self.maybe_comment(15),
                            head: self.heads(10),
                        }
                    })
                    .collect();
                Node::Seq(items)
            }
            _ => {
                let n = self.rng.range(1, 3);
                let mut entries = vec![];
                for i in 0..n {
                    let mut e = Entry::new(&format!("k{i}"), self.value(depth + 1));
                    e.comment = if matches!(e.value, Node::Scalar(_) | Node::Flow(_)) {
                        self.maybe_comment(15)
                    } else {
                        None
                    };
                    e.head = self.heads(10);
                    e.blank_before = i > 0 && self.rng.chance(10);
                    entries.push(e);
                }
                Node::Map(entries)
            }
        }
    }

    fn entries(&mut self, n: usize, prefix: &str) -> Vec<Entry> {
        let mut entries = vec![];
        for i in 0..n {
            let key = match self.rng.below(40) {
                0..=2 => format!("\"{prefix}{i}\""),
                3..=5 => format!("'{prefix}{i}'"),
                6..=8 => format!("{prefix}{i} with spaces"),
                // over 128 characters: written back as `? key`
                9 => format!("{prefix}{i}-{}", "long".repeat(34)),
                10 if i == 0 => self.rng.pick(&["1", "true", "~", "0x10"]).to_string(),
                _ => format!("{prefix}{i}"),
            };
            let mut e = Entry::new(&key, self.value(0));
            if matches!(
                e.value,
                Node::Scalar(_) | Node::Flow(_) | Node::Map(_) | Node::Seq(_)
            ) {
                e.comment = self.maybe_comment(15);
            }
            e.head = self.heads(15);
            e.blank_before = i > 0 && self.rng.chance(15);
            entries.push(e);
        }
        entries
    }

    fn labels(&mut self, app: &str) -> Node {
        if self.rng.chance(30) {
            Node::Flow(format!("{{app: {app}, tier: backend}}"))
        } else {
            let mut e = Entry::new("app", Node::Scalar(app.to_string()));
            e.comment = self.maybe_comment(20);
            let mut v = vec![e];
            if self.rng.chance(40) {
                v.push(Entry::new(
                    "tier",
                    Node::Scalar(self.rng.pick(&["'web'", "\"db\"", "cache"]).to_string()),
                ));
            }
            Node::Map(v)
        }
    }

    /// One resource document (not a Kptfile).
    fn resource(&mut self, file: &str, index: usize) -> (Res, Doc) {
        let id = self.id();
        let (api, kind) = *self.rng.pick(&[
            ("v1", "ConfigMap"),
            ("v1", "ConfigMap"),
            ("apps/v1", "Deployment"),
            ("v1", "Service"),
            ("example.com/v1", "Widget"),
            ("rbac.authorization.k8s.io/v1", "Role"),
            ("storage.cnrm.cloud.google.com/v1beta1", "StorageBucket"),
        ]);
        let name = format!("{}-{id}", kind.to_lowercase());
        let namespace = if self.rng.chance(40) {
            Some(self.rng.pick(&["ns-a", "ns-b"]).to_string())
        } else {
            None
        };
        let app = if self.rng.chance(50) {
            Some(self.rng.pick(&["web", "db", "cache"]).to_string())
        } else {
            None
        };
        let style = Style {
            indent: if self.rng.chance(25) { 4 } else { 2 },
            wide: self.rng.chance(50),
            flip_after_first: self.rng.chance(15),
        };

        // metadata
        let mut md = vec![];
        let mut name_e = Entry::new(
            "name",
            Node::Scalar(if self.rng.chance(15) {
                format!("'{name}'")
            } else {
                name.clone()
            }),
        );
        name_e.comment = self.maybe_comment(20);
        md.push(name_e);
        if let Some(ns) = &namespace {
            md.push(Entry::new("namespace", Node::Scalar(ns.clone())));
        }
        let anchor = format!("lbl{id}");
        let mut labels_anchored = false;
        if let Some(app) = &app {
            let mut e = Entry::new("labels", self.labels(app));
            if self.rng.chance(30) {
                e.anchor = Some(anchor.clone());
                labels_anchored = true;
            }
            md.push(e);
        } else if self.rng.chance(10) {
            md.push(Entry::new("labels", Node::Flow("{}".into())));
        }
        match self.rng.below(10) {
            0 => md.push(Entry::new("annotations", Node::Flow("{}".into()))),
            1 => md.push(Entry::new(
                "annotations",
                Node::Flow("{note: \"flow\", example.com/x: 'y'}".into()),
            )),
            2 => md.push(Entry::new(
                "annotations",
                Node::Map(vec![
                    Entry::new("example.com/note", Node::Scalar("\"hello\"".into())),
                    Entry::new(
                        "config.kubernetes.io/local-config",
                        Node::Scalar("\"true\"".into()),
                    ),
                ]),
            )),
            3 => md.push(Entry::new(
                "annotations",
                // stale path/index written in the file: kpt overwrites them
                Node::Map(vec![
                    Entry::new(
                        "config.kubernetes.io/path",
                        Node::Scalar("\"old/place.yaml\"".into()),
                    ),
                    Entry::new("config.kubernetes.io/index", Node::Scalar("'7'".into())),
                ]),
            )),
            5 => md.push(Entry::new(
                "annotations",
                // keys kpt sets itself, already in the file
                Node::Map(vec![
                    Entry::new("config.k8s.io/id", Node::Scalar("'9'".into())),
                    Entry::new(
                        "internal.config.kubernetes.io/seqindent",
                        Node::Scalar("\"wide\"".into()),
                    ),
                    Entry::new("example.com/after", Node::Scalar("x".into())),
                ]),
            )),
            4 if kind == "StorageBucket" => md.push(Entry::new(
                "annotations",
                Node::Map(vec![Entry::new(
                    "cnrm.cloud.google.com/blueprint",
                    Node::Scalar("\"kpt-pkg\"".into()),
                )]),
            )),
            _ => {}
        }
        let metadata = if self.rng.chance(10)
            && md
                .iter()
                .all(|e| matches!(e.value, Node::Scalar(_)) && e.comment.is_none())
        {
            let parts: Vec<String> = md
                .iter()
                .map(|e| {
                    format!(
                        "{}: {}",
                        e.key,
                        match &e.value {
                            Node::Scalar(s) => s.clone(),
                            _ => unreachable!(),
                        }
                    )
                })
                .collect();
            Node::Flow(format!("{{{}}}", parts.join(", ")))
        } else {
            Node::Map(md)
        };

        // body
        let body: Vec<Entry> = match kind {
            "ConfigMap" => {
                if self.rng.chance(10) {
                    vec![Entry::new("data", Node::Flow("{a: b, n: \"1\"}".into()))]
                } else {
                    let n = self.rng.range(1, 5);
                    vec![Entry::new("data", Node::Map(self.entries(n, "key-")))]
                }
            }
            "Deployment" => {
                let labels = if labels_anchored {
                    Node::Alias(anchor.clone())
                } else {
                    self.labels(app.as_deref().unwrap_or("web"))
                };
                let mut containers = vec![];
                for c in 0..self.rng.range(1, 2) {
                    let mut cm = vec![
                        Entry::new("name", Node::Scalar(format!("c{c}"))),
                        Entry::new(
                            "image",
                            Node::Scalar(
                                self.rng
                                    .pick(&[
                                        "nginx:1.21",
                                        "\"nginx:1.21\"",
                                        "'gcr.io/x/y@sha256:abc'",
                                    ])
                                    .to_string(),
                            ),
                        ),
                    ];
                    if self.rng.chance(60) {
                        let args = (0..self.rng.range(1, 3))
                            .map(|_| Item {
                                value: self.scalar(),
                                comment: self.maybe_comment(10),
                                head: vec![],
                            })
                            .collect();
                        cm.push(Entry::new("args", Node::Seq(args)));
                    }
                    if self.rng.chance(50) {
                        cm.push(Entry::new(
                            "ports",
                            Node::Flow("[{containerPort: 80}, {containerPort: 443}]".into()),
                        ));
                    }
                    if self.rng.chance(40) {
                        cm.push(Entry::new(
                            "env",
                            Node::Seq(vec![Item::new(Node::Map(vec![
                                Entry::new("name", Node::Scalar("A".into())),
                                Entry::new("value", self.scalar()),
                            ]))]),
                        ));
                    }
                    if self.rng.chance(30) {
                        cm.push(Entry::new("command", self.block_scalar()));
                    }
                    containers.push(Item {
                        value: Node::Map(cm),
                        comment: None,
                        head: self.heads(15),
                    });
                }
                let mut replicas = Entry::new(
                    "replicas",
                    Node::Scalar(self.rng.pick(&["3", "\"3\"", "1"]).to_string()),
                );
                replicas.comment = self.maybe_comment(30);
                vec![Entry::new(
                    "spec",
                    Node::Map(vec![
                        replicas,
                        Entry::new(
                            "selector",
                            Node::Map(vec![Entry::new("matchLabels", labels.clone())]),
                        ),
                        Entry::new(
                            "template",
                            Node::Map(vec![
                                Entry::new(
                                    "metadata",
                                    Node::Map(vec![Entry::new("labels", labels)]),
                                ),
                                Entry::new(
                                    "spec",
                                    Node::Map(vec![Entry::new(
                                        "containers",
                                        Node::Seq(containers),
                                    )]),
                                ),
                            ]),
                        ),
                    ]),
                )]
            }
            "Service" => {
                let mut spec = vec![];
                if labels_anchored {
                    spec.push(Entry::new(
                        "selector",
                        Node::Map(vec![
                            Entry::new("<<", Node::Alias(anchor.clone())),
                            Entry::new("extra", Node::Scalar("x".into())),
                        ]),
                    ));
                } else {
                    spec.push(Entry::new(
                        "selector",
                        self.labels(app.as_deref().unwrap_or("web")),
                    ));
                }
                let ports = (0..self.rng.range(1, 2))
                    .map(|p| Item {
                        value: Node::Map(vec![
                            Entry::new("name", Node::Scalar(format!("p{p}"))),
                            Entry::new("port", Node::Scalar(format!("{}", 80 + p))),
                            Entry::new(
                                "targetPort",
                                Node::Scalar(
                                    self.rng.pick(&["8080", "\"http\"", "http"]).to_string(),
                                ),
                            ),
                        ]),
                        comment: None,
                        head: self.heads(20),
                    })
                    .collect();
                spec.push(Entry::new("ports", Node::Seq(ports)));
                if self.rng.chance(30) {
                    spec.push(Entry::new("clusterIP", Node::Scalar("None".into())));
                }
                vec![Entry::new("spec", Node::Map(spec))]
            }
            "Role" => {
                let rule = Node::Map(vec![
                    Entry::new("apiGroups", Node::Flow("[\"\"]".into())),
                    Entry::new(
                        "resources",
                        Node::Seq(vec![
                            Item::new(Node::Scalar("pods".into())),
                            Item::new(Node::Scalar("configmaps".into())),
                        ]),
                    ),
                    Entry::new(
                        "verbs",
                        Node::Seq(vec![
                            Item::new(Node::Scalar("get".into())),
                            Item::new(Node::Scalar("'list'".into())),
                        ]),
                    ),
                ]);
                vec![Entry::new(
                    "rules",
                    Node::Seq(vec![Item {
                        value: rule,
                        comment: None,
                        head: self.heads(20),
                    }]),
                )]
            }
            _ => {
                // Widget / StorageBucket: anything goes
                let n = self.rng.range(1, 4);
                let mut spec = self.entries(n, "field");
                if self.rng.chance(30) {
                    let base = format!("base{id}");
                    let mut d = Entry::new(
                        "defaults",
                        Node::Map(vec![
                            Entry::new("size", Node::Scalar("1".into())),
                            Entry::new("color", Node::Scalar("red".into())),
                        ]),
                    );
                    d.anchor = Some(base.clone());
                    spec.push(d);
                    spec.push(Entry::new(
                        "override",
                        Node::Map(vec![
                            Entry::new("<<", Node::Alias(base.clone())),
                            Entry::new("color", Node::Scalar("blue".into())),
                        ]),
                    ));
                    spec.push(Entry::new("copy", Node::Alias(base)));
                }
                if self.rng.chance(30) {
                    spec.push(Entry::new(
                        "matrix",
                        Node::Seq(vec![Item::new(Node::Seq(vec![
                            Item::new(Node::Scalar("1".into())),
                            Item::new(Node::Scalar("2".into())),
                        ]))]),
                    ));
                }
                if self.rng.chance(30) {
                    spec.push(Entry::new(
                        "nothing",
                        Node::Scalar(self.rng.pick(&["null", "~", ""]).to_string()),
                    ));
                }
                vec![Entry::new("spec", Node::Map(spec))]
            }
        };

        let mut api_e = Entry::new("apiVersion", Node::Scalar(api.to_string()));
        api_e.comment = self.maybe_comment(15);
        let kind_e = Entry::new("kind", Node::Scalar(kind.to_string()));
        let md_e = Entry::new("metadata", metadata);
        let mut top = if self.rng.chance(10) {
            vec![md_e, api_e, kind_e]
        } else {
            vec![api_e, kind_e, md_e]
        };
        for mut e in body {
            e.head = self.heads(15);
            e.blank_before = self.rng.chance(15);
            top.push(e);
        }
        let mut head = vec![];
        if self.rng.chance(30) {
            head.push(self.heads(100));
            if self.rng.chance(30) {
                head.push(vec!["second head comment group".into()]);
            }
        }
        let foot = if self.rng.chance(15) {
            vec!["foot comment".to_string()]
        } else {
            vec![]
        };
        let res = Res {
            name,
            pkg: String::new(),
            kind: kind.into(),
            api_version: api.into(),
            namespace,
            file: file.into(),
            index,
            app,
            config: false,
        };
        (
            res,
            Doc {
                head,
                body: top,
                foot,
                style,
            },
        )
    }

    /// A JSON resource (one document; compact or pretty, unsorted keys).
    fn json_resource(&mut self, file: &str) -> (Res, String) {
        let id = self.id();
        let name = format!("json-{id}");
        let namespace = if self.rng.chance(40) {
            Some("ns-a".to_string())
        } else {
            None
        };
        let ns = namespace
            .as_ref()
            .map(|n| format!(", \"namespace\": \"{n}\""))
            .unwrap_or_default();
        let text = if self.rng.chance(50) {
            format!("{{\"kind\":\"ConfigMap\",\"apiVersion\":\"v1\",\"metadata\":{{\"name\":\"{name}\"{}}},\"data\":{{\"z\":\"1\",\"a\":\"\\u00e9t\\u00e9\",\"n\":\"null\"}}}}", ns.replace(' ', ""))
        } else {
            format!(
                "{{\n    \"apiVersion\": \"example.com/v1\",\n    \"kind\": \"Widget\",\n    \"metadata\": {{\n        \"name\": \"{name}\"{ns}\n    }},\n    \"spec\": {{\n        \"list\": [1, 2.5, true, null, \"s\"],\n        \"nested\": {{\"b\": [], \"a\": {{}}}},\n        \"num\": 12345678901234567890\n    }}\n}}"
            )
        };
        let kind = if text.contains("Widget") {
            "Widget"
        } else {
            "ConfigMap"
        };
        let api = if kind == "Widget" {
            "example.com/v1"
        } else {
            "v1"
        };
        let res = Res {
            name,
            pkg: String::new(),
            kind: kind.into(),
            api_version: api.into(),
            namespace,
            file: file.into(),
            index: 0,
            app: None,
            config: false,
        };
        (res, text)
    }

    /// Writes a multi-document file made of `docs`, with separator
    /// decorations, optional CRLF and missing final newline.
    fn put_yaml(&mut self, path: &str, docs: Vec<String>) {
        let mut text = String::new();
        if self.rng.chance(20) {
            text.push_str("---\n");
        }
        for (i, d) in docs.iter().enumerate() {
            if i > 0 {
                text.push_str(match self.rng.below(8) {
                    0 => "--- # separator comment\n",
                    1 => "---\n# license header: a comment-only document\n---\n",
                    2 => "---\n---\n",
                    _ => "---\n",
                });
            }
            text.push_str(d);
        }
        if self.rng.chance(10) {
            text.push_str("...\n");
        }
        self.finish_text(path, text);
    }

    fn finish_text(&mut self, path: &str, mut text: String) {
        if self.rng.chance(3) {
            text.insert(0, '\u{feff}');
        }
        if self.rng.chance(10) {
            text = text.trim_end_matches('\n').to_string();
        }
        if self.rng.chance(10) {
            text = text.replace('\n', "\r\n");
        } else if self.rng.chance(3) {
            // CRLF on every other line only
            let mut mixed = String::new();
            for (i, line) in text.split_inclusive('\n').enumerate() {
                mixed.push_str(&if i % 2 == 0 {
                    line.replace('\n', "\r\n")
                } else {
                    line.to_string()
                });
            }
            text = mixed;
        }
        self.files.insert(path.to_string(), text.into_bytes());
    }

    /// A resource file `rel` (relative to the package) with 1..=max docs.
    fn resource_file(&mut self, pkg_dir: &str, rel: &str, max: usize, out: &mut Vec<Res>) {
        let n = self.rng.range(1, max);
        let mut docs = vec![];
        for i in 0..n {
            let (r, d) = self.resource(rel, i);
            out.push(Res {
                pkg: pkg_dir.to_string(),
                ..r
            });
            docs.push(d.text());
        }
        self.put_yaml(&join(pkg_dir, rel), docs);
    }

    /// A functionConfig file for `configPath` (one ConfigMap, local-config).
    fn config_file(&mut self, pkg_dir: &str, own: &mut Vec<Res>) -> String {
        let id = self.id();
        let rel = match self.rng.below(5) {
            0 => format!("fn-config-{id}.yaml"),
            1 => format!("configs/cfg-{id}.yaml"),
            2 => format!("functions/cfg-{id}.yaml"),
            3 => format!("setup/functions/cfg-{id}.yml"),
            _ => format!("cfg-{id}.yaml"),
        };
        let name = format!("cfg-{id}");
        let style = Style {
            indent: 2,
            wide: self.rng.chance(50),
            flip_after_first: false,
        };
        let mut ann = Entry::new(
            "annotations",
            Node::Map(vec![Entry::new(
                "config.kubernetes.io/local-config",
                Node::Scalar("\"true\"".into()),
            )]),
        );
        ann.comment = self.maybe_comment(20);
        let n = self.rng.range(1, 3);
        let data = self.entries(n, "param-");
        let doc = Doc {
            head: if self.rng.chance(40) {
                vec![vec!["function configuration".into()]]
            } else {
                vec![]
            },
            body: vec![
                Entry::new("apiVersion", Node::Scalar("v1".into())),
                Entry::new("kind", Node::Scalar("ConfigMap".into())),
                Entry::new(
                    "metadata",
                    Node::Map(vec![Entry::new("name", Node::Scalar(name.clone())), ann]),
                ),
                Entry::new("data", Node::Map(data)),
            ],
            foot: vec![],
            style,
        };
        let mut text = doc.text();
        if self.rng.chance(10) {
            text = text.replace('\n', "\r\n");
        }
        self.files.insert(join(pkg_dir, &rel), text.into_bytes());
        own.push(Res {
            name,
            pkg: pkg_dir.to_string(),
            kind: "ConfigMap".into(),
            api_version: "v1".into(),
            namespace: None,
            file: rel.clone(),
            index: 0,
            app: None,
            config: true,
        });
        rel
    }

    /// A random package at `dir` (relative to the root; `""` = root).
    fn package(&mut self, dir: &str, depth: usize) -> PkgInfo {
        let pkg_name = dir
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("pkg")
            .to_string();
        self.pkg_names.push(pkg_name.clone());
        let mut all = vec![];

        // subpackages first (their resources are visible to this pipeline)
        let subs = match depth {
            0 => self.rng.range(0, 3),
            1 => self.rng.range(0, 2),
            _ => 0,
        };
        let mut krmignore = vec![];
        let mut sub_dirs = vec![];
        for _ in 0..subs {
            let id = self.id();
            let sub = match self.rng.below(6) {
                0 => format!("nested/sub-{id}"),
                1 => format!("Z-sub-{id}"),
                2 => {
                    krmignore.push("vendor/".to_string());
                    format!("vendor/sub-{id}")
                }
                3 => format!("a.dir/deep/sub-{id}"),
                _ => format!("sub-{id}"),
            };
            sub_dirs.push(sub.clone());
            let info = self.package(&join(dir, &sub), depth + 1);
            all.extend(info.all);
        }

        // own resources
        let mut own = vec![];
        self.resource_file(dir, "resources.yaml", 3, &mut own);
        if self.rng.chance(40) {
            let name = *self.rng.pick(&[
                "more.yml",
                "more.yml",
                "with space.yaml",
                "ünïcode-名前.yaml",
            ]);
            self.resource_file(dir, name, 2, &mut own);
        }
        if self.rng.chance(35) {
            let (r, text) = self.json_resource("data.json");
            own.push(Res {
                pkg: dir.to_string(),
                ..r
            });
            self.finish_text(&join(dir, "data.json"), text + "\n");
        }
        if self.rng.chance(25) {
            self.resource_file(dir, ".hidden.yaml", 1, &mut own);
        }
        if self.rng.chance(15) {
            self.resource_file(dir, ".github/ci.yaml", 1, &mut own);
        }
        if self.rng.chance(35) {
            self.resource_file(dir, "dir/nested.yaml", 2, &mut own);
        }
        if self.rng.chance(15) {
            self.resource_file(dir, "dir/deeper/x.yaml", 1, &mut own);
        }
        // files that are not resources
        if self.rng.chance(30) {
            self.files.insert(
                join(dir, "README.md"),
                b"# A package\n\nnot: yaml: at all\n".to_vec(),
            );
        }
        if self.rng.chance(20) {
            self.files
                .insert(join(dir, "NOTKRM.YAML"), b"just: a map\n".to_vec());
        }
        if self.rng.chance(20) {
            self.files.insert(join(dir, "empty.yaml"), Vec::new());
        }
        if self.rng.chance(20) {
            self.files.insert(
                join(dir, "only-comments.yaml"),
                b"# nothing here\n# at all\n".to_vec(),
            );
        }
        if self.rng.chance(25) {
            krmignore.push("ignored/".into());
            krmignore.push("*.bak.yaml".into());
            self.files.insert(
                join(dir, "ignored/not-krm.yaml"),
                b"not: a resource\n".to_vec(),
            );
            self.files
                .insert(join(dir, "old.bak.yaml"), b"- a list, not KRM\n".to_vec());
            if self.rng.chance(50) {
                // a link to an ignored file: read (and written) through the link
                let (r, d) = self.resource("linked.yaml", 0);
                own.push(Res {
                    pkg: dir.to_string(),
                    ..r
                });
                self.files
                    .insert(join(dir, "ignored/real.yaml"), d.text().into_bytes());
                self.links
                    .insert(join(dir, "linked.yaml"), "ignored/real.yaml".into());
            }
        }
        if self.rng.chance(10) {
            // directory links are never followed
            let target = if self.rng.chance(50) { "." } else { "nowhere" };
            self.links.insert(join(dir, "linkdir"), target.into());
        }
        if self.rng.chance(5) {
            // kustomization files are exempt from the KRM check
            self.files.insert(
                join(dir, "kustomization.yaml"),
                b"resources:\n- resources.yaml\ncommonLabels:\n  a: b\n".to_vec(),
            );
        }
        if self.rng.chance(1) {
            // on purpose: a resource without apiVersion fails the render
            self.expect_failure = true;
            self.files.insert(
                join(dir, "not-krm.yaml"),
                b"kind: ConfigMap\nmetadata:\n  name: no-api-version\n".to_vec(),
            );
        }
        if !krmignore.is_empty() {
            krmignore.dedup();
            let text = format!("# files kpt must not read\n{}\n", krmignore.join("\n"));
            self.files
                .insert(join(dir, ".krmignore"), text.into_bytes());
        }

        // pipeline
        let with_pipeline = self.rng.chance(if depth == 0 { 85 } else { 55 });
        let mut pipeline = String::new();
        let wide = self.rng.chance(50);
        // list items under a key at column 2: column 4 (wide) or 2 (compact)
        let item_col = if wide { 4 } else { 2 };
        self.cur_subs = sub_dirs;
        if !with_pipeline && self.rng.chance(20) {
            let empty = *self.rng.pick(&[
                "pipeline: {}\n",
                "pipeline:\n  mutators: []\n",
                "pipeline:\n",
            ]);
            pipeline.push_str(empty);
        }
        if with_pipeline {
            let mut visible: Vec<Res> = all.iter().chain(own.iter()).cloned().collect();
            let mut mutators = vec![];
            for _ in 0..self.rng.range(1, 3) {
                mutators.push(self.function(dir, &mut own, &mut visible, true));
            }
            let mut validators = vec![];
            if self.rng.chance(35) {
                for _ in 0..self.rng.range(1, 2) {
                    validators.push(self.function(dir, &mut own, &mut visible, false));
                }
            }
            pipeline.push_str("pipeline:\n");
            for (key, fns) in [("mutators", mutators), ("validators", validators)] {
                if fns.is_empty() {
                    continue;
                }
                let _ = writeln!(pipeline, "  {key}:");
                for f in fns {
                    for (i, line) in f.lines().enumerate() {
                        let lead = if i == 0 {
                            format!("{}- ", sp(item_col))
                        } else {
                            sp(item_col + 2)
                        };
                        let _ = writeln!(pipeline, "{lead}{line}");
                    }
                }
            }
        }
        all.extend(own);

        // the Kptfile
        let mut k = String::new();
        if self.rng.chance(30) {
            k.push_str("# Kptfile of the package\n");
        }
        let _ = write!(
            k,
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {pkg_name}"
        );
        k.push_str(if self.rng.chance(20) {
            " # the package name\n"
        } else {
            "\n"
        });
        if self.rng.chance(25) {
            k.push_str("  annotations:\n    config.kubernetes.io/local-config: \"true\"\n");
        }
        if self.rng.chance(30) {
            k.push_str("info:\n  description: a generated package\n");
            if self.rng.chance(50) {
                let _ = write!(k, "  keywords:\n{0}- one\n{0}- 'two'\n", sp(item_col));
            }
        }
        if self.rng.chance(15) {
            k.push_str(
                "upstream:\n  type: git\n  git:\n    repo: https://example.com/repo\n    directory: /pkg\n    ref: main\n  updateStrategy: resource-merge\nupstreamLock:\n  type: git\n  git:\n    repo: https://example.com/repo\n    directory: /pkg\n    ref: main\n    commit: 0123456789abcdef\n",
            );
        }
        k.push_str(&pipeline);
        if self.rng.chance(10) {
            k.push_str("inventory:\n  namespace: ns-a\n  name: inv\n  inventoryID: 1234-abcd\n");
        }
        if self.rng.chance(10) {
            k = k.replace('\n', "\r\n");
        }
        self.files.insert(join(dir, "Kptfile"), k.into_bytes());
        PkgInfo { all }
    }

    /// One pipeline function (YAML lines of the list item, unindented).
    fn function(
        &mut self,
        dir: &str,
        own: &mut Vec<Res>,
        visible: &mut Vec<Res>,
        mutator: bool,
    ) -> String {
        let fns = self.fns.clone();
        let movable: Vec<Res> = visible.iter().filter(|r| !r.config).cloned().collect();
        // a swap of two documents must see both: no selectors then (with
        // one of them unselected kpt fails on the duplicate index)
        let mut swap = false;
        let exec = if !mutator {
            match self.rng.below(10) {
                0..=3 => format!("{fns}/identity.sh"),
                4..=6 => format!("{fns}/validator-mutates.py"),
                7 if self.rng.chance(10) => {
                    self.expect_failure = true;
                    format!("{fns}/fail.sh 2 {}", self.rng.range(1, 6))
                }
                _ => format!("{fns}/stderr-results.py {}", self.rng.range(0, 6)),
            }
        } else {
            match self.rng.below(20) {
                0 | 1 => format!("{fns}/identity.sh"),
                2..=4 => format!("{fns}/pyyaml-requote.py"),
                5 | 6 => {
                    let id = self.id();
                    format!("{fns}/sort-keys.py new{id}")
                }
                7 | 8 => {
                    // unique per function: running it twice never repeats a key
                    let id = self.id();
                    format!(
                        "{fns}/add-field.py {}{id}",
                        self.rng.pick(&["v", "yes-", "x-y-"])
                    )
                }
                9..=11 => {
                    let mut specs = vec![];
                    for _ in 0..self.rng.range(1, 3) {
                        let id = self.id();
                        let kind = *self.rng.pick(&["ConfigMap", "Service", "Widget"]);
                        let mut spec = if self.rng.chance(50) {
                            format!("{kind}:ns-g/gen-{id}")
                        } else {
                            format!("{kind}:gen-{id}")
                        };
                        match self.rng.below(10) {
                            // into a subpackage's directory (it belongs there next time)
                            0 | 1 if !self.cur_subs.is_empty() => {
                                let sub = self.rng.pick(&self.cur_subs).clone();
                                let _ = write!(spec, "@{sub}/gen-{id}.yaml");
                            }
                            // absolute: kpt makes it relative to the package
                            2 => {
                                let _ = write!(spec, "@/abs/dir/gen-{id}.yaml");
                            }
                            3 => {
                                let _ = write!(spec, "@./explicit/gen-{id}.yml");
                            }
                            _ => {}
                        }
                        visible.push(Res {
                            name: format!("gen-{id}"),
                            pkg: dir.to_string(),
                            kind: kind.into(),
                            api_version: String::new(),
                            namespace: None,
                            file: String::new(),
                            index: 0,
                            app: None,
                            config: false,
                        });
                        specs.push(spec);
                    }
                    format!("{fns}/generate.py {}", specs.join(" "))
                }
                12 | 13 if !movable.is_empty() => {
                    let mut names = vec![self.rng.pick(&movable).name.clone()];
                    if self.rng.chance(30) {
                        names.push(self.rng.pick(&movable).name.clone());
                    }
                    if self.rng.chance(10) && !self.pkg_names.is_empty() {
                        names.push(self.rng.pick(&self.pkg_names).clone());
                    }
                    format!("{fns}/delete.py {}", names.join(" "))
                }
                14 | 15 if !movable.is_empty() => {
                    let legacy = if self.rng.chance(40) { "--legacy " } else { "" };
                    // swap two documents of one file, or move one resource
                    let multi: Vec<&Res> = movable
                        .iter()
                        .filter(|r| r.index == 1 && !r.file.is_empty())
                        .collect();
                    let spec = if !multi.is_empty() && self.rng.chance(50) {
                        let b = (*self.rng.pick(&multi)).clone();
                        let a = movable
                            .iter()
                            .find(|r| {
                                r.pkg == b.pkg
                                    && r.file == b.file
                                    && r.index == 0
                                    && r.name != b.name
                            })
                            .cloned();
                        match a {
                            Some(a) => {
                                swap = true;
                                let first = shell_word(&format!("{}={}:1", a.name, a.file));
                                format!(
                                    "{first} {}",
                                    shell_word(&format!("{}={}:0", b.name, b.file))
                                )
                            }
                            None => format!("{}=moved/{}.yaml:0", b.name, b.name),
                        }
                    } else {
                        let r = self.rng.pick(&movable).clone();
                        let ext = if self.rng.chance(25) { "json" } else { "yaml" };
                        format!("{}=moved/{}.{ext}:0", r.name, r.name)
                    };
                    format!("{fns}/move.py {legacy}{spec}")
                }
                16 => {
                    // the exact ResourceList (or functionConfig) a function
                    // gets, saved into a generated ConfigMap
                    let id = self.id();
                    match self.rng.below(3) {
                        0 => format!("{fns}/echo.py input echo-{id}"),
                        1 => format!("{fns}/echo.py config echo-{id}"),
                        _ => format!("{fns}/stderr-results.py {}", self.rng.range(0, 7)),
                    }
                }
                17 => match self.rng.below(4) {
                    0 => format!("{fns}/stderr-results.py --legacy {}", self.rng.range(0, 3)),
                    1 => format!("{fns}/as-list.sh"),
                    2 if self.rng.chance(30) => format!("{fns}/move.py --strip"),
                    _ => format!("{fns}/stderr-results.py {}", self.rng.range(0, 7)),
                },
                18 if self.rng.chance(10) => {
                    self.expect_failure = true;
                    format!(
                        "{fns}/fail.sh {} {}",
                        self.rng.range(1, 4),
                        self.rng.range(0, 6)
                    )
                }
                _ => format!("{fns}/identity.sh"),
            }
        };
        let mut f = String::new();
        if self.rng.chance(15) {
            let id = self.id();
            let _ = writeln!(f, "name: step-{id}");
        }
        let _ = writeln!(f, "exec: {exec}");
        match self.rng.below(4) {
            0 => {
                let _ = writeln!(
                    f,
                    "configMap:\n  greeting: hello\n  num: 1\n  flag: true\n  quoted: \"007\"{}",
                    self.rng.pick(&[
                        "",
                        "\n  colon: \"a: b\"\n  empty: \"\"\n  'single': 'it''s'",
                        "\n  multi: |\n    line 1\n    line 2\n  unicode: héllo",
                        "\n  z-last: z\n  a-first: a\n  nul: null\n  float: 1.50",
                    ])
                );
            }
            1 => {
                let rel = self.config_file(dir, own);
                let _ = writeln!(f, "configPath: {rel}");
            }
            _ => {}
        }
        if self.rng.chance(25) && !swap {
            let _ = writeln!(f, "selectors:");
            let n = self.rng.range(1, 2);
            let mut kinds = vec![];
            for _ in 0..n {
                let r = if visible.is_empty() {
                    None
                } else {
                    Some(self.rng.pick(visible).clone())
                };
                // two selectors matching the same resource make kpt fail (a
                // kpt bug, kept on purpose): two selectors are two names
                let which = if n == 2 { 1 } else { self.rng.below(7) };
                let sel = match (which, &r) {
                    (0, Some(r)) if !r.api_version.is_empty() => {
                        format!("kind: {}\n  apiVersion: {}", r.kind, r.api_version)
                    }
                    (1, Some(r)) => format!("name: {}", r.name),
                    (2, _) => format!("namespace: {}", self.rng.pick(&["ns-a", "ns-b"])),
                    (3, Some(r)) if r.app.is_some() => {
                        format!("labels:\n    app: {}", r.app.as_ref().unwrap())
                    }
                    (4, _) => {
                        "annotations:\n    config.kubernetes.io/local-config: \"true\"".to_string()
                    }
                    (5, _) => "{}".to_string(),
                    (_, Some(r)) => format!("kind: {}", r.kind),
                    _ => "kind: ConfigMap".to_string(),
                };
                if kinds.contains(&sel) {
                    continue;
                }
                kinds.push(sel.clone());
                for (i, line) in sel.lines().enumerate() {
                    let _ = writeln!(f, "{}{line}", if i == 0 { "- " } else { "" });
                }
            }
        }
        if self.rng.chance(20) && !swap {
            let _ = writeln!(f, "exclude:");
            match self.rng.below(3) {
                0 => {
                    let _ = writeln!(f, "- kind: Kptfile");
                }
                1 if !visible.is_empty() => {
                    let r = self.rng.pick(visible).clone();
                    let _ = writeln!(f, "- name: {}", r.name);
                }
                _ => {
                    let _ = writeln!(f, "- namespace: ns-a\n- kind: Kptfile");
                }
            }
        }
        f
    }
}

/// The generated tree of `seed`; `fns` is the absolute path of
/// `testdata/functions` (written into the `exec:` of every function).
pub fn generate(seed: u64, fns: &str) -> Case {
    let mut g = Gen {
        rng: Rng::new(seed),
        n: 0,
        fns: fns.to_string(),
        files: BTreeMap::new(),
        expect_failure: false,
        pkg_names: vec![],
        cur_subs: vec![],
        links: BTreeMap::new(),
    };
    g.package("", 0);
    let mut flags = vec![];
    if g.rng.chance(20) {
        flags.push("--truncate-output=false".to_string());
    }
    Case {
        seed,
        files: g.files,
        links: g.links,
        flags,
        expect_failure: g.expect_failure,
    }
}

/// Writes the case's tree under `dir`.
pub fn write_case(case: &Case, dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    for (rel, bytes) in &case.files {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
    }
    for (rel, target) in &case.links {
        let p = dir.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(target, &p).unwrap();
    }
}

// ---------------------------------------------------------------------------
// Running both tools.

/// The directory holding the python3 that has PyYAML (put first on PATH so
/// `#!/usr/bin/env python3` skips version-manager shims), or why not.
pub(crate) fn python_dir() -> Result<PathBuf, String> {
    let out = Command::new("python3")
        .args(["-c", "import sys, yaml; print(sys.executable)"])
        .output()
        .map_err(|e| format!("python3 does not run: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "python3 has no PyYAML (pip install pyyaml): {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let exe = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string());
    Ok(exe.parent().unwrap().to_path_buf())
}

/// The output modes every tree is rendered in: label and flags. The last,
/// `re-render`, renders kpt's in-place result again (when kpt succeeded).
pub const MODES: &[(&str, &[&str])] = &[
    ("in-place", &["--results-dir", "<RESULTS>"]),
    ("stdout", &["-o", "stdout", "--results-dir", "<RESULTS>"]),
    ("unwrap", &["-o", "unwrap"]),
    ("out-dir", &["-o", "out", "--results-dir", "<RESULTS>"]),
    ("re-render", &["--results-dir", "<RESULTS>"]),
];

/// Where failing seeds are written: `target/diff-failures`.
fn failures_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("diff-failures")
}

/// Outcome of one seed: `Err` holds the report of the first difference.
struct SeedRun {
    kpt_failed: bool,
    expect_failure: bool,
    result: Result<(), String>,
}

fn run_seed(seed: u64, fns: &str, path: &str, work: &Path) -> SeedRun {
    let case = generate(seed, fns);
    let _ = std::fs::remove_dir_all(failures_dir().join(seed.to_string()));
    if let Ok(keep) = std::env::var("KRMGRAPH_DIFF_WRITE") {
        write_case(&case, &Path::new(&keep).join(seed.to_string()).join("pkg"));
    }
    let dir = work.join(format!("seed-{seed}"));
    let (kpt_failed, diffs) = render_case(&case, path, &dir);
    let result = if diffs.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    } else {
        Err(save_failure(&case, &diffs.join("\n")))
    };
    SeedRun {
        kpt_failed,
        expect_failure: case.expect_failure,
        result,
    }
}

/// Writes `case` to `<dir>/pkg` and renders it with both tools in every
/// mode of [`MODES`] (each under `<dir>/<mode>/<tool>`, left in place);
/// returns whether kpt failed and one report per mode that differs.
fn render_case(case: &Case, path: &str, dir: &Path) -> (bool, Vec<String>) {
    let src = dir.join("pkg");
    write_case(case, &src);
    let env = [("PATH", path)];
    let mut kpt_failed = false;
    let mut diffs = vec![];
    for (mode, mode_args) in MODES {
        let mut args: Vec<&str> = vec!["--allow-exec"];
        args.extend_from_slice(mode_args);
        args.extend(case.flags.iter().map(String::as_str));
        let mode_work = dir.join(mode);
        // the second render starts from kpt's in-place result (as kpt's e2e
        // tests do: a render of a rendered tree)
        let src = if *mode == "re-render" {
            let first = dir.join("in-place/kpt/pkg");
            if kpt_failed || !first.is_dir() {
                continue;
            }
            first
        } else {
            src.clone()
        };
        let kpt = root_relative(
            render_with_env("kpt", &mode_work, &src, &args, &env),
            &mode_work.join("kpt"),
        );
        let ours = root_relative(
            render_with_env("krmgraph", &mode_work, &src, &args, &env),
            &mode_work.join("krmgraph"),
        );
        kpt_failed |= kpt.exit_code != 0;
        if describe_difference(&kpt, &ours).is_some() {
            diffs.push(format!(
                "== mode {mode}: {}\n{}",
                args.join(" "),
                differences(&kpt, &ours)
            ));
        }
    }
    (kpt_failed, diffs)
}

/// Replaces the tool's own directory (`<work>/<tool>`, which differs
/// between the tools) by `<ROOT>` in the rendered files: absolute package
/// paths can end up in files (a function may write them).
pub(crate) fn root_relative(mut r: Rendered, base: &Path) -> Rendered {
    let base = base.to_string_lossy().to_string();
    for bytes in r.files.values_mut() {
        if let Ok(text) = std::str::from_utf8(bytes) {
            if text.contains(&base) {
                *bytes = text.replace(&base, "<ROOT>").into_bytes();
            }
        }
    }
    r
}

/// Every difference between two renders, each as a short one-hunk diff.
fn differences(kpt: &Rendered, ours: &Rendered) -> String {
    let mut out = String::new();
    if kpt.exit_code != ours.exit_code {
        let _ = writeln!(
            out,
            "exit code: kpt {} krmgraph {}",
            kpt.exit_code, ours.exit_code
        );
    }
    let names: std::collections::BTreeSet<&String> =
        kpt.files.keys().chain(ours.files.keys()).collect();
    for name in names {
        match (kpt.files.get(name), ours.files.get(name)) {
            (Some(a), Some(b)) if a == b => {}
            (Some(_), None) => {
                let _ = writeln!(out, "file {name}: only kpt has it");
            }
            (None, Some(_)) => {
                let _ = writeln!(out, "file {name}: only krmgraph has it");
            }
            (Some(a), Some(b)) => out.push_str(&hunk(
                &format!("file {name}"),
                &String::from_utf8_lossy(a),
                &String::from_utf8_lossy(b),
            )),
            (None, None) => unreachable!(),
        }
    }
    if kpt.stdout != ours.stdout {
        out.push_str(&hunk("stdout", &kpt.stdout, &ours.stdout));
    }
    if kpt.stderr != ours.stderr {
        out.push_str(&hunk("stderr", &kpt.stderr, &ours.stderr));
    }
    out
}

/// The lines between the first and the last difference of `a` (kpt) and
/// `b` (krmgraph), with two lines of context, at most 15 lines a side.
fn hunk(label: &str, a: &str, b: &str) -> String {
    let al: Vec<&str> = a.split_inclusive('\n').collect();
    let bl: Vec<&str> = b.split_inclusive('\n').collect();
    let first = al.iter().zip(&bl).take_while(|(x, y)| x == y).count();
    let max_suffix = al.len().min(bl.len()) - first;
    let suffix = al
        .iter()
        .rev()
        .zip(bl.iter().rev())
        .take(max_suffix)
        .take_while(|(x, y)| x == y)
        .count();
    let mut out = format!("{label}: differs from line {}\n", first + 1);
    for l in &al[first.saturating_sub(2)..first] {
        let _ = writeln!(out, "   {:?}", l);
    }
    for (sign, lines) in [
        ("kpt", &al[first..al.len() - suffix]),
        ("krm", &bl[first..bl.len() - suffix]),
    ] {
        for l in lines.iter().take(15) {
            let _ = writeln!(out, "{sign} {:?}", l);
        }
        if lines.len() > 15 {
            let _ = writeln!(out, "{sign} ... {} more line(s)", lines.len() - 15);
        }
    }
    out
}

/// Writes `target/diff-failures/<seed>/{pkg/,README.txt}`; returns the report.
fn save_failure(case: &Case, diffs: &str) -> String {
    let dir = failures_dir().join(case.seed.to_string());
    write_case(case, &dir.join("pkg"));
    let flags = case.flags.join(" ");
    let report = format!(
        "seed {seed} differs from kpt; the generated tree is {dir}/pkg\n\
         reproduce: KRMGRAPH_DIFF_SEED={seed} cargo test -p krmgraph --test it generated_trees -- --nocapture\n\
         or by hand, with the python3 that has PyYAML first on PATH (copy first: in-place renders change the tree):\n  \
         cp -r {dir}/pkg /tmp/k && kpt fn render /tmp/k --allow-exec {flags} [-o stdout|unwrap|DIR] [--results-dir R]\n  \
         cp -r {dir}/pkg /tmp/g && krmgraph render /tmp/g --allow-exec {flags} [same flags]\n\n{diffs}",
        seed = case.seed,
        dir = dir.display(),
    );
    let _ = std::fs::write(dir.join("README.txt"), &report);
    report
}

fn seeds() -> Vec<u64> {
    if let Ok(s) = std::env::var("KRMGRAPH_DIFF_SEED") {
        let num = |x: &str| -> u64 {
            x.trim()
                .parse()
                .expect("KRMGRAPH_DIFF_SEED: N, N..M or a list")
        };
        return s
            .split(',')
            .flat_map(|x| match x.split_once("..") {
                Some((a, b)) => (num(a)..num(b)).collect::<Vec<_>>(),
                None => vec![num(x)],
            })
            .collect();
    }
    let n = std::env::var("KRMGRAPH_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEEDS);
    (0..n).collect()
}

/// The functions' directory and the PATH to run them with, when kpt and
/// python3 with PyYAML are here (else `None` after printing why, or a
/// panic under `KRMGRAPH_REQUIRE_KPT=1`).
fn functions_and_path(test: &str) -> Option<(String, String)> {
    if !kpt_available(test) {
        return None;
    }
    let pydir = match python_dir() {
        Ok(d) => d,
        Err(why) => {
            if std::env::var("KRMGRAPH_REQUIRE_KPT").as_deref() == Ok("1") {
                panic!("{test}: {why}");
            }
            eprintln!("skipping {test}: {why}");
            return None;
        }
    };
    let fns = repo_root().join("testdata/functions");
    let path = format!(
        "{}:{}",
        pydir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Some((fns.to_string_lossy().to_string(), path))
}

#[test]
fn generated_trees_match_kpt() {
    let Some((fns, path)) = functions_and_path("generated_trees_match_kpt") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let seeds = seeds();
    let start = Instant::now();
    // two workers: kpt and the functions are mostly waiting on processes
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let Some(&seed) = seeds.get(i) else { break };
                let t = Instant::now();
                let run = run_seed(seed, &fns, &path, work.path());
                let kpt = match (run.kpt_failed, run.expect_failure) {
                    (false, _) => "kpt succeeded",
                    (true, true) => "kpt failed, as a function fails on purpose",
                    (true, false) => "kpt failed by its own rules",
                };
                println!(
                    "seed {seed}: {} ({kpt}) in {:.1}s",
                    if run.result.is_ok() {
                        "same"
                    } else {
                        "DIFFERENT"
                    },
                    t.elapsed().as_secs_f64()
                );
                results.lock().unwrap().push((seed, run));
            });
        }
    });
    let results = results.into_inner().unwrap();
    let failed_by_kpt = results.iter().filter(|(_, r)| r.kpt_failed).count();
    let diffs: Vec<&(u64, SeedRun)> = results.iter().filter(|(_, r)| r.result.is_err()).collect();
    println!(
        "{} seeds in {:.1}s ({} where kpt fails on purpose or by kpt's rules), {} differ",
        results.len(),
        start.elapsed().as_secs_f64(),
        failed_by_kpt,
        diffs.len()
    );
    for (_, r) in &diffs {
        println!("{}", r.result.as_ref().unwrap_err());
    }
    let list: Vec<u64> = diffs.iter().map(|(s, _)| *s).collect();
    assert!(
        diffs.is_empty(),
        "seeds differing from kpt: {list:?} (trees under {})",
        failures_dir().display()
    );
}

/// A Kptfile named `name` whose pipeline runs the exec commands given
/// (relative to `fns`).
fn kptfile(name: &str, fns: &str, mutators: &[&str], validators: &[&str]) -> String {
    let mut out = format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n");
    out.push_str("pipeline:\n");
    for (key, list) in [("mutators", mutators), ("validators", validators)] {
        if !list.is_empty() {
            let _ = writeln!(out, "  {key}:");
        }
        for f in list {
            let _ = writeln!(out, "  - exec: {fns}/{f}");
        }
    }
    out
}

/// A package tree whose last subpackage's validator fails after the
/// mutators of its sibling and its own ran: `apps/ok` (a mutator and a
/// passing validator), then `apps/zz-bad` (a mutator printing stderr and
/// results, a mutator editing, then `fail.sh 1 3` as validator: three
/// stderr lines, exit 1); the root's mutator never runs.
fn failing_validator_case(fns: &str) -> Case {
    let cm = |name: &str| {
        format!(
            "# {name}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name} # kept\n\n\
             data:\n  k: \"v\"\n  list:\n    - a\n"
        )
    };
    let files = [
        ("Kptfile", kptfile("root", fns, &["add-field.py root"], &[])),
        ("a.yaml", cm("a")),
        (
            "apps/ok/Kptfile",
            kptfile("ok", fns, &["add-field.py ok"], &["identity.sh"]),
        ),
        ("apps/ok/cm.yaml", cm("ok")),
        (
            "apps/zz-bad/Kptfile",
            kptfile(
                "zz-bad",
                fns,
                &["stderr-results.py 2", "add-field.py bad"],
                &["fail.sh 1 3"],
            ),
        ),
        ("apps/zz-bad/cm.yaml", cm("bad")),
    ];
    Case {
        seed: 0,
        files: files
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into_bytes()))
            .collect(),
        links: BTreeMap::new(),
        flags: vec![],
        expect_failure: true,
    }
}

/// A subpackage's validator fails after mutators ran: in every output mode
/// kpt and krmgraph exit 1 with the same stderr and `results.yaml` (the
/// mutators' entries, then the validator's), and nothing is written.
#[test]
fn failing_validator_matches_kpt() {
    let Some((fns, path)) = functions_and_path("failing_validator_matches_kpt") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let case = failing_validator_case(&fns);
    let (kpt_failed, diffs) = render_case(&case, &path, work.path());
    assert!(
        diffs.is_empty(),
        "krmgraph differs from kpt:\n{}",
        diffs.join("\n")
    );
    assert!(kpt_failed, "the validator must fail the render");
    for tool in ["kpt", "krmgraph"] {
        let base = work.path().join("in-place").join(tool);
        assert_eq!(
            read_tree(&base.join("pkg")),
            case.files,
            "{tool} wrote to the tree"
        );
        let results = std::fs::read_to_string(base.join("results/results.yaml")).unwrap();
        let fail = format!(
            "  - exec: {fns}/fail.sh 1 3\n    stderr: |\n      fail.sh: problem 1 of 3\n      \
             fail.sh: problem 2 of 3\n      fail.sh: problem 3 of 3\n    exitCode: 1\n"
        );
        assert!(
            results.contains(&format!("exec: {fns}/add-field.py bad\n")) && results.contains(&fail),
            "{tool}'s results.yaml lacks the mutators or the failed validator:\n{results}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generator_is_deterministic() {
        let a = generate(7, "/fns");
        let b = generate(7, "/fns");
        assert_eq!(a.files, b.files);
        assert_ne!(generate(8, "/fns").files, a.files);
        assert!(a.files.contains_key("Kptfile"));
    }

    #[test]
    fn rng_covers_its_range() {
        let mut r = Rng::new(1);
        let mut seen = [false; 5];
        for _ in 0..200 {
            seen[r.below(5)] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
}
