//! `krmgraph fn eval` against the real `kpt fn eval`, with exec functions:
//! in place, `-o stdout`, `-o unwrap`, `-o DIR`, from stdin, with results,
//! stderr, failures, deletions and argument-built functionConfigs. Trees,
//! stdout, stderr and `results.yaml` must be identical.

use std::path::{Path, PathBuf};

use crate::kpt_diff::{describe_difference, read_tree, run_tool, Subcommand};
use crate::util::kpt_available;

fn package(work: &Path) -> PathBuf {
    let pkg = work.join("src").join("evalpkg");
    std::fs::create_dir_all(pkg.join("sub")).unwrap();
    std::fs::write(
        pkg.join("Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: evalpkg\npipeline:\n  mutators:\n    - exec: cat\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("a.yaml"),
        "# head\napiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: a   # line\ndata:\n  x: \"1\"\n  list:\n    - b\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("sub/Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: sub\n",
    )
    .unwrap();
    std::fs::write(
        pkg.join("sub/b.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: b\n",
    )
    .unwrap();
    pkg
}

#[test]
fn eval_matches_kpt() {
    if !kpt_available("eval_matches_kpt") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let pkg = package(work.path());
    let functions = [
        "cat",
        "sh -c 'cat; echo warning >&2'",
        "false",
        "sh -c 'cat >/dev/null; echo apiVersion: config.kubernetes.io/v1; echo kind: ResourceList; echo items: []'",
        "sh -c 'tee /dev/stderr'",
    ];
    let mut failures = Vec::new();
    for function in functions {
        for output in [None, Some("stdout"), Some("unwrap"), Some("<PKG>-out")] {
            let mut args = vec!["--exec", function, "--results-dir", "<RESULTS>"];
            if let Some(o) = output {
                args.extend(["-o", o]);
            }
            args.extend(["--", "b=2", "a=1"]);
            let kpt = run_tool("kpt", work.path(), &pkg, Subcommand::Eval, &args, None);
            let ours = run_tool("krmgraph", work.path(), &pkg, Subcommand::Eval, &args, None);
            if let Some(diff) = describe_difference(&kpt, &ours) {
                failures.push(format!("{function} -o {output:?}: {diff}"));
            }
        }
    }
    // From stdin: the ResourceList `kpt fn render -o stdout` writes.
    let stdin = std::process::Command::new("kpt")
        .args(["fn", "render", "--allow-exec", "-o", "stdout"])
        .arg(&pkg)
        .output()
        .unwrap()
        .stdout;
    for output in [None, Some("unwrap")] {
        let mut args = vec!["-", "--exec", "cat"];
        if let Some(o) = output {
            args.extend(["-o", o]);
        }
        args.extend(["--", "k=v"]);
        let kpt = run_tool(
            "kpt",
            work.path(),
            &pkg,
            Subcommand::Eval,
            &args,
            Some(&stdin),
        );
        let ours = run_tool(
            "krmgraph",
            work.path(),
            &pkg,
            Subcommand::Eval,
            &args,
            Some(&stdin),
        );
        if let Some(diff) = describe_difference(&kpt, &ours) {
            failures.push(format!("stdin -o {output:?}: {diff}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// INTENDED DIFFERENCE (docs/conformance.md): a function that exits 0 and
/// writes nothing fails `fn eval` with the package untouched, where kpt
/// deletes every file of it; `items: []` (in `eval_matches_kpt`) still
/// deletes them as kpt does.
#[test]
fn eval_function_writes_nothing_fails() {
    let work = tempfile::tempdir().unwrap();
    let pkg = package(work.path());
    let args = ["--exec", "sh -c 'cat >/dev/null'"];
    let ours = run_tool("krmgraph", work.path(), &pkg, Subcommand::Eval, &args, None);
    assert_eq!(ours.exit_code, 1, "stderr:\n{}", ours.stderr);
    assert!(
        ours.stderr.contains("wrote nothing to stdout"),
        "{}",
        ours.stderr
    );
    assert_eq!(ours.files, read_tree(&pkg), "the package must be untouched");
    if kpt_available("eval_function_writes_nothing_fails") {
        let kpt = run_tool("kpt", work.path(), &pkg, Subcommand::Eval, &args, None);
        assert_eq!(kpt.exit_code, 0, "kpt stderr:\n{}", kpt.stderr);
        assert!(!kpt.files.contains_key("Kptfile"), "kpt deletes every file");
    }
}
