//! Implicit tag resolution, ported from go-yaml v3's `resolve.go`: what a
//! plain scalar means (`123` is `!!int`, `true` is `!!bool`, `0755` is an
//! octal `!!int`, `2021-01-01` is a `!!timestamp`). The parser uses it to tag
//! plain scalars; the emitter uses it to decide when a `!!str` must be quoted
//! so it does not read back as another type.

use super::node::tag;

/// The value a scalar resolves to.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    /// `!!null`.
    Null,
    /// `!!bool`.
    Bool(bool),
    /// `!!int` that fits an `i64`.
    Int(i64),
    /// `!!int` above `i64::MAX`.
    Uint(u64),
    /// `!!float`.
    Float(f64),
    /// `!!timestamp` (kept as text).
    Timestamp,
    /// `!!str`.
    Str,
}

impl Resolved {
    /// The short tag of the resolved value.
    pub fn tag(&self) -> &'static str {
        match self {
            Resolved::Null => tag::NULL,
            Resolved::Bool(_) => tag::BOOL,
            Resolved::Int(_) | Resolved::Uint(_) => tag::INT,
            Resolved::Float(_) => tag::FLOAT,
            Resolved::Timestamp => tag::TIMESTAMP,
            Resolved::Str => tag::STR,
        }
    }
}

/// The tag go-yaml gives a plain scalar with this text
/// (`resolve("", value)`).
pub fn resolve_tag(value: &str) -> &'static str {
    resolve_plain(value).tag()
}

/// What a plain, untagged scalar resolves to.
pub fn resolve_plain(value: &str) -> Resolved {
    let Some(&first) = value.as_bytes().first() else {
        return Resolved::Null;
    };
    match first {
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => {
            lookup(value).unwrap_or(Resolved::Str)
        }
        b'.' => lookup(value)
            .or_else(|| parse_go_float(value).map(Resolved::Float))
            .unwrap_or(Resolved::Str),
        b'+' | b'-' | b'0'..=b'9' => lookup(value).unwrap_or_else(|| resolve_number(value)),
        // `<<` has no resolve-table hint in go-yaml, so it resolves as a
        // string; only the decoder tags a plain `<<` key `!!merge`.
        _ => Resolved::Str,
    }
}

/// The fixed spellings of go-yaml's `resolveMap`.
fn lookup(value: &str) -> Option<Resolved> {
    Some(match value {
        "true" | "True" | "TRUE" => Resolved::Bool(true),
        "false" | "False" | "FALSE" => Resolved::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => Resolved::Float(f64::INFINITY),
        "-.inf" | "-.Inf" | "-.INF" => Resolved::Float(f64::NEG_INFINITY),
        _ => return None,
    })
}

/// Ints, floats and timestamps: values starting with a digit or a sign.
fn resolve_number(value: &str) -> Resolved {
    if is_timestamp(value) {
        return Resolved::Timestamp;
    }
    // Most numbers have no `_`: no copy for them.
    let plain: std::borrow::Cow<'_, str> = if value.contains('_') {
        value.replace('_', "").into()
    } else {
        value.into()
    };
    if let Some(v) = go_parse_int_base0(&plain) {
        return v;
    }
    if is_yaml_style_float(&plain) {
        if let Some(f) = parse_go_float(&plain) {
            return Resolved::Float(f);
        }
    }
    for (prefix, neg, radix) in [
        ("0b", false, 2),
        ("-0b", true, 2),
        ("0o", false, 8),
        ("-0o", true, 8),
    ] {
        if let Some(digits) = plain.strip_prefix(prefix) {
            if let Some(v) = parse_radix(digits, radix, neg) {
                return v;
            }
            break;
        }
    }
    Resolved::Str
}

/// Digits in `radix` as an int, like Go's `ParseInt` then `ParseUint`.
fn parse_radix(digits: &str, radix: u32, negative: bool) -> Option<Resolved> {
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        if magnitude <= i64::MAX as u64 + 1 {
            return Some(Resolved::Int((-(magnitude as i128)) as i64));
        }
        return None;
    }
    Some(match i64::try_from(magnitude) {
        Ok(v) => Resolved::Int(v),
        Err(_) => Resolved::Uint(magnitude),
    })
}

/// Go's `strconv.ParseInt(s, 0, 64)` with `ParseUint` as fallback: an
/// optional sign, then `0x`, `0o`, `0b` or a leading `0` (octal) prefix.
fn go_parse_int_base0(s: &str) -> Option<Resolved> {
    let (negative, body) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    let parsed = parse_radix(digits, radix, negative)?;
    // ParseUint does not take a sign; ParseInt refuses magnitudes past i64.
    match (&parsed, s.starts_with('+')) {
        (Resolved::Uint(_), true) => None,
        _ => Some(parsed),
    }
}

/// go-yaml's `yamlStyleFloat`:
/// `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
pub fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for decimal text: also accepts
/// `inf`, `infinity` and `nan` in any case. Hex floats and digit
/// separators are not KRM material and read as strings.
fn parse_go_float(s: &str) -> Option<f64> {
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let lower = body.to_ascii_lowercase();
    if lower == "inf" || lower == "infinity" || lower == "nan" {
        return s.parse::<f64>().ok();
    }
    let ok = !body.is_empty()
        && body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        && body.bytes().any(|c| c.is_ascii_digit());
    if !ok {
        return None;
    }
    match s.parse::<f64>() {
        Ok(f) if f.is_finite() => Some(f),
        // Go reports a range error for overflow and go-yaml then keeps the
        // value a string.
        _ => None,
    }
}

/// Whether `s` parses with one of go-yaml's timestamp layouts:
/// `2006-1-2T15:4:5.999999999Z07:00` (also with `t`),
/// `2006-1-2 15:4:5.999999999` and `2006-1-2`.
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let year_len = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if year_len != 4 || year_len == b.len() || b[4] != b'-' {
        return false;
    }
    let year: i32 = s[..4].parse().unwrap_or(0);
    let mut i = 5;
    let Some(month) = number(b, &mut i, 2) else {
        return false;
    };
    if i >= b.len() || b[i] != b'-' {
        return false;
    }
    i += 1;
    let Some(day) = number(b, &mut i, 2) else {
        return false;
    };
    if !(1..=12).contains(&month) || day < 1 || day > days_in(year, month) {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zoned = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    if !time_of_day(b, &mut i) {
        return false;
    }
    if zoned {
        zone(b, &mut i) && i == b.len()
    } else {
        i == b.len()
    }
}

/// `15:4:5.999999999`: hour, minute, second of one or two digits, optional
/// fraction.
fn time_of_day(b: &[u8], i: &mut usize) -> bool {
    let Some(hour) = number(b, i, 2) else {
        return false;
    };
    if hour >= 24 || *i >= b.len() || b[*i] != b':' {
        return false;
    }
    *i += 1;
    let Some(minute) = number(b, i, 2) else {
        return false;
    };
    if minute >= 60 || *i >= b.len() || b[*i] != b':' {
        return false;
    }
    *i += 1;
    let Some(second) = number(b, i, 2) else {
        return false;
    };
    if second >= 60 {
        return false;
    }
    // Go (since 1.17, kpt is built with 1.23) takes `.` or `,` before the
    // fractional seconds.
    if *i < b.len()
        && (b[*i] == b'.' || b[*i] == b',')
        && *i + 1 < b.len()
        && b[*i + 1].is_ascii_digit()
    {
        *i += 1;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
    }
    true
}

/// `Z07:00`: `Z` or `±hh:mm`.
fn zone(b: &[u8], i: &mut usize) -> bool {
    match b.get(*i) {
        Some(b'Z') => {
            *i += 1;
            true
        }
        Some(b'+') | Some(b'-') => {
            let d = &b[*i + 1..];
            if d.len() >= 5
                && d[0].is_ascii_digit()
                && d[1].is_ascii_digit()
                && d[2] == b':'
                && d[3].is_ascii_digit()
                && d[4].is_ascii_digit()
            {
                *i += 6;
                // Go 1.23 (kpt's) rejects offsets past 24 hours or 60 minutes.
                let hours = (d[0] - b'0') * 10 + (d[1] - b'0');
                let minutes = (d[3] - b'0') * 10 + (d[4] - b'0');
                hours <= 24 && minutes <= 60
            } else {
                false
            }
        }
        _ => false,
    }
}

/// One or up to `max` digits, as Go's non-fixed `getnum`.
fn number(b: &[u8], i: &mut usize, max: usize) -> Option<u32> {
    let start = *i;
    while *i < b.len() && *i - start < max && b[*i].is_ascii_digit() {
        *i += 1;
    }
    if *i == start {
        return None;
    }
    std::str::from_utf8(&b[start..*i]).ok()?.parse().ok()
}

fn days_in(year: i32, month: u32) -> u32 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_go_yaml() {
        let cases = [
            ("", "!!null"),
            ("~", "!!null"),
            ("null", "!!null"),
            ("true", "!!bool"),
            ("True", "!!bool"),
            ("yes", "!!str"),
            ("on", "!!str"),
            ("123", "!!int"),
            ("-123", "!!int"),
            ("+123", "!!int"),
            ("0755", "!!int"),
            ("08", "!!float"),
            ("0x1F", "!!int"),
            ("0o17", "!!int"),
            ("0b101", "!!int"),
            ("1_000", "!!int"),
            ("1.0", "!!float"),
            ("1e3", "!!float"),
            (".5", "!!float"),
            (".inf", "!!float"),
            ("-.inf", "!!float"),
            ("12345678901234567890", "!!int"),
            ("123456789012345678901", "!!float"),
            ("2021-01-01", "!!timestamp"),
            ("2021-1-1", "!!timestamp"),
            ("2021-02-30", "!!str"),
            ("2001-12-14t21:59:43.10Z", "!!timestamp"),
            ("2001-12-14 21:59:43.10", "!!timestamp"),
            ("2001-12-14T21:59:43+05:00", "!!timestamp"),
            ("2001-12-14 21:59:43,10", "!!timestamp"),
            ("2001-12-14T21:59:43+25:00", "!!str"),
            ("1.2.3", "!!str"),
            ("-", "!!str"),
            ("<<", "!!str"),
            ("nginx:1.2", "!!str"),
            ("8080", "!!int"),
        ];
        for (value, want) in cases {
            assert_eq!(resolve_tag(value), want, "resolve({value:?})");
        }
    }
}
