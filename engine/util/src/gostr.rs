//! Go's string formatting where kpt's output depends on it: `%q`
//! (`strconv.Quote`), used for stderr lines and quoted names in messages,
//! and the text Go prints for an OS error.

use std::fmt::Write;

/// `strconv.Quote`: a double-quoted Go string literal, printable characters
/// kept, everything else escaped.
pub fn quote(s: &str) -> String {
    quote_bytes(s.as_bytes())
}

/// `strconv.Quote` of bytes that may not be valid UTF-8: invalid bytes are
/// written `\xNN`, as Go does.
pub fn quote_bytes(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut rest = s;
    while !rest.is_empty() {
        let (c, w) = match decode_rune(rest) {
            Some(cw) => cw,
            None => {
                let _ = write!(out, "\\x{:02x}", rest[0]);
                rest = &rest[1..];
                continue;
            }
        };
        rest = &rest[w..];
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            _ if is_go_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            _ => {
                let r = c as u32;
                if r < 0x20 || r == 0x7f {
                    let _ = write!(out, "\\x{r:02x}");
                } else if r < 0x10000 {
                    let _ = write!(out, "\\u{r:04x}");
                } else {
                    let _ = write!(out, "\\U{r:08x}");
                }
            }
        }
    }
    out.push('"');
    out
}

/// Decode one UTF-8 rune as Go does (`None` where Go yields RuneError of
/// width 1).
fn decode_rune(s: &[u8]) -> Option<(char, usize)> {
    let w = match s[0] {
        0x00..=0x7F => 1,
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    if s.len() < w {
        return None;
    }
    let st = std::str::from_utf8(&s[..w]).ok()?;
    st.chars().next().map(|c| (c, w))
}

/// An approximation of Go's `unicode.IsPrint`: letters, marks, numbers,
/// punctuation, symbols and the ASCII space. Unassigned code points are
/// not known here and count as printable.
fn is_go_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let r = c as u32;
    // Format characters (Cf).
    let format = matches!(r,
        0xAD | 0x600..=0x605 | 0x61C | 0x6DD | 0x70F | 0x890..=0x891 | 0x8E2 | 0x180E
        | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064 | 0x2066..=0x206F
        | 0xFEFF | 0xFFF9..=0xFFFB | 0x110BD | 0x110CD | 0x13430..=0x13438
        | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0001 | 0xE0020..=0xE007F);
    // Private use (Co), surrogates (Cs) and noncharacters.
    let private = matches!(r, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    let nonchar = (0xFDD0..=0xFDEF).contains(&r) || r & 0xFFFE == 0xFFFE;
    !(format || private || nonchar)
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

/// The text Go's `syscall.Errno` prints for common errors.
pub fn go_errno_text(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(2) => "no such file or directory".into(),
        Some(8) => "exec format error".into(),
        Some(13) => "permission denied".into(),
        Some(20) => "not a directory".into(),
        Some(21) => "is a directory".into(),
        Some(40) => "too many levels of symbolic links".into(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_lowercase(),
                None => text,
            }
        }
    }
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
