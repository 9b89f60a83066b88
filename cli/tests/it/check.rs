//! `krmgraph render --check` (issue 30, item 4): exit 0 when a render
//! would change nothing, 1 when it would (each file listed), 2 when the
//! render fails; the tree's bytes and modification times untouched every
//! time. On kpt's own e2e inputs (pipelines removed, or an identity
//! `exec: cat`), `--check` says "would change" exactly when `kpt fn
//! render` changes a file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use crate::kpt_diff::{read_tree, render_with, rewrite_kptfiles};
use crate::util::{copy_tree, kpt_available, krmgraph_bin, repo_root};

/// Every file under `dir` with its bytes and modification time.
fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, SystemTime)> {
    read_tree(dir)
        .into_iter()
        .map(|(path, bytes)| {
            let mtime = std::fs::metadata(dir.join(&path))
                .and_then(|m| m.modified())
                .unwrap();
            (path, (bytes, mtime))
        })
        .collect()
}

/// `krmgraph render --check` of `pkg` (with `args`): exit code, stdout.
fn check(pkg: &Path, args: &[&str]) -> (i32, String) {
    let before = snapshot(pkg);
    let out = Command::new(krmgraph_bin())
        .current_dir(pkg)
        .args(["render", "--check"])
        .args(args)
        .arg(".")
        .output()
        .unwrap();
    assert!(
        snapshot(pkg) == before,
        "--check touched the package {}",
        pkg.display()
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), stdout)
}

fn demo(dir: &Path) -> PathBuf {
    let pkg = dir.join("demo");
    copy_tree(&repo_root().join("testdata/demo"), &pkg).unwrap();
    pkg
}

#[test]
fn check_exit_codes_and_files() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache_arg = format!("--cache-dir={}", cache.display());
    for cached in [false, true] {
        let flag = if cached {
            cache_arg.as_str()
        } else {
            "--no-cache"
        };
        let pkg = demo(&tmp.path().join(format!("{cached}")));
        // Not rendered: every file the demo's pipelines change is listed.
        let (code, stdout) = check(&pkg, &[flag]);
        assert_eq!(code, 1, "{stdout}");
        assert!(stdout.contains("write  deployment.yaml\n"), "{stdout}");
        assert!(
            stdout.contains("write  mysql/statefulset.yaml\n"),
            "{stdout}"
        );
        // Rendered: nothing would change.
        let out = Command::new(krmgraph_bin())
            .args(["render", flag])
            .arg(&pkg)
            .output()
            .unwrap();
        assert!(out.status.success());
        let (code, stdout) = check(&pkg, &[flag]);
        assert_eq!((code, stdout.as_str()), (0, ""));
        // One edit a render undoes: that file, as a diff.
        let service = pkg.join("service.yaml");
        let text = std::fs::read_to_string(&service).unwrap();
        std::fs::write(
            &service,
            text.replace("namespace: wordpress-demo", "namespace: x"),
        )
        .unwrap();
        let (code, stdout) = check(&pkg, &[flag, "--diff"]);
        assert_eq!(code, 1, "{stdout}");
        assert!(
            stdout.starts_with("--- a/service.yaml\n+++ b/service.yaml\n"),
            "{stdout}"
        );
        assert!(
            stdout.contains("\n-  namespace: x\n+  namespace: wordpress-demo\n"),
            "{stdout}"
        );
        assert_eq!(stdout.matches("--- a/").count(), 1, "{stdout}");
        // A new file no resource goes to stays; a resource file that a
        // pipeline failure stops: exit 2.
        std::fs::write(pkg.join("broken.yaml"), "a: [\n").unwrap();
        let (code, _) = check(&pkg, &[flag]);
        assert_eq!(code, 2);
    }
}

#[test]
fn check_agrees_with_kpt_on_the_corpus_inputs() {
    if !kpt_available("check_agrees_with_kpt_on_the_corpus_inputs") {
        return;
    }
    let Ok(dir) = std::env::var("KRMGRAPH_CONFORMANCE_DIR") else {
        eprintln!("skipping check_agrees_with_kpt_on_the_corpus_inputs: KRMGRAPH_CONFORMANCE_DIR is not set");
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    let (mut changed, mut checked) = (0, 0);
    for case in entries {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        for cat in [false, true] {
            let label = format!("{name}-{}", if cat { "cat" } else { "no-pipeline" });
            let pkg = work.path().join("src").join(&label);
            copy_tree(&case, &pkg).unwrap();
            rewrite_kptfiles(&pkg, cat);
            let args: &[&str] = if cat { &["--allow-exec"] } else { &[] };
            let kpt = render_with("kpt", &work.path().join("kpt").join(&label), &pkg, args);
            let expected = if kpt.exit_code != 0 {
                2
            } else if kpt.files != read_tree(&pkg) {
                1
            } else {
                0
            };
            let mut ours_args = vec!["--no-cache"];
            ours_args.extend(args);
            let (code, stdout) = check(&pkg, &ours_args);
            assert_eq!(
                code, expected,
                "{label}: kpt says {expected}, --check {code}:\n{stdout}"
            );
            changed += usize::from(expected == 1);
            checked += 1;
        }
    }
    println!("{checked} inputs checked, {changed} of them changed by kpt");
    assert!(changed > 0 && changed < checked, "the corpus tells nothing");
}
