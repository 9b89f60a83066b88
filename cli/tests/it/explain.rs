//! `krmgraph render --explain` (issue 30, item 3): for each kind of
//! change, the reason a step gives for running, one case after another on
//! one tree and one cache (`testdata/keys/tree`: a built-in and an `exec:`
//! script at the root, a built-in in the subpackage).

use std::path::Path;
use std::process::Command;

use crate::util::{copy_tree, krmgraph_bin, remove_records, repo_root};

/// One change and the lines `--explain` must print after it.
struct Case {
    what: &'static str,
    change: fn(&Path),
    args: &'static [&'static str],
    expected: &'static [&'static str],
}

fn replace(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{} has no {from:?}", path.display());
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

/// Removes every record of the kinds named `names`, and the marks.
fn forget(cache: &Path, names: &[&str]) {
    remove_records(cache, names);
    let _ = std::fs::remove_file(cache.join("marks"));
}

const SUB: &str = "tree/sub mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: ";
const ROOT: &str = "tree mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: ";
const CHATTY: &str = "tree mutator[1] ./chatty.sh ran: ";

const CASES: &[Case] = &[
    Case {
        what: "the first render",
        change: |_| {},
        args: &[],
        expected: &[
            "[EXPLAIN] tree/sub mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: no earlier record of this step (its first render)",
            "[EXPLAIN] tree mutator[1] ./chatty.sh ran: no earlier record of this step (its first render)",
        ],
    },
    Case {
        what: "a resource of the subpackage",
        change: |dir| replace(&dir.join("sub/cm.yaml"), "k: v", "k: edited"),
        args: &[],
        expected: &[
            "[EXPLAIN] tree/sub mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: input changed: sub/cm.yaml",
            "[EXPLAIN] tree mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: input changed: the output of sub/",
            "[EXPLAIN] tree mutator[1] ./chatty.sh ran: input changed: the output of sub/",
        ],
    },
    Case {
        what: "a file added and a file deleted",
        change: |dir| {
            let text = std::fs::read_to_string(dir.join("sub/cm.yaml")).unwrap();
            std::fs::write(dir.join("sub/cm2.yaml"), text.replace("name: cm", "name: cm2")).unwrap();
            std::fs::rename(dir.join("bucket.yaml"), dir.join("moved.yaml")).unwrap();
        },
        args: &[],
        expected: &[
            "[EXPLAIN] tree/sub mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: input changed: sub/cm2.yaml (new)",
            "[EXPLAIN] tree mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: input changed: the output of sub/, moved.yaml (new), bucket.yaml (deleted)",
        ],
    },
    Case {
        what: "the root's function config",
        // (The Kptfile is a resource of its package too: its input changes.)
        change: |dir| {
            replace(
                &dir.join("Kptfile"),
                "configMap:\n        owner: root",
                "configMap:\n        owner: top",
            )
        },
        args: &[],
        expected: &[
            "[EXPLAIN] tree/sub replayed whole: nothing under it changed",
            "[EXPLAIN] tree mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: function config changed: configMap, functionConfig; input changed: Kptfile",
            "[EXPLAIN] tree mutator[1] ./chatty.sh ran: input changed: Kptfile",
        ],
    },
    Case {
        what: "the exec program",
        change: |dir| replace(&dir.join("chatty.sh"), "cat\n", "cat\n# edited\n"),
        args: &[],
        expected: &[
            "[EXPLAIN] tree mutator[1] ./chatty.sh ran: function changed (image, exec program or built-in version)",
        ],
    },
    Case {
        what: "a flag",
        change: |_| {},
        args: &["--truncate-output=false"],
        expected: &["[EXPLAIN] tree mutator[1] ./chatty.sh ran: render flags or environment changed"],
    },
    Case {
        what: "--verify",
        change: |_| {},
        args: &["--verify"],
        expected: &[
            "[EXPLAIN] tree mutator[1] ./chatty.sh ran: cache bypassed (--verify)",
        ],
    },
];

fn render(dir: &Path, cache: &Path, args: &[&str]) -> String {
    let out = Command::new(krmgraph_bin())
        .current_dir(dir)
        .args(["render", "--explain", "--allow-exec"])
        .args(args)
        .arg(".")
        .env("KRMGRAPH_CACHE_DIR", cache)
        .env("KRMGRAPH_NO_CACHE", "0")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    stderr
}

#[test]
fn explain_says_why_each_step_ran() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tree");
    let cache = tmp.path().join("cache");
    copy_tree(&repo_root().join("testdata/keys/tree"), &dir).unwrap();
    for case in CASES {
        (case.change)(&dir);
        let stderr = render(&dir, &cache, case.args);
        for line in case.expected {
            assert!(
                stderr.lines().any(|l| l == *line),
                "{}: no line {line:?} in:\n{stderr}",
                case.what
            );
        }
        // Every step that ran says why, with one of the reasons above.
        for line in stderr.lines().filter(|l| l.contains(" ran: ")) {
            let known = [SUB, ROOT, CHATTY].iter().any(|p| line.contains(p));
            assert!(
                known && line.starts_with("[EXPLAIN] "),
                "{}: {line}",
                case.what
            );
        }
    }
    // The records gone (the tree, flags and functions as before): the
    // steps say so.
    forget(&cache, &["step", "subtree", "render", "fixed-point"]);
    let stderr = render(&dir, &cache, &["--truncate-output=false"]);
    let gone = "[EXPLAIN] tree mutator[0] gcr.io/kpt-fn/set-annotations:v0.1.4 ran: its record is gone or unusable (evicted, damaged or of another version)";
    assert!(stderr.lines().any(|l| l == gone), "{stderr}");
    // No cache: said once.
    let out = Command::new(krmgraph_bin())
        .current_dir(&dir)
        .args(["render", "--explain", "--allow-exec", "--no-cache", "."])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[EXPLAIN] every step ran: the cache was bypassed (--no-cache"),
        "{stderr}"
    );
    // An unchanged tree: nothing ran.
    let stderr = render(&dir, &cache, &["--truncate-output=false"]);
    assert!(
        stderr.contains("[EXPLAIN] nothing ran")
            || stderr.contains("[EXPLAIN] the whole render was replayed"),
        "{stderr}"
    );
    let steps_ran = stderr
        .lines()
        .filter(|l| l.contains(" ran: ") && !l.starts_with("[EXPLAIN] nothing ran"));
    assert_eq!(steps_ran.count(), 0, "{stderr}");
}

/// `krmgraph graph`'s column for each step, as `(label, state)` in order.
fn predicted(dir: &Path, cache: &Path) -> Vec<(String, String)> {
    let out = Command::new(krmgraph_bin())
        .current_dir(dir)
        .args(["graph", "--allow-exec", "."])
        .env("KRMGRAPH_CACHE_DIR", cache)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let columns = regex::Regex::new(
        r"^#\d+ +[0-9a-f]{12}  (cached |runs   |may run|-      )  (.*?)(  <-.*|  \(.*)?$",
    )
    .unwrap();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let c = columns
                .captures(l)
                .unwrap_or_else(|| panic!("{l:?} in\n{text}"));
            let label = c[2].to_string();
            (!label.starts_with("package ")).then(|| (label, c[1].trim().to_string()))
        })
        .collect()
}

/// The graph's column agrees with the render that follows: a step it
/// calls cached does not run, one it says runs does, and "may run" is
/// what it says when it cannot know (an input from something that runs).
#[test]
fn graph_predicts_what_a_render_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tree");
    let cache = tmp.path().join("cache");
    copy_tree(&repo_root().join("testdata/keys/tree"), &dir).unwrap();
    // Twice: the first render rewrites the files (quoting), the second
    // leaves the tree as kpt's format keeps it.
    render(&dir, &cache, &[]);
    render(&dir, &cache, &[]);
    let all_cached = predicted(&dir, &cache);
    assert!(
        all_cached.iter().all(|(_, s)| s == "cached"),
        "{all_cached:?}"
    );
    // (After the config change the render rewrote the root's files, so
    // its first step reads what it has not read before, and runs again.)
    type Change = fn(&Path);
    let changes: [(&str, Change, &[&str]); 3] = [
        (
            "a leaf file",
            |d| replace(&d.join("sub/cm.yaml"), "k: v", "k: edited"),
            &["runs", "may run", "may run"],
        ),
        (
            "the root's config",
            |d| replace(&d.join("Kptfile"), "owner: root", "owner: top"),
            &["cached", "runs", "may run"],
        ),
        (
            "the exec program",
            |d| replace(&d.join("chatty.sh"), "cat\n", "cat\n# edited\n"),
            &["cached", "runs", "may run"],
        ),
    ];
    for (what, change, expected) in changes {
        change(&dir);
        let states = predicted(&dir, &cache);
        let got: Vec<&str> = states.iter().map(|(_, s)| s.as_str()).collect();
        assert_eq!(got, expected, "{what}: {states:?}");
        let stderr = render(&dir, &cache, &[]);
        for (label, state) in &states {
            let ran = stderr
                .lines()
                .any(|l| l.starts_with(&format!("[EXPLAIN] {label} ran: ")));
            match state.as_str() {
                "cached" => assert!(!ran, "{what}: {label} ran:\n{stderr}"),
                "runs" => assert!(ran, "{what}: {label} did not run:\n{stderr}"),
                _ => {}
            }
        }
    }
}
