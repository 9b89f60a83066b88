//! The step cache's binary encoding of what a step or subtree gives back:
//! resource node trees, progress events and function results.
//!
//! Replaying a step must give exactly what running it gives, so node trees
//! keep everything a [`Node`] holds — kind, style, tag, value, anchor,
//! head/line/foot comments, line and column — and decode to equal trees.
//! Re-parsing YAML text would be both slower and lossy (positions, styles
//! chosen by the emitter), hence this format.
//!
//! Location independence: every string is written with the render's root
//! directory cut out of it (as a list of pieces the root joins again), and
//! decoding joins the pieces with the root of the render that reads it. A
//! render of the same tree in another checkout then encodes to the same
//! bytes (so keys built from these bytes match), and a replay there gets its
//! own absolute paths back (`package-path` annotations). Roots of fewer than
//! two components (`/`, `/a`) are not cut out: they would match too much.
//!
//! Layout (all integers LEB128 varints; `i` signed ones zigzag):
//!
//! ```text
//! blob     := magic count × node | magic log
//! string   := 2n varint, n bytes                (no root inside)
//!           | 2k+1 varint, k × (len varint, bytes) (pieces joined by the root)
//! node     := kind u8, style u8, tag, flags u8, [value] [anchor] [head]
//!             [line] [foot] (as flags say), line, column, count, count × node
//! tag      := u8 code of a common tag | 0xff string
//! ```
//!
//! Decoding never panics: malformed bytes read as `None` (the caller treats
//! the record as a miss).

use std::time::Duration;

use compact_str::CompactString;
use rayon::prelude::*;

use krmgraph_fn::event::Event;
use krmgraph_fn::results::{Field, File, FnResult, ResourceRef, ResultItem};
use krmgraph_yaml::node::{Kind, Style};
use krmgraph_yaml::Node;

/// The first bytes of a node-list blob; a change of layout changes them.
const NODES_MAGIC: &[u8] = b"krmgraph nodes 1\n";
/// The first bytes of a log blob (events and results).
const LOG_MAGIC: &[u8] = b"krmgraph log 1\n";
/// The first bytes of a block's facts.
const FACTS_MAGIC: &[u8] = b"krmgraph facts 1\n";
/// The first bytes of the list of files a block is written to.
const FILES_MAGIC: &[u8] = b"krmgraph files 1\n";

/// From this many nodes on, [`encode_nodes`] encodes them in parallel.
const PARALLEL_NODES: usize = 64;

/// Nesting deeper than this is not encoded (the step is not cached), so
/// decoding cannot recurse without bound.
const MAX_DEPTH: usize = 2_000;

/// Tags common enough to get a one-byte code; the index is the code.
const TAGS: &[&str] = &[
    "",
    "!!str",
    "!!map",
    "!!seq",
    "!!int",
    "!!bool",
    "!!null",
    "!!float",
    "!!timestamp",
    "!!binary",
    "!!merge",
];
const CUSTOM_TAG: u8 = 0xff;

/// The root directory cut out of strings, when it is specific enough.
#[derive(Clone, Debug)]
pub struct Root {
    dir: String,
    /// A searcher for `dir`, built once: every string of a record at least
    /// as long as the root is searched.
    finder: memchr::memmem::Finder<'static>,
}

impl Root {
    /// The root of a render at `dir` (absolute, cleaned).
    pub fn new(dir: &str) -> Root {
        let components = dir.split('/').filter(|c| !c.is_empty()).count();
        let dir = if components >= 2 {
            dir.to_string()
        } else {
            String::new()
        };
        let finder = memchr::memmem::Finder::new(dir.as_bytes()).into_owned();
        Root { dir, finder }
    }
}

impl Default for Root {
    fn default() -> Root {
        Root::new("")
    }
}

/// The one-byte code of a common tag.
fn tag_code(tag: &str) -> Option<u8> {
    Some(match tag {
        "" => 0,
        "!!str" => 1,
        "!!map" => 2,
        "!!seq" => 3,
        "!!int" => 4,
        "!!bool" => 5,
        "!!null" => 6,
        "!!float" => 7,
        "!!timestamp" => 8,
        "!!binary" => 9,
        "!!merge" => 10,
        _ => return None,
    })
}

/// Encodes node lists, events and results.
pub struct Encoder<'r> {
    out: Vec<u8>,
    root: &'r Root,
}

impl<'r> Encoder<'r> {
    fn new(root: &'r Root, magic: &[u8]) -> Encoder<'r> {
        Encoder {
            out: magic.to_vec(),
            root,
        }
    }

    fn varint(&mut self, mut n: u64) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                self.out.push(byte);
                return;
            }
            self.out.push(byte | 0x80);
        }
    }

    fn signed(&mut self, n: i64) {
        self.varint(((n << 1) ^ (n >> 63)) as u64);
    }

    fn raw(&mut self, bytes: &[u8]) {
        self.varint(bytes.len() as u64);
        self.out.extend_from_slice(bytes);
    }

    fn string(&mut self, s: &str) {
        let root = self.root.dir.as_str();
        // Most strings are shorter than the root's path, so cannot hold it.
        if root.is_empty() || s.len() < root.len() || self.root.finder.find(s.as_bytes()).is_none()
        {
            self.varint((s.len() as u64) << 1);
            self.out.extend_from_slice(s.as_bytes());
            return;
        }
        let pieces: Vec<&str> = s.split(root).collect();
        self.varint(((pieces.len() as u64) << 1) | 1);
        for piece in pieces {
            self.raw(piece.as_bytes());
        }
    }

    fn node(&mut self, node: &Node, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.out.push(kind_code(node.kind));
        self.out.push(node.style.0);
        match tag_code(&node.tag) {
            Some(code) => self.out.push(code),
            None => {
                self.out.push(CUSTOM_TAG);
                self.string(&node.tag);
            }
        }
        let optional = [
            &node.value,
            node.anchor(),
            node.head_comment(),
            node.line_comment(),
            node.foot_comment(),
        ];
        let flags =
            optional
                .iter()
                .enumerate()
                .fold(0u8, |f, (i, s)| if s.is_empty() { f } else { f | 1 << i });
        self.out.push(flags);
        for s in optional.into_iter().filter(|s| !s.is_empty()) {
            self.string(s);
        }
        self.varint(node.line as u64);
        self.varint(node.column as u64);
        self.varint(node.content.len() as u64);
        for child in &node.content {
            self.node(child, depth + 1)?;
        }
        Some(())
    }

    /// A flag byte, then (if there is a value) what `write` writes.
    fn maybe<T>(
        &mut self,
        value: Option<&T>,
        write: impl FnOnce(&mut Self, &T) -> Option<()>,
    ) -> Option<()> {
        match value {
            None => {
                self.out.push(0);
                Some(())
            }
            Some(v) => {
                self.out.push(1);
                write(self, v)
            }
        }
    }

    fn option_node(&mut self, node: Option<&Node>) -> Option<()> {
        self.maybe(node, |e, n| e.node(n, 0))
    }

    fn result_item(&mut self, item: &ResultItem) -> Option<()> {
        self.string(&item.message);
        self.string(&item.severity);
        self.maybe(item.resource_ref.as_ref(), |e, r| {
            for s in [&r.api_version, &r.kind, &r.name, &r.namespace] {
                e.string(s);
            }
            Some(())
        })?;
        self.maybe(item.field.as_ref(), |e, f| {
            e.string(&f.path);
            e.option_node(f.current_value.as_ref())?;
            e.option_node(f.proposed_value.as_ref())
        })?;
        self.maybe(item.file.as_ref(), |e, f| {
            e.string(&f.path);
            e.signed(f.index);
            Some(())
        })?;
        self.varint(item.tags.len() as u64);
        for (k, v) in &item.tags {
            self.string(k);
            self.string(v);
        }
        Some(())
    }

    fn result_items(&mut self, items: &[ResultItem]) -> Option<()> {
        self.varint(items.len() as u64);
        items.iter().try_for_each(|i| self.result_item(i))
    }

    fn duration(&mut self, d: &Duration) {
        self.varint(d.as_nanos().min(u64::MAX as u128) as u64);
    }

    /// `None` for events that are not kpt's (the cache's own), which are
    /// never recorded.
    fn event(&mut self, event: &Event) -> Option<()> {
        match event {
            Event::PackageStarted { display_path } => {
                self.out.push(0);
                self.string(display_path);
            }
            Event::PackageFinished => self.out.push(1),
            Event::FunctionStarted { name, selected } => {
                self.out.push(2);
                self.string(name);
                self.varint(selected.map_or(0, |n| n as u64 + 1));
            }
            Event::FunctionPassed {
                name,
                duration,
                results,
                stderr,
            } => {
                self.out.push(3);
                self.string(name);
                self.duration(duration);
                self.result_items(results)?;
                self.string(stderr);
            }
            Event::FunctionFailed {
                name,
                duration,
                results,
                exit,
            } => {
                self.out.push(4);
                self.string(name);
                self.duration(duration);
                self.result_items(results)?;
                self.maybe(exit.as_ref(), |e, (stderr, code)| {
                    e.string(stderr);
                    e.signed(i64::from(*code));
                    Some(())
                })?;
            }
            Event::Warning(message) => {
                self.out.push(5);
                self.string(message);
            }
            Event::Cache(_) => return None,
        }
        Some(())
    }

    fn fn_result(&mut self, r: &FnResult) -> Option<()> {
        self.string(&r.image);
        self.string(&r.exec);
        self.string(&r.stderr);
        self.signed(i64::from(r.exit_code));
        self.result_items(&r.results)
    }
}

/// The encoding of a list of resources; `None` when nesting is too deep.
pub fn encode_nodes(nodes: &[Node], root: &Root) -> Option<Vec<u8>> {
    let mut out = nodes_header(nodes.len());
    out.extend(encode_nodes_body(nodes, root)?);
    Some(out)
}

/// The start of the encoding of a list of `count` resources: what comes
/// before their nodes.
pub fn nodes_header(count: usize) -> Vec<u8> {
    let mut e = Encoder::new(&NO_ROOT, NODES_MAGIC);
    e.varint(count as u64);
    e.out
}

/// The nodes of [`encode_nodes`], without the header. A node's bytes
/// depend on the node alone, so the encoding of a list is its header and
/// then its parts' bodies one after the other.
pub fn encode_nodes_body(nodes: &[Node], root: &Root) -> Option<Vec<u8>> {
    if nodes.len() < PARALLEL_NODES {
        let mut e = Encoder::new(root, b"");
        for node in nodes {
            e.node(node, 0)?;
        }
        return Some(e.out);
    }
    // Large lists (the root's output, which is encoded while nothing else
    // runs) are encoded at once on the render's pool.
    let parts: Vec<Vec<u8>> = nodes
        .par_chunks(PARALLEL_NODES / 2)
        .map(|chunk| {
            let mut part = Encoder::new(root, b"");
            for node in chunk {
                part.node(node, 0)?;
            }
            Some(part.out)
        })
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    parts.iter().for_each(|part| out.extend_from_slice(part));
    Some(out)
}

/// How many resources the encoding `bytes` holds, and where their nodes
/// start; `None` when it is not an encoding of resources.
pub fn nodes_body(bytes: &[u8]) -> Option<(usize, usize)> {
    let mut d = Decoder::new(bytes, &NO_ROOT, NODES_MAGIC)?;
    let count = d.count()?;
    Some((count, bytes.len() - d.bytes.len()))
}

/// A root that cuts nothing out: for what has no strings.
static NO_ROOT: std::sync::LazyLock<Root> = std::sync::LazyLock::new(Root::default);

/// The resources `bytes` encode, with `root` put back into strings.
pub fn decode_nodes(bytes: &[u8], root: &Root) -> Option<Vec<Node>> {
    let mut d = Decoder::new(bytes, root, NODES_MAGIC)?;
    let count = d.count()?;
    let mut nodes = Vec::with_capacity(count);
    for _ in 0..count {
        nodes.push(d.node(0)?);
    }
    d.end()?;
    Some(nodes)
}

/// What a step or subtree reported: its kpt events (cache events are
/// left out) and the results it recorded for `results.yaml`; for a
/// subtree, also the files its resources came from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Log {
    /// Progress events, in order.
    pub events: Vec<Event>,
    /// One entry per function run, in order.
    pub results: Vec<FnResult>,
    /// Root-relative paths of the files resources were read from.
    pub files: Vec<String>,
}

/// The encoding of a log; `None` when a node in a result is nested too
/// deeply.
pub fn encode_log(log: &Log, root: &Root) -> Option<Vec<u8>> {
    let mut e = Encoder::new(root, LOG_MAGIC);
    let events: Vec<&Event> = log
        .events
        .iter()
        .filter(|e| !matches!(e, Event::Cache(_)))
        .collect();
    e.varint(events.len() as u64);
    for event in events {
        e.event(event)?;
    }
    e.varint(log.results.len() as u64);
    for r in &log.results {
        e.fn_result(r)?;
    }
    e.varint(log.files.len() as u64);
    for file in &log.files {
        e.string(file);
    }
    Some(e.out)
}

/// The log `bytes` encode.
pub fn decode_log(bytes: &[u8], root: &Root) -> Option<Log> {
    let mut d = Decoder::new(bytes, root, LOG_MAGIC)?;
    let events = (0..d.count()?)
        .map(|_| d.event())
        .collect::<Option<Vec<_>>>()?;
    let results = (0..d.count()?)
        .map(|_| d.fn_result())
        .collect::<Option<Vec<_>>>()?;
    let files = (0..d.count()?)
        .map(|_| d.string())
        .collect::<Option<Vec<_>>>()?;
    d.end()?;
    Some(Log {
        events,
        results,
        files,
    })
}

/// What a mutator is known to do to a block of resources it passes
/// through unchanged (`render::blocks`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BlockFacts {
    /// Each resource's item memo fingerprint in the function's input.
    pub fingerprints: Vec<[u8; 32]>,
    /// Each resource's package, cleaned path and index, as kpt's
    /// `enforcePathInvariants` compares them.
    pub keys: Vec<[String; 3]>,
    /// Whether the resources carry kpt's internal path/index/id
    /// annotations, and the legacy ones.
    pub format: (bool, bool),
}

/// The encoding of `facts`.
pub fn encode_facts(facts: &BlockFacts, root: &Root) -> Vec<u8> {
    let mut e = Encoder::new(root, FACTS_MAGIC);
    e.varint(facts.fingerprints.len() as u64);
    for (fingerprint, key) in facts.fingerprints.iter().zip(&facts.keys) {
        e.out.extend_from_slice(fingerprint);
        key.iter().for_each(|s| e.string(s));
    }
    e.out
        .extend([u8::from(facts.format.0), u8::from(facts.format.1)]);
    e.out
}

/// The facts `bytes` encode.
pub fn decode_facts(bytes: &[u8], root: &Root) -> Option<BlockFacts> {
    let mut d = Decoder::new(bytes, root, FACTS_MAGIC)?;
    let count = d.count()?;
    let mut facts = BlockFacts::default();
    for _ in 0..count {
        facts.fingerprints.push(d.take(32)?.try_into().ok()?);
        facts.keys.push([d.string()?, d.string()?, d.string()?]);
    }
    let format = (d.byte()? == 1, d.byte()? == 1);
    d.end()?;
    facts.format = format;
    Some(facts)
}

/// The encoding of a list of files: root-relative paths and digests.
pub fn encode_files(files: &[(String, [u8; 32])]) -> Vec<u8> {
    let mut e = Encoder::new(&NO_ROOT, FILES_MAGIC);
    e.varint(files.len() as u64);
    for (path, digest) in files {
        e.raw(path.as_bytes());
        e.out.extend_from_slice(digest);
    }
    e.out
}

/// The files `bytes` encode.
pub fn decode_files(bytes: &[u8]) -> Option<Vec<(String, [u8; 32])>> {
    let mut d = Decoder::new(bytes, &NO_ROOT, FILES_MAGIC)?;
    let files = (0..d.count()?)
        .map(|_| {
            let len = usize::try_from(d.varint()?).ok()?;
            let path = d.text(len)?.to_string();
            Some((path, d.take(32)?.try_into().ok()?))
        })
        .collect::<Option<Vec<_>>>()?;
    d.end()?;
    Some(files)
}

struct Decoder<'a> {
    bytes: &'a [u8],
    root: &'a Root,
}

impl<'a> Decoder<'a> {
    fn new(bytes: &'a [u8], root: &'a Root, magic: &[u8]) -> Option<Decoder<'a>> {
        Some(Decoder {
            bytes: bytes.strip_prefix(magic)?,
            root,
        })
    }

    fn end(&self) -> Option<()> {
        self.bytes.is_empty().then_some(())
    }

    fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        Some(b)
    }

    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Some(head)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut n = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Some(n);
            }
        }
        None
    }

    /// A count of items that each take at least one byte, so a corrupt
    /// count cannot make a huge allocation.
    fn count(&mut self) -> Option<usize> {
        let n = usize::try_from(self.varint()?).ok()?;
        (n <= self.bytes.len()).then_some(n)
    }

    fn signed(&mut self) -> Option<i64> {
        let n = self.varint()?;
        Some(((n >> 1) as i64) ^ -((n & 1) as i64))
    }

    fn text(&mut self, len: usize) -> Option<&'a str> {
        std::str::from_utf8(self.take(len)?).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.compact().map(String::from)
    }

    /// A string, kept inline when short (most of a node's are).
    fn compact(&mut self) -> Option<CompactString> {
        let header = self.varint()?;
        let n = usize::try_from(header >> 1).ok()?;
        if header & 1 == 0 {
            return self.text(n).map(CompactString::from);
        }
        let mut out = CompactString::default();
        for i in 0..n {
            if i > 0 {
                out.push_str(&self.root.dir);
            }
            let len = usize::try_from(self.varint()?).ok()?;
            out.push_str(self.text(len)?);
        }
        Some(out)
    }

    fn node(&mut self, depth: usize) -> Option<Node> {
        if depth > MAX_DEPTH {
            return None;
        }
        let kind = kind_of(self.byte()?)?;
        let style = Style(self.byte()?);
        let tag = match self.byte()? {
            CUSTOM_TAG => self.compact()?,
            code => CompactString::const_new(TAGS.get(usize::from(code))?),
        };
        let flags = self.byte()?;
        let mut optional = |bit: u8| -> Option<CompactString> {
            if flags & (1 << bit) == 0 {
                Some(CompactString::default())
            } else {
                self.compact()
            }
        };
        let value = optional(0)?;
        let anchor = optional(1)?;
        let head_comment = optional(2)?;
        let line_comment = optional(3)?;
        let foot_comment = optional(4)?;
        let line = u32::try_from(self.varint()?).ok()?;
        let column = u32::try_from(self.varint()?).ok()?;
        let count = self.count()?;
        let mut content = Vec::with_capacity(count);
        for _ in 0..count {
            content.push(self.node(depth + 1)?);
        }
        let mut node = Node {
            kind,
            style,
            tag,
            value,
            content,
            line,
            column,
            ..Node::default()
        };
        node.set_anchor(anchor);
        node.set_head_comment(head_comment);
        node.set_line_comment(line_comment);
        node.set_foot_comment(foot_comment);
        Some(node)
    }

    /// A flag byte, then (if set) what `read` reads.
    fn maybe<T>(&mut self, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<Option<T>> {
        match self.byte()? {
            0 => Some(None),
            1 => Some(Some(read(self)?)),
            _ => None,
        }
    }

    fn option_node(&mut self) -> Option<Option<Node>> {
        self.maybe(|d| d.node(0))
    }

    fn result_item(&mut self) -> Option<ResultItem> {
        let message = self.string()?;
        let severity = self.string()?;
        let resource_ref = self.maybe(|d| {
            Some(ResourceRef {
                api_version: d.string()?,
                kind: d.string()?,
                name: d.string()?,
                namespace: d.string()?,
            })
        })?;
        let field = self.maybe(|d| {
            Some(Field {
                path: d.string()?,
                current_value: d.option_node()?,
                proposed_value: d.option_node()?,
            })
        })?;
        let file = self.maybe(|d| {
            Some(File {
                path: d.string()?,
                index: d.signed()?,
            })
        })?;
        let tags = (0..self.count()?)
            .map(|_| Some((self.string()?, self.string()?)))
            .collect::<Option<Vec<_>>>()?;
        Some(ResultItem {
            message,
            severity,
            resource_ref,
            field,
            file,
            tags,
        })
    }

    fn result_items(&mut self) -> Option<Vec<ResultItem>> {
        (0..self.count()?).map(|_| self.result_item()).collect()
    }

    fn duration(&mut self) -> Option<Duration> {
        Some(Duration::from_nanos(self.varint()?))
    }

    fn event(&mut self) -> Option<Event> {
        Some(match self.byte()? {
            0 => Event::PackageStarted {
                display_path: self.string()?,
            },
            1 => Event::PackageFinished,
            2 => Event::FunctionStarted {
                name: self.string()?,
                selected: match self.varint()? {
                    0 => None,
                    n => Some(usize::try_from(n - 1).ok()?),
                },
            },
            3 => Event::FunctionPassed {
                name: self.string()?,
                duration: self.duration()?,
                results: self.result_items()?,
                stderr: self.string()?,
            },
            4 => Event::FunctionFailed {
                name: self.string()?,
                duration: self.duration()?,
                results: self.result_items()?,
                exit: self.maybe(|d| Some((d.string()?, i32::try_from(d.signed()?).ok()?)))?,
            },
            5 => Event::Warning(self.string()?),
            _ => return None,
        })
    }

    fn fn_result(&mut self) -> Option<FnResult> {
        Some(FnResult {
            image: self.string()?,
            exec: self.string()?,
            stderr: self.string()?,
            exit_code: i32::try_from(self.signed()?).ok()?,
            results: self.result_items()?,
        })
    }
}

fn kind_code(kind: Kind) -> u8 {
    match kind {
        Kind::Document => 0,
        Kind::Sequence => 1,
        Kind::Mapping => 2,
        Kind::Scalar => 3,
        Kind::Alias => 4,
    }
}

fn kind_of(code: u8) -> Option<Kind> {
    Some(match code {
        0 => Kind::Document,
        1 => Kind::Sequence,
        2 => Kind::Mapping,
        3 => Kind::Scalar,
        4 => Kind::Alias,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use krmgraph_fn::event::CacheEvent;

    fn parse(text: &str) -> Vec<Node> {
        krmgraph_yaml::decode::parse_documents(text.as_bytes()).unwrap()
    }

    const YAML: &str = "# head\napiVersion: v1 # line\nkind: ConfigMap\nmetadata:\n  name: &a x\n  annotations:\n    internal.config.kubernetes.io/package-path: /work/a/pkg/sub\n    other: '/work/a/pkg and /work/a/pkg'\ndata:\n  k: *a\n  f: !custom {x: [1, 2.5, null, true]}\n  lit: |\n    text\n# foot\n---\n- a\n- \"b\"\n";

    #[test]
    fn tag_codes_are_the_table_indices() {
        for (i, tag) in TAGS.iter().enumerate() {
            assert_eq!(tag_code(tag), Some(i as u8), "{tag}");
        }
        assert_eq!(tag_code("!custom"), None);
    }

    #[test]
    fn nodes_round_trip_exactly() {
        let nodes = parse(YAML);
        let root = Root::new("/work/a/pkg");
        let bytes = encode_nodes(&nodes, &root).unwrap();
        assert_eq!(decode_nodes(&bytes, &root).unwrap(), nodes);
    }

    #[test]
    fn many_nodes_encode_as_one_after_the_other() {
        let one = parse(YAML);
        let nodes: Vec<Node> = (0..PARALLEL_NODES).flat_map(|_| one.clone()).collect();
        let root = Root::new("/work/a/pkg");
        let bytes = encode_nodes(&nodes, &root).unwrap();
        let mut sequential = Encoder::new(&root, NODES_MAGIC);
        sequential.varint(nodes.len() as u64);
        for node in &nodes {
            sequential.node(node, 0).unwrap();
        }
        assert_eq!(bytes, sequential.out);
        assert_eq!(decode_nodes(&bytes, &root).unwrap(), nodes);
    }

    #[test]
    fn the_root_moves_with_the_render() {
        let at_a = parse(YAML);
        let at_b = parse(&YAML.replace("/work/a/pkg", "/elsewhere/b/pkg"));
        let (a, b) = (Root::new("/work/a/pkg"), Root::new("/elsewhere/b/pkg"));
        let bytes = encode_nodes(&at_a, &a).unwrap();
        // Same tree at another path: same bytes, so same keys.
        assert_eq!(encode_nodes(&at_b, &b).unwrap(), bytes);
        assert_eq!(decode_nodes(&bytes, &b).unwrap(), at_b);
        // A root too short to be specific is left in place.
        let slash = Root::new("/work");
        assert_eq!(
            decode_nodes(&encode_nodes(&at_a, &slash).unwrap(), &b),
            Some(at_a)
        );
    }

    #[test]
    fn logs_round_trip_without_cache_events() {
        let value = parse("a: [1]\n").remove(0);
        let item = ResultItem {
            message: "at /work/a/pkg/x.yaml".into(),
            severity: "error".into(),
            resource_ref: Some(ResourceRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: "n".into(),
                namespace: String::new(),
            }),
            field: Some(Field {
                path: "data.k".into(),
                current_value: Some(value),
                proposed_value: None,
            }),
            file: Some(File {
                path: "x.yaml".into(),
                index: -1,
            }),
            tags: vec![("k".into(), "v".into())],
        };
        let events = vec![
            Event::PackageStarted {
                display_path: "pkg/sub".into(),
            },
            Event::FunctionStarted {
                name: "cat".into(),
                selected: Some(0),
            },
            Event::FunctionPassed {
                name: "cat".into(),
                duration: Duration::from_millis(1234),
                results: vec![item.clone()],
                stderr: "warning\n".into(),
            },
            Event::FunctionFailed {
                name: "x".into(),
                duration: Duration::ZERO,
                results: Vec::new(),
                exit: Some(("boom".into(), -3)),
            },
            Event::Warning("w".into()),
            Event::PackageFinished,
        ];
        let mut with_cache = events.clone();
        with_cache.insert(
            1,
            Event::Cache(CacheEvent::SubtreeReplayed {
                package: "pkg".into(),
            }),
        );
        let results = vec![FnResult {
            image: "gcr.io/kpt-fn/x".into(),
            exec: String::new(),
            stderr: "e".into(),
            exit_code: 1,
            results: vec![item],
        }];
        let root = Root::new("/work/a/pkg");
        let files = vec!["a/b.yaml".to_string()];
        let log = Log {
            events: with_cache,
            results: results.clone(),
            files: files.clone(),
        };
        let bytes = encode_log(&log, &root).unwrap();
        let expected = Log {
            events,
            results,
            files,
        };
        assert_eq!(decode_log(&bytes, &root), Some(expected));
    }

    #[test]
    fn damaged_bytes_decode_to_none() {
        let root = Root::new("/work/a/pkg");
        let bytes = encode_nodes(&parse(YAML), &root).unwrap();
        for cut in [0, NODES_MAGIC.len(), bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(decode_nodes(&bytes[..cut], &root), None, "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(decode_nodes(&longer, &root), None);
        let mut bad_kind = bytes.clone();
        bad_kind[NODES_MAGIC.len() + 1] = 9;
        assert_eq!(decode_nodes(&bad_kind, &root), None);
        assert_eq!(decode_log(&bytes, &root), None, "a node blob is not a log");
    }

    #[test]
    fn too_deep_is_not_encoded() {
        let mut node = Node::sequence();
        for _ in 0..MAX_DEPTH + 2 {
            let mut outer = Node::sequence();
            outer.content.push(node);
            node = outer;
        }
        assert_eq!(encode_nodes(&[node], &Root::default()), None);
    }
}
