//! Go's string formatting where kpt's output depends on it: `%q`
//! (`strconv.Quote`), used for stderr lines and quoted names in messages.

/// `strconv.Quote`: a double-quoted Go string literal, printable characters
/// kept, everything else escaped.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{07}' => out.push_str("\\a"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0b}' => out.push_str("\\v"),
            c if is_print(c) => out.push(c),
            c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// `strconv.Quote` of bytes that may not be valid UTF-8: invalid bytes are
/// written `\xNN`, as Go does.
pub fn quote_bytes(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) => quote(s),
        Err(_) => {
            let mut out = String::from("\"");
            for chunk in b.utf8_chunks() {
                let q = quote(chunk.valid());
                out.push_str(&q[1..q.len() - 1]);
                for byte in chunk.invalid() {
                    out.push_str(&format!("\\x{byte:02x}"));
                }
            }
            out.push('"');
            out
        }
    }
}

/// An approximation of Go's `unicode.IsPrint`: graphic characters and the
/// ASCII space; controls, format characters and Unicode spaces other than
/// U+0020 are not printable.
fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c as u32,
        0x00AD | 0x0600..=0x0605 | 0x061C | 0x06DD | 0x070F | 0x180E | 0x200B..=0x200F
        | 0x202A..=0x202E | 0x2060..=0x206F | 0xD800..=0xDFFF | 0xE000..=0xF8FF | 0xFEFF
        | 0xFFF9..=0xFFFB | 0xFFFE | 0xFFFF | 0xF0000..=0x10FFFF)
}

/// Go's `time.Duration.String()` of a duration truncated to 100ms, as kpt
/// prints function run times (`0s`, `100ms`, `2.3s`, `1m2.5s`).
pub fn duration_100ms(d: std::time::Duration) -> String {
    let tenths = d.as_millis() / 100;
    if tenths == 0 {
        return "0s".to_string();
    }
    if tenths < 10 {
        return format!("{}ms", tenths * 100);
    }
    let total_tenths = tenths;
    let hours = total_tenths / 36_000;
    let minutes = (total_tenths / 600) % 60;
    let secs = (total_tenths / 10) % 60;
    let frac = total_tenths % 10;
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if hours > 0 || minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    if frac > 0 {
        out.push_str(&format!("{secs}.{frac}s"));
    } else {
        out.push_str(&format!("{secs}s"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn quotes_like_go() {
        assert_eq!(quote("a warning"), "\"a warning\"");
        assert_eq!(quote(""), "\"\"");
        assert_eq!(quote("tab\there \"q\" \\"), "\"tab\\there \\\"q\\\" \\\\\"");
        assert_eq!(quote("héllo ☃"), "\"héllo ☃\"");
        assert_eq!(quote("\u{1b}[0m"), "\"\\x1b[0m\"");
        assert_eq!(quote("\u{a0}"), "\"\\u00a0\"");
        assert_eq!(quote_bytes(b"a\xffb"), "\"a\\xffb\"");
    }

    #[test]
    fn durations_like_kpt() {
        assert_eq!(duration_100ms(Duration::from_millis(42)), "0s");
        assert_eq!(duration_100ms(Duration::from_millis(123)), "100ms");
        assert_eq!(duration_100ms(Duration::from_millis(2345)), "2.3s");
        assert_eq!(duration_100ms(Duration::from_millis(1000)), "1s");
        assert_eq!(duration_100ms(Duration::from_millis(62_500)), "1m2.5s");
    }
}
