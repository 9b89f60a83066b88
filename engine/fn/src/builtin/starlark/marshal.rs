//! Starlark values → YAML, the way the catalog function writes them back:
//! `util.Unmarshal` to Go values (dicts with string keys become
//! `map[string]interface{}`), then go-yaml v3's `Marshal`, whose output
//! kyaml parses again. The node trees built here are what that parse
//! yields, so the formatting of every value a script touched follows
//! go-yaml's encoder:
//!
//! - mapping keys sorted with go-yaml's `keyList.Less` (numbers inside
//!   keys compare by value, letters after other characters);
//! - strings plain when they read back as strings, double-quoted when they
//!   would read as another type (`"1"`, `"true"`, `"yes"`), literal `|`
//!   when they contain a newline;
//! - ints in decimal, floats in Go's `%g` form (`1.5`, `1e+06`, and `1.0`
//!   as `1`), `None` as `null`, tuples as lists.
//!
//! Comments and key order of resources that came in are restored later by
//! id, at the function boundary, as kpt does.

use std::cmp::Ordering;

use starlark::values::dict::DictRef;
use starlark::values::float::StarlarkFloat;
use starlark::values::list::ListRef;
use starlark::values::tuple::TupleRef;
use starlark::values::{UnpackValue, Value, ValueLike};

use crate::results::go_string_node;
use krmgraph_yaml::node::tag;
use krmgraph_yaml::{Kind, Node};

/// A value the Go converter has no YAML form for.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MarshalError {
    /// A value of a type `util.Unmarshal` does not convert (a function,
    /// a set, a struct ...).
    #[error("unrecognized starlark type: {0}")]
    Type(String),
    /// An int outside Go's `int64`.
    #[error("int {0} out of range")]
    IntRange(String),
    /// Lists and dicts nested deeper than any parsed tree (a list that
    /// contains itself, say), which Go follows until its stack overflows.
    #[error("value nests deeper than {MAX_DEPTH} levels (does a list or dict contain itself?)")]
    TooDeep,
}

/// How deep a value may nest: deeper than any tree the YAML parser gives
/// (`yaml::aliasing::MAX_DEPTH`), so only values a script built reach it.
const MAX_DEPTH: usize = 25_000;

/// The YAML node for `value`.
pub fn to_node(value: Value) -> Result<Node, MarshalError> {
    to_node_at(value, 0)
}

fn to_node_at(value: Value, depth: usize) -> Result<Node, MarshalError> {
    if depth > MAX_DEPTH {
        return Err(MarshalError::TooDeep);
    }
    if value.is_none() {
        return Ok(scalar("null", tag::NULL));
    }
    if let Some(b) = value.unpack_bool() {
        return Ok(scalar(if b { "true" } else { "false" }, tag::BOOL));
    }
    if let Some(s) = value.unpack_str() {
        return Ok(go_string_node(s));
    }
    if let Some(list) = ListRef::from_value(value) {
        return sequence(list.content(), depth);
    }
    if let Some(tuple) = TupleRef::from_value(value) {
        return sequence(tuple.content(), depth);
    }
    if let Some(dict) = DictRef::from_value(value) {
        return mapping(&dict, depth);
    }
    if let Some(f) = value.downcast_ref::<StarlarkFloat>() {
        return Ok(scalar(&go_float(f.0), tag::FLOAT));
    }
    if value.get_type() == "int" {
        return match i64::unpack_value(value) {
            Ok(Some(i)) => Ok(scalar(&i.to_string(), tag::INT)),
            _ => Err(MarshalError::IntRange(value.to_str())),
        };
    }
    Err(MarshalError::Type(value.get_type().to_string()))
}

fn scalar(value: &str, tag: &str) -> Node {
    Node {
        kind: Kind::Scalar,
        tag: tag.into(),
        value: value.into(),
        ..Node::default()
    }
}

fn sequence(items: &[Value], depth: usize) -> Result<Node, MarshalError> {
    let mut seq = Node::sequence();
    seq.content = items
        .iter()
        .map(|v| to_node_at(*v, depth + 1))
        .collect::<Result<_, _>>()?;
    Ok(seq)
}

fn mapping(dict: &DictRef, depth: usize) -> Result<Node, MarshalError> {
    let mut entries = Vec::with_capacity(dict.len());
    for (k, v) in dict.iter() {
        let (key, value) = (to_node_at(k, depth + 1)?, to_node_at(v, depth + 1)?);
        entries.push((SortKey::of(k), key, value));
    }
    // Go's sort.Sort is not stable, but keys of one map are distinct.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut map = Node::mapping();
    for (_, k, v) in entries {
        map.content.push(k);
        map.content.push(v);
    }
    Ok(map)
}

/// A map key as go-yaml's `keyList` sees it.
#[derive(Debug, PartialEq)]
enum SortKey {
    /// Numbers and bools compare as floats first; `kind` is Go's
    /// `reflect.Kind` order (bool < int < float) for equal values.
    Number { value: f64, kind: u8 },
    /// Strings, in go-yaml's natural order.
    Str(Vec<char>),
    /// Anything else, after numbers and strings.
    Other,
}

impl SortKey {
    fn of(v: Value) -> SortKey {
        if let Some(s) = v.unpack_str() {
            return SortKey::Str(s.chars().collect());
        }
        if let Some(b) = v.unpack_bool() {
            return SortKey::Number {
                value: if b { 1.0 } else { 0.0 },
                kind: 1,
            };
        }
        if let Some(f) = v.downcast_ref::<StarlarkFloat>() {
            return SortKey::Number {
                value: f.0,
                kind: 14,
            };
        }
        match i64::unpack_value(v) {
            Ok(Some(i)) => SortKey::Number {
                value: i as f64,
                kind: 6,
            },
            _ => SortKey::Other,
        }
    }

    /// Go's `reflect.Kind` of the key, for keys of different kinds.
    fn reflect_kind(&self) -> u8 {
        match self {
            SortKey::Number { kind, .. } => *kind,
            SortKey::Str(_) => 24,
            SortKey::Other => 25,
        }
    }

    fn cmp(&self, other: &SortKey) -> Ordering {
        match (self, other) {
            (SortKey::Number { value: a, kind: ak }, SortKey::Number { value: b, kind: bk }) => {
                a.partial_cmp(b).unwrap_or(Ordering::Equal).then(ak.cmp(bk))
            }
            (SortKey::Str(a), SortKey::Str(b)) => {
                if natural_less(a, b) {
                    Ordering::Less
                } else if natural_less(b, a) {
                    Ordering::Greater
                } else {
                    Ordering::Equal
                }
            }
            _ => self.reflect_kind().cmp(&other.reflect_kind()),
        }
    }
}

/// go-yaml's `keyList.Less` for two strings: runs of digits compare as
/// numbers, and at the first difference a letter sorts after a non-letter
/// (unless the previous characters were digits).
fn natural_less(a: &[char], b: &[char]) -> bool {
    let mut digits = false;
    for i in 0..a.len().min(b.len()) {
        if a[i] == b[i] {
            digits = a[i].is_numeric();
            continue;
        }
        let (al, bl) = (a[i].is_alphabetic(), b[i].is_alphabetic());
        if al && bl {
            return a[i] < b[i];
        }
        if al || bl {
            return if digits { al } else { bl };
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if a[i] == '0' || b[i] == '0' {
            let mut j = i;
            while j > 0 && a[j - 1].is_numeric() {
                j -= 1;
                if a[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < a.len() && a[ai].is_numeric() {
            an = an.wrapping_mul(10).wrapping_add(digit(a[ai]));
            ai += 1;
        }
        let mut bi = i;
        while bi < b.len() && b[bi].is_numeric() {
            bn = bn.wrapping_mul(10).wrapping_add(digit(b[bi]));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return a[i] < b[i];
    }
    a.len() < b.len()
}

/// Go's `int64(r - '0')` for a digit rune (non-ASCII digits included, as
/// Go computes it).
fn digit(c: char) -> i64 {
    c as i64 - '0' as i64
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)` as go-yaml writes floats,
/// with `.inf`, `-.inf` and `.nan` for the special values.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde<exp>`.
    let e = format!("{:e}", f.abs());
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if f < 0.0 { "-" } else { "" };
    // Go: `%e` when the exponent is < -4 or >= the precision, and the
    // shortest form decides with precision 6.
    if !(-4..6).contains(&exp) {
        let mut m = digits[..1].to_string();
        if digits.len() > 1 {
            m.push('.');
            m.push_str(&digits[1..]);
        }
        let (esign, eabs) = if exp < 0 { ('-', -exp) } else { ('+', exp) };
        return format!("{sign}{m}e{esign}{eabs:02}");
    }
    let point = exp + 1;
    let body = if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{}{}", digits, "0".repeat(point as usize - digits.len()))
    } else {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    };
    format!("{sign}{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn less(a: &str, b: &str) -> bool {
        natural_less(
            &a.chars().collect::<Vec<_>>(),
            &b.chars().collect::<Vec<_>>(),
        )
    }

    #[test]
    fn keys_sort_like_go_yaml() {
        assert!(less("a", "b"));
        assert!(less("a9", "a10"));
        assert!(less("apiVersion", "kind"));
        assert!(less("a.b", "ab"));
        assert!(less("a_b", "aB"));
        assert!(!less("b", "a"));
        assert!(less("image", "name"));
        assert!(less("a", "ab"));
    }

    #[test]
    fn floats_format_like_go() {
        assert_eq!(go_float(1.0), "1");
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(-0.25), "-0.25");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(f64::INFINITY), ".inf");
    }
}
