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
//! (`got newline, want primary expression`) and undefined names. Other
//! messages are starlark-rust's own, with Go's position rules.

use starlark::codemap::ResolvedPos;
use starlark::ErrorKind;

/// The text Go's `Error()` would give for `e` in script `file`.
pub fn go_message(file: &str, e: &starlark::Error) -> String {
    let span = e.span().map(|s| s.resolve_span());
    match (e.kind(), span) {
        (ErrorKind::Parser(inner), Some(span)) => {
            let text = inner.to_string();
            format!("{}: {}", position(file, span.end), parse_message(&text))
        }
        (ErrorKind::Scope(inner), Some(span)) => {
            let text = inner.to_string();
            format!("{}: {}", position(file, span.begin), scope_message(&text))
        }
        // `fail` and other native builtins already carry Go's text.
        (ErrorKind::Native(inner), _) => inner.to_string(),
        (kind, _) => kind.to_string(),
    }
}

fn position(file: &str, pos: ResolvedPos) -> String {
    format!("{file}:{}:{}", pos.line + 1, pos.column + 1)
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
}
