//! Differential tests against the real `kpt fn render`: the same package is
//! rendered by kpt and by krmgraph, and the resulting trees, exit codes,
//! stdout and stderr (timings and temp paths normalised) must be identical.
//!
//! Inputs: every fixture in `testdata/yaml` (one per formatting fact of
//! kpt-render.md §5, plus anchors, tags, flow comments, block headers, CRLF,
//! empty files, ...), a generated 1 MB file of small documents and a single
//! generated 1 MB document, the error fixtures in
//! `testdata/yaml-errors`, and the input files of every case of the kpt
//! conformance corpus (when `KRMGRAPH_CONFORMANCE_DIR` is set), each with
//! no pipeline and with an identity `exec: cat` pipeline.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{copy_tree, kpt_available, krmgraph_bin, repo_root};

/// What a render left behind.
#[derive(Debug, PartialEq)]
pub struct Rendered {
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    pub files: BTreeMap<String, Vec<u8>>,
}

/// Every file under `dir` (relative slash path → bytes), skipping `.git`.
pub fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let bytes = if meta.file_type().is_symlink() {
                    format!(
                        "symlink -> {}",
                        std::fs::read_link(&path).unwrap().display()
                    )
                    .into_bytes()
                } else {
                    std::fs::read(&path).unwrap_or_default()
                };
                files.insert(rel, bytes);
            }
        }
    }
    files
}

/// Replaces `[PASS] "x" in 1.2s` timings and the temp root in stderr.
pub fn normalise(text: &str, root: &Path) -> String {
    let text = text.replace(&root.to_string_lossy().to_string(), "<ROOT>");
    text.split('\n')
        .map(|line| {
            if line.starts_with("[PASS]") || line.starts_with("[FAIL]") {
                if let Some(i) = line.rfind(" in ") {
                    return format!("{} in <T>", &line[..i]);
                }
            }
            line.to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("command runs")
}

/// Renders a copy of `pkg` with `tool` (`kpt` or krmgraph) under
/// `<work>/<tool>/<name>` and returns what it left.
pub fn render_with(tool: &str, work: &Path, pkg: &Path, args: &[&str]) -> Rendered {
    run_tool(tool, work, pkg, Subcommand::Render, args, None)
}

/// `kpt fn render` / `krmgraph render`, or `kpt fn eval` / `krmgraph fn eval`.
#[derive(Clone, Copy)]
pub enum Subcommand {
    Render,
    Eval,
}

/// Runs `subcommand` with `tool` on a copy of `pkg` under
/// `<work>/<tool>/<name>` (`<PKG>` in `args` is that copy, `<RESULTS>` a
/// results directory beside it; without `<PKG>` the copy is the first
/// argument), with `stdin` when given.
pub fn run_tool(
    tool: &str,
    work: &Path,
    pkg: &Path,
    subcommand: Subcommand,
    args: &[&str],
    stdin: Option<&[u8]>,
) -> Rendered {
    run_tool_env(tool, work, pkg, subcommand, args, stdin, &[])
}

/// [`render_with`] with extra environment variables for the tool.
pub fn render_with_env(
    tool: &str,
    work: &Path,
    pkg: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> Rendered {
    run_tool_env(tool, work, pkg, Subcommand::Render, args, None, env)
}

/// [`run_tool`] with extra environment variables for the tool. A
/// `<work>/<tool>/out` directory left by `-o out` is part of the result
/// (its files as `<out>/<path>`).
pub fn run_tool_env(
    tool: &str,
    work: &Path,
    pkg: &Path,
    subcommand: Subcommand,
    args: &[&str],
    stdin: Option<&[u8]>,
    env: &[(&str, &str)],
) -> Rendered {
    let base = work.join(tool);
    let _ = std::fs::remove_dir_all(&base);
    let dest = base.join(pkg.file_name().unwrap());
    copy_tree(pkg, &dest).unwrap();
    let mut cmd = match (tool, subcommand) {
        ("kpt", Subcommand::Render) => {
            let mut c = Command::new("kpt");
            c.args(["fn", "render"]);
            c
        }
        ("kpt", Subcommand::Eval) => {
            let mut c = Command::new("kpt");
            c.args(["fn", "eval"]);
            c
        }
        (_, Subcommand::Render) => {
            // The cache has its own tests; here every render runs.
            let mut c = Command::new(krmgraph_bin());
            c.arg("render").env("KRMGRAPH_NO_CACHE", "1");
            c
        }
        (_, Subcommand::Eval) => {
            let mut c = Command::new(krmgraph_bin());
            c.args(["fn", "eval"]);
            c
        }
    };
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            a.replace("<RESULTS>", &base.join("results").to_string_lossy())
                .replace("<PKG>", &dest.to_string_lossy())
        })
        .collect();
    if !args
        .iter()
        .any(|a| a == "-" || a.contains(&*dest.to_string_lossy()))
    {
        cmd.arg(&dest);
    }
    cmd.args(&args).current_dir(&base).envs(env.iter().copied());
    let out = match stdin {
        None => run(&mut cmd),
        Some(bytes) => {
            use std::io::Write;
            cmd.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let mut child = cmd.spawn().expect("command runs");
            child.stdin.take().unwrap().write_all(bytes).unwrap();
            child.wait_with_output().expect("command runs")
        }
    };
    let mut stderr = String::from_utf8_lossy(&out.stderr).to_string();
    if tool != "kpt" {
        // krmgraph adds a source snippet after kpt's error line; kpt's text
        // is what must match.
        if let Some(i) = stderr.find("\n\n  × ") {
            stderr.truncate(i + 1);
        }
    }
    let mut files = read_tree(&dest);
    for (rel, bytes) in read_tree(&base.join("out")) {
        files.insert(format!("<out>/{rel}"), bytes);
    }
    if let Ok(results) = std::fs::read(base.join("results/results.yaml")) {
        files.insert(
            "<results.yaml>".into(),
            normalise(&String::from_utf8_lossy(&results), &base).into_bytes(),
        );
    }
    Rendered {
        exit_code: out.status.code().unwrap_or(-1),
        stdout: normalise(&String::from_utf8_lossy(&out.stdout), &base),
        stderr: normalise(&stderr, &base),
        files,
    }
}

/// The first difference between two renders, for a readable failure.
pub fn describe_difference(kpt: &Rendered, ours: &Rendered) -> Option<String> {
    if kpt.exit_code != ours.exit_code {
        return Some(format!(
            "exit code: kpt {} krmgraph {}\nkpt stderr:\n{}\nkrmgraph stderr:\n{}",
            kpt.exit_code, ours.exit_code, kpt.stderr, ours.stderr
        ));
    }
    let names: std::collections::BTreeSet<&String> =
        kpt.files.keys().chain(ours.files.keys()).collect();
    for name in names {
        match (kpt.files.get(name), ours.files.get(name)) {
            (Some(a), Some(b)) if a == b => {}
            (a, b) => {
                return Some(format!(
                    "file {name} differs\n--- kpt\n{}\n--- krmgraph\n{}",
                    a.map(|x| String::from_utf8_lossy(x).to_string())
                        .unwrap_or("<missing>".into()),
                    b.map(|x| String::from_utf8_lossy(x).to_string())
                        .unwrap_or("<missing>".into())
                ))
            }
        }
    }
    if kpt.stdout != ours.stdout {
        return Some(format!(
            "stdout differs\n--- kpt\n{}\n--- krmgraph\n{}",
            kpt.stdout, ours.stdout
        ));
    }
    if kpt.stderr != ours.stderr {
        return Some(format!(
            "stderr differs\n--- kpt\n{}\n--- krmgraph\n{}",
            kpt.stderr, ours.stderr
        ));
    }
    None
}

/// Renders `pkg` with both tools and returns the difference, if any.
pub fn compare(work: &Path, pkg: &Path, args: &[&str]) -> Option<String> {
    let kpt = render_with("kpt", work, pkg, args);
    let ours = render_with("krmgraph", work, pkg, args);
    describe_difference(&kpt, &ours)
}

const KPTFILE_NO_PIPELINE: &str = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n";
const CAT_PIPELINE: &str = "pipeline:\n  mutators:\n  - exec: cat\n";

/// Removes the `pipeline:` block of a Kptfile's text (and, with `cat`,
/// appends an identity exec pipeline instead).
pub fn replace_pipeline(kptfile: &str, cat: bool) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in kptfile.split_inclusive('\n') {
        let top_level = !line.starts_with([' ', '\t', '#', '\n', '\r']) && !line.trim().is_empty();
        if top_level {
            skipping = line.starts_with("pipeline:");
        }
        if !skipping {
            out.push_str(line);
        }
    }
    if cat {
        if !out.ends_with('\n') && !out.is_empty() {
            out.push('\n');
        }
        out.push_str(CAT_PIPELINE);
    }
    out
}

/// Rewrites every Kptfile under `dir` with [`replace_pipeline`].
pub fn rewrite_kptfiles(dir: &Path, cat: bool) {
    for (rel, bytes) in read_tree(dir) {
        if rel == "Kptfile" || rel.ends_with("/Kptfile") {
            let text = String::from_utf8_lossy(&bytes);
            std::fs::write(dir.join(&rel), replace_pipeline(&text, cat)).unwrap();
        }
    }
}

/// Builds `<work>/src/<name>`: a package holding `files` and a Kptfile.
fn package_of(work: &Path, name: &str, files: &[PathBuf], cat: bool) -> PathBuf {
    let pkg = work.join("src").join(name);
    let _ = std::fs::remove_dir_all(&pkg);
    std::fs::create_dir_all(&pkg).unwrap();
    let kptfile = if cat {
        format!("{KPTFILE_NO_PIPELINE}{CAT_PIPELINE}")
    } else {
        KPTFILE_NO_PIPELINE.to_string()
    };
    std::fs::write(pkg.join("Kptfile"), kptfile).unwrap();
    for f in files {
        std::fs::copy(f, pkg.join(f.file_name().unwrap())).unwrap();
    }
    pkg
}

fn fixtures(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(repo_root().join(dir))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

fn check_all(cases: Vec<(String, PathBuf, Vec<&str>)>, work: &Path) {
    let mut failures = Vec::new();
    for (label, pkg, args) in &cases {
        match compare(work, pkg, args) {
            None => println!("same: {label}"),
            Some(diff) => {
                println!("DIFFERENT: {label}\n{diff}");
                failures.push(label.clone());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} renders differ from kpt: {failures:?}",
        failures.len(),
        cases.len()
    );
}

#[test]
fn yaml_fixtures_match_kpt() {
    if !kpt_available("yaml_fixtures_match_kpt") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    for cat in [false, true] {
        let suffix = if cat { "cat" } else { "no-pipeline" };
        let args = if cat { vec!["--allow-exec"] } else { vec![] };
        for f in fixtures("testdata/yaml") {
            let name = format!(
                "{}-{suffix}",
                f.file_name().unwrap().to_string_lossy().replace('.', "_")
            );
            let pkg = package_of(work.path(), &name, std::slice::from_ref(&f), cat);
            cases.push((name, pkg, args.clone()));
        }
        let all = package_of(
            work.path(),
            &format!("all-{suffix}"),
            &fixtures("testdata/yaml"),
            cat,
        );
        cases.push((format!("all-{suffix}"), all, args.clone()));
        for f in fixtures("testdata/yaml-errors") {
            let name = format!(
                "error-{}-{suffix}",
                f.file_name().unwrap().to_string_lossy().replace('.', "_")
            );
            let pkg = package_of(work.path(), &name, std::slice::from_ref(&f), cat);
            cases.push((name, pkg, args.clone()));
        }
    }
    check_all(cases, work.path());
}

/// A ~1 MB manifest: many documents with comments, lists and block scalars.
fn big_manifest() -> String {
    let mut out = String::new();
    let mut i = 0;
    while out.len() < 1 << 20 {
        out.push_str(&format!(
            "# resource {i}\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-{i} # kpt-set: ${{name}}\n  labels:\n    app: app-{i}\nspec:\n  replicas: {r}\n  template:\n    spec:\n      containers:\n        - name: c\n          image: \"nginx:1.{r}\"\n          args: [\"-v\", '{i}']\n          command:\n            - sh\n            - -c\n            - |\n              echo {i}\n              sleep 1\n---\n",
            r = i % 7
        ));
        i += 1;
    }
    out
}

/// One ~1 MB document: a ConfigMap with 18,000 data keys (plain, quoted
/// and commented values; extra spaces after some colons and before line
/// comments, and a blank line and a head comment every 500 keys, all of
/// which a render rewrites) and a ~500 KB `|` block scalar (blank and
/// more-indented lines inside).
fn big_document() -> String {
    let mut out = String::from(
        "# a single ~1 MB document\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big # one document\ndata:\n",
    );
    for i in 0..18_000 {
        if i % 500 == 0 {
            out.push_str(&format!("\n  # keys from {i}\n"));
        }
        let value = match i % 5 {
            0 => format!("value {i}"),
            1 => format!("\"{i}\""),
            2 => format!("'yes'    # kept {i}"),
            3 => "\"true\"".to_string(),
            _ => format!("a longer plain value number {i} with words"),
        };
        let gap = if i % 7 == 0 { "   " } else { " " };
        out.push_str(&format!("  key-{i:05}:{gap}{value}\n"));
    }
    out.push_str("  script: |\n");
    let block_start = out.len();
    for i in 0.. {
        if out.len() - block_start >= 500 << 10 {
            break;
        }
        match i % 50 {
            25 => out.push('\n'),
            26 => out.push_str(&format!("      indented line {i}: keep: it\n")),
            _ => out.push_str(&format!(
                "    echo \"line {i} of the script\" # not a comment\n"
            )),
        }
    }
    out.push_str("  tail: end\n");
    out
}

/// Renders a package holding `text` as `big.yaml` with kpt and krmgraph,
/// with no pipeline and with `exec: cat`: kpt must succeed and rewrite
/// the file, and krmgraph must leave what kpt leaves.
fn check_big_file(name: &str, text: &str) {
    assert!(text.len() >= 1 << 20, "{name}: {} bytes", text.len());
    let work = tempfile::tempdir().unwrap();
    let big = work.path().join("big.yaml");
    std::fs::write(&big, text).unwrap();
    for cat in [false, true] {
        let name = format!("{name}-{}", if cat { "cat" } else { "no-pipeline" });
        let pkg = package_of(work.path(), &name, std::slice::from_ref(&big), cat);
        let args: &[&str] = if cat { &["--allow-exec"] } else { &[] };
        let kpt = render_with("kpt", work.path(), &pkg, args);
        assert_eq!(kpt.exit_code, 0, "{name}: kpt failed:\n{}", kpt.stderr);
        let rendered = kpt.files.get("big.yaml").map(Vec::as_slice);
        assert_ne!(
            rendered,
            Some(text.as_bytes()),
            "{name}: kpt rewrote nothing"
        );
        let ours = render_with("krmgraph", work.path(), &pkg, args);
        if let Some(diff) = describe_difference(&kpt, &ours) {
            panic!("{name}: krmgraph differs from kpt: {diff}");
        }
        println!("same: {name}");
    }
}

/// A 1 MB file of many small documents.
#[test]
fn one_megabyte_document_matches_kpt() {
    if kpt_available("one_megabyte_document_matches_kpt") {
        check_big_file("big", &big_manifest());
    }
}

/// One document of 1 MB.
#[test]
fn one_megabyte_single_document_matches_kpt() {
    if kpt_available("one_megabyte_single_document_matches_kpt") {
        let text = big_document();
        assert!(!text[1..].contains("\n---"), "a single document");
        check_big_file("one-doc", &text);
    }
}

#[test]
fn conformance_inputs_match_kpt() {
    if !kpt_available("conformance_inputs_match_kpt") {
        return;
    }
    let Ok(dir) = std::env::var("KRMGRAPH_CONFORMANCE_DIR") else {
        eprintln!("skipping conformance_inputs_match_kpt: KRMGRAPH_CONFORMANCE_DIR is not set");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mut cases = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for case in entries.into_iter().filter(|p| p.is_dir()) {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        for cat in [false, true] {
            let label = format!("{name}-{}", if cat { "cat" } else { "no-pipeline" });
            let pkg = work.path().join("src").join(&label);
            copy_tree(&case, &pkg).unwrap();
            rewrite_kptfiles(&pkg, cat);
            cases.push((label, pkg, if cat { vec!["--allow-exec"] } else { vec![] }));
        }
    }
    check_all(cases, work.path());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_pipelines() {
        let k = "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\npipeline:\n  mutators:\n    - image: a\ninfo:\n  description: d\n";
        assert_eq!(replace_pipeline(k, false), "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\ninfo:\n  description: d\n");
        assert!(replace_pipeline(k, true)
            .ends_with("description: d\npipeline:\n  mutators:\n  - exec: cat\n"));
    }
}
