//! `krmgraph render --check`: what an in-place render would change, as a
//! list of root-relative paths (stdout), or with `--diff` as a unified
//! diff, coloured on a terminal.

use std::io::Write;
use std::path::Path;

use krmgraph_render::shortcut::Change;

use crate::ui::Ui;

/// Prints what `changes` (a render of `root` in memory) would do to the
/// tree, and a summary line on a terminal.
pub fn report(root: &Path, changes: &[Change], diff: bool, ui: &Ui) {
    let mut out = String::new();
    for change in changes {
        let (path, old, new) = match change {
            Change::Write(path, bytes) => (path, std::fs::read(root.join(path)).ok(), Some(bytes)),
            Change::Delete(path) => (path, std::fs::read(root.join(path)).ok(), None),
        };
        if diff {
            out.push_str(&unified(path, old.as_deref(), new.map(Vec::as_slice), ui));
            continue;
        }
        let verb = match (&old, new) {
            (_, None) => "delete",
            (None, Some(_)) => "create",
            (Some(_), Some(_)) => "write",
        };
        out.push_str(&format!("{verb:<6} {path}\n"));
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    let text = match changes.len() {
        0 => "rendered: a render would change nothing".to_string(),
        n => format!("not rendered: a render would change {n} file(s)"),
    };
    if ui.warns() && std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("krmgraph: {text}");
    }
}

/// The unified diff of `path` from `old` to `new` (`None`: no such file),
/// as `diff -u` labels it (`a/PATH`, `b/PATH`, `/dev/null`).
fn unified(path: &str, old: Option<&[u8]>, new: Option<&[u8]>, ui: &Ui) -> String {
    let text =
        |bytes: Option<&[u8]>| String::from_utf8_lossy(bytes.unwrap_or_default()).into_owned();
    let (old_text, new_text) = (text(old), text(new));
    let from = if old.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let to = if new.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_string()
    };
    let diff = similar::TextDiff::from_lines(&old_text, &new_text);
    let body = diff
        .unified_diff()
        .context_radius(3)
        .header(&from, &to)
        .to_string();
    if !ui.color_stdout {
        return body;
    }
    body.lines()
        .map(|line| {
            let code = match line.as_bytes().first() {
                Some(b'+') if !line.starts_with("+++") => "32",
                Some(b'-') if !line.starts_with("---") => "31",
                Some(b'@') => "36",
                _ => return format!("{line}\n"),
            };
            format!("\x1b[{code}m{line}\x1b[0m\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_read_as_diff_u() {
        let ui = Ui::new(crate::args::ColorArg::Never, false, false);
        let diff = unified("a.yaml", Some(b"x: 1\ny: 2\n"), Some(b"x: 1\ny: 3\n"), &ui);
        assert_eq!(
            diff,
            "--- a/a.yaml\n+++ b/a.yaml\n@@ -1,2 +1,2 @@\n x: 1\n-y: 2\n+y: 3\n"
        );
        let created = unified("n.yaml", None, Some(b"k: v\n"), &ui);
        assert!(
            created.starts_with("--- /dev/null\n+++ b/n.yaml\n"),
            "{created}"
        );
    }
}
