//! What go-yaml v2 (sigs.k8s.io/yaml, kyaml's struct marshaling) writes
//! for Go strings and floats, for the places that print what Go would:
//! function results, kustomize's JSON round trip, crossplane's output.

use crate::node::{Node, Style};

/// A Go string as go-yaml marshals a struct field: literal style when it has
/// a newline, double-quoted when a plain scalar would read as another type
/// (or as a YAML 1.1 bool like `yes`), plain otherwise.
pub fn go_string_node(s: &str) -> Node {
    let mut node = Node::string(s);
    if s.contains('\n') {
        node.style = Style::LITERAL;
    } else if crate::resolve::resolve_tag(s) != crate::node::tag::STR
        || is_old_bool(s)
        || is_base60_float(s)
    {
        node.style = Style::DOUBLE_QUOTED;
    }
    node
}

fn is_old_bool(s: &str) -> bool {
    matches!(
        s,
        "y" | "Y"
            | "yes"
            | "Yes"
            | "YES"
            | "on"
            | "On"
            | "ON"
            | "n"
            | "N"
            | "no"
            | "No"
            | "NO"
            | "off"
            | "Off"
            | "OFF"
    )
}

/// go-yaml's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let b = s.strip_prefix(['-', '+']).unwrap_or(s).as_bytes();
    if b.is_empty() || !b[0].is_ascii_digit() {
        return false;
    }
    let mut i = 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while i < b.len() && b[i] == b':' {
        i += 1;
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() && i - start < 2 {
            i += 1;
        }
        let digits = &b[start..i];
        let ok = match digits.len() {
            1 => true,
            2 => digits[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// go-yaml v2's float marshaling: `strconv.FormatFloat(f, 'g', -1, 64)`
/// (shortest digits; exponent form when the exponent is below -4 or at
/// least 6). JSON has no NaN or infinities, so those never reach here.
pub fn format_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let e = format!("{f:e}");
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{mantissa}e{sign}{:02}", exp.abs())
    } else {
        format!("{f}")
    }
}
