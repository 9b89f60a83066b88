//! YAML as `crossplane render` prints it: the apimachinery JSON serializer
//! with `Yaml: true`, i.e. `json.Marshal` then `sigs.k8s.io/yaml`'s
//! `JSONToYAML`, which reads the JSON with go-yaml v2 and marshals it
//! again. So: keys in go-yaml v2's order ([`key_less`]), 2-space indent,
//! sequences not indented under their key, strings double-quoted when a
//! plain scalar would read as another type (YAML 1.1 bools and base-60
//! floats included), multi-line strings literal, numbers as v2 writes the
//! JSON numbers (`9001`, floats with Go's `%g`), empty collections as `{}`
//! and `[]`, and long plain strings folded at 80 columns.
//!
//! The node building follows `engine/fn`'s kustomize JSON round trip (the
//! same `JSONToYAML`); the bytes come from the go-yaml emitter port with
//! v2's line width.

use krmgraph_yaml::gov2::format_float;
use std::cmp::Ordering;

use krmgraph_yaml::node::{tag, Style};
use krmgraph_yaml::{Encoder, Kind, Node};
use serde_json::Value;

/// go-yaml v2's line width (`yaml_emitter_set_width` is never called, so
/// `best_width` is 80).
const WIDTH: isize = 80;

/// One document as `sigs.k8s.io/yaml` writes it (no `---`; a trailing
/// newline).
pub fn document(value: &Value) -> Vec<u8> {
    let mut encoder = Encoder::new();
    encoder.set_indent(2);
    encoder.set_compact_seq_indent(true);
    encoder.set_width(WIDTH);
    // The tree is built here from strings, numbers and maps: the emitter
    // has nothing to refuse.
    match encoder.encode(&node(value)).and_then(|()| encoder.finish()) {
        Ok(bytes) => bytes,
        Err(e) => format!("# cannot write this document: {e}\n").into_bytes(),
    }
}

/// The node go-yaml v2 marshals for a JSON value.
fn node(value: &Value) -> Node {
    match value {
        Value::Null => scalar(tag::NULL, "null"),
        Value::Bool(b) => scalar(tag::BOOL, if *b { "true" } else { "false" }),
        Value::Number(n) => number(n),
        Value::String(s) => string(s),
        Value::Array(items) => {
            let mut seq = Node::sequence();
            seq.content = items.iter().map(node).collect();
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
                mapping.content.push(string(key));
                mapping.content.push(node(&map[key]));
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

/// A JSON number as go-yaml v2 resolves its text: an int when it parses
/// as one, a float otherwise.
fn number(n: &serde_json::Number) -> Node {
    if let Some(i) = n.as_i64() {
        return scalar(tag::INT, &i.to_string());
    }
    if let Some(u) = n.as_u64() {
        return scalar(tag::INT, &u.to_string());
    }
    let f = n.as_f64().unwrap_or(0.0);
    scalar(tag::FLOAT, &format_float(f))
}

/// A Go string as go-yaml v2 marshals it.
fn string(s: &str) -> Node {
    krmgraph_yaml::gov2::go_string_node(s)
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
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    for i in 0..ar.len().min(br.len()) {
        let (x, y) = (ar[i], br[i]);
        if x == y {
            continue;
        }
        let (xl, yl) = (x.is_alphabetic(), y.is_alphabetic());
        if xl && yl {
            return x < y;
        }
        if xl || yl {
            return yl;
        }
        return digits_less(&ar, &br, i);
    }
    ar.len() < br.len()
}

/// The digit-run comparison of `keyList.Less` at the first difference `i`.
fn digits_less(ar: &[char], br: &[char], i: usize) -> bool {
    let (mut an, mut bn) = (0i64, 0i64);
    if (ar[i] == '0' || br[i] == '0')
        && ar[..i]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .any(|c| *c != '0')
    {
        an = 1;
        bn = 1;
    }
    let run = |s: &[char], n: &mut i64| {
        let mut j = i;
        while j < s.len() && s[j].is_ascii_digit() {
            *n = n
                .wrapping_mul(10)
                .wrapping_add(i64::from(s[j] as u8 - b'0'));
            j += 1;
        }
        j
    };
    let ai = run(ar, &mut an);
    let bi = run(br, &mut bn);
    if an != bn {
        return an < bn;
    }
    if ai != bi {
        return ai < bi;
    }
    ar[i] < br[i]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(v: Value) -> String {
        String::from_utf8(document(&v)).unwrap()
    }

    #[test]
    fn writes_like_sigs_k8s_yaml() {
        let v = json!({
            "metadata": {"name": "example", "uid": ""},
            "apiVersion": "v1",
            "ownerReferences": [{"controller": true, "name": "x"}],
            "status": {"port": 9001, "ratio": 0.5, "big": 1.0e21, "small": 1.0e-7, "mid": 123456789.5},
            "when": "2024-01-01T00:00:00Z",
            "flags": ["yes", "on", "1:20", "true", "0x1F", "plain"],
            "empty": {}, "none": [], "nil": null,
            "multi": "a\nb\n",
        });
        assert_eq!(
            text(v),
            "apiVersion: v1\nempty: {}\nflags:\n- \"yes\"\n- \"on\"\n- \"1:20\"\n- \"true\"\n- \"0x1F\"\n- plain\nmetadata:\n  name: example\n  uid: \"\"\nmulti: |\n  a\n  b\nnil: null\nnone: []\nownerReferences:\n- controller: true\n  name: x\nstatus:\n  big: 1e+21\n  mid: 1.234567895e+08\n  port: 9001\n  ratio: 0.5\n  small: 1e-07\nwhen: \"2024-01-01T00:00:00Z\"\n"
        );
    }

    #[test]
    fn sorts_keys_naturally() {
        let mut keys = vec!["a10", "a2", "B", "a", "_x", "1"];
        keys.sort_by(|a, b| key_order(a, b));
        // A non-digit counts as the number 0: `_x` before `1`.
        assert_eq!(keys, ["_x", "1", "B", "a", "a2", "a10"]);
    }

    #[test]
    fn folds_long_plain_strings_at_80_columns() {
        let long = "word ".repeat(30).trim_end().to_string();
        let out = text(json!({ "description": long }));
        assert!(out.lines().count() > 1, "{out}");
        assert!(out.lines().all(|l| l.len() <= 82), "{out}");
    }
}
