//! Source snippets for syntax errors: after kpt's one-line `Error:` (kept
//! verbatim, so scripts written for kpt still match it), a miette report
//! naming the file, line and column, with the offending lines.

use krmgraph_render::SourcePosition;
use miette::{Diagnostic, GraphicalReportHandler, GraphicalTheme, NamedSource, SourceSpan};

#[derive(Debug, thiserror::Error, Diagnostic)]
#[error("{message}")]
#[diagnostic(help("fix the YAML at {location}; krmgraph wrote nothing"))]
struct SyntaxError {
    message: String,
    location: String,
    #[source_code]
    source_code: NamedSource<String>,
    #[label("here")]
    span: SourceSpan,
}

/// The snippet for `message` at `position`, or `None` if the file cannot be
/// read any more.
pub fn snippet(message: &str, position: &SourcePosition) -> Option<String> {
    let text = String::from_utf8_lossy(&std::fs::read(&position.path).ok()?).into_owned();
    let (text, column) = cropped(&text, position.line, position.column);
    let offset = byte_offset(&text, position.line, column);
    let name = position.path.display().to_string();
    let location = format!("{}:{}:{}", name, position.line + 1, position.column + 1);
    let report = SyntaxError {
        message: message.to_string(),
        location,
        source_code: NamedSource::new(name, text),
        span: SourceSpan::from((offset, 0)),
    };
    let mut out = String::new();
    GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .render_report(&mut out, &report)
        .ok()?;
    Some(out)
}

/// go-yaml's message without its `yaml: line N: ` prefix: kpt keeps the
/// line number go-yaml counted from the start of the document chunk, while
/// the snippet shows the line in the file.
pub fn without_go_line(message: &str) -> String {
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
