//! The README's main job: `krmgraph render testdata/demo` renders the demo
//! package hierarchy (WordPress with a MySQL subpackage) with built-in
//! functions only — no `--allow-exec`, no container engine. kpt renders the
//! same hierarchy running the same built-ins as processes
//! (`exec: krmgraph fn run <image>`, the only way kpt can run them here);
//! the two must leave identical files, stderr and `results.yaml` once the
//! exec commands are spelled back as images.

use std::path::Path;

use crate::kpt_diff::{describe_difference, render_with, Rendered};
use crate::util::{copy_tree, kpt_available, krmgraph_bin, repo_root};

/// Every Kptfile under `dir` with its `image: X` functions run as
/// `exec: <run> X`.
pub(crate) fn images_to_exec(dir: &Path, run: &str) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            images_to_exec(&path, run);
        } else if path.file_name().is_some_and(|n| n == "Kptfile") {
            let text = std::fs::read_to_string(&path).unwrap();
            std::fs::write(&path, text.replace("- image: ", &format!("- exec: {run} "))).unwrap();
        }
    }
}

/// kpt's output with `exec: <run> X` spelled as `image: X` again.
pub(crate) fn exec_to_images(mut r: Rendered, run: &str) -> Rendered {
    let fix = |s: &str| {
        s.replace(&format!("exec: {run} "), "image: ")
            .replace(&format!("\"{run} "), "\"")
    };
    r.stdout = fix(&r.stdout);
    r.stderr = fix(&r.stderr);
    for bytes in r.files.values_mut() {
        *bytes = fix(&String::from_utf8_lossy(bytes)).into_bytes();
    }
    r
}

#[test]
fn demo_renders_with_builtins_only() {
    let work = tempfile::tempdir().unwrap();
    let demo = work.path().join("src").join("demo");
    copy_tree(&repo_root().join("testdata/demo"), &demo).unwrap();
    let ours = render_with(
        "krmgraph",
        work.path(),
        &demo,
        &["--results-dir", "<RESULTS>"],
    );
    assert_eq!(ours.exit_code, 0, "{}", ours.stderr);
    let deployment = String::from_utf8_lossy(&ours.files["deployment.yaml"]).to_string();
    for rendered in [
        "namespace: wordpress-demo",
        "env: demo",
        // set-labels v0.1.4 sends every resource through JSON, which drops
        // the quotes the source had (kpt restores comments, not quoting).
        "image: wordpress:6.5-apache # kpt-set: wordpress:${tag}",
    ] {
        assert!(
            deployment.contains(rendered),
            "{rendered} missing:\n{deployment}"
        );
    }
    let mysql = String::from_utf8_lossy(&ours.files["mysql/statefulset.yaml"]).to_string();
    assert!(mysql.contains("image: mysql:8.0.36"), "{mysql}");

    if !kpt_available("demo_renders_with_builtins_only (comparison with kpt)") {
        return;
    }
    let run = format!("{} fn run", krmgraph_bin().display());
    let kpt_src = work.path().join("src-kpt").join("demo");
    copy_tree(&repo_root().join("testdata/demo"), &kpt_src).unwrap();
    images_to_exec(&kpt_src, &run);
    let kpt = render_with(
        "kpt",
        work.path(),
        &kpt_src,
        &["--allow-exec", "--results-dir", "<RESULTS>"],
    );
    let kpt = exec_to_images(kpt, &run);
    assert_eq!(kpt.exit_code, 0, "kpt failed: {}", kpt.stderr);
    if let Some(d) = describe_difference(&kpt, &ours) {
        panic!("krmgraph and kpt differ on the demo: {d}");
    }
}
