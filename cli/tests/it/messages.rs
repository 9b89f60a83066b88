//! krmgraph's messages after kpt's text (issue 29, item 5), as data: each
//! directory under `testdata/messages/` holds a package tree `pkg/`, the
//! stderr krmgraph must print (`stderr`; `<ROOT>` is the temporary
//! directory the tree is copied to, `<T>` a step's time, `<DAEMON>` the
//! container engine's words after `Error response from daemon:`), and
//! optionally `args` (flags, one a line) and `needs` (`docker`: the case
//! runs only where a Docker engine answers).
//!
//! For each case the test renders a copy with the built binary and
//! compares its stderr byte for byte; where kpt runs, it renders another
//! copy with kpt and checks that krmgraph's stderr is kpt's followed by
//! krmgraph's reports, after a blank line: kpt's text first, unchanged.
//! `KRMGRAPH_BLESS=1` rewrites `stderr` (review the diff).

use std::path::Path;
use std::process::Command;

use crate::kpt_diff::normalise;
use crate::util::{copy_tree, docker_available, kpt_available, krmgraph_bin, repo_root};

/// What one tool printed for a case, normalised.
struct Run {
    code: i32,
    stderr: String,
}

/// Renders a copy of `case/pkg` under `work/<tool>/pkg` with `tool`.
fn render(tool: &str, case: &Path, work: &Path, args: &[String]) -> Run {
    let base = work.join(tool);
    let pkg = base.join("pkg");
    copy_tree(&case.join("pkg"), &pkg).unwrap();
    let mut cmd = if tool == "kpt" {
        let mut c = Command::new("kpt");
        c.args(["fn", "render"]);
        c
    } else {
        let mut c = Command::new(krmgraph_bin());
        c.arg("render").env("KRMGRAPH_NO_CACHE", "1");
        c
    };
    let out = cmd
        .arg("pkg")
        .args(args)
        .current_dir(&base)
        .output()
        .expect("the tool runs");
    Run {
        code: out.status.code().unwrap_or(-1),
        stderr: engine_words(&normalise(&String::from_utf8_lossy(&out.stderr), &base)),
    }
}

/// `text` with the engine's words after `Error response from daemon: `
/// (a DNS server's address, a registry's answer) replaced by `<DAEMON>`.
fn engine_words(text: &str) -> String {
    let marker = "Error response from daemon: ";
    text.split('\n')
        .map(|line| match line.find(marker) {
            Some(i) => format!("{}<DAEMON>\"", &line[..i + marker.len()]),
            None => line.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The case's flags, one a line.
fn case_args(case: &Path) -> Vec<String> {
    std::fs::read_to_string(case.join("args"))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Runs one case; returns what is wrong with it.
fn check_case(case: &Path, with_kpt: bool) -> Result<(), String> {
    let name = case.file_name().unwrap().to_string_lossy().to_string();
    let args = case_args(case);
    let work = tempfile::tempdir().unwrap();
    let ours = render("krmgraph", case, work.path(), &args);
    if ours.code != 1 {
        return Err(format!(
            "{name}: exit code {}, want 1\n{}",
            ours.code, ours.stderr
        ));
    }
    let expected_path = case.join("stderr");
    if std::env::var("KRMGRAPH_BLESS").as_deref() == Ok("1") {
        std::fs::write(&expected_path, &ours.stderr).unwrap();
    }
    let want = std::fs::read_to_string(&expected_path).unwrap_or_default();
    if ours.stderr != want {
        return Err(format!(
            "{name}: stderr differs (KRMGRAPH_BLESS=1 rewrites it; review the diff)\n--- want\n{want}\n--- got\n{}",
            ours.stderr
        ));
    }
    if with_kpt {
        let kpt = render("kpt", case, work.path(), &args);
        let extra = ours.stderr.strip_prefix(&kpt.stderr);
        if kpt.code != ours.code || !extra.is_some_and(|e| e.starts_with("\n  × ")) {
            return Err(format!(
                "{name}: krmgraph's stderr must be kpt's (exit {}), then a blank line and krmgraph's reports\n--- kpt\n{}\n--- krmgraph\n{}",
                kpt.code, kpt.stderr, ours.stderr
            ));
        }
    }
    Ok(())
}

#[test]
fn messages_after_kpts_text() {
    let with_kpt = kpt_available("messages_after_kpts_text");
    let mut cases: Vec<_> = std::fs::read_dir(repo_root().join("testdata/messages"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("pkg").is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 8, "the cases are missing: {cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let needs = std::fs::read_to_string(case.join("needs")).unwrap_or_default();
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        if needs.trim() == "docker"
            && !docker_available(&format!("messages_after_kpts_text {name}"))
        {
            continue;
        }
        match check_case(case, with_kpt) {
            Ok(()) => println!("pass {name}"),
            Err(e) => failures.push(e),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
