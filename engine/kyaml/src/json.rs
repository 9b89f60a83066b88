//! What kyaml writes for a resource in a `.json` file:
//! `json.NewEncoder(w).SetIndent("", "  ").Encode(rnode)`.
//!
//! `RNode.MarshalJSON` encodes the node to YAML, decodes that text with
//! go-yaml into a Go `map[string]interface{}` (or `[]interface{}` for a
//! sequence), and hands it to `encoding/json`. So this module: encodes and
//! decodes with the go-yaml port, converts the tree with go-yaml's
//! `Unmarshal` rules (ints, floats, bools, null, timestamps become
//! `time.Time`, aliases and `<<` merges expanded, `!!binary` decoded,
//! nested maps with non-string keys become `map[interface{}]interface{}`),
//! and writes JSON as Go 1.23 does (keys sorted bytewise, `<>&` and
//! U+2028/U+2029 escaped, `\b`/`\f` short escapes, Go float formatting,
//! RFC 3339 times, two-space indent, trailing newline).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};

use super::rnode;
use super::{yamlio, KyamlError, Result};
use krmgraph_yaml::aliasing::AliasBudget;
use krmgraph_yaml::node::tag;
use krmgraph_yaml::reparse;
use krmgraph_yaml::resolve::{resolve_plain, Resolved};
use krmgraph_yaml::{Kind, Node};

/// The JSON kyaml writes for `node` (with its trailing newline).
pub fn encode_resource(node: &Node) -> Result<Vec<u8>> {
    let text = yamlio::node_to_string(node)?;
    let doc = yamlio::unmarshal_first(text.as_bytes()).map_err(marshal_error)?;
    let want_seq = rnode::y_node(node).kind == Kind::Sequence;
    let value = unmarshal(doc.as_ref(), want_seq).map_err(marshal_error)?;
    let mut out = Vec::new();
    write_value(&value, 0, &mut out).map_err(marshal_error)?;
    out.push(b'\n');
    Ok(out)
}

/// The Go value [`encode_resource`] hands to `encoding/json` for `node`,
/// read from the tree itself instead of from its emitted text: `None` when
/// [`reparse`] declines the tree (a copy is restyled to what the text would
/// parse to) or go-yaml's unmarshal fails — the text path then decides,
/// with its exact error.
pub fn go_value(node: &Node) -> Option<GoValue> {
    go_value_of_root(rnode::y_node(node).clone())
}

/// [`go_value`] of a resource root the caller no longer needs (it is
/// restyled in place).
pub fn go_value_of_root(mut root: Node) -> Option<GoValue> {
    if !reparse::restyle(&mut root) {
        return None;
    }
    go_value_of_restyled(&root)
}

/// [`go_value`] of a resource root already restyled.
pub fn go_value_of_restyled(root: &Node) -> Option<GoValue> {
    unmarshal(Some(root), root.kind == Kind::Sequence).ok()
}

/// go-yaml's `d.scalar` into `interface{}` for a scalar node: `None` for
/// null, an error for a value its tag cannot decode.
pub fn go_scalar(n: &Node) -> std::result::Result<Option<GoValue>, String> {
    if n.indicated_string() {
        return Ok(Some(GoValue::Str(n.value.as_bytes().to_vec())));
    }
    let short = short_tag_of(&n.tag);
    if short == tag::BINARY {
        return decode_base64(&n.value)
            .map(|b| Some(GoValue::Str(b)))
            .ok_or_else(|| "yaml: !!binary value contains invalid base64 data".to_string());
    }
    resolve(&short, &n.value)
}

/// Whether go-yaml decodes the key `n` into a Go `string` of its text:
/// a scalar whose short tag is `!!str` (so not a merge key, a null or
/// `!!binary`).
pub fn is_plain_string_key(n: &Node) -> bool {
    n.kind == Kind::Scalar
        && (n.indicated_string()
            || (n.tag.is_empty() || n.tag == "!") && resolve_plain(&n.value).tag() == tag::STR)
}

/// The text `encoding/json` writes for a float (`None` for NaN and the
/// infinities, which it refuses).
pub fn float_text(f: f64) -> Option<String> {
    format_float(f).ok()
}

/// The text `time.Time.MarshalJSON` writes (`None` when it refuses).
pub fn time_text(t: &Timestamp) -> Option<String> {
    format_time(t).ok()
}

fn marshal_error(e: String) -> KyamlError {
    KyamlError::Json(format!(
        "json: error calling MarshalJSON for type *yaml.RNode: {e}"
    ))
}

/// A Go value as go-yaml's `Unmarshal` produces it.
#[derive(Clone, Debug, PartialEq)]
pub enum GoValue {
    /// `nil`.
    Null,
    /// A `bool`.
    Bool(bool),
    /// An `int`.
    Int(i64),
    /// A `uint64` (ints above `i64::MAX`).
    Uint(u64),
    /// A `float64`.
    Float(f64),
    /// A `string` (or the bytes of a `!!binary`).
    Str(Vec<u8>),
    /// A `time.Time`.
    Time(Timestamp),
    /// A `[]interface{}`.
    Seq(Vec<GoValue>),
    /// A `map[string]interface{}`.
    Map(BTreeMap<Vec<u8>, GoValue>),
    /// `map[interface{}]interface{}`, which `encoding/json` rejects.
    AnyMap,
}

/// `yaml.Unmarshal(text, &m)` into `map[string]interface{}` (or
/// `[]interface{}`), starting from the decoded document.
fn unmarshal(doc: Option<&Node>, want_seq: bool) -> Result<GoValue, String> {
    let Some(doc) = doc else {
        return Ok(if want_seq {
            GoValue::Null
        } else {
            GoValue::Map(BTreeMap::new())
        });
    };
    let mut d = Unmarshaler::new(doc);
    let root = match doc.kind {
        Kind::Document => doc.content.first(),
        _ => Some(doc),
    };
    let value = match root {
        None => Ok(Some(GoValue::Map(BTreeMap::new()))),
        Some(root) if want_seq => d.top_sequence(root),
        Some(root) => d.top_map(root),
    }?;
    if !d.terrors.is_empty() {
        return Err(format!(
            "yaml: unmarshal errors:\n  {}",
            d.terrors.join("\n  ")
        ));
    }
    Ok(value.unwrap_or(GoValue::Null))
}

/// A map key as an interface value, for go-yaml's `mergedFields`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum GoKey {
    Str(Vec<u8>),
    /// A non-string key, by its debug form (never equal to a string key).
    Other(String),
}

struct Unmarshaler<'a> {
    alias_targets: HashMap<*const Node, &'a Node>,
    active_aliases: HashSet<*const Node>,
    terrors: Vec<String>,
    merged_fields: Option<HashSet<GoKey>>,
    budget: AliasBudget,
}

impl<'a> Unmarshaler<'a> {
    fn new(doc: &'a Node) -> Unmarshaler<'a> {
        let mut alias_targets = HashMap::new();
        let mut anchors = HashMap::new();
        collect_aliases(doc, &mut anchors, &mut alias_targets);
        Unmarshaler {
            alias_targets,
            active_aliases: HashSet::new(),
            terrors: Vec::new(),
            merged_fields: None,
            budget: AliasBudget::default(),
        }
    }

    /// One `d.unmarshal` call: counted against the alias budget, and one
    /// level deeper while `decode` runs.
    fn nested<T>(
        &mut self,
        decode: impl FnOnce(&mut Self) -> Result<T, String>,
    ) -> Result<T, String> {
        self.budget.decode().map_err(str::to_string)?;
        self.budget.descend().map_err(str::to_string)?;
        let decoded = decode(self);
        self.budget.ascend();
        decoded
    }

    /// The node an alias refers to, with go-yaml's self-reference check.
    fn enter_alias(&mut self, n: &'a Node) -> Result<&'a Node, String> {
        let key: *const Node = n;
        if !self.active_aliases.insert(key) {
            return Err(format!("yaml: anchor '{}' value contains itself", n.value));
        }
        self.budget.enter();
        self.alias_targets
            .get(&key)
            .copied()
            .ok_or_else(|| format!("yaml: unknown anchor '{}' referenced", n.value))
    }

    fn leave_alias(&mut self, n: &Node) {
        self.active_aliases.remove(&(n as *const Node));
        self.budget.leave();
    }

    fn top_map(&mut self, n: &'a Node) -> Result<Option<GoValue>, String> {
        let mut map = BTreeMap::new();
        let good = self.decode_into_map(n, &mut map, "map[string]interface {}")?;
        Ok(good.then_some(GoValue::Map(map)))
    }

    fn top_sequence(&mut self, n: &'a Node) -> Result<Option<GoValue>, String> {
        self.nested(|u| u.top_sequence_node(n))
    }

    fn top_sequence_node(&mut self, n: &'a Node) -> Result<Option<GoValue>, String> {
        match n.kind {
            Kind::Alias => {
                let target = self.enter_alias(n)?;
                let v = self.top_sequence(target);
                self.leave_alias(n);
                v
            }
            Kind::Sequence => self.sequence(n),
            Kind::Scalar if self.scalar(n)?.is_none() => Ok(Some(GoValue::Null)),
            _ => {
                self.terror(n, "[]interface {}");
                Ok(None)
            }
        }
    }

    /// `d.unmarshal(n, out)` with `out` an `interface{}`.
    fn iface(&mut self, n: &'a Node) -> Result<Option<GoValue>, String> {
        self.nested(|u| u.iface_node(n))
    }

    fn iface_node(&mut self, n: &'a Node) -> Result<Option<GoValue>, String> {
        match n.kind {
            Kind::Document => match n.content.first() {
                Some(c) if n.content.len() == 1 => self.iface(c),
                _ => Ok(None),
            },
            Kind::Alias => {
                let target = self.enter_alias(n)?;
                let v = self.iface(target);
                self.leave_alias(n);
                v
            }
            Kind::Scalar => Ok(Some(self.scalar(n)?.unwrap_or(GoValue::Null))),
            Kind::Sequence => self.sequence(n),
            Kind::Mapping => {
                if !self.unique_keys(n) {
                    return Ok(None);
                }
                if self.is_string_map(n) {
                    let mut map = BTreeMap::new();
                    self.fill_map(n, &mut map)?;
                    Ok(Some(GoValue::Map(map)))
                } else {
                    self.fill_any_map(n)?;
                    Ok(Some(GoValue::AnyMap))
                }
            }
        }
    }

    fn sequence(&mut self, n: &'a Node) -> Result<Option<GoValue>, String> {
        let mut items = Vec::with_capacity(n.content.len());
        for item in &n.content {
            if let Some(v) = self.iface(item)? {
                items.push(v);
            }
        }
        Ok(Some(GoValue::Seq(items)))
    }

    /// `d.unmarshal(n, out)` with `out` an existing `map[string]interface{}`.
    fn decode_into_map(
        &mut self,
        n: &'a Node,
        map: &mut BTreeMap<Vec<u8>, GoValue>,
        type_name: &str,
    ) -> Result<bool, String> {
        self.nested(|u| u.decode_node_into_map(n, map, type_name))
    }

    fn decode_node_into_map(
        &mut self,
        n: &'a Node,
        map: &mut BTreeMap<Vec<u8>, GoValue>,
        type_name: &str,
    ) -> Result<bool, String> {
        match n.kind {
            Kind::Document => match n.content.first() {
                Some(c) if n.content.len() == 1 => self.decode_into_map(c, map, type_name),
                _ => Ok(false),
            },
            Kind::Alias => {
                let target = self.enter_alias(n)?;
                let v = self.decode_into_map(target, map, type_name);
                self.leave_alias(n);
                v
            }
            Kind::Mapping => {
                if !self.unique_keys(n) {
                    return Ok(false);
                }
                self.fill_map(n, map)?;
                Ok(true)
            }
            Kind::Scalar if self.scalar(n)?.is_none() => Ok(true),
            _ => {
                self.terror(n, type_name);
                Ok(false)
            }
        }
    }

    /// go-yaml's uniqueKeys check: collects errors, `false` if any.
    fn unique_keys(&mut self, n: &Node) -> bool {
        let before = self.terrors.len();
        let keys: Vec<&Node> = n.content.iter().step_by(2).collect();
        for (i, ni) in keys.iter().enumerate() {
            for nj in &keys[i + 1..] {
                if ni.kind == nj.kind && ni.value == nj.value {
                    self.terrors.push(format!(
                        "line {}: mapping key {} already defined at line {}",
                        nj.line,
                        go_quote(&nj.value),
                        ni.line
                    ));
                }
            }
        }
        self.terrors.len() == before
    }

    /// The body of `d.mapping` for a string-keyed map.
    fn fill_map(
        &mut self,
        n: &'a Node,
        map: &mut BTreeMap<Vec<u8>, GoValue>,
    ) -> Result<(), String> {
        let mut merged = self.merged_fields.take();
        let mut merge_node = None;
        for kv in n.content.chunks_exact(2) {
            if is_merge(&kv[0]) {
                merge_node = Some(&kv[1]);
                continue;
            }
            let Some(key) = self.string_key(&kv[0])? else {
                continue;
            };
            if let Some(fields) = merged.as_mut() {
                if !fields.insert(GoKey::Str(key.clone())) {
                    continue;
                }
            }
            let value = self.iface(&kv[1])?;
            match value {
                Some(v) => {
                    map.insert(key, v);
                }
                None if self.short_tag(&kv[1]) == tag::NULL => {
                    map.entry(key).or_insert(GoValue::Null);
                }
                None => {}
            }
        }
        self.merged_fields = merged;
        if let Some(merge) = merge_node {
            self.merge(n, merge, map)?;
        }
        Ok(())
    }

    /// A mapping decoded into `map[interface{}]interface{}`: only checked
    /// for errors, since JSON cannot encode it anyway.
    fn fill_any_map(&mut self, n: &'a Node) -> Result<(), String> {
        let saved = self.merged_fields.take();
        for kv in n.content.chunks_exact(2) {
            if is_merge(&kv[0]) {
                continue;
            }
            if let Some(k) = self.iface(&kv[0])? {
                if matches!(k, GoValue::Seq(_) | GoValue::Map(_) | GoValue::AnyMap) {
                    return Err("yaml: invalid map key".to_string());
                }
                self.iface(&kv[1])?;
            }
        }
        self.merged_fields = saved;
        Ok(())
    }

    /// `d.merge`: keys of the merged mapping(s) that the parent (or an
    /// earlier merged mapping) already has are skipped.
    fn merge(
        &mut self,
        parent: &'a Node,
        merge: &'a Node,
        map: &mut BTreeMap<Vec<u8>, GoValue>,
    ) -> Result<(), String> {
        let saved = self.merged_fields.clone();
        if self.merged_fields.is_none() {
            let mut fields = HashSet::new();
            for key in parent.content.iter().step_by(2) {
                if let Some(k) = self.iface_key(key)? {
                    fields.insert(k);
                }
            }
            self.merged_fields = Some(fields);
        }
        let want_map =
            || "yaml: map merge requires map or sequence of maps as the value".to_string();
        let sources: Vec<&'a Node> = match merge.kind {
            Kind::Mapping => vec![merge],
            Kind::Alias => {
                if self
                    .alias_targets
                    .get(&(merge as *const Node))
                    .is_some_and(|t| t.kind != Kind::Mapping)
                {
                    return Err(want_map());
                }
                vec![merge]
            }
            Kind::Sequence => {
                for item in &merge.content {
                    let ok = match item.kind {
                        Kind::Alias => self
                            .alias_targets
                            .get(&(item as *const Node))
                            .is_none_or(|t| t.kind == Kind::Mapping),
                        Kind::Mapping => true,
                        _ => false,
                    };
                    if !ok {
                        return Err(want_map());
                    }
                }
                merge.content.iter().collect()
            }
            _ => return Err(want_map()),
        };
        for source in sources {
            self.decode_into_map(source, map, "map[string]interface {}")?;
        }
        self.merged_fields = saved;
        Ok(())
    }

    /// A parent key decoded into `interface{}`, for `mergedFields`.
    fn iface_key(&mut self, n: &'a Node) -> Result<Option<GoKey>, String> {
        Ok(self.iface(n)?.map(|v| match v {
            GoValue::Str(s) => GoKey::Str(s),
            other => GoKey::Other(format!("{other:?}")),
        }))
    }

    /// A key decoded into a Go `string`: the scalar's text (`!!binary`
    /// decoded); null keys are skipped; collections are errors.
    fn string_key(&mut self, n: &'a Node) -> Result<Option<Vec<u8>>, String> {
        self.nested(|u| u.string_key_node(n))
    }

    fn string_key_node(&mut self, n: &'a Node) -> Result<Option<Vec<u8>>, String> {
        match n.kind {
            Kind::Alias => {
                let target = self.enter_alias(n)?;
                let v = self.string_key(target);
                self.leave_alias(n);
                v
            }
            Kind::Scalar => Ok(match self.scalar(n)? {
                None => None,
                Some(GoValue::Str(s)) => Some(s),
                Some(_) => Some(n.value.as_bytes().to_vec()),
            }),
            _ => {
                self.terror(n, "string");
                Ok(None)
            }
        }
    }

    /// `d.scalar` into `interface{}`: `None` for null.
    fn scalar(&mut self, n: &Node) -> Result<Option<GoValue>, String> {
        go_scalar(n)
    }

    /// go-yaml's `Node.ShortTag`.
    fn short_tag<'n>(&self, n: &'n Node) -> Cow<'n, str> {
        if n.indicated_string() {
            return Cow::Borrowed(tag::STR);
        }
        if n.tag.is_empty() || n.tag == "!" {
            return match n.kind {
                Kind::Mapping => Cow::Borrowed(tag::MAP),
                Kind::Sequence => Cow::Borrowed(tag::SEQ),
                Kind::Alias => self
                    .alias_targets
                    .get(&(n as *const Node))
                    .map(|t| Cow::Owned(self.short_tag(t).into_owned()))
                    .unwrap_or_default(),
                Kind::Scalar => Cow::Borrowed(resolve_plain(&n.value).tag()),
                Kind::Document => Cow::Borrowed(""),
            };
        }
        short_tag_of(&n.tag)
    }

    fn is_string_map(&self, n: &Node) -> bool {
        n.content.iter().step_by(2).all(|k| {
            let t = self.short_tag(k);
            t == tag::STR || t == tag::MERGE
        })
    }

    /// `d.terror`.
    fn terror(&mut self, n: &Node, into: &str) {
        let tag_name = if n.tag.is_empty() {
            match n.kind {
                Kind::Mapping => tag::MAP.into(),
                Kind::Sequence => tag::SEQ.into(),
                _ => self.short_tag(n).into_owned(),
            }
        } else {
            short_tag_of(&n.tag).into_owned()
        };
        let value = if tag_name == tag::SEQ || tag_name == tag::MAP {
            n.value.to_string()
        } else if n.value.len() > 10 {
            let cut = (0..=7)
                .rev()
                .find(|&i| n.value.is_char_boundary(i))
                .unwrap_or(0);
            format!(" `{}...`", &n.value[..cut])
        } else {
            format!(" `{}`", n.value)
        };
        self.terrors.push(format!(
            "line {}: cannot unmarshal {tag_name}{value} into {into}",
            n.line
        ));
    }
}

/// Records, in document order, which anchored node each alias refers to
/// (the latest definition before the alias, as go-yaml's parser does).
fn collect_aliases<'a>(
    n: &'a Node,
    anchors: &mut HashMap<String, &'a Node>,
    targets: &mut HashMap<*const Node, &'a Node>,
) {
    if n.kind == Kind::Alias {
        if let Some(t) = anchors.get(n.value.as_str()) {
            targets.insert(n as *const Node, t);
        }
        return;
    }
    if !n.anchor().is_empty() {
        anchors.insert(n.anchor().to_string(), n);
    }
    for c in &n.content {
        collect_aliases(c, anchors, targets);
    }
}

fn short_tag_of(t: &str) -> Cow<'_, str> {
    krmgraph_yaml::node::short_tag(t)
}

/// go-yaml's `isMerge`.
fn is_merge(n: &Node) -> bool {
    n.kind == Kind::Scalar
        && n.value == "<<"
        && (n.tag.is_empty() || n.tag == "!" || short_tag_of(&n.tag) == tag::MERGE)
}

/// go-yaml's `resolve(tag, in)` for `interface{}` targets.
fn resolve(short: &str, value: &str) -> Result<Option<GoValue>, String> {
    const RESOLVABLE: &[&str] = &[
        "",
        tag::STR,
        tag::BOOL,
        tag::INT,
        tag::FLOAT,
        tag::NULL,
        tag::TIMESTAMP,
    ];
    if !RESOLVABLE.contains(&short) || short == tag::STR {
        return Ok(Some(GoValue::Str(value.as_bytes().to_vec())));
    }
    let (rtag, out) = match resolve_plain(value) {
        Resolved::Timestamp if short.is_empty() || short == tag::TIMESTAMP => {
            match parse_timestamp(value) {
                Some(t) => (tag::TIMESTAMP, Some(GoValue::Time(t))),
                None => (tag::STR, Some(GoValue::Str(value.as_bytes().to_vec()))),
            }
        }
        Resolved::Timestamp | Resolved::Str => {
            (tag::STR, Some(GoValue::Str(value.as_bytes().to_vec())))
        }
        Resolved::Null => (tag::NULL, None),
        Resolved::Bool(b) => (tag::BOOL, Some(GoValue::Bool(b))),
        Resolved::Int(i) => (tag::INT, Some(GoValue::Int(i))),
        Resolved::Uint(u) => (tag::INT, Some(GoValue::Uint(u))),
        Resolved::Float(f) => (tag::FLOAT, Some(GoValue::Float(f))),
    };
    if short.is_empty() || short == rtag {
        return Ok(out);
    }
    if short == tag::FLOAT {
        if let Some(GoValue::Int(i)) = out {
            return Ok(Some(GoValue::Float(i as f64)));
        }
    }
    Err(format!("yaml: cannot decode {rtag} `{value}` as a {short}"))
}

/// Standard base64 with padding, as Go's `base64.StdEncoding`; go-yaml
/// strips nothing, but the YAML text of a `!!binary` block may carry
/// newlines, which Go's decoder skips.
fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let sym = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes: Vec<u8> = s.bytes().filter(|&b| b != b'\n' && b != b'\r').collect();
    if !bytes.len().is_multiple_of(4) {
        return None;
    }
    let mut out = Vec::with_capacity(bytes.len() / 4 * 3);
    for (ci, chunk) in bytes.chunks(4).enumerate() {
        let last = ci == bytes.len() / 4 - 1;
        let pad = chunk.iter().rev().take_while(|&&b| b == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = acc << 6 | sym(c)?;
        }
        acc <<= 6 * pad as u32;
        let b = acc.to_be_bytes();
        out.extend_from_slice(&b[1..4 - pad]);
    }
    Some(out)
}

/// A `time.Time` go-yaml parsed, as needed to print it in RFC 3339.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timestamp {
    year: u32,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
    /// Offset east of UTC in seconds.
    offset: i32,
}

/// go-yaml's `parseTimestamp`: Go's `time.Parse` with the layouts
/// `2006-1-2T15:4:5.999999999Z07:00` (also `t`), `2006-1-2 15:4:5.999999999`
/// and `2006-1-2`.
fn parse_timestamp(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let mut t = Timestamp {
        year: s[..4].parse().ok()?,
        month: 0,
        day: 0,
        hour: 0,
        minute: 0,
        second: 0,
        nanos: 0,
        offset: 0,
    };
    let mut i = 5;
    t.month = getnum(b, &mut i)?;
    expect(b, &mut i, b'-')?;
    t.day = getnum(b, &mut i)?;
    if !(1..=12).contains(&t.month) || t.day < 1 || t.day > days_in(t.year, t.month) {
        return None;
    }
    if i == b.len() {
        return Some(t);
    }
    let zoned = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return None,
    };
    i += 1;
    t.hour = getnum(b, &mut i)?;
    expect(b, &mut i, b':')?;
    t.minute = getnum(b, &mut i)?;
    expect(b, &mut i, b':')?;
    t.second = getnum(b, &mut i)?;
    if t.hour >= 24 || t.minute >= 60 || t.second >= 60 {
        return None;
    }
    t.nanos = fraction(b, &mut i);
    if zoned {
        t.offset = zone(b, &mut i)?;
    }
    (i == b.len()).then_some(t)
}

/// Go's non-fixed `getnum`: one or two digits.
fn getnum(b: &[u8], i: &mut usize) -> Option<u32> {
    let d0 = *b.get(*i).filter(|c| c.is_ascii_digit())?;
    *i += 1;
    match b.get(*i) {
        Some(d1) if d1.is_ascii_digit() => {
            *i += 1;
            Some(u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0'))
        }
        _ => Some(u32::from(d0 - b'0')),
    }
}

fn expect(b: &[u8], i: &mut usize, c: u8) -> Option<()> {
    (b.get(*i) == Some(&c)).then(|| *i += 1)
}

/// `.999999999`: optional `.` or `,` and digits; more than nine are cut.
fn fraction(b: &[u8], i: &mut usize) -> u32 {
    if !matches!(b.get(*i), Some(b'.' | b',')) || !b.get(*i + 1).is_some_and(u8::is_ascii_digit) {
        return 0;
    }
    *i += 1;
    let start = *i;
    while b.get(*i).is_some_and(u8::is_ascii_digit) {
        *i += 1;
    }
    let digits = &b[start..(*i).min(start + 9)];
    let mut nanos = 0u32;
    for k in 0..9 {
        nanos = nanos * 10 + digits.get(k).map_or(0, |d| u32::from(d - b'0'));
    }
    nanos
}

/// `Z07:00`: `Z` or `±hh:mm`.
fn zone(b: &[u8], i: &mut usize) -> Option<i32> {
    if b.get(*i) == Some(&b'Z') {
        *i += 1;
        return Some(0);
    }
    let z = b.get(*i..*i + 6)?;
    let digit = |c: u8| c.is_ascii_digit().then(|| i32::from(c - b'0'));
    if z[3] != b':' {
        return None;
    }
    let hours = digit(z[1])? * 10 + digit(z[2])?;
    let minutes = digit(z[4])? * 10 + digit(z[5])?;
    if hours > 24 || minutes > 60 {
        return None;
    }
    let offset = (hours * 60 + minutes) * 60;
    *i += 6;
    match z[0] {
        b'+' => Some(offset),
        b'-' => Some(-offset),
        _ => None,
    }
}

fn days_in(year: u32, month: u32) -> u32 {
    match month {
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `time.Time.MarshalJSON`: RFC 3339 with nanoseconds, trailing zeros cut.
fn format_time(t: &Timestamp) -> Result<String, String> {
    if t.offset.abs() / 3600 > 23 {
        return Err("Time.MarshalJSON: timezone hour outside of range [0,23]".to_string());
    }
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    if t.nanos != 0 {
        let frac = format!("{:09}", t.nanos);
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    if t.offset == 0 {
        s.push('Z');
    } else {
        let sign = if t.offset < 0 { '-' } else { '+' };
        let abs = t.offset.abs();
        s.push_str(&format!("{sign}{:02}:{:02}", abs / 3600, abs % 3600 / 60));
    }
    Ok(s)
}

/// Writes `v` as `json.Marshal` then `json.Indent(dst, src, "", "  ")`.
fn write_value(v: &GoValue, depth: usize, out: &mut Vec<u8>) -> Result<(), String> {
    match v {
        GoValue::Null => out.extend_from_slice(b"null"),
        GoValue::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        GoValue::Int(i) => out.extend_from_slice(i.to_string().as_bytes()),
        GoValue::Uint(u) => out.extend_from_slice(u.to_string().as_bytes()),
        GoValue::Float(f) => out.extend_from_slice(format_float(*f)?.as_bytes()),
        GoValue::Str(s) => write_string(s, out),
        GoValue::Time(t) => write_string(format_time(t)?.as_bytes(), out),
        GoValue::AnyMap => {
            return Err("json: unsupported type: map[interface {}]interface {}".to_string())
        }
        GoValue::Seq(items) => {
            write_container(b'[', b']', items.iter().map(|i| (None, i)), depth, out)?;
        }
        GoValue::Map(map) => {
            write_container(
                b'{',
                b'}',
                map.iter().map(|(k, v)| (Some(k.as_slice()), v)),
                depth,
                out,
            )?;
        }
    }
    Ok(())
}

fn write_container<'a>(
    open: u8,
    close: u8,
    entries: impl ExactSizeIterator<Item = (Option<&'a [u8]>, &'a GoValue)>,
    depth: usize,
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.push(open);
    let empty = entries.len() == 0;
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        newline(depth + 1, out);
        if let Some(k) = key {
            write_string(k, out);
            out.extend_from_slice(b": ");
        }
        write_value(value, depth + 1, out)?;
    }
    if !empty {
        newline(depth, out);
    }
    out.push(close);
    Ok(())
}

fn newline(depth: usize, out: &mut Vec<u8>) {
    out.push(b'\n');
    for _ in 0..depth {
        out.extend_from_slice(b"  ");
    }
}

/// Go's `encoding/json` string encoding with HTML escaping.
fn write_string(s: &[u8], out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(b'"');
    let mut i = 0;
    while i < s.len() {
        let b = s[i];
        if b < 0x80 {
            match b {
                b'\\' | b'"' => out.extend_from_slice(&[b'\\', b]),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                b'<' | b'>' | b'&' | 0..=0x1f => out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    b'0',
                    b'0',
                    HEX[usize::from(b >> 4)],
                    HEX[usize::from(b & 0xf)],
                ]),
                _ => out.push(b),
            }
            i += 1;
            continue;
        }
        match utf8_char_at(s, i) {
            Some((c, len)) => {
                if c == '\u{2028}' || c == '\u{2029}' {
                    out.extend_from_slice(if c == '\u{2028}' {
                        b"\\u2028"
                    } else {
                        b"\\u2029"
                    });
                } else {
                    out.extend_from_slice(&s[i..i + len]);
                }
                i += len;
            }
            None => {
                out.extend_from_slice(b"\\ufffd");
                i += 1;
            }
        }
    }
    out.push(b'"');
}

fn utf8_char_at(s: &[u8], i: usize) -> Option<(char, usize)> {
    let len = match s[i] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => return None,
    };
    let c = std::str::from_utf8(s.get(i..i + len)?)
        .ok()?
        .chars()
        .next()?;
    Some((c, len))
}

/// `encoding/json`'s float64 format: shortest digits, `%e` style below
/// 1e-6 and from 1e21 (`1e-7`, `1.5e+300`), else plain.
fn format_float(f: f64) -> Result<String, String> {
    if f.is_nan() {
        return Err("json: unsupported value: NaN".to_string());
    }
    if f.is_infinite() {
        let sign = if f > 0.0 { "+" } else { "-" };
        return Err(format!("json: unsupported value: {sign}Inf"));
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let e = format!("{f:e}");
        let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
        let (sign, digits) = match exp.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', exp),
        };
        let digits = if sign == '+' && digits.len() < 2 {
            format!("0{digits}")
        } else {
            digits.to_string()
        };
        return Ok(format!("{mantissa}e{sign}{digits}"));
    }
    Ok(format!("{f}"))
}

/// Go's `%#v` of a string (for duplicate-key errors).
fn go_quote(s: &str) -> String {
    krmgraph_util::gostr::quote(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json_of(v: &GoValue) -> String {
        let mut out = Vec::new();
        write_value(v, 0, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn floats_like_go() {
        for (f, want) in [
            (1.5, "1.5"),
            (100.0, "100"),
            (1e20, "100000000000000000000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e-7, "1e-7"),
            (1.2e-10, "1.2e-10"),
            (0.000001, "0.000001"),
            (-0.0, "-0"),
            (0.1, "0.1"),
        ] {
            assert_eq!(format_float(f).unwrap(), want, "{f}");
        }
        assert_eq!(
            format_float(f64::NAN).unwrap_err(),
            "json: unsupported value: NaN"
        );
        assert_eq!(
            format_float(f64::NEG_INFINITY).unwrap_err(),
            "json: unsupported value: -Inf"
        );
    }

    #[test]
    fn strings_like_go() {
        let v = GoValue::Str(
            "<a&b> \"q\" \\ \n\t\u{8}\u{c}\u{1} \u{2028} é"
                .as_bytes()
                .to_vec(),
        );
        assert_eq!(
            json_of(&v),
            r#""\u003ca\u0026b\u003e \"q\" \\ \n\t\b\f\u0001 \u2028 é""#
        );
        assert_eq!(
            json_of(&GoValue::Str(vec![b'a', 0xff, b'b'])),
            r#""a\ufffdb""#
        );
    }

    #[test]
    fn indents_like_go() {
        let mut inner = BTreeMap::new();
        inner.insert(b"name".to_vec(), GoValue::Str(b"j".to_vec()));
        let mut map = BTreeMap::new();
        map.insert(
            b"z".to_vec(),
            GoValue::Seq(vec![GoValue::Int(1), GoValue::Null]),
        );
        map.insert(b"a".to_vec(), GoValue::Map(inner));
        map.insert(b"e".to_vec(), GoValue::Map(BTreeMap::new()));
        map.insert(b"s".to_vec(), GoValue::Seq(vec![]));
        assert_eq!(
            json_of(&GoValue::Map(map)),
            "{\n  \"a\": {\n    \"name\": \"j\"\n  },\n  \"e\": {},\n  \"s\": [],\n  \"z\": [\n    1,\n    null\n  ]\n}"
        );
    }

    #[test]
    fn timestamps_like_go() {
        let fmt = |s: &str| parse_timestamp(s).map(|t| format_time(&t).unwrap());
        assert_eq!(fmt("2021-01-01").as_deref(), Some("2021-01-01T00:00:00Z"));
        assert_eq!(fmt("2021-1-2").as_deref(), Some("2021-01-02T00:00:00Z"));
        assert_eq!(
            fmt("2001-12-14t21:59:43.10Z").as_deref(),
            Some("2001-12-14T21:59:43.1Z")
        );
        assert_eq!(
            fmt("2001-12-14 21:59:43.10").as_deref(),
            Some("2001-12-14T21:59:43.1Z")
        );
        assert_eq!(
            fmt("2001-12-14T21:59:43+05:30").as_deref(),
            Some("2001-12-14T21:59:43+05:30")
        );
        assert_eq!(
            fmt("2001-12-14T21:59:43-00:00").as_deref(),
            Some("2001-12-14T21:59:43Z")
        );
        assert_eq!(
            fmt("2001-12-14T1:2:3.1234567891Z").as_deref(),
            Some("2001-12-14T01:02:03.123456789Z")
        );
        assert_eq!(fmt("2021-02-30"), None);
        assert_eq!(fmt("2001-12-14 21:59:43.10 -5"), None);
        assert_eq!(fmt("2001-12-14T21:59:43"), None);
    }

    #[test]
    fn base64_like_go() {
        assert_eq!(decode_base64("aGVsbG8=").unwrap(), b"hello");
        assert_eq!(decode_base64("aGVs\nbG8h").unwrap(), b"hello!");
        assert_eq!(decode_base64("aGVsbG8"), None);
    }

    #[test]
    fn resolves_explicit_tags() {
        assert_eq!(resolve("!!float", "1").unwrap(), Some(GoValue::Float(1.0)));
        assert_eq!(resolve("", "0x1F").unwrap(), Some(GoValue::Int(31)));
        assert_eq!(
            resolve("!custom", "12").unwrap(),
            Some(GoValue::Str(b"12".to_vec()))
        );
        assert_eq!(resolve("", "~").unwrap(), None);
        assert_eq!(
            resolve("!!bool", "yes").unwrap_err(),
            "yaml: cannot decode !!str `yes` as a !!bool"
        );
    }
}
