//! starlark-rust's errors in go.starlark.net's words, as far as the two
//! interpreters report the same fault.
//!
//! Go's `Error()` texts: a syntax error is `<file>:<line>:<col>: <msg>`
//! at the scanner's position *after* the offending token (so a stray
//! newline at the end of line 3 is reported at `4:1`); a name that does not
//! resolve is `<file>:<line>:<col>: undefined: <name>` at the name; a
//! runtime error is its bare message. `<file>` is the config's
//! `metadata.name`, columns count from 1.
//!
//! Translated texts: an expression expected but another token found
//! (`got newline, want primary expression`), undefined names, and the
//! common runtime faults (a missing dict key, a missing attribute, an
//! unsupported operator or `len`). Other messages are starlark-rust's own,
//! with Go's position rules.

use starlark::codemap::ResolvedPos;
use starlark::ErrorKind;

use super::while_loops::Rewritten;

/// The text Go's `Error()` would give for `e` in script `file`, whose
/// `while` loops were rewritten as `source`.
pub fn go_message(file: &str, source: &Rewritten, e: &starlark::Error) -> String {
    let span = e.span().map(|s| s.resolve_span());
    match (e.kind(), span) {
        (ErrorKind::Parser(inner), Some(span)) => {
            let text = inner.to_string();
            format!(
                "{}: {}",
                position(file, source, span.end),
                parse_message(&text)
            )
        }
        (ErrorKind::Scope(inner), Some(span)) => {
            let text = inner.to_string();
            format!(
                "{}: {}",
                position(file, source, span.begin),
                scope_message(&text)
            )
        }
        // `fail` and other native builtins already carry Go's text.
        (ErrorKind::Native(inner), _) => inner.to_string(),
        (kind, _) => runtime_message(&kind.to_string()),
    }
}

fn position(file: &str, source: &Rewritten, pos: ResolvedPos) -> String {
    let (line, column) = source.original(pos.line, pos.column);
    format!("{file}:{}:{}", line + 1, column + 1)
}

/// `Parse error: unexpected <token>, expected expression` →
/// `got <token>, want primary expression`.
fn parse_message(text: &str) -> String {
    let translated = text
        .strip_prefix("Parse error: unexpected ")
        .and_then(|rest| rest.strip_suffix(", expected expression"))
        .and_then(go_token);
    match translated {
        Some(token) => format!("got {token}, want primary expression"),
        None => text.to_string(),
    }
}

/// Go's `%#v` of a token, from starlark-rust's description of it.
fn go_token(rust: &str) -> Option<String> {
    let fixed = match rust {
        "new line" => "newline",
        "new indentation block" => "indent",
        "end of indentation block" => "outdent",
        "end of file" => "end of file",
        _ => "",
    };
    if !fixed.is_empty() {
        return Some(fixed.to_string());
    }
    // Punctuation is quoted, keywords are not.
    if let Some(symbol) = rust.strip_prefix("symbol ") {
        return Some(symbol.to_string());
    }
    if let Some(keyword) = rust.strip_prefix("keyword ") {
        return Some(keyword.trim_matches('\'').to_string());
    }
    let kinds = [
        ("identifier ", "identifier"),
        ("integer literal", "int literal"),
        ("float literal", "float literal"),
        ("string literal", "string literal"),
    ];
    kinds
        .iter()
        .find(|(prefix, _)| rust.starts_with(prefix))
        .map(|(_, go)| go.to_string())
}

/// ``Variable `x` not found`` (with or without a suggestion) →
/// `undefined: x`.
fn scope_message(text: &str) -> String {
    let name = text
        .strip_prefix("Variable `")
        .and_then(|rest| rest.split_once("` not found"))
        .map(|(name, _)| name);
    match name {
        Some(name) => format!("undefined: {name}"),
        None => text.to_string(),
    }
}

/// starlark-rust's runtime messages → go.starlark.net's, for the faults
/// both name the same way.
fn runtime_message(text: &str) -> String {
    // Key `"nope"` was not found → key "nope" not in dict
    if let Some(key) = between(text, "Key `", "` was not found") {
        return format!("key {key} not in dict");
    }
    // Operation `+` not supported for types `int` and `string`
    if let Some(rest) = text.strip_prefix("Operation `") {
        if let Some((op, types)) = rest.split_once("` not supported for types `") {
            if let Some((x, y)) = types
                .strip_suffix('`')
                .and_then(|t| t.split_once("` and `"))
            {
                return format!("unknown binary op: {x} {op} {y}");
            }
        }
        if let Some(ty) = between(rest, "len()` not supported on type `", "`") {
            return format!("len: value of type {ty} has no len");
        }
    }
    // Object of type `dict` has no attribute `nope`[, did you mean `pop`?]
    if let Some(rest) = text.strip_prefix("Object of type `") {
        if let Some((ty, rest)) = rest.split_once("` has no attribute `") {
            let (name, hint) = match rest.split_once("`, did you mean `") {
                Some((name, hint)) => (name, hint.strip_suffix("`?")),
                None => (rest.strip_suffix('`').unwrap_or(rest), None),
            };
            let mut msg = if ty == "struct" {
                format!("struct has no .{name} attribute")
            } else {
                format!("{ty} has no .{name} field or method")
            };
            if let Some(hint) = hint {
                msg.push_str(&format!(" (did you mean .{hint}?)"));
            }
            return msg;
        }
    }
    text.to_string()
}

/// The text between `prefix` and `suffix` when `text` is exactly that.
fn between<'a>(text: &'a str, prefix: &str, suffix: &str) -> Option<&'a str> {
    text.strip_prefix(prefix)?.strip_suffix(suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn translates_primary_expression_errors() {
        assert_eq!(
            parse_message("Parse error: unexpected new line, expected expression"),
            "got newline, want primary expression"
        );
        assert_eq!(
            parse_message("Parse error: unexpected symbol ')', expected expression"),
            "got ')', want primary expression"
        );
        assert_eq!(
            parse_message("Parse error: unexpected keyword 'else', expected expression"),
            "got else, want primary expression"
        );
        assert_eq!(
            parse_message("Parse error: incorrect indentation"),
            "Parse error: incorrect indentation"
        );
    }

    #[test]
    fn translates_undefined_names() {
        assert_eq!(scope_message("Variable `foo` not found"), "undefined: foo");
        assert_eq!(
            scope_message("Variable `fo` not found, did you mean `foo`?"),
            "undefined: fo"
        );
    }

    #[test]
    fn translates_common_runtime_errors() {
        assert_eq!(
            runtime_message("Key `\"nope\"` was not found"),
            "key \"nope\" not in dict"
        );
        assert_eq!(
            runtime_message("Operation `+` not supported for types `int` and `string`"),
            "unknown binary op: int + string"
        );
        assert_eq!(
            runtime_message("Operation `len()` not supported on type `int`"),
            "len: value of type int has no len"
        );
        assert_eq!(
            runtime_message("Object of type `struct` has no attribute `foo`"),
            "struct has no .foo attribute"
        );
        assert_eq!(
            runtime_message("Object of type `dict` has no attribute `nope`, did you mean `pop`?"),
            "dict has no .nope field or method (did you mean .pop?)"
        );
        assert_eq!(runtime_message("something else"), "something else");
    }
}
