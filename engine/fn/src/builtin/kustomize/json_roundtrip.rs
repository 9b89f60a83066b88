//! The JSON round trip every kustomize-era catalog function puts each
//! resource through (§8.0 of the spec): kustomize's `resmap` hands the
//! filtered resources back with `Resource.AsYAML`, which is
//! `sigs.k8s.io/yaml.JSONToYAML(rnode.MarshalJSON())` — kyaml encodes the
//! node to JSON (go-yaml v3 semantics, [`json::encode_resource`]), then
//! go-yaml **v2** decodes that JSON into `map[interface{}]interface{}` and
//! marshals it again.
//!
//! What survives, and what kpt shows afterwards (it restores comments and
//! the order of the fields it already knew, not scalar styles):
//!
//! - every mapping's keys in go-yaml v2's "natural" order ([`key_less`]),
//!   which decides where fields new to kpt land;
//! - strings re-quoted as go-yaml marshals a Go string
//!   ([`results::go_string_node`]: plain when possible, `"double"` when a
//!   plain scalar would read as another type, literal when multi-line), so
//!   `'PROJECT_ID'` comes back as `PROJECT_ID`;
//! - numbers as v2 reads JSON numbers: integers stay integers, the rest are
//!   floats written with Go's `%g` ([`krmgraph_yaml::gov2::format_float`]);
//! - empty maps and lists as flow `{}` and `[]`; no anchors, tags or
//!   comments.

use krmgraph_yaml::gov2::format_float;
use std::cmp::Ordering;

use serde_json::Value;

use super::error::RunError;
use crate::results;
use krmgraph_kyaml::json::{self, GoValue};
use krmgraph_yaml::node::{tag, Style};
use krmgraph_yaml::reparse;
use krmgraph_yaml::{Kind, Node};

const MARSHAL_ERROR_PREFIX: &str = "json: error calling MarshalJSON for type *yaml.RNode: ";

/// Replaces `item` (a document or its root) with what comes back from the
/// round trip. Comments are lost, as in the original; kpt restores them.
pub fn normalize(item: &mut Node) -> Result<(), RunError> {
    match normalized_from_values(item) {
        Some(root) => {
            set_root(item, root);
            Ok(())
        }
        None => normalize_through_text(item),
    }
}

/// The round trip on the tree's values, without writing YAML or JSON text
/// ([`json::go_value`]): `None` where that declines or the JSON text would
/// not be plain UTF-8 (Go writes each invalid byte as U+FFFD), so that the
/// text path gives the exact result or error.
pub fn normalized_from_values(item: &Node) -> Option<Node> {
    from_go(&json::go_value(item)?)
}

/// [`normalized_from_values`] of a resource root the caller no longer
/// needs.
pub fn normalized_from_root(mut root: Node) -> Option<Node> {
    if !reparse::restyle(&mut root) {
        return None;
    }
    if root.kind == Kind::Mapping {
        if let Some(normalized) = plain_map(&root) {
            return Some(normalized);
        }
    }
    from_go(&json::go_value_of_restyled(&root)?)
}

/// [`from_go`] of what go-yaml decodes from `node` (restyled), in one pass
/// without the Go values between, for the trees where decoding is plain:
/// every mapping's keys strings (no merge keys, nulls or `!!binary`), none
/// twice. `None` for any other tree (and for a scalar its tag cannot
/// decode), which the general path then takes: it gives the same nodes or
/// the error. Restyled trees have no anchors, aliases or explicit tags.
fn plain_map(node: &Node) -> Option<Node> {
    let mut entries = Vec::with_capacity(node.content.len() / 2);
    for kv in node.content.chunks_exact(2) {
        if !json::is_plain_string_key(&kv[0]) {
            return None;
        }
        entries.push((kv[0].value.as_str(), &kv[1]));
    }
    // Ties (if `key_less` ever had one) in byte order, as the general
    // path's map hands its keys to the same sort.
    entries.sort_by(|a, b| key_order(a.0, b.0).then_with(|| a.0.cmp(b.0)));
    // go-yaml refuses a mapping with a key twice; sorted, a repeat is
    // next to its twin.
    if entries.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    let mut mapping = Node::mapping();
    mapping.content.reserve(entries.len() * 2);
    for (key, value) in entries {
        mapping.content.push(results::go_string_node(key));
        mapping.content.push(plain_value(value)?);
    }
    if mapping.content.is_empty() {
        mapping.style = Style::FLOW;
    }
    Some(mapping)
}

/// [`plain_map`] for any node of the tree.
fn plain_value(node: &Node) -> Option<Node> {
    match node.kind {
        Kind::Mapping => plain_map(node),
        Kind::Sequence => {
            let mut seq = Node::sequence();
            seq.content = node
                .content
                .iter()
                .map(plain_value)
                .collect::<Option<_>>()?;
            if seq.content.is_empty() {
                seq.style = Style::FLOW;
            }
            Some(seq)
        }
        Kind::Scalar => from_go(&json::go_scalar(node).ok()?.unwrap_or(GoValue::Null)),
        Kind::Alias | Kind::Document => None,
    }
}

fn set_root(item: &mut Node, root: Node) {
    match item.kind {
        Kind::Document => item.content = vec![root],
        _ => *item = root,
    }
}

/// [`normalize`] through the text: kyaml's JSON, then serde's reading of
/// it.
fn normalize_through_text(item: &mut Node) -> Result<(), RunError> {
    // `AsYAML` calls `MarshalJSON` itself, so its errors come without the
    // wrapper `encoding/json` adds around a marshaler's error.
    let bytes = json::encode_resource(item).map_err(|e| {
        let message = e.to_string();
        RunError::Json(match message.strip_prefix(MARSHAL_ERROR_PREFIX) {
            Some(inner) => inner.to_string(),
            None => message,
        })
    })?;
    let value = decode_json(&bytes)?;
    set_root(item, to_node(&value));
    Ok(())
}

/// go-yaml v2's limit on flow levels, which `JSONToYAML` meets first.
const MAX_FLOW_LEVEL: usize = 10_000;

/// The JSON `encode_resource` wrote, as go-yaml v2 reads it in
/// `JSONToYAML`: nested as deep as its scanner allows (serde_json's own
/// limit, 128 levels, would refuse what kpt renders).
fn decode_json(bytes: &[u8]) -> Result<Value, RunError> {
    if json_depth(bytes) > MAX_FLOW_LEVEL {
        return Err(RunError::Json(format!(
            "yaml: line 1: exceeded max depth of {MAX_FLOW_LEVEL}"
        )));
    }
    let mut decoder = serde_json::Deserializer::from_slice(bytes);
    decoder.disable_recursion_limit();
    serde::Deserialize::deserialize(&mut decoder).map_err(|e| RunError::Json(e.to_string()))
}

/// How deep the arrays and objects of JSON text nest.
fn json_depth(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for &b in bytes {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (true, b'"') | (false, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// [`to_node`] of the JSON that `encoding/json` writes for `value`. It
/// mirrors [`to_node`] case by case: change both together (the tests hold
/// them equal on every fixture).
fn from_go(value: &GoValue) -> Option<Node> {
    Some(match value {
        GoValue::Null => scalar(tag::NULL, "null"),
        GoValue::Bool(b) => scalar(tag::BOOL, if *b { "true" } else { "false" }),
        GoValue::Int(i) => scalar(tag::INT, &i.to_string()),
        GoValue::Uint(u) => scalar(tag::INT, &u.to_string()),
        GoValue::Float(f) => number(&serde_json::from_str(&json::float_text(*f)?).ok()?),
        GoValue::Str(bytes) => results::go_string_node(std::str::from_utf8(bytes).ok()?),
        GoValue::Time(t) => results::go_string_node(&json::time_text(t)?),
        GoValue::AnyMap => return None,
        GoValue::Seq(items) => {
            let mut seq = Node::sequence();
            seq.content = items.iter().map(from_go).collect::<Option<_>>()?;
            if seq.content.is_empty() {
                seq.style = Style::FLOW;
            }
            seq
        }
        GoValue::Map(map) => {
            let mut entries = map
                .iter()
                .map(|(k, v)| Some((std::str::from_utf8(k).ok()?, v)))
                .collect::<Option<Vec<_>>>()?;
            entries.sort_by(|a, b| key_order(a.0, b.0));
            let mut mapping = Node::mapping();
            for (key, value) in entries {
                mapping.content.push(results::go_string_node(key));
                mapping.content.push(from_go(value)?);
            }
            if mapping.content.is_empty() {
                mapping.style = Style::FLOW;
            }
            mapping
        }
    })
}

/// The node go-yaml v3 reads back from go-yaml v2's emission of `value`.
fn to_node(value: &Value) -> Node {
    match value {
        Value::Null => scalar(tag::NULL, "null"),
        Value::Bool(b) => scalar(tag::BOOL, if *b { "true" } else { "false" }),
        Value::Number(n) => number(n),
        Value::String(s) => results::go_string_node(s),
        Value::Array(items) => {
            let mut seq = Node::sequence();
            seq.content = items.iter().map(to_node).collect();
            if seq.content.is_empty() {
                seq.style = Style::FLOW;
            }
            seq
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_by(|a, b| key_order(a, b));
            let mut mapping = Node::mapping();
            for key in keys {
                mapping.content.push(results::go_string_node(key));
                mapping.content.push(to_node(&map[key]));
            }
            if mapping.content.is_empty() {
                mapping.style = Style::FLOW;
            }
            mapping
        }
    }
}

fn scalar(tag: &str, value: &str) -> Node {
    Node {
        kind: Kind::Scalar,
        tag: tag.into(),
        value: value.into(),
        ..Node::default()
    }
}

/// A JSON number as go-yaml v2 resolves its text: `int` when it parses as
/// one (`ParseInt`, then `ParseUint`), `float` otherwise.
fn number(n: &serde_json::Number) -> Node {
    if let Some(i) = n.as_i64() {
        return scalar(tag::INT, &i.to_string());
    }
    if let Some(u) = n.as_u64() {
        return scalar(tag::INT, &u.to_string());
    }
    scalar(tag::FLOAT, &format_float(n.as_f64().unwrap_or(0.0)))
}

fn key_order(a: &str, b: &str) -> Ordering {
    if key_less(a, b) {
        Ordering::Less
    } else if key_less(b, a) {
        Ordering::Greater
    } else {
        Ordering::Equal
    }
}

/// go-yaml v2's `keyList.Less` for two string keys: letters compare by
/// code point, anything else sorts before a letter, and runs of digits
/// compare as numbers (`a2` < `a10`).
pub fn key_less(a: &str, b: &str) -> bool {
    // Keys are almost always ASCII, whose bytes are their characters: no
    // character lists to build for every comparison of a sort.
    if a.is_ascii() && b.is_ascii() {
        return runes_less(a.as_bytes(), b.as_bytes());
    }
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    runes_less(&ar, &br)
}

fn runes_less<T: Copy + Into<char>>(ar: &[T], br: &[T]) -> bool {
    for i in 0..ar.len().min(br.len()) {
        let (a, b): (char, char) = (ar[i].into(), br[i].into());
        if a == b {
            continue;
        }
        let al = a.is_alphabetic();
        let bl = b.is_alphabetic();
        if al && bl {
            return a < b;
        }
        if al || bl {
            return bl;
        }
        return digits_less(ar, br, i);
    }
    ar.len() < br.len()
}

/// The digit-run comparison of `keyList.Less` at the first difference `i`.
fn digits_less<T: Copy + Into<char>>(ar: &[T], br: &[T], i: usize) -> bool {
    let c = |x: T| -> char { x.into() };
    let (mut an, mut bn) = (0i64, 0i64);
    if c(ar[i]) == '0' || c(br[i]) == '0' {
        // A zero inside a longer number ("10" vs "1a") is not a leading
        // zero: start both counts at 1 so the digits before it count.
        if ar[..i]
            .iter()
            .rev()
            .take_while(|x| c(**x).is_ascii_digit())
            .any(|x| c(*x) != '0')
        {
            an = 1;
            bn = 1;
        }
    }
    let mut ai = i;
    while ai < ar.len() && c(ar[ai]).is_ascii_digit() {
        an = an
            .wrapping_mul(10)
            .wrapping_add(i64::from(c(ar[ai]) as u8 - b'0'));
        ai += 1;
    }
    let mut bi = i;
    while bi < br.len() && c(br[bi]).is_ascii_digit() {
        bn = bn
            .wrapping_mul(10)
            .wrapping_add(i64::from(c(br[bi]) as u8 - b'0'));
        bi += 1;
    }
    if an != bn {
        return an < bn;
    }
    if ai != bi {
        return ai < bi;
    }
    c(ar[i]) < c(br[i])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{emit, parse};

    /// (input resource, what the round trip gives back).
    const CASES: &[(&str, &str)] = &[
        (
            "kind: A # comment\nmetadata:\n  name: 'x'\n  annotations: {b: '1', a: \"on\"}\n",
            "kind: A\nmetadata:\n  annotations:\n    a: \"on\"\n    b: \"1\"\n  name: x\n",
        ),
        (
            "kind: A\nspec:\n  n: 0x1F\n  f: 1.50\n  e: 1e3\n  big: 1000000.5\n  t: 2021-01-01\n  nil: ~\n  s: [\"a b\", 'x: y', '']\n  m: {}\n",
            "kind: A\nspec:\n  big: 1.0000005e+06\n  e: 1000\n  f: 1.5\n  m: {}\n  \"n\": 31\n  nil: null\n  s:\n  - a b\n  - 'x: y'\n  - \"\"\n  t: \"2021-01-01T00:00:00Z\"\n",
        ),
        (
            "kind: A\ndata:\n  script: |\n    one\n    two\n  trailing: \"x \\n\"\n",
            "data:\n  script: |\n    one\n    two\n  trailing: \"x \\n\"\nkind: A\n",
        ),
    ];

    #[test]
    fn round_trips_like_jsontoyaml() {
        for (input, want) in CASES {
            let mut node = parse(input);
            normalize(&mut node).unwrap();
            assert_eq!(emit(&node), *want, "input {input:?}");
        }
    }

    /// What the one-pass path gives for the resource `text`, and what the
    /// general path gives; `None` if the restyle declines it.
    fn both_paths(text: &str) -> Option<(Option<Node>, Option<Node>)> {
        let node = krmgraph_yaml::decode::unmarshal(text.as_bytes()).ok()??;
        let mut root = krmgraph_kyaml::rnode::y_node(&node).clone();
        if root.kind != Kind::Mapping || !reparse::restyle(&mut root) {
            return None;
        }
        let general = json::go_value_of_restyled(&root).and_then(|v| from_go(&v));
        Some((plain_map(&root), general))
    }

    fn yaml_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                yaml_files(&path, out);
            } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                out.push(path);
            }
        }
    }

    /// The one-pass path gives what the general path gives, on every
    /// resource of the repository's test data that it takes (and of the
    /// conformance corpora, where CI points at them).
    #[test]
    fn plain_path_gives_what_the_general_path_gives() {
        let mut files = Vec::new();
        yaml_files(
            &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata"),
            &mut files,
        );
        for var in ["KRMGRAPH_CONFORMANCE_DIR", "KRMGRAPH_CATALOG_DIR"] {
            if let Ok(dir) = std::env::var(var) {
                yaml_files(std::path::Path::new(&dir), &mut files);
            }
        }
        let mut compared = 0;
        for file in files {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            for doc in text.split("\n---") {
                if let Some((Some(plain), general)) = both_paths(doc) {
                    assert_eq!(Some(plain), general, "{}: {doc}", file.display());
                    compared += 1;
                }
            }
        }
        assert!(compared >= 100, "only {compared} resources compared");
    }

    /// Trees whose decoding is not plain go the general way.
    #[test]
    fn plain_path_declines_what_it_does_not_model() {
        for text in [
            "a: 1\na: 2\n",
            "a: 1\n'a': 2\n",
            "a: {b: 1, b: 2}\n",
            "1: a\n",
            "~: a\n",
            "a: {1: b}\n",
            "a:\n  <<: {b: 1}\n",
            "a: !!binary aGk=\n",
        ] {
            let (plain, _) = both_paths(text).unwrap_or((None, None));
            assert_eq!(plain, None, "{text:?}");
        }
        for text in [
            "'1': a\n\"on\": b\n'<<': c\n",
            "a: [~, '', {}, [], 1.5, 0x1F, 2021-01-01, yes]\n",
        ] {
            let (plain, general) = both_paths(text).expect(text);
            assert!(plain.is_some(), "{text:?}");
            assert_eq!(plain, general, "{text:?}");
        }
    }

    #[test]
    fn reports_marshal_errors_unwrapped() {
        let mut node = parse("kind: A\nspec:\n  1: a\n");
        assert_eq!(
            normalize(&mut node).unwrap_err().to_string(),
            "json: unsupported type: map[interface {}]interface {}"
        );
    }

    #[test]
    fn sorts_keys_like_go_yaml_v2() {
        let mut keys = vec!["b", "a10", "a_b", "aB", "a2", "a.b", "a", "1", "A"];
        keys.sort_by(|a, b| key_order(a, b));
        assert_eq!(keys, ["1", "A", "a", "a.b", "a_b", "a2", "a10", "aB", "b"]);
    }

    /// ASCII keys compare on their bytes; the answer is the one the
    /// character path gives.
    #[test]
    fn ascii_keys_compare_as_characters() {
        let keys = [
            "", "0", "00", "01", "1", "10", "1a", "a0", "a00", "a01", "a9", "a10", "a_", "Z", "z",
            "é", "a2b", "a02b",
        ];
        for a in keys {
            for b in keys {
                let chars = |s: &str| s.chars().collect::<Vec<char>>();
                assert_eq!(
                    key_less(a, b),
                    runes_less(&chars(a), &chars(b)),
                    "{a:?} < {b:?}"
                );
            }
        }
    }

    #[test]
    fn formats_floats_like_go() {
        for (f, want) in [
            (1.5, "1.5"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (123456.0, "123456"),
            (1234567.5, "1.2345675e+06"),
            (1e21, "1e+21"),
        ] {
            assert_eq!(format_float(f), want);
        }
    }

    // The round trip on values against the text path, on every resource of
    // the project's fixtures and the conformance corpus.

    use krmgraph_kyaml::byteio::ByteReader;

    /// Values and text agree wherever the values path answers, and it
    /// answers for most resources.
    #[test]
    fn values_path_matches_text_path_on_fixtures() {
        let files = krmgraph_util::testdata::fixture_files(&["yaml", "yml", "json"]);
        let (mut answered, mut total) = (0, 0);
        for file in files {
            let bytes = std::fs::read(&file).unwrap();
            let Ok(read) = ByteReader::default().read(&bytes) else {
                continue;
            };
            for node in read.nodes {
                total += 1;
                let Some(fast) = normalized_from_values(&node) else {
                    continue;
                };
                answered += 1;
                let mut slow = node.clone();
                normalize_through_text(&mut slow)
                    .unwrap_or_else(|e| panic!("{}: text path failed: {e}", file.display()));
                assert_eq!(
                    krmgraph_kyaml::rnode::y_node(&slow),
                    &fast,
                    "{}",
                    file.display()
                );
            }
        }
        eprintln!("values path answered for {answered} of {total} resources");
        assert!(answered * 2 > total, "answered {answered} of {total}");
    }

    /// Numbers, times and strings whose JSON text matters; with `.inf`
    /// (which `encoding/json` refuses) the values path leaves the error to
    /// the text path.
    #[test]
    fn values_path_matches_text_path_on_numbers_times_and_strings() {
        let spec = "kind: A\nspec:\n  a: 1000.0\n  b: -0.0\n  c: 1e21\n  d: 18446744073709551615\n  e: 2001-12-14 21:59:43.10 -5\n  f: 2001-12-14\n  h: 0.000001\n  i: [1.5, -3, 0x1F]\n  j: \"multi\\nline\"\n  k: {}\n  l: []\n  m: ~\n  n: \"<b>&\"\n";
        let node = crate::testing::parse(spec);
        let fast = normalized_from_values(&node).expect("answers");
        let mut slow = node.clone();
        normalize_through_text(&mut slow).unwrap();
        assert_eq!(krmgraph_kyaml::rnode::y_node(&slow), &fast);

        let refused = crate::testing::parse("kind: A\nx: .inf\n");
        assert!(normalized_from_values(&refused).is_none());
        assert!(normalize_through_text(&mut refused.clone()).is_err());
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;

    #[test]
    fn json_nests_as_deep_as_go_yaml_v2_reads() {
        assert_eq!(json_depth(br#"{"a": [1, {"b": "[[[{"}], "c": "\"]"}"#), 3);
        let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
        // serde_json alone stops at 128 levels.
        let deep = krmgraph_util::par::with_stack(|| decode_json(nested(5_000).as_bytes()).is_ok());
        assert_eq!(deep, Some(true));
        let error = decode_json(nested(MAX_FLOW_LEVEL + 1).as_bytes()).unwrap_err();
        assert!(
            error.to_string().contains("exceeded max depth of 10000"),
            "{error}"
        );
    }
}
