//! Breadth-first rendering, as data cases under `testdata/bfs/<case>/`:
//! `pkg/` is the package tree (its root Kptfile has
//! `kpt.dev/bfs-rendering: "true"`; `FUNCTIONS/` in an `exec:` stands for
//! `testdata/functions/`; images are built-ins, e.g. starlark in
//! `nested-starlark`, porch's own nested-package test), and the expected BFS result is kept beside it:
//! `bfs.stdout` (`render -o unwrap`), `bfs.stderr` (exit code, then the
//! progress log) and `bfs.tree` (the files after an in-place render).
//!
//! kpt v1.0.0-beta.56 has no BFS mode, so these expectations were made by
//! krmgraph (`KRMGRAPH_BLESS=1`) and checked by hand against porch's
//! algorithm (`porch-crossplane-catalog.md` §1.5); each case's Kptfiles say
//! what to look for. The same trees rendered depth-first
//! (`--order dfs`) must equal what kpt writes, which ignores the annotation.

use std::path::{Path, PathBuf};

use crate::kpt_diff::{describe_difference, render_with, Rendered};
use crate::util::{copy_tree, kpt_available, repo_root};

/// Copies a case's tree to `<work>/src/pkg` with `FUNCTIONS/` resolved.
fn prepare(case: &Path, work: &Path) -> PathBuf {
    let src = work.join("src").join("pkg");
    copy_tree(&case.join("pkg"), &src).unwrap();
    resolve_functions(&src, &functions_dir());
    src
}

/// `testdata/functions/`, absolute, as the Kptfiles name it.
fn functions_dir() -> String {
    format!("{}/", repo_root().join("testdata/functions").display())
}

fn resolve_functions(dir: &Path, functions: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            resolve_functions(&path, functions);
        } else if path.file_name().is_some_and(|n| n == "Kptfile") {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replace("FUNCTIONS/", functions)).unwrap();
        }
    }
}

/// The tree as one text: `=== path` then the file, for each file.
fn tree_text(r: &Rendered) -> String {
    r.files
        .iter()
        .filter(|(path, _)| !path.starts_with('<'))
        .map(|(path, bytes)| format!("=== {path}\n{}", String::from_utf8_lossy(bytes)))
        .collect()
}

fn cases() -> Vec<PathBuf> {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(repo_root().join("testdata/bfs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("pkg").is_dir())
        .collect();
    cases.sort();
    cases
}

#[test]
fn bfs_cases() {
    let bless = std::env::var("KRMGRAPH_BLESS").as_deref() == Ok("1");
    let mut failures = Vec::new();
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let work = tempfile::tempdir().unwrap();
        let src = prepare(&case, work.path());
        let unwrap = render_with(
            "krmgraph",
            work.path(),
            &src,
            &["--allow-exec", "-o", "unwrap"],
        );
        let in_place = render_with("krmgraph", work.path(), &src, &["--allow-exec"]);
        let got = [
            ("bfs.stdout", unwrap.stdout.clone()),
            (
                "bfs.stderr",
                format!("exit {}\n{}", in_place.exit_code, in_place.stderr),
            ),
            ("bfs.tree", tree_text(&in_place)),
        ];
        for (file, text) in got {
            let text = text.replace(&functions_dir(), "FUNCTIONS/");
            let path = case.join(file);
            if bless {
                std::fs::write(&path, &text).unwrap();
            }
            let want = std::fs::read_to_string(&path).unwrap_or_default();
            if want != text {
                failures.push(format!(
                    "{name}/{file} differs (KRMGRAPH_BLESS=1 rewrites it; review the diff)\n--- want\n{want}\n--- got\n{text}"
                ));
            }
        }
        // The annotation is what chose BFS: --order bfs agrees, --order dfs
        // does not (each case is built so that the orders differ).
        let forced = render_with(
            "krmgraph",
            work.path(),
            &src,
            &["--allow-exec", "-o", "unwrap", "--order", "bfs"],
        );
        let dfs = render_with(
            "krmgraph",
            work.path(),
            &src,
            &["--allow-exec", "-o", "unwrap", "--order", "dfs"],
        );
        if forced != unwrap {
            failures.push(format!("{name}: --order bfs differs from the annotation"));
        }
        if dfs == unwrap {
            failures.push(format!("{name}: DFS and BFS give the same output"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn bfs_cases_in_dfs_order_match_kpt() {
    if !kpt_available("bfs_cases_in_dfs_order_match_kpt") {
        return;
    }
    let mut failures = Vec::new();
    for case in cases() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        for args in [&["--allow-exec"][..], &["--allow-exec", "-o", "unwrap"][..]] {
            let work = tempfile::tempdir().unwrap();
            let src = prepare(&case, work.path());
            // kpt runs built-in images as `exec: krmgraph fn run <image>`
            // (no registry here); its output is spelled back.
            let run = format!("{} fn run", crate::util::krmgraph_bin().display());
            let kpt_src = work.path().join("src-kpt").join("pkg");
            copy_tree(&src, &kpt_src).unwrap();
            crate::demo::images_to_exec(&kpt_src, &run);
            let mut kpt_args = args.to_vec();
            if !kpt_args.contains(&"--allow-exec") {
                kpt_args.push("--allow-exec");
            }
            let kpt = render_with("kpt", work.path(), &kpt_src, &kpt_args);
            let kpt = crate::demo::exec_to_images(kpt, &run);
            let mut ours_args = args.to_vec();
            ours_args.extend(["--order", "dfs"]);
            let ours = render_with("krmgraph", work.path(), &src, &ours_args);
            if let Some(d) = describe_difference(&kpt, &ours) {
                failures.push(format!("{name} {args:?}: {d}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
