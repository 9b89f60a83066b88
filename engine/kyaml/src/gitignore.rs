//! `.krmignore` matching as `github.com/monochromegane/go-gitignore` does it
//! (kyaml's `ignorefilesmatcher.go` uses that library).
//!
//! Its semantics differ from git's: a pattern is compared with as many
//! trailing path components as it has components itself, so `a/b` (no
//! leading `/`) matches `x/a/b` too; a leading `/` anchors the pattern to
//! the package root; a trailing `/` restricts it to directories; `!`
//! patterns are checked first and win; globs follow `filepath.Match` (no
//! `**`); lines are trimmed of spaces, and empty lines and `#` comments are
//! skipped (`\#` escapes a leading `#`). Because the reader skips ignored
//! directories, nothing inside them can be re-included.

use super::gopath;

/// Parsed ignore patterns of one directory (go-gitignore's `gitIgnore`).
#[derive(Clone, Debug, Default)]
pub struct GitIgnore {
    base: String,
    ignore: ScanPatterns,
    accept: ScanPatterns,
}

impl GitIgnore {
    /// `NewGitIgnoreFromReader(base, content)`.
    pub fn parse(base: &str, content: &[u8]) -> GitIgnore {
        let mut g = GitIgnore {
            base: base.to_string(),
            ..GitIgnore::default()
        };
        for raw in content.split(|&b| b == b'\n') {
            let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
            let text = String::from_utf8_lossy(raw);
            let line = text.trim_matches(' ');
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let line = line
                .strip_prefix("\\#")
                .map_or(line.to_string(), |rest| format!("#{rest}"));
            match line.strip_prefix('!') {
                Some(accept) => g.accept.add(accept),
                None => g.ignore.add(&line),
            }
        }
        g
    }

    /// `gitIgnore.Match`: whether `path` (absolute, like the walk's paths)
    /// is ignored.
    pub fn matches(&self, path: &str, is_dir: bool) -> bool {
        let Some(rel) = gopath::rel(&self.base, path) else {
            return false;
        };
        if self.accept.matches(&rel, is_dir) {
            return false;
        }
        self.ignore.matches(&rel, is_dir)
    }
}

/// `indexScanPatterns`: anchored patterns compared with leading path
/// components, the others with trailing ones.
#[derive(Clone, Debug, Default)]
struct ScanPatterns {
    absolute: Vec<(usize, Pattern)>,
    relative: Vec<(usize, Pattern)>,
}

impl ScanPatterns {
    fn add(&mut self, pattern: &str) {
        if pattern.trim_start_matches('/').is_empty() {
            return;
        }
        let depth = pattern.trim_matches('/').matches('/').count() + 1;
        let p = Pattern::new(pattern);
        if pattern.starts_with('/') {
            self.absolute.push((depth, p));
        } else {
            self.relative.push((depth, p));
        }
    }

    fn matches(&self, path: &str, is_dir: bool) -> bool {
        depth_match(&self.absolute, path, is_dir, true)
            || depth_match(&self.relative, path, is_dir, false)
    }
}

/// `depthPatternHolder.match`: for depth 1, 2, ... compare the patterns of
/// that depth with the first (`asc`) or last `depth` components of `path`.
fn depth_match(patterns: &[(usize, Pattern)], path: &str, is_dir: bool, asc: bool) -> bool {
    if patterns.is_empty() {
        return false;
    }
    for depth in 1.. {
        let (part, is_last) = if asc {
            cut_n(path, depth)
        } else {
            cut_last_n(path, depth)
        };
        let part_is_dir = if asc && !is_last { false } else { is_dir };
        let hit = patterns
            .iter()
            .filter(|(d, _)| *d == depth)
            .any(|(_, p)| p.matches(part, part_is_dir));
        if hit {
            return true;
        }
        if is_last {
            break;
        }
    }
    false
}

/// `cutN`: `path` up to and including its `n`th separator (whole path if
/// it has fewer); whether it was the whole path.
fn cut_n(path: &str, n: usize) -> (&str, bool) {
    let b = path.as_bytes();
    let mut count = 0;
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'/' {
            count += 1;
            if count >= n {
                return (&path[..=i], false);
            }
        }
        i += 1;
    }
    (&path[..(i + 1).min(path.len())], true)
}

/// `cutLastN`: the part of `path` after its `n`th separator from the end
/// (whole path if it has fewer).
fn cut_last_n(path: &str, n: usize) -> (&str, bool) {
    let b = path.as_bytes();
    let mut count = 0;
    for i in (0..b.len()).rev() {
        if b[i] == b'/' {
            count += 1;
            if count >= n {
                return (&path[i + 1..], false);
            }
        }
    }
    (path, true)
}

/// One pattern: exact text, or a `filepath.Match` glob when it has `*?[`.
#[derive(Clone, Debug)]
struct Pattern {
    dir_only: bool,
    text: String,
    glob: bool,
}

impl Pattern {
    fn new(pattern: &str) -> Pattern {
        Pattern {
            dir_only: pattern.ends_with('/'),
            text: pattern.trim_matches('/').to_string(),
            glob: pattern.contains(['*', '?', '[']),
        }
    }

    fn matches(&self, path: &str, is_dir: bool) -> bool {
        if self.dir_only && !is_dir {
            return false;
        }
        if self.glob {
            gopath::matches(&self.text, path).unwrap_or(false)
        } else {
            self.text == path
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_like_go_gitignore() {
        assert_eq!(cut_n("a/b/c", 1), ("a/", false));
        assert_eq!(cut_n("a/b/c", 2), ("a/b/", false));
        assert_eq!(cut_n("a/b/c", 3), ("a/b/c", true));
        assert_eq!(cut_n("a", 1), ("a", true));
        assert_eq!(cut_last_n("a/b/c", 1), ("c", false));
        assert_eq!(cut_last_n("a/b/c", 2), ("b/c", false));
        assert_eq!(cut_last_n("a/b/c", 3), ("a/b/c", true));
    }

    #[test]
    fn matches_like_go_gitignore() {
        let g = GitIgnore::parse(
            "/p",
            b"# comment\n  foo  \na/b.yaml\n/c.yaml\ndd/\n*.yml\n!keep.yml\n\\#hash.yaml\n/s/t.yaml\r\n",
        );
        let m = |p: &str, d: bool| g.matches(&format!("/p/{p}"), d);
        assert!(m("foo", false) && m("x/foo", true));
        assert!(m("a/b.yaml", false) && m("x/a/b.yaml", false));
        assert!(m("c.yaml", false) && !m("sub/c.yaml", false));
        assert!(m("dd", true) && m("x/dd", true) && !m("dd", false));
        assert!(m("z.yml", false) && !m("keep.yml", false) && !m("x/keep.yml", false));
        assert!(m("#hash.yaml", false) && !m("# comment", false));
        assert!(m("s/t.yaml", false) && !m("x/s/t.yaml", false));
        assert!(!m("s", true));
    }
}
