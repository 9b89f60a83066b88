//! kyaml's `DeriveSeqIndentStyle` (`yaml/util.go`): whether a document's
//! block sequences are written `compact` (`- ` at the key's indentation) or
//! `wide` (two spaces deeper). kpt records it per document when reading and
//! writes every sequence of that document the same way.
//!
//! The scan is textual, like kyaml's: the first line starting with spaces
//! and `- ` whose nearest non-comment line above (trailing `#...` cut) is
//! `<spaces>key:` with exactly one `:` decides; lines that do not fit are
//! skipped; with no decision the style is `compact`.

/// `wide`.
pub const WIDE: &str = "wide";
/// `compact`.
pub const COMPACT: &str = "compact";

/// `DeriveSeqIndentStyle(originalYAML)`.
pub fn derive_seq_indent_style(original: &[u8]) -> &'static str {
    let lines: Vec<&[u8]> = original.split(|&b| b == b'\n').collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(dash) = find(line, b"- ") else {
            continue;
        };
        let prefix = &line[..dash];
        if prefix.iter().any(|&b| b != b' ') {
            continue;
        }
        let key_line = key_line_before(&lines, i);
        if key_line.is_empty() {
            continue;
        }
        let key_indent = key_line.iter().take_while(|&&b| b == b' ').count();
        let trimmed = trim_spaces(key_line);
        if trimmed.iter().filter(|&&b| b == b':').count() != 1 || !trimmed.ends_with(b":") {
            continue;
        }
        if dash == key_indent {
            return COMPACT;
        }
        if dash == key_indent + 2 {
            return WIDE;
        }
    }
    COMPACT
}

/// `keyLineBeforeSeqElem`: the nearest line above `index` that is not a
/// comment, without its trailing comment; empty if there is none.
fn key_line_before<'a>(lines: &[&'a [u8]], index: usize) -> &'a [u8] {
    for line in lines[..index].iter().rev() {
        if trim_spaces(line).starts_with(b"#") {
            continue;
        }
        return match line.iter().position(|&b| b == b'#') {
            Some(p) => &line[..p],
            None => line,
        };
    }
    &[]
}

fn trim_spaces(s: &[u8]) -> &[u8] {
    let start = s.iter().take_while(|&&b| b == b' ').count();
    let end = s.len() - s[start..].iter().rev().take_while(|&&b| b == b' ').count();
    &s[start..end]
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derives_like_kyaml() {
        let cases: &[(&str, &str)] = &[
            ("a:\n- b\n", COMPACT),
            ("a:\n  - b\n", WIDE),
            ("a:\n    - b\n", COMPACT),
            ("k: v\n", COMPACT),
            ("a:\n  # comment\n  - b\n", WIDE),
            ("a: # trailing\n  - b\n", WIDE),
            ("a: b\n  - c\nd:\n  - e\n", WIDE),
            ("a: \"x: y\"\n  - c\nd:\n- e\n", COMPACT),
            ("- a\n- b\n", COMPACT),
            (
                "spec:\n  containers:\n    - name: a\n      args:\n      - x\n",
                WIDE,
            ),
            (
                "spec:\n  containers:\n  - name: a\n    args:\n      - x\n",
                COMPACT,
            ),
            ("a:\n\n  - b\nc:\n- d\n", COMPACT),
            ("text: |\n  x - y\nl:\n  - z\n", WIDE),
            ("a:   \n  - b\n", WIDE),
        ];
        for (yaml, want) in cases {
            assert_eq!(derive_seq_indent_style(yaml.as_bytes()), *want, "{yaml:?}");
        }
    }
}
