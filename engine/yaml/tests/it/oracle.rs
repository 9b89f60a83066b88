//! The go-yaml port against go-yaml itself.
//!
//! - Every `testdata/yaml-oracle/cases/*.yaml` is dumped as tokens, events
//!   and node trees and compared with `testdata/yaml-oracle/expected/*.out`,
//!   recorded from the dev oracle (`tools/yamlv3-oracle`, go-yaml v3 built
//!   from the same source). Regenerate with
//!   `testdata/yaml-oracle/regen_expected.sh`.
//! - When the oracle binary is installed (dev machines; CI does not have
//!   it), the same cases and every YAML file under `shared/conformance` are
//!   also compared with the live oracle.
//! - Random bytes and random mutations of valid YAML never panic.

use crate::common::yaml_files;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use krmgraph_yaml::{debug, parse_documents, unmarshal, Decoder};
use proptest::prelude::*;

const MODES: [&str; 3] = ["tokens", "events", "dump"];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cases_dir() -> PathBuf {
    repo_root().join("testdata/yaml-oracle/cases")
}

fn rust_dump(mode: &str, input: &[u8]) -> String {
    match mode {
        "tokens" => debug::dump_tokens(input),
        "events" => debug::dump_events(input),
        _ => debug::dump_documents(input),
    }
}

fn all_modes(input: &[u8]) -> String {
    let mut out = String::new();
    for mode in MODES {
        out.push_str(&format!("=== {mode}\n"));
        out.push_str(&rust_dump(mode, input));
    }
    out
}

fn oracle_path() -> Option<PathBuf> {
    let p = std::env::var_os("YAMLV3_ORACLE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/local/bin/yamlv3-oracle"));
    p.is_file().then_some(p)
}

fn oracle_dump(oracle: &Path, mode: &str, input: &[u8]) -> String {
    use std::io::Write;
    let mut child = Command::new(oracle)
        .arg(mode)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run oracle");
    let mut stdin = child.stdin.take().expect("stdin");
    let data = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&data);
    });
    let out = child.wait_with_output().expect("oracle output");
    let _ = writer.join();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn first_diff(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}:\n  want: {x}\n  got:  {y}", i + 1);
        }
    }
    format!(
        "length differs: want {} lines, got {}",
        a.lines().count(),
        b.lines().count()
    )
}

fn cases() -> Vec<PathBuf> {
    let mut files = Vec::new();
    yaml_files(&cases_dir(), &mut files);
    files.sort();
    assert!(files.len() > 100, "corpus missing under {:?}", cases_dir());
    files
}

#[test]
fn corpus_matches_recorded_oracle_output() {
    let expected_dir = repo_root().join("testdata/yaml-oracle/expected");
    let mut failures = Vec::new();
    let files = cases();
    for case in &files {
        let name = case.file_stem().and_then(|s| s.to_str()).expect("name");
        let input = std::fs::read(case).expect("read case");
        let want = std::fs::read_to_string(expected_dir.join(format!("{name}.out")))
            .unwrap_or_else(|_| panic!("missing expected output for {name}"));
        let got = all_modes(&input);
        if got != want {
            failures.push(format!("{name}: {}", first_diff(&want, &got)));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from go-yaml:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_and_conformance_match_live_oracle() {
    let Some(oracle) = oracle_path() else {
        eprintln!("skipping: yamlv3-oracle not installed (dev tool, see tools/yamlv3-oracle)");
        return;
    };
    let mut files = cases();
    let conformance = repo_root().join("../shared/conformance");
    if conformance.is_dir() {
        yaml_files(&conformance, &mut files);
    } else {
        eprintln!("note: {conformance:?} absent, comparing the corpus only");
    }
    let mut failures = Vec::new();
    for file in &files {
        let input = std::fs::read(file).expect("read");
        for mode in MODES {
            let want = oracle_dump(&oracle, mode, &input);
            let got = rust_dump(mode, &input);
            if want != got {
                failures.push(format!(
                    "{} [{mode}]: {}",
                    file.display(),
                    first_diff(&want, &got)
                ));
            }
        }
    }
    eprintln!(
        "compared {} inputs x {} modes with the live oracle",
        files.len(),
        MODES.len()
    );
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Inputs of several of go-yaml's 512-byte reader chunks, with a BOM, a
/// control character, an invalid byte, a NEL or LS, a tab, a space or a
/// colon inserted at a pseudo-random place (and some cut short): the
/// scanner's fast paths copy runs of characters, and must stop where
/// go-yaml refills its buffer, since a decoding error or a BOM shows up
/// exactly there.
#[test]
fn chunk_boundaries_match_live_oracle() {
    let Some(oracle) = oracle_path() else {
        eprintln!("skipping: yamlv3-oracle not installed (dev tool, see tools/yamlv3-oracle)");
        return;
    };
    let mut base = String::new();
    for i in 0..12 {
        base.push_str(&format!(
            "# head comment {i} with words: a-b c:d e#f\n\
             key-{i}: value-{i}-abcdefghijklmnopqrstuvwxyz:0123456789 # line comment {i} \tx\n\
             list:\n  - item.{i}.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n  - \"quoted {i}\"\n\
             \x20 - plain multi\n    line {i} scalar#not-comment\n\
             flow: {{a: b{i}, c: [d, e{i}]}}\nblock: |\n  text {i} here\n---\n"
        ));
    }
    let base = base.into_bytes();
    let inserts: [&[u8]; 8] = [
        b"\xEF\xBB\xBF",
        b"\x01",
        b"\xFF",
        b"\xC2\x85",
        b"\t",
        b" ",
        b":",
        b"\xE2\x80\xA8",
    ];
    let mut seed = 0x1234_5678_9abc_def1u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed as usize
    };
    let mut failures = Vec::new();
    for round in 0..600 {
        let mut input = base.clone();
        let pos = next() % input.len();
        let insert = inserts[next() % inserts.len()];
        if round % 3 != 0 {
            input.splice(pos..pos, insert.iter().copied());
        }
        if round % 5 == 0 {
            input.truncate(next() % input.len());
        }
        for mode in MODES {
            if oracle_dump(&oracle, mode, &input) != rust_dump(mode, &input) {
                failures.push(format!("round {round} [{mode}]: {insert:?} at {pos}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn error_messages() {
    let cases: &[(&[u8], &str)] = &[
        (b"a: b\nc d\n", "yaml: line 2: could not find expected ':'"),
        (b"a: \x01\n", "yaml: control characters are not allowed"),
        (b"a: \xff\n", "yaml: invalid leading UTF-8 octet"),
        (b"a: 1\nb: *x\n", "yaml: unknown anchor 'x' referenced"),
        (
            b"a:\n  b: 1\n c: 2\n",
            "yaml: line 2: did not find expected key",
        ),
        (b"a: 'x\n", "yaml: line 2: found unexpected end of stream"),
    ];
    for (input, want) in cases {
        let err = parse_documents(input).expect_err("must fail");
        assert_eq!(
            err.to_string(),
            *want,
            "input {:?}",
            String::from_utf8_lossy(input)
        );
    }
}

#[test]
fn decoder_is_lazy() {
    let input = b"a: 1\n---\nb: [\n";
    let mut dec = Decoder::new(input);
    let first = dec
        .next_document()
        .expect("first document parses")
        .expect("some");
    assert_eq!(first.content[0].content[0].value, "a");
    let err = dec.next_document().expect_err("second document fails");
    assert_eq!(
        err.to_string(),
        "yaml: line 3: did not find expected node content"
    );

    // A bad byte far into a later document does not fail the first one.
    let mut input = b"a: 1\n---\n".to_vec();
    for _ in 0..300 {
        input.extend_from_slice(b"b: 2\n");
    }
    input.extend_from_slice(b"c: \xff\n");
    let mut dec = Decoder::new(&input);
    assert!(dec.next_document().expect("first ok").is_some());
    assert_eq!(
        dec.next_document().expect_err("bad byte").to_string(),
        "yaml: invalid leading UTF-8 octet"
    );
}

#[test]
fn parser_events() {
    use krmgraph_yaml::event::EventType;
    use krmgraph_yaml::parser::Parser;
    let mut p = Parser::new(b"a: 1 # c\n");
    let mut types = Vec::new();
    loop {
        let e = p.next_event().expect("valid");
        types.push(e.typ);
        if e.typ == EventType::Scalar && e.value == b"1" {
            assert_eq!(e.line_comment, b"# c");
        }
        if e.typ == EventType::StreamEnd {
            break;
        }
    }
    assert_eq!(types.len(), 8);
    let mut p = Parser::new(b"[\n");
    let err = std::iter::from_fn(|| Some(p.next_event()))
        .find_map(|r| r.err())
        .expect("an error");
    assert_eq!(
        err.to_string(),
        "yaml: line 1: did not find expected node content"
    );
}

#[test]
fn unmarshal_empty_and_first_document() {
    assert_eq!(unmarshal(b"").expect("empty"), None);
    assert_eq!(unmarshal(b"# only a comment\n").expect("comment"), None);
    let doc = unmarshal(b"a: 1\n---\nb: 2\n").expect("ok").expect("doc");
    assert_eq!(doc.content[0].content[0].value, "a");
    assert_eq!(parse_documents(b"").expect("empty"), vec![]);
}

#[test]
fn depth_limits_are_errors_not_overflows() {
    // Run on a small stack to prove nothing recurses per nesting level.
    let handle = std::thread::Builder::new()
        .stack_size(512 * 1024)
        .spawn(|| {
            let flow = [b"[".repeat(10001), b"\n".to_vec()].concat();
            let err = parse_documents(&flow).expect_err("too deep");
            assert_eq!(err.to_string(), "yaml: exceeded max depth of 10000");

            let compact = [b"- ".repeat(10001), b"x\n".to_vec()].concat();
            let err = parse_documents(&compact).expect_err("too deep");
            assert_eq!(err.to_string(), "yaml: exceeded max depth of 10000");

            let block: Vec<u8> = (0..10002)
                .flat_map(|i| [b" ".repeat(i), b"k:\n".to_vec()].concat())
                .collect();
            let err = parse_documents(&block).expect_err("too deep");
            assert_eq!(
                err.to_string(),
                "yaml: line 10001: exceeded max depth of 10000"
            );

            // The deepest accepted nesting parses and dumps without recursion.
            let ok = [b"[".repeat(10000), b"]".repeat(10000), b"\n".to_vec()].concat();
            let docs = parse_documents(&ok).expect("10000 levels are allowed");
            let mut out = String::new();
            debug::dump_node(&mut out, &docs[0], 0);
            assert_eq!(out.lines().count(), 10001);
            // Dropping a deep tree recurses in the compiler's drop glue;
            // leak it here so the test measures the parser alone.
            std::mem::forget(docs);
        })
        .expect("spawn");
    handle.join().expect("no stack overflow");
}

fn seeds() -> Vec<Vec<u8>> {
    cases()
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .filter(|s| s.len() < 4096)
        .collect()
}

const PIECES: &[&[u8]] = &[
    b" ",
    b"\n",
    b"\t",
    b"#",
    b"# c\n",
    b"- ",
    b": ",
    b"? ",
    b",",
    b"[",
    b"]",
    b"{",
    b"}",
    b"'",
    b"\"",
    b"|",
    b">",
    b"!",
    b"&a",
    b"*a",
    b"%",
    b"---",
    b"...",
    b"\r\n",
    b"\xef\xbb\xbf",
    b"\\",
    b"\xff",
    b"\xc3",
    b"\x00",
    b"|-",
    b">+2",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = parse_documents(&input);
        let _ = debug::dump_events(&input);
        let _ = debug::dump_tokens(&input);
    }

    #[test]
    fn mutated_yaml_never_panics(
        seed in any::<prop::sample::Index>(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..PIECES.len(), 0usize..4), 1..8),
    ) {
        thread_local! {
            static SEEDS: Vec<Vec<u8>> = seeds();
        }
        let mut input = SEEDS.with(|s| s[seed.index(s.len())].clone());
        for (at, piece, del) in edits {
            let at = at.index(input.len() + 1);
            let end = (at + del).min(input.len());
            input.splice(at..end, PIECES[piece].iter().copied());
        }
        let _ = parse_documents(&input);
        let _ = debug::dump_events(&input);
        let _ = debug::dump_tokens(&input);
    }
}
