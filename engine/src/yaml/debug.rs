//! Debug dumps of the parse side in the exact text formats of the dev
//! oracle (`tools/yamlv3-oracle`, go-yaml v3 built with `oracle_dump.go`):
//! one line per scanner token, one line per parser event, and the decoded
//! node tree per document. Tests compare these with the oracle's output
//! line for line. Includes [`go_quote`], Go's `%q` formatting.

use std::fmt::Write as _;

use super::decode::Decoder;
use super::event::{Event, EventType, Mark};
use super::node::{Kind, Node};
use super::parser::Parser;
use super::token::{Token, TokenType};

/// Go's `%q` (`strconv.Quote`) of a byte string: printable characters kept,
/// `\n`, `\t`, `\"`, `\\` and friends escaped, `\xNN` for invalid bytes and
/// ASCII controls, `\uNNNN` / `\UNNNNNNNN` for other non-printable runes.
pub fn go_quote(s: &[u8]) -> String {
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

fn marks(start: Mark, end: Mark) -> String {
    format!(
        "start={}:{}:{} end={}:{}:{}",
        start.index as i64, start.line, start.column, end.index as i64, end.line, end.column
    )
}

fn error_line(p: &Parser) -> String {
    format!(
        "ERROR {} problem={} context={} problem_mark={}:{} context_mark={}:{}\n",
        p.error as i32,
        go_quote(p.problem.as_bytes()),
        go_quote(p.context.as_bytes()),
        p.problem_mark.line,
        p.problem_mark.column,
        p.context_mark.line,
        p.context_mark.column
    )
}

/// One line per scanner token, as the oracle's `tokens` mode prints.
pub fn dump_tokens(input: &[u8]) -> String {
    let mut p = Parser::new(input);
    let mut b = String::new();
    loop {
        let mut t = Token::default();
        if !p.yaml_parser_scan(&mut t) {
            b.push_str(&error_line(&p));
            break;
        }
        let _ = writeln!(
            b,
            "{} value={} suffix={} prefix={} style={} {}",
            t.typ.name(),
            go_quote(&t.value),
            go_quote(&t.suffix),
            go_quote(&t.prefix),
            t.style,
            marks(t.start_mark, t.end_mark)
        );
        // go-yaml would loop forever on empty tokens after a swallowed error.
        if t.typ == TokenType::StreamEnd || t.typ == TokenType::NoToken {
            break;
        }
    }
    b
}

/// One line per parser event, with comments and marks, as the oracle's
/// `events` mode prints.
pub fn dump_events(input: &[u8]) -> String {
    let mut p = Parser::new(input);
    let mut b = String::new();
    loop {
        let mut e = Event::default();
        if !p.yaml_parser_parse(&mut e) {
            b.push_str(&error_line(&p));
            break;
        }
        b.push_str(e.typ.name());
        if !e.anchor.is_empty() {
            let _ = write!(b, " anchor={}", go_quote(&e.anchor));
        }
        if !e.tag.is_empty() {
            let _ = write!(b, " tag={}", go_quote(&e.tag));
        }
        if e.typ == EventType::Scalar {
            let _ = write!(b, " value={}", go_quote(&e.value));
        }
        let _ = write!(
            b,
            " implicit={} quoted_implicit={} style={}",
            e.implicit, e.quoted_implicit, e.style
        );
        for (name, c) in [
            ("head", &e.head_comment),
            ("line", &e.line_comment),
            ("foot", &e.foot_comment),
            ("tail", &e.tail_comment),
        ] {
            if !c.is_empty() {
                let _ = write!(b, " {name}={}", go_quote(c));
            }
        }
        let _ = writeln!(b, " {}", marks(e.start_mark, e.end_mark));
        // go-yaml would loop forever on empty events after a swallowed error.
        if e.typ == EventType::StreamEnd || e.typ == EventType::None {
            break;
        }
    }
    b
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Document => "Document",
        Kind::Sequence => "Sequence",
        Kind::Mapping => "Mapping",
        Kind::Scalar => "Scalar",
        Kind::Alias => "Alias",
    }
}

/// The oracle's node dump of one node and its children.
pub fn dump_node(out: &mut String, n: &Node, depth: usize) {
    // Iterative, so deep trees cannot overflow the stack.
    let mut stack: Vec<(&Node, usize)> = vec![(n, depth)];
    while let Some((n, depth)) = stack.pop() {
        for _ in 0..depth {
            out.push_str("  ");
        }
        let _ = write!(
            out,
            "{} style={} tag={}",
            kind_name(n.kind),
            n.style.0,
            go_quote(n.tag.as_bytes())
        );
        if !n.anchor.is_empty() {
            let _ = write!(out, " anchor={}", go_quote(n.anchor.as_bytes()));
        }
        if n.kind == Kind::Scalar {
            let _ = write!(out, " value={}", go_quote(n.value.as_bytes()));
        }
        if n.kind == Kind::Alias {
            let _ = write!(out, " alias={}", go_quote(n.value.as_bytes()));
        }
        for (name, c) in [
            ("head", &n.head_comment),
            ("line", &n.line_comment),
            ("foot", &n.foot_comment),
        ] {
            if !c.is_empty() {
                let _ = write!(out, " {name}={}", go_quote(c.as_bytes()));
            }
        }
        let _ = writeln!(out, " @{}:{}", n.line, n.column);
        for c in n.content.iter().rev() {
            stack.push((c, depth + 1));
        }
    }
}

/// The decoded node tree of every document followed by `---`, or
/// `ERROR: <message>` at the first error, as the oracle's `dump` mode
/// prints.
pub fn dump_documents(input: &[u8]) -> String {
    let mut out = String::new();
    let mut dec = Decoder::new(input);
    loop {
        match dec.next_document() {
            Ok(None) => break,
            Ok(Some(n)) => {
                dump_node(&mut out, &n, 0);
                out.push_str("---\n");
            }
            Err(e) => {
                let _ = writeln!(out, "ERROR: {e}");
                break;
            }
        }
    }
    out
}
