//! Go's `path` and `path/filepath` functions on Unix (`Clean`, `Join`,
//! `Dir`, `Base`, `Rel`, `Match`), which kyaml uses to name, group and
//! select files. Ported rather than replaced by `std::path` because their
//! edge cases (`a/../..`, `*` not crossing `/`, `[^a-]` errors) decide which
//! files kpt reads and where it writes.

/// `path.Clean`.
pub fn clean(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|p| *p != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".to_string(),
        (false, false) => joined,
    }
}

/// `path.Join`: the non-empty elements joined by `/`, cleaned; `""` if all
/// are empty.
pub fn join(elems: &[&str]) -> String {
    let non_empty: Vec<&str> = elems.iter().copied().filter(|e| !e.is_empty()).collect();
    if non_empty.is_empty() {
        return String::new();
    }
    clean(&non_empty.join("/"))
}

/// `path.Dir`.
pub fn dir(path: &str) -> String {
    let cut = path.rfind('/').map_or(0, |i| i + 1);
    clean(&path[..cut])
}

/// `path.Base`.
pub fn base(path: &str) -> String {
    if path.is_empty() {
        return ".".to_string();
    }
    let trimmed = path.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".to_string();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// `filepath.IsAbs` on Unix.
pub fn is_abs(path: &str) -> bool {
    path.starts_with('/')
}

/// `filepath.Rel` on Unix; `None` where Go returns an error.
pub fn rel(basepath: &str, targpath: &str) -> Option<String> {
    let base = clean(basepath);
    let targ = clean(targpath);
    if targ == base {
        return Some(".".to_string());
    }
    let base = if base == "." { String::new() } else { base };
    if base.starts_with('/') != targ.starts_with('/') {
        return None;
    }
    let (b, t) = (base.as_bytes(), targ.as_bytes());
    let (mut b0, mut bi, mut t0, mut ti) = (0, 0, 0, 0);
    loop {
        while bi < b.len() && b[bi] != b'/' {
            bi += 1;
        }
        while ti < t.len() && t[ti] != b'/' {
            ti += 1;
        }
        if targ[t0..ti] != base[b0..bi] {
            break;
        }
        if bi < b.len() {
            bi += 1;
        }
        if ti < t.len() {
            ti += 1;
        }
        b0 = bi;
        t0 = ti;
    }
    if &base[b0..bi] == ".." {
        return None;
    }
    if b0 == b.len() {
        return Some(targ[t0..].to_string());
    }
    let seps = base[b0..].matches('/').count();
    let mut out = String::from("..");
    out.push_str(&"/..".repeat(seps));
    if t0 != t.len() {
        out.push('/');
        out.push_str(&targ[t0..]);
    }
    Some(out)
}

/// `filepath.ErrBadPattern`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("syntax error in pattern")]
pub struct BadPattern;

/// `filepath.Match` on Unix: `*` and `?` do not match `/`, `[...]` classes
/// with `^` negation and ranges, `\\` escapes.
pub fn matches(pattern: &str, name: &str) -> Result<bool, BadPattern> {
    let mut pattern = pattern.as_bytes();
    let mut name = name.as_bytes();
    'pattern: while !pattern.is_empty() {
        let (star, chunk, rest) = scan_chunk(pattern);
        pattern = rest;
        if star && chunk.is_empty() {
            return Ok(!name.contains(&b'/'));
        }
        let first = match_chunk(chunk, name);
        if let Ok(Some(t)) = first {
            if t.is_empty() || !pattern.is_empty() {
                name = t;
                continue;
            }
        }
        first?;
        if star {
            let mut i = 0;
            while i < name.len() && name[i] != b'/' {
                if let Some(t) = match_chunk(chunk, &name[i + 1..])? {
                    if !pattern.is_empty() || t.is_empty() {
                        name = t;
                        continue 'pattern;
                    }
                }
                i += 1;
            }
        }
        while !pattern.is_empty() {
            let (_, chunk, rest) = scan_chunk(pattern);
            pattern = rest;
            match_chunk(chunk, b"")?;
        }
        return Ok(false);
    }
    Ok(name.is_empty())
}

fn scan_chunk(pattern: &[u8]) -> (bool, &[u8], &[u8]) {
    let start = pattern.iter().take_while(|&&b| b == b'*').count();
    let p = &pattern[start..];
    let mut in_range = false;
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'\\' if i + 1 < p.len() => i += 1,
            b'[' => in_range = true,
            b']' => in_range = false,
            b'*' if !in_range => break,
            _ => {}
        }
        i += 1;
    }
    (start > 0, &p[..i], &p[i..])
}

/// Matches `chunk` at the start of `s`: the rest of `s` on a match.
fn match_chunk<'a>(mut chunk: &[u8], mut s: &'a [u8]) -> Result<Option<&'a [u8]>, BadPattern> {
    let mut failed = false;
    while let Some(&c) = chunk.first() {
        if !failed && s.is_empty() {
            failed = true;
        }
        match c {
            b'[' => {
                let r = if failed {
                    None
                } else {
                    Some(next_rune(&mut s))
                };
                chunk = &chunk[1..];
                let negated = chunk.first() == Some(&b'^');
                if negated {
                    chunk = &chunk[1..];
                }
                let mut matched = false;
                let mut nrange = 0;
                loop {
                    if chunk.first() == Some(&b']') && nrange > 0 {
                        chunk = &chunk[1..];
                        break;
                    }
                    let lo = get_esc(&mut chunk)?;
                    let mut hi = lo;
                    if chunk.first() == Some(&b'-') {
                        chunk = &chunk[1..];
                        hi = get_esc(&mut chunk)?;
                    }
                    if r.is_some_and(|r| lo <= r && r <= hi) {
                        matched = true;
                    }
                    nrange += 1;
                }
                if matched == negated {
                    failed = true;
                }
            }
            b'?' => {
                if !failed {
                    if s[0] == b'/' {
                        failed = true;
                    }
                    next_rune(&mut s);
                }
                chunk = &chunk[1..];
            }
            _ => {
                if c == b'\\' {
                    chunk = &chunk[1..];
                    if chunk.is_empty() {
                        return Err(BadPattern);
                    }
                }
                if !failed {
                    if chunk[0] != s[0] {
                        failed = true;
                    }
                    s = &s[1..];
                }
                chunk = &chunk[1..];
            }
        }
    }
    Ok(if failed { None } else { Some(s) })
}

/// Go's `utf8.DecodeRune`: an invalid byte decodes as U+FFFD of length 1.
fn next_rune(s: &mut &[u8]) -> u32 {
    let len = match s.first() {
        None => return 0xFFFD,
        Some(b) if *b < 0x80 => 1,
        Some(b) if *b >= 0xF0 => 4,
        Some(b) if *b >= 0xE0 => 3,
        Some(_) => 2,
    };
    let decoded = s
        .get(..len)
        .and_then(|b| std::str::from_utf8(b).ok())
        .and_then(|t| t.chars().next());
    match decoded {
        Some(c) => {
            *s = &s[len..];
            u32::from(c)
        }
        None => {
            *s = &s[1..];
            0xFFFD
        }
    }
}

fn get_esc(chunk: &mut &[u8]) -> Result<u32, BadPattern> {
    if matches!(chunk.first(), None | Some(b'-') | Some(b']')) {
        return Err(BadPattern);
    }
    if chunk[0] == b'\\' {
        *chunk = &chunk[1..];
        if chunk.is_empty() {
            return Err(BadPattern);
        }
    }
    let before = chunk.len();
    let r = next_rune(chunk);
    if r == 0xFFFD && before - chunk.len() == 1 {
        return Err(BadPattern);
    }
    if chunk.is_empty() {
        return Err(BadPattern);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_like_go() {
        for (input, want) in [
            ("", "."),
            ("a/b/../c", "a/c"),
            ("../a", "../a"),
            ("/../a", "/a"),
            ("a//b/./", "a/b"),
            ("./", "."),
            ("a/..", "."),
            ("a/../..", ".."),
        ] {
            assert_eq!(clean(input), want, "{input}");
        }
    }

    #[test]
    fn join_dir_base() {
        assert_eq!(join(&["", "ns", "configmap_a.yaml"]), "ns/configmap_a.yaml");
        assert_eq!(join(&["fns", "", "x.yaml"]), "fns/x.yaml");
        assert_eq!(join(&["", ""]), "");
        assert_eq!(dir("a/b.yaml"), "a");
        assert_eq!(dir("b.yaml"), ".");
        assert_eq!(base("a/b.yaml"), "b.yaml");
        assert_eq!(base("a/"), "a");
    }

    #[test]
    fn rel_like_go() {
        assert_eq!(rel("/a/b", "/a/b/c/d").as_deref(), Some("c/d"));
        assert_eq!(rel("/a/b", "/a/b").as_deref(), Some("."));
        assert_eq!(rel("/a/foo", "/a/foobar/x").as_deref(), Some("../foobar/x"));
        assert_eq!(rel("/a", "b"), None);
    }

    #[test]
    fn match_like_go() {
        let cases: &[(&str, &str, Result<bool, BadPattern>)] = &[
            ("abc", "abc", Ok(true)),
            ("*", "abc", Ok(true)),
            ("*c", "abc", Ok(true)),
            ("a*", "a", Ok(true)),
            ("a*", "abc", Ok(true)),
            ("a*", "ab/c", Ok(false)),
            ("a*/b", "abc/b", Ok(true)),
            ("a*/b", "a/c/b", Ok(false)),
            ("a*b*c*d*e*/f", "axbxcxdxe/f", Ok(true)),
            ("a*b*c*d*e*/f", "axbxcxdxexxx/f", Ok(true)),
            ("a*b*c*d*e*/f", "axbxcxdxe/xxx/f", Ok(false)),
            ("a*b?c*x", "abxbbxdbxebxczzx", Ok(true)),
            ("a*b?c*x", "abxbbxdbxebxczzy", Ok(false)),
            ("ab[c]", "abc", Ok(true)),
            ("ab[b-d]", "abc", Ok(true)),
            ("ab[e-g]", "abc", Ok(false)),
            ("ab[^c]", "abc", Ok(false)),
            ("ab[^b-d]", "abc", Ok(false)),
            ("ab[^e-g]", "abc", Ok(true)),
            ("a\\*b", "a*b", Ok(true)),
            ("a\\*b", "ab", Ok(false)),
            ("a?b", "a☺b", Ok(true)),
            ("a[^a]b", "a☺b", Ok(true)),
            ("a???b", "a☺b", Ok(false)),
            ("*.yaml", "x.YAML", Ok(false)),
            ("*.yml", "y.yml.bak", Ok(false)),
            ("[", "a", Err(BadPattern)),
            ("[^", "a", Err(BadPattern)),
            ("[^bc", "a", Err(BadPattern)),
            ("a[", "a", Err(BadPattern)),
            ("a[", "ab", Err(BadPattern)),
            ("a[", "x", Err(BadPattern)),
            ("a/b[", "x", Err(BadPattern)),
            ("*x", "xxx", Ok(true)),
            ("[-]", "-", Err(BadPattern)),
            ("[x-]", "x", Err(BadPattern)),
            ("\\", "a", Err(BadPattern)),
            ("[a-b-c]", "a", Err(BadPattern)),
            ("[]", "]", Err(BadPattern)),
            ("[]a]", "]", Err(BadPattern)),
            ("a*", "a/", Ok(false)),
        ];
        for (p, n, want) in cases {
            assert_eq!(matches(p, n), *want, "Match({p:?}, {n:?})");
        }
    }
}
