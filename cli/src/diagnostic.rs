//! What krmgraph adds after kpt's text when a render fails: kpt's lines
//! are printed first and unchanged (scripts written for kpt still match
//! them, and the conformance tests compare them), then, after a blank
//! line, a miette report per problem — what is wrong, the file, line and
//! column with the offending lines, and what to do:
//!
//! - a YAML syntax error ([`syntax_error`]): the caret on the offending
//!   token, the file's line (go-yaml's, in kpt's message, counts
//!   differently; the report says so where they differ);
//! - the engine's [`Hint`]s ([`hint`]): Kptfile schema errors with the
//!   nearest known field, an `exec:` refused without `--allow-exec`, an
//!   image near a built-in's that is not there.

use krmgraph_render::{Hint, RenderError, SourcePosition};
use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteDiagnostic, NamedSource};

/// The engine's hints about `error`, in the order they are shown.
pub fn hints(error: &RenderError) -> &[Hint] {
    match error {
        RenderError::Kptfile(e) => e.hints(),
        RenderError::Package(e) => e.hints(),
        RenderError::Function(e) => e.hints(),
        _ => &[],
    }
}

/// The report for `hint`: its message, the snippet at its position when
/// the file can still be read, its help.
pub fn hint(hint: &Hint) -> Option<String> {
    let at = hint
        .position
        .as_ref()
        .map(|p| (p, hint.length, hint.label.as_str()));
    render(&hint.message, at, hint.help.as_deref())
}

/// The report for go-yaml's error `message` (kpt's text, `yaml: line N:
/// ...`) at `position`, or `None` if the file cannot be read any more.
pub fn syntax_error(message: &str, position: &SourcePosition) -> Option<String> {
    std::fs::metadata(&position.path).ok()?;
    let location = format!(
        "{}:{}:{}",
        position.path.display(),
        position.line + 1,
        position.column + 1
    );
    let mut help = format!("fix the YAML at {location}; krmgraph wrote nothing");
    if go_line(message).is_some_and(|n| n != position.line + 1) {
        help.push_str(&format!(
            "\n(the line number in kpt's message above is go-yaml's, which can differ from the file's: this is line {} of the file)",
            position.line + 1
        ));
    }
    render(
        &without_go_line(message),
        Some((position, 0, "here")),
        Some(&help),
    )
}

/// `message` with a snippet of the file at `at` (position, characters
/// underlined, label) and `help`. A file that cannot be read gives the
/// message and help alone.
fn render(
    message: &str,
    at: Option<(&SourcePosition, usize, &str)>,
    help: Option<&str>,
) -> Option<String> {
    let mut diagnostic = MietteDiagnostic::new(message);
    if let Some(help) = help {
        diagnostic = diagnostic.with_help(help);
    }
    let mut source = None;
    if let Some((position, length, label)) = at {
        if let Ok(bytes) = std::fs::read(&position.path) {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let (text, column) = cropped(&text, position.line, position.column);
            let start = byte_offset(&text, position.line, column);
            let end = byte_offset(&text, position.line, column + length);
            diagnostic = diagnostic.with_label(LabeledSpan::at(start..end, label.to_string()));
            source = Some(NamedSource::new(position.path.display().to_string(), text));
        }
    }
    let report = match source {
        Some(source) => miette::Report::new(diagnostic).with_source_code(source),
        None => miette::Report::new(diagnostic),
    };
    let mut out = String::new();
    GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, report.as_ref())
        .ok()?;
    Some(out)
}

/// The line number go-yaml put in `message` (`yaml: line N: ...`).
fn go_line(message: &str) -> Option<usize> {
    let rest = message.strip_prefix("yaml: line ")?;
    rest.split_once(": ")?.0.parse().ok()
}

/// go-yaml's message without its `yaml: line N: ` prefix: kpt keeps the
/// line number go-yaml counted from the start of the document chunk, while
/// the snippet shows the line in the file.
fn without_go_line(message: &str) -> String {
    let Some(rest) = message.strip_prefix("yaml: line ") else {
        return message.replace("yaml: ", "");
    };
    match rest.split_once(": ") {
        Some((n, text)) if n.chars().all(|c| c.is_ascii_digit()) => text.to_string(),
        _ => message.to_string(),
    }
}

/// The longest line a snippet shows whole: a longer one (a minified
/// document, a deeply nested flow collection) is cut to this many
/// characters around the column, with `…` where it was cut.
const MAX_LINE: usize = 160;

/// `text` with every line longer than [`MAX_LINE`] cut (line `line`
/// around `column`, the others after their start), and where `column`
/// is in the cut line.
fn cropped(text: &str, line: usize, column: usize) -> (String, usize) {
    let mut at = column;
    let lines: Vec<String> = text
        .split('\n')
        .enumerate()
        .map(|(i, l)| {
            let len = l.chars().count();
            if len <= MAX_LINE {
                return l.to_string();
            }
            let start = if i == line {
                column.saturating_sub(MAX_LINE / 2).min(len - MAX_LINE)
            } else {
                0
            };
            let mut cut: String = l.chars().skip(start).take(MAX_LINE).collect();
            if start > 0 {
                cut.insert(0, '…');
            }
            if start + MAX_LINE < len {
                cut.push('…');
            }
            if i == line {
                at = column - start + usize::from(start > 0);
            }
            cut
        })
        .collect();
    (lines.join("\n"), at)
}

/// Byte offset of a 0-based line and character column, clamped to the text.
fn byte_offset(text: &str, line: usize, column: usize) -> usize {
    let line_start = if line == 0 {
        0
    } else {
        match text.match_indices('\n').nth(line - 1) {
            Some((i, _)) => i + 1,
            None => return text.len(),
        }
    };
    let rest = &text[line_start..];
    let line_len = rest.find('\n').unwrap_or(rest.len());
    let within = rest[..line_len]
        .char_indices()
        .nth(column)
        .map(|(i, _)| i)
        .unwrap_or(line_len);
    line_start + within
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_go_line_numbers() {
        assert_eq!(
            without_go_line("yaml: line 7: could not find expected ':'"),
            "could not find expected ':'"
        );
        assert_eq!(
            without_go_line("yaml: control characters are not allowed"),
            "control characters are not allowed"
        );
    }

    #[test]
    fn reads_go_line_numbers() {
        assert_eq!(
            go_line("yaml: line 9: could not find expected ':'"),
            Some(9)
        );
        assert_eq!(go_line("yaml: control characters are not allowed"), None);
        assert_eq!(go_line("yaml: line x: y"), None);
    }

    #[test]
    fn long_lines_are_cut_around_the_column() {
        let long = "x".repeat(1000);
        let text = format!("a: 1\nb: {long}\nc: {long}\n");
        let (cut, column) = cropped(&text, 1, 500);
        let lines: Vec<&str> = cut.split('\n').collect();
        assert_eq!(lines[0], "a: 1");
        assert_eq!(lines[1].chars().count(), MAX_LINE + 2);
        assert!(lines[1].starts_with('…') && lines[1].ends_with('…'));
        assert_eq!(column, MAX_LINE / 2 + 1, "the same character");
        assert!(lines[2].starts_with("c: x") && lines[2].ends_with('…'));
        assert_eq!(cropped("a: 1\n", 0, 3), ("a: 1\n".to_string(), 3));
        let (_, end) = cropped(&text, 1, 1002);
        assert_eq!(end, MAX_LINE, "the last character, after the `…`");
    }

    #[test]
    fn offsets_count_lines_and_characters() {
        let text = "a: 1\nbé: 2\nc d\n";
        assert_eq!(byte_offset(text, 0, 0), 0);
        assert_eq!(byte_offset(text, 1, 2), 8);
        assert_eq!(byte_offset(text, 2, 0), 12);
        assert_eq!(byte_offset(text, 9, 0), text.len());
    }
}
