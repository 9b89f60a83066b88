//! Character classes of the YAML grammar, ported from go-yaml v3's
//! `yamlprivateh.go`. Every function looks at `b[i]` (and for multi-byte
//! characters at the following bytes), so callers keep the buffer padded or
//! only call them on complete UTF-8 sequences.

/// `[0-9A-Za-z_-]`.
#[inline]
pub fn is_alpha(b: &[u8], i: usize) -> bool {
    let c = b[i];
    c.is_ascii_digit() || c.is_ascii_uppercase() || c.is_ascii_lowercase() || c == b'_' || c == b'-'
}

/// `[0-9]`.
#[inline]
pub fn is_digit(b: &[u8], i: usize) -> bool {
    b[i].is_ascii_digit()
}

/// The value of a decimal digit.
#[inline]
pub fn as_digit(b: &[u8], i: usize) -> i32 {
    b[i] as i32 - b'0' as i32
}

/// `[0-9A-Fa-f]`.
#[inline]
pub fn is_hex(b: &[u8], i: usize) -> bool {
    b[i].is_ascii_hexdigit()
}

/// The value of a hex digit.
#[inline]
pub fn as_hex(b: &[u8], i: usize) -> i32 {
    let c = b[i];
    match c {
        b'A'..=b'F' => c as i32 - b'A' as i32 + 10,
        b'a'..=b'f' => c as i32 - b'a' as i32 + 10,
        _ => c as i32 - b'0' as i32,
    }
}

/// NUL, which also marks the end of the input.
#[inline]
pub fn is_z(b: &[u8], i: usize) -> bool {
    b[i] == 0
}

/// A UTF-8 byte order mark at the start of `b`.
#[inline]
pub fn is_bom(b: &[u8]) -> bool {
    b.len() >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF
}

/// A space.
#[inline]
pub fn is_space(b: &[u8], i: usize) -> bool {
    b[i] == b' '
}

/// A tab.
#[inline]
pub fn is_tab(b: &[u8], i: usize) -> bool {
    b[i] == b'\t'
}

/// A space or a tab.
#[inline]
pub fn is_blank(b: &[u8], i: usize) -> bool {
    b[i] == b' ' || b[i] == b'\t'
}

/// A line break: CR, LF, NEL, LS or PS.
#[inline]
pub fn is_break(b: &[u8], i: usize) -> bool {
    let c = b[i];
    c == b'\r'
        || c == b'\n'
        || (c == 0xC2 && b[i + 1] == 0x85)
        || (c == 0xE2 && b[i + 1] == 0x80 && (b[i + 2] == 0xA8 || b[i + 2] == 0xA9))
}

/// CR followed by LF.
#[inline]
pub fn is_crlf(b: &[u8], i: usize) -> bool {
    b[i] == b'\r' && b[i + 1] == b'\n'
}

/// A line break or NUL.
#[inline]
pub fn is_breakz(b: &[u8], i: usize) -> bool {
    is_break(b, i) || b[i] == 0
}

/// A space, a tab, a line break or NUL.
#[inline]
pub fn is_blankz(b: &[u8], i: usize) -> bool {
    b[i] == b' ' || b[i] == b'\t' || is_breakz(b, i)
}

/// The length in bytes of the UTF-8 sequence starting with `b`, 0 if `b`
/// cannot start one.
#[inline]
pub fn width(b: u8) -> usize {
    if b & 0x80 == 0x00 {
        1
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        3
    } else if b & 0xF8 == 0xF0 {
        4
    } else {
        0
    }
}
