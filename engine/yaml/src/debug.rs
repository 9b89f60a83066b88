//! Debug dumps of the parse side in the exact text formats of the dev
//! oracle (`tools/yamlv3-oracle`, go-yaml v3 built with `oracle_dump.go`):
//! one line per scanner token, one line per parser event, and the decoded
//! node tree per document. Tests compare these with the oracle's output
//! line for line, quoting with [`krmgraph_util::gostr::quote_bytes`] (Go's `%q`).

use std::fmt::Write as _;

use krmgraph_util::gostr::quote_bytes;

use super::decode::Decoder;
use super::event::{Event, EventType, Mark};
use super::node::{Kind, Node};
use super::parser::Parser;
use super::token::{Token, TokenType};

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
        quote_bytes(p.problem.as_bytes()),
        quote_bytes(p.context.as_bytes()),
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
            quote_bytes(&t.value),
            quote_bytes(&t.suffix),
            quote_bytes(&t.prefix),
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
            let _ = write!(b, " anchor={}", quote_bytes(&e.anchor));
        }
        if !e.tag.is_empty() {
            let _ = write!(b, " tag={}", quote_bytes(&e.tag));
        }
        if e.typ == EventType::Scalar {
            let _ = write!(b, " value={}", quote_bytes(&e.value));
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
                let _ = write!(b, " {name}={}", quote_bytes(c));
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
            quote_bytes(n.tag.as_bytes())
        );
        if !n.anchor().is_empty() {
            let _ = write!(out, " anchor={}", quote_bytes(n.anchor().as_bytes()));
        }
        if n.kind == Kind::Scalar {
            let _ = write!(out, " value={}", quote_bytes(n.value.as_bytes()));
        }
        if n.kind == Kind::Alias {
            let _ = write!(out, " alias={}", quote_bytes(n.value.as_bytes()));
        }
        for (name, c) in [
            ("head", &n.head_comment()),
            ("line", &n.line_comment()),
            ("foot", &n.foot_comment()),
        ] {
            if !c.is_empty() {
                let _ = write!(out, " {name}={}", quote_bytes(c.as_bytes()));
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
