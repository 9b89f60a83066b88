//! The emitter against go-yaml v3 (with kyaml's compact-sequence patch).
//!
//! Each input under `tests/data/yaml_emit/NAME.yaml` has goldens made by the
//! dev oracle (`yamlv3-oracle`, see `tools/yamlv3-oracle`): `NAME.dump` (the
//! decoded Node trees), `NAME.compact.out` and `NAME.wide.out` (the trees
//! re-encoded with `SetIndent(2)`, with and without `CompactSeqIndent()`).
//! The Node trees are rebuilt from the dump, encoded by our `Encoder`, and
//! must match the goldens byte for byte. This runs everywhere.
//!
//! Where the oracle is installed, the goldens are also checked against it
//! (`YAML_EMIT_BLESS=1` rewrites them), and every YAML file of
//! `../shared/conformance/` is round-tripped through the oracle and compared
//! the same way. Without the oracle those parts are skipped with a message.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common;

use krmgraph_yaml::node::{Kind, Node, Style};
use krmgraph_yaml::Encoder;

const ORACLE: &str = "yamlv3-oracle";

// ---- the oracle ----

fn oracle_available() -> bool {
    Command::new(ORACLE)
        .arg("dump")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// Run the oracle; `Err` carries its `ERROR:` line.
fn oracle(mode: &str, input: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Write;
    let mut child = Command::new(ORACLE)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    writer.join().unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stdout).trim().to_string());
    }
    Ok(out.stdout)
}

// ---- reading the oracle's `dump` format ----

/// Unquote a Go `%q` string starting at `s[0] == '"'`; returns the value
/// and the bytes consumed.
fn go_unquote(s: &[u8]) -> Result<(String, usize), String> {
    assert_eq!(s[0], b'"');
    let mut out = Vec::new();
    let mut i = 1;
    let hex = |b: &[u8]| -> Result<u32, String> {
        u32::from_str_radix(std::str::from_utf8(b).map_err(|e| e.to_string())?, 16)
            .map_err(|e| e.to_string())
    };
    while i < s.len() {
        match s[i] {
            b'"' => {
                let v = String::from_utf8(out).map_err(|e| e.to_string())?;
                return Ok((v, i + 1));
            }
            b'\\' => {
                let c = *s.get(i + 1).ok_or("dangling backslash")?;
                i += 2;
                match c {
                    b'a' => out.push(7),
                    b'b' => out.push(8),
                    b'f' => out.push(12),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'v' => out.push(11),
                    b'\\' => out.push(b'\\'),
                    b'"' => out.push(b'"'),
                    b'\'' => out.push(b'\''),
                    b'x' => {
                        out.push(hex(&s[i..i + 2])? as u8);
                        i += 2;
                    }
                    b'u' | b'U' => {
                        let n = if c == b'u' { 4 } else { 8 };
                        let ch = char::from_u32(hex(&s[i..i + n])?).ok_or("bad rune")?;
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
                        i += n;
                    }
                    b'0'..=b'7' => {
                        let v =
                            u32::from_str_radix(std::str::from_utf8(&s[i - 1..i + 2]).unwrap(), 8)
                                .map_err(|e| e.to_string())?;
                        out.push(v as u8);
                        i += 2;
                    }
                    other => return Err(format!("unknown escape \\{}", other as char)),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Err("unterminated string".into())
}

/// One line of the dump: depth and node (without children).
fn parse_dump_line(line: &str) -> Result<(usize, Node), String> {
    let b = line.as_bytes();
    let spaces = b.iter().take_while(|&&c| c == b' ').count();
    let depth = spaces / 2;
    let rest = &b[spaces..];
    let kind_end = rest.iter().position(|&c| c == b' ').ok_or("no kind")?;
    let kind = match &rest[..kind_end] {
        b"Document" => Kind::Document,
        b"Sequence" => Kind::Sequence,
        b"Mapping" => Kind::Mapping,
        b"Scalar" => Kind::Scalar,
        b"Alias" => Kind::Alias,
        k => return Err(format!("unknown kind {}", String::from_utf8_lossy(k))),
    };
    let mut node = Node::new(kind);
    let mut i = kind_end;
    while i < rest.len() {
        if rest[i] == b' ' {
            i += 1;
            continue;
        }
        if rest[i] == b'@' {
            let pos = std::str::from_utf8(&rest[i + 1..]).unwrap();
            let (l, c) = pos.split_once(':').ok_or("bad position")?;
            node.line = l.trim().parse().map_err(|_| "bad line")?;
            node.column = c.trim().parse().map_err(|_| "bad column")?;
            break;
        }
        let eq = i + rest[i..].iter().position(|&c| c == b'=').ok_or("no =")?;
        let key = std::str::from_utf8(&rest[i..eq]).unwrap().to_string();
        i = eq + 1;
        if rest[i] == b'"' {
            let (v, n) = go_unquote(&rest[i..])?;
            i += n;
            match key.as_str() {
                "tag" => node.tag = v.into(),
                "anchor" => node.set_anchor(v),
                "value" | "alias" => node.value = v.into(),
                "head" => node.set_head_comment(v),
                "line" => node.set_line_comment(v),
                "foot" => node.set_foot_comment(v),
                k => return Err(format!("unknown key {k}")),
            }
        } else {
            let end = i + rest[i..]
                .iter()
                .position(|&c| c == b' ')
                .unwrap_or(rest.len() - i);
            let v = std::str::from_utf8(&rest[i..end]).unwrap();
            match key.as_str() {
                "style" => node.style = Style(v.parse().map_err(|_| "bad style")?),
                k => return Err(format!("unknown key {k}")),
            }
            i = end;
        }
    }
    Ok((depth, node))
}

/// The documents of a dump.
fn parse_dump(text: &str) -> Result<Vec<Node>, String> {
    let mut docs = Vec::new();
    // (depth, node) of the open ancestors.
    let mut stack: Vec<(usize, Node)> = Vec::new();
    fn close_to(stack: &mut Vec<(usize, Node)>, depth: usize, docs: &mut Vec<Node>) {
        while let Some((d, _)) = stack.last() {
            if *d < depth {
                break;
            }
            let (_, node) = stack.pop().unwrap();
            match stack.last_mut() {
                Some((_, parent)) => parent.content.push(node),
                None => docs.push(node),
            }
        }
    }
    for line in text.lines() {
        if line == "---" {
            close_to(&mut stack, 0, &mut docs);
            continue;
        }
        if line.is_empty() {
            continue;
        }
        let (depth, node) = parse_dump_line(line).map_err(|e| format!("{e}: {line}"))?;
        close_to(&mut stack, depth, &mut docs);
        stack.push((depth, node));
    }
    close_to(&mut stack, 0, &mut docs);
    Ok(docs)
}

// ---- encoding ----

/// Encode the documents as the oracle does: `SetIndent(2)`, compact or
/// wide, one `Encode` per document; nothing at all for no documents
/// (the oracle ignores `Close`'s error then).
fn encode(docs: &[Node], compact: bool) -> Result<Vec<u8>, String> {
    if docs.is_empty() {
        return Ok(Vec::new());
    }
    let mut enc = Encoder::new();
    enc.set_indent(2);
    enc.set_compact_seq_indent(compact);
    for doc in docs {
        enc.encode(doc).map_err(|e| e.to_string())?;
    }
    enc.finish().map_err(|e| e.to_string())
}

fn show_diff(name: &str, mode: &str, want: &[u8], got: &[u8]) -> String {
    let want = String::from_utf8_lossy(want);
    let got = String::from_utf8_lossy(got);
    let wl: Vec<&str> = want.split_inclusive('\n').collect();
    let gl: Vec<&str> = got.split_inclusive('\n').collect();
    let first = (0..wl.len().max(gl.len()))
        .find(|&i| wl.get(i) != gl.get(i))
        .unwrap_or(0);
    format!(
        "{name} [{mode}] differs at line {}:\n  want: {:?}\n  got:  {:?}",
        first + 1,
        wl.get(first).copied().unwrap_or("<eof>"),
        gl.get(first).copied().unwrap_or("<eof>")
    )
}

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/yaml_emit")
}

fn with_ext(input: &Path, ext: &str) -> PathBuf {
    let stem = input.file_stem().unwrap().to_string_lossy();
    input.with_file_name(format!("{stem}.{ext}"))
}

#[test]
fn emitter_matches_goldens() {
    let have_oracle = oracle_available();
    let bless = std::env::var_os("YAML_EMIT_BLESS").is_some();
    if !have_oracle {
        eprintln!("{ORACLE} not found: goldens are not re-checked against go-yaml");
    }
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    inputs.sort();
    assert!(!inputs.is_empty());
    let mut failures = Vec::new();
    let mut identical = 0;
    for input in &inputs {
        let name = input.file_name().unwrap().to_string_lossy().to_string();
        let yaml = std::fs::read(input).unwrap();
        let goldens = [
            ("dump", with_ext(input, "dump")),
            ("compact", with_ext(input, "compact.out")),
            ("wide", with_ext(input, "wide.out")),
        ];
        if have_oracle {
            for (mode, path) in &goldens {
                let fresh = oracle(mode, &yaml).unwrap_or_else(|e| panic!("{name}: {e}"));
                let stored = std::fs::read(path).ok();
                if bless || stored.is_none() {
                    std::fs::write(path, &fresh).unwrap();
                } else if stored.as_deref() != Some(&fresh[..]) {
                    failures.push(format!(
                        "{name}: golden {mode} is stale (YAML_EMIT_BLESS=1)"
                    ));
                }
            }
        }
        let dump = std::fs::read_to_string(&goldens[0].1)
            .unwrap_or_else(|_| panic!("{name}: missing golden dump"));
        let docs = parse_dump(&dump).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (compact, (mode, path)) in [(true, &goldens[1]), (false, &goldens[2])] {
            let want = std::fs::read(path).unwrap();
            match encode(&docs, compact) {
                Ok(got) if got == want => identical += 1,
                Ok(got) => failures.push(show_diff(&name, mode, &want, &got)),
                Err(e) => failures.push(format!("{name} [{mode}]: {e}")),
            }
        }
    }
    eprintln!(
        "yaml emit goldens: {identical}/{} byte-identical",
        inputs.len() * 2
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn emitter_matches_oracle_on_conformance() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance");
    if !dir.is_dir() {
        eprintln!("skipped: no {}", dir.display());
        return;
    }
    if !oracle_available() {
        eprintln!("skipped: {ORACLE} not found (a dev tool, see tools/yamlv3-oracle)");
        return;
    }
    let mut files = Vec::new();
    common::yaml_files(&dir, &mut files);
    files.sort();
    let mut failures = Vec::new();
    let (mut compared, mut identical, mut unparsable) = (0, 0, 0);
    for file in &files {
        let name = file.strip_prefix(&dir).unwrap().display().to_string();
        let yaml = std::fs::read(file).unwrap();
        let dump = match oracle("dump", &yaml) {
            Ok(d) => d,
            Err(_) => {
                unparsable += 1;
                continue;
            }
        };
        let docs =
            parse_dump(&String::from_utf8(dump).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        for (compact, mode) in [(true, "compact"), (false, "wide")] {
            let want = oracle(mode, &yaml).unwrap();
            compared += 1;
            match encode(&docs, compact) {
                Ok(got) if got == want => identical += 1,
                Ok(got) => failures.push(show_diff(&name, mode, &want, &got)),
                Err(e) => failures.push(format!("{name} [{mode}]: {e}")),
            }
        }
    }
    eprintln!(
        "yaml emit conformance: {} files ({unparsable} rejected by go-yaml), {identical}/{compared} byte-identical",
        files.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
