//! Which rendered trees kpt itself would change on a second render: a
//! textual check of the files for the comments kpt moves (so the render
//! shortcut does not record such a tree as a fixed point).

use rayon::prelude::*;

use super::shortcut::{is_kptfile, Entry, Snapshot};

/// Whether a YAML file of `tree` may change when the tree is rendered
/// again, however idempotent its pipelines: kpt itself is not idempotent on
/// a foot comment (a comment after a block's last entry) or a comment
/// after a sequence entry's dash (`- # c`). Reading a function's output
/// moves such a comment and restoring comments copies it back, so a render
/// through a process adds a copy. Such a tree is not a fixed point.
///
/// Runs after every in-place render with a cache, on every file of the
/// tree: the files are checked at once on the pool.
pub(super) fn may_hold_unsettled_comments(tree: &Snapshot) -> bool {
    tree.entries()
        .par_iter()
        .any(|(path, entry)| may_be_unsettled(path, entry))
}

/// Whether the file at `path` may change when its tree is rendered again
/// (see [`may_hold_unsettled_comments`]).
pub(super) fn may_be_unsettled(path: &str, entry: &Entry) -> bool {
    match entry {
        Entry::File(bytes) => {
            let yaml = path.ends_with(".yaml") || path.ends_with(".yml") || is_kptfile(path);
            yaml && may_hold_unsettled_comment(bytes)
        }
        Entry::Link(_) => false,
    }
}

/// Whether `text` may hold a comment kpt moves: a run of comment lines
/// followed (past blank lines) by a less indented line, a document marker
/// or the end — as every foot comment is — unless each line of the run is
/// at the column of the entry just above it, with no blank line between
/// (kpt leaves those where they are: a commented-out entry of a block);
/// or a comment right after a sequence entry's dash. Lines of a block
/// scalar are text, not comments. It errs on the side of "may": that only
/// costs the fixed point.
fn may_hold_unsettled_comment(text: &[u8]) -> bool {
    // Every case starts at a comment: a file without `#` has none (most
    // rendered files), and is passed over at memchr's speed.
    if memchr::memchr(b'#', text).is_none() {
        return false;
    }
    let mut lines = Lines::default();
    let text = text.strip_suffix(b"\n").unwrap_or(text);
    for line in text.split(|&b| b == b'\n') {
        if lines.unsettles(line) {
            return true;
        }
    }
    lines.run.is_some_and(|run| !run.in_place)
}

/// [`may_hold_unsettled_comment`]'s state, line after line.
#[derive(Default)]
struct Lines {
    /// The column of the last entry's key (or value), unless a blank line
    /// or a block scalar's text came after it.
    entry: Option<usize>,
    /// The indentation of the line that opened the block scalar whose text
    /// this is.
    scalar: Option<usize>,
    /// The comment lines since the last entry.
    run: Option<Run>,
}

#[derive(Clone, Copy)]
struct Run {
    /// The last line's indentation.
    last: usize,
    /// Whether every line so far is at the entry's column.
    in_place: bool,
    /// Whether a line was followed by a less indented one.
    dedents: bool,
}

impl Lines {
    /// Takes `line`; `true` when it shows a comment kpt moves.
    fn unsettles(&mut self, line: &[u8]) -> bool {
        let at = indent_of(line);
        let rest = &line[at..];
        if let Some(opener) = self.scalar {
            if rest.is_empty() || at > opener {
                return false;
            }
            self.scalar = None;
        }
        if rest.is_empty() {
            self.entry = None;
            if let Some(run) = &mut self.run {
                run.in_place = false;
            }
            return false;
        }
        let marker = rest.starts_with(b"---") || rest.starts_with(b"...");
        if let Some(run) = &mut self.run {
            if at < run.last || marker {
                run.dedents = true;
            }
            if !rest.starts_with(b"#") || marker {
                let unsettled = run.dedents && !run.in_place;
                self.run = None;
                if unsettled {
                    return true;
                }
            }
        }
        if comment_after_dash(rest) {
            return true;
        }
        if rest.starts_with(b"#") {
            let in_place = self.entry == Some(at);
            match &mut self.run {
                Some(run) => {
                    run.last = at;
                    run.in_place &= in_place;
                }
                None => {
                    self.run = Some(Run {
                        last: at,
                        in_place,
                        dedents: false,
                    })
                }
            }
            return false;
        }
        let (column, value) = entry_parts(rest);
        self.entry = (!marker).then_some(at + column);
        if is_block_scalar_header(value) {
            self.scalar = Some(at);
            self.entry = None;
        }
        false
    }
}

/// An unindented line's entry: the column of its key (past sequence
/// dashes) and the text of its value (past `key: `), without a comment.
fn entry_parts(line: &[u8]) -> (usize, &[u8]) {
    let mut rest = line;
    while let Some(after) = rest.strip_prefix(b"- ") {
        rest = &after[indent_of(after)..];
    }
    let column = line.len() - rest.len();
    let value = match rest.windows(2).position(|w| w == b": ") {
        Some(i) => &rest[i + 2..],
        None => rest,
    };
    let value = match value.windows(2).position(|w| w == b" #") {
        Some(i) => &value[..i],
        None => value,
    };
    (column, value.trim_ascii())
}

/// Whether `value` is a block scalar's header (`|`, `>-`, `|2+`, ...).
fn is_block_scalar_header(value: &[u8]) -> bool {
    matches!(value.first(), Some(b'|' | b'>'))
        && value.len() <= 3
        && value[1..]
            .iter()
            .all(|b| matches!(b, b'-' | b'+' | b'1'..=b'9'))
}

/// Whether `line` (unindented) is one or more sequence entries' dashes
/// with a comment and no value after them.
fn comment_after_dash(mut line: &[u8]) -> bool {
    let mut dashes = 0;
    while let Some(after) = line.strip_prefix(b"- ") {
        line = &after[indent_of(after)..];
        dashes += 1;
    }
    dashes > 0 && line.starts_with(b"#")
}

fn indent_of(text: &[u8]) -> usize {
    text.iter().take_while(|&&b| b == b' ').count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_kpt_moves_are_seen() {
        for (text, foot) in [
            ("a:\n  b: 1\n# foot\n", true),
            ("a:\n- b: 1\n# foot\n---\nc: 2\n", true),
            ("a: 1\n# foot\n\n---\nb: 2\n", true),
            ("a:\n  b: 1\n\n  # after a blank line\nc: 1\n", true),
            ("a: |\n  text\n# after a block scalar\n", true),
            ("a:\n  b: 1\n  # c\n# d\ne: 1\n", true),
            ("l:\n- # c\n  x: 1\n", true),
            ("l:\n  - - # c\n      x\n", true),
            // A commented-out entry, at its block's column: kpt leaves it.
            ("a:\n  b: 1\n  # c: 2\nd: 3\n", false),
            ("a:\n  b: 1 # line\n  # c: 2\n  # e: 4\n", false),
            ("a:\n- b: 1\n  # c: 2\nd: 1\n", false),
            ("a: 1\n# b: 2\n---\nc: 1\n", false),
            ("# head\na: 1\n", false),
            ("a:\n  # head\n  b: 1 # line\n", false),
            ("a: |\n  # text\n  more\nb: 1\n", false),
            ("a: >-\n  text\n\n  # text\nb: 1\n", false),
            ("l:\n- a # c\n- '# no'\n", false),
            ("a: 1\n", false),
            // A head comment after a nested block: kpt leaves it too.
            ("a:\n- b: 1\n# about c\nc: 2\n", false),
        ] {
            assert_eq!(
                may_hold_unsettled_comment(text.as_bytes()),
                foot,
                "{text:?}"
            );
        }
    }
}
