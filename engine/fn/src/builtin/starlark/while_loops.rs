//! go.starlark.net's `while` loops, which the catalog function enables and
//! starlark-rust does not have, as a rewrite of the source before parsing:
//!
//! ```text
//! while COND:                    for _ in range(2147483647):
//!     BODY              →            if not (COND): break
//!                                    BODY
//! ```
//!
//! The guard runs before every iteration, `continue` comes back to it and
//! `break` leaves the loop, as in Go (which has no `while … else`). The
//! range stands for "forever": a Go loop that runs that long would hit the
//! same wall. Only the block form is rewritten (`while COND:` alone on its
//! line, a trailing comment allowed); `while COND: STMT` on one line stays
//! a syntax error. Lines are not parsed, so a `while …:` line inside a
//! multi-line string would be rewritten too.
//!
//! Each guard adds a line, so [`Rewritten::original`] maps a position in
//! the rewritten text back to the script the user wrote, for error
//! messages.

/// The rewritten script and where guards were inserted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// The source as starlark-rust parses it.
    pub text: String,
    /// Inserted guard lines (0-based, in the rewritten text), ascending.
    guards: Vec<Guard>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Guard {
    /// The guard's line in the rewritten text.
    line: usize,
    /// Column (0-based, characters) of the condition in the guard line.
    cond_col: usize,
    /// Column of the condition in the `while` line.
    while_cond_col: usize,
}

const GUARD_PREFIX: &str = "if not (";

/// Rewrites the block-form `while` loops of `source`.
pub fn rewrite(source: &str) -> Rewritten {
    let lines: Vec<&str> = source.split('\n').collect();
    let mut out = Rewritten::default();
    let mut text_lines: Vec<String> = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let Some((indent, cond)) = while_header(line) else {
            text_lines.push(line.to_string());
            continue;
        };
        let Some(body_indent) = body_indent(&lines[i + 1..]) else {
            text_lines.push(line.to_string());
            continue;
        };
        text_lines.push(format!("{indent}for _ in range(2147483647):"));
        out.guards.push(Guard {
            line: text_lines.len(),
            cond_col: body_indent.chars().count() + GUARD_PREFIX.len(),
            while_cond_col: indent.chars().count() + "while ".len(),
        });
        text_lines.push(format!("{body_indent}{GUARD_PREFIX}{cond}): break"));
    }
    out.text = text_lines.join("\n");
    out
}

impl Rewritten {
    /// The 0-based line and column in the original script of a position
    /// in the rewritten text. A position in a guard maps into the `while`
    /// line's condition.
    pub fn original(&self, line: usize, column: usize) -> (usize, usize) {
        let before = self.guards.iter().take_while(|g| g.line < line).count();
        match self.guards.iter().find(|g| g.line == line) {
            Some(g) => (
                line - before - 1,
                (column + g.while_cond_col).saturating_sub(g.cond_col),
            ),
            None => (line - before, column),
        }
    }
}

/// `(indentation, condition)` of a line that is exactly `while COND:`
/// (plus an optional comment).
fn while_header(line: &str) -> Option<(&str, &str)> {
    let body = line.trim_start_matches([' ', '\t']);
    let indent = &line[..line.len() - body.len()];
    let rest = body.strip_prefix("while")?;
    if !rest.starts_with([' ', '\t', '(']) {
        return None;
    }
    // The header's colon is the last one followed only by blanks or a
    // comment (a comment may contain colons itself).
    let colon = rest
        .char_indices()
        .rev()
        .filter(|(_, c)| *c == ':')
        .find(|(i, _)| {
            let after = rest[i + 1..].trim();
            after.is_empty() || after.starts_with('#')
        })?;
    let cond = rest[..colon.0].trim();
    (!cond.is_empty()).then_some((indent, cond))
}

/// The indentation of the first statement line in `lines`.
fn body_indent<'a>(lines: &[&'a str]) -> Option<&'a str> {
    let line = lines.iter().find(|l| {
        let t = l.trim();
        !t.is_empty() && !t.starts_with('#')
    })?;
    let body = line.trim_start_matches([' ', '\t']);
    Some(&line[..line.len() - body.len()])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrites_block_while_loops() {
        let src = "n = 0\nwhile n < 3:  # count: up\n  # body\n  n += 1\nprint(n)";
        let r = rewrite(src);
        assert_eq!(
            r.text,
            "n = 0\nfor _ in range(2147483647):\n  if not (n < 3): break\n  # body\n  n += 1\nprint(n)"
        );
        assert_eq!(r.original(0, 0), (0, 0));
        assert_eq!(r.original(1, 0), (1, 0));
        // `n` of the guard's condition is `n` of the while line.
        assert_eq!(r.original(2, 10), (1, 6));
        assert_eq!(r.original(4, 2), (3, 2));
        assert_eq!(r.original(5, 0), (4, 0));
    }

    #[test]
    fn leaves_other_lines_alone() {
        for src in [
            "whilex = 1",
            "x = 1 # while y:",
            "while x: y()",
            "s = 'while'",
        ] {
            assert_eq!(rewrite(src).text, src);
        }
    }
}
