//! Bad inputs: one test per way a package or a function can be broken.
//!
//! Each test builds the same tree twice (one copy per tool), renders it with
//! krmgraph and, when kpt runs here, with kpt, and asserts:
//! * krmgraph's exit code (1, or kpt's where kpt does not fail);
//! * an error naming the file (and the line for YAML) or the function;
//! * krmgraph's normalised stderr equals kpt's (where kpt runs);
//! * EVERY file of the tree untouched: bytes, symlink targets, modes and
//!   mtimes of files and directories, compared before/after.
//!
//! Without kpt the krmgraph assertions still run; the comparison is skipped
//! (or the test fails under `KRMGRAPH_REQUIRE_KPT=1`).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::differential::python_dir;
use crate::kpt_diff::normalise;
use crate::util::{kpt_available, krmgraph_bin, repo_root};

/// One entry of a tree snapshot.
#[derive(Debug, PartialEq, Eq)]
enum Entry {
    File {
        bytes: Vec<u8>,
        mode: u32,
        mtime: SystemTime,
    },
    Dir {
        mode: u32,
        mtime: SystemTime,
    },
    Link {
        target: PathBuf,
    },
}

/// Everything under `dir` (relative path → entry), without following links.
fn snapshot(dir: &Path) -> BTreeMap<String, Entry> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path
                .strip_prefix(dir)
                .unwrap()
                .to_string_lossy()
                .to_string();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            let mode = meta.permissions().mode();
            let e = if meta.file_type().is_symlink() {
                Entry::Link {
                    target: std::fs::read_link(&path).unwrap(),
                }
            } else if meta.is_dir() {
                stack.push(path.clone());
                Entry::Dir {
                    mode,
                    mtime: meta.modified().unwrap(),
                }
            } else {
                Entry::File {
                    bytes: std::fs::read(&path).unwrap_or_default(),
                    mode,
                    mtime: meta.modified().unwrap(),
                }
            };
            out.insert(rel, e);
        }
    }
    out
}

/// Sets the mtime of every file and directory under `dir` (not links) to a
/// fixed past time, so any rewrite shows.
fn age(dir: &Path) {
    let old = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
    let mut paths = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
            }
            if !meta.file_type().is_symlink() {
                paths.push(entry.path());
            }
        }
    }
    // directories last: setting a file's time does not touch its directory
    paths.push(dir.to_path_buf());
    paths.sort_by_key(|p| std::fs::symlink_metadata(p).unwrap().is_dir());
    for p in paths {
        let f = std::fs::File::open(&p).unwrap();
        f.set_modified(old).unwrap();
    }
}

/// The differences between two snapshots, one line each.
fn changes(before: &BTreeMap<String, Entry>, after: &BTreeMap<String, Entry>) -> Vec<String> {
    let mut out = vec![];
    for (k, v) in before {
        match after.get(k) {
            None => out.push(format!("deleted: {k}")),
            Some(w) if w != v => out.push(format!("changed: {k}")),
            _ => {}
        }
    }
    for k in after.keys() {
        if !before.contains_key(k) {
            out.push(format!("created: {k}"));
        }
    }
    out
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn kptfile(name: &str, pipeline: &str) -> String {
    format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\n{pipeline}")
}

fn configmap(name: &str) -> String {
    // the blank line makes every render rewrite the file
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n\ndata:\n  k: v\n")
}

/// A root package `pkg` (with `pipeline`) holding `a.yaml` and a
/// subpackage `sub` with `b.yaml`.
fn base_tree(pkg: &Path, pipeline: &str) {
    write(&pkg.join("Kptfile"), &kptfile("pkg", pipeline));
    write(&pkg.join("a.yaml"), &configmap("a"));
    write(&pkg.join("sub/Kptfile"), &kptfile("sub", ""));
    write(&pkg.join("sub/b.yaml"), &configmap("b"));
}

fn exec_pipeline(exec: &str) -> String {
    format!("pipeline:\n  mutators:\n  - exec: {exec}\n")
}

fn function(name: &str) -> String {
    repo_root()
        .join("testdata/functions")
        .join(name)
        .to_string_lossy()
        .to_string()
}

/// What one tool did to its copy of the tree.
#[derive(Debug)]
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    /// Changes to the tree (empty = untouched).
    changes: Vec<String>,
    /// The tree afterwards (paths relative to the tool's dir: `pkg/...`).
    after: BTreeMap<String, Entry>,
    /// The normalised `results.yaml`, when `<RESULTS>` was passed as
    /// `--results-dir` (a directory outside the snapshot).
    results: Option<String>,
}

impl Outcome {
    /// The bytes of the file at `rel` afterwards.
    fn file(&self, rel: &str) -> Option<&[u8]> {
        match self.after.get(rel) {
            Some(Entry::File { bytes, .. }) => Some(bytes),
            _ => None,
        }
    }

    /// Files and links afterwards, without modes and times.
    fn contents(&self) -> BTreeMap<&String, String> {
        self.after
            .iter()
            .filter_map(|(k, v)| match v {
                Entry::File { bytes, .. } => Some((k, String::from_utf8_lossy(bytes).to_string())),
                Entry::Link { target } => Some((k, format!("-> {}", target.display()))),
                Entry::Dir { .. } => None,
            })
            .collect()
    }
}

/// How to run the tools.
#[derive(Default, Clone)]
struct Runner {
    /// Extra environment (PATH for the Python functions).
    env: Vec<(String, String)>,
    /// Run as this user id (with `setpriv`), for permission tests as root.
    as_user: Option<u32>,
}

impl Runner {
    /// Builds the tree with `build(<base>/<tool>/pkg)` and renders it with
    /// `tool` (`"kpt"` or `"krmgraph"`), cwd `<base>/<tool>`. `<RESULTS>`
    /// in `args` is `<base>/<tool>-results`.
    fn run(&self, tool: &str, base: &Path, build: &dyn Fn(&Path), args: &[&str]) -> Outcome {
        let root = base.join(tool);
        std::fs::create_dir_all(&root).unwrap();
        if self.as_user.is_some() {
            std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let pkg = root.join("pkg");
        build(&pkg);
        if pkg.exists() {
            age(&pkg);
        }
        let before = snapshot(&root);
        let mut argv: Vec<String> = vec![];
        if let Some(uid) = self.as_user {
            let uid = uid.to_string();
            argv.extend(
                [
                    "setpriv",
                    "--reuid",
                    &uid,
                    "--regid",
                    &uid,
                    "--clear-groups",
                ]
                .map(String::from),
            );
        }
        if tool == "kpt" {
            argv.extend(["kpt", "fn", "render"].map(String::from));
        } else {
            argv.extend([
                krmgraph_bin().to_string_lossy().to_string(),
                "render".to_string(),
            ]);
        }
        argv.push(pkg.to_string_lossy().to_string());
        let results = base.join(format!("{tool}-results"));
        argv.extend(
            args.iter()
                .map(|a| a.replace("<RESULTS>", &results.to_string_lossy())),
        );
        let out = Command::new(&argv[0])
            .env("KRMGRAPH_NO_CACHE", "1")
            .args(&argv[1..])
            .current_dir(&root)
            .env("HOME", &root)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .output()
            .expect("the tool runs");
        let after = snapshot(&root);
        Outcome {
            code: out.status.code().unwrap_or(-1),
            stdout: normalise(&String::from_utf8_lossy(&out.stdout), &root),
            stderr: normalise(&String::from_utf8_lossy(&out.stderr), &root),
            changes: changes(&before, &after),
            after,
            results: std::fs::read_to_string(results.join("results.yaml"))
                .ok()
                .map(|r| normalise(&r, &root)),
        }
    }

    /// Renders with krmgraph and, when kpt runs here, with kpt.
    fn both(&self, test: &str, build: &dyn Fn(&Path), args: &[&str]) -> (Option<Outcome>, Outcome) {
        let tmp = tempfile::tempdir().unwrap();
        if self.as_user.is_some() {
            std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let ours = self.run("krmgraph", tmp.path(), build, args);
        let kpt = if kpt_available(test) {
            Some(self.run("kpt", tmp.path(), build, args))
        } else {
            None
        };
        println!(
            "{test}: krmgraph exit {} stderr:\n{}",
            ours.code, ours.stderr
        );
        if let Some(k) = &kpt {
            println!("{test}: kpt exit {} stderr:\n{}", k.code, k.stderr);
        }
        // keep the temp dir alive until both ran; read-only directories
        // made writable again so it can be removed
        make_dirs_writable(tmp.path());
        drop(tmp);
        (kpt, ours)
    }
}

/// The common assertions: krmgraph exits `code`, leaves the tree untouched,
/// says every one of `needles`; kpt (if it ran) does the same, with the
/// same stderr.
fn assert_failure(kpt: Option<Outcome>, ours: Outcome, needles: &[&str]) {
    assert_failed_untouched(&ours, needles);
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 1, "kpt exit code (stderr:\n{})", kpt.stderr);
        assert!(
            kpt.changes.is_empty(),
            "kpt touched the tree: {:?}",
            kpt.changes
        );
        assert_same_error(&ours.stderr, &kpt.stderr);
        assert_eq!(ours.stdout, kpt.stdout, "stdout differs from kpt's");
    }
}

/// krmgraph exited 1, left the tree untouched and said every one of
/// `needles`.
fn assert_failed_untouched(ours: &Outcome, needles: &[&str]) {
    assert_eq!(
        ours.code, 1,
        "krmgraph must exit 1; stderr:\n{}",
        ours.stderr
    );
    assert!(
        ours.changes.is_empty(),
        "krmgraph touched the tree: {:?}",
        ours.changes
    );
    for n in needles {
        assert!(
            ours.stderr.contains(n),
            "krmgraph's error does not mention {n:?}:\n{}",
            ours.stderr
        );
    }
}

/// krmgraph's stderr is kpt's, byte for byte, optionally followed by a
/// source snippet (krmgraph points at the YAML error after kpt's line;
/// the snippet starts with a blank line).
fn assert_same_error(ours: &str, kpt: &str) {
    let extra = ours.strip_prefix(kpt);
    assert!(
        extra.is_some_and(|e| e.is_empty() || e.starts_with('\n')),
        "stderr must start with kpt's:\n--- kpt\n{kpt}\n--- krmgraph\n{ours}"
    );
}

/// A ConfigMap whose flow sequence is never closed: go-yaml (kpt) says
/// `yaml: line 5: did not find expected ',' or ']'`; the error is at 6:6.
const MALFORMED: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  k: [unclosed\n  j: v\n";

/// Malformed YAML anywhere in the tree: (case, file under `pkg/`, root
/// pipeline, what krmgraph's error must say besides kpt's line).
const MALFORMED_CASES: &[(&str, &str, &str, &[&str])] = &[
    // kpt: Error: <ROOT>/pkg/bad.yaml: MalformedYAMLError: yaml: line 5: ...
    (
        "root package resource",
        "bad.yaml",
        "",
        &["<ROOT>/pkg/bad.yaml:6:6"],
    ),
    (
        "subpackage resource",
        "sub/bad.yaml",
        "",
        &["<ROOT>/pkg/sub/bad.yaml:6:6"],
    ),
    (
        "plain nested directory",
        "plain/deeper/bad.yaml",
        "",
        &["<ROOT>/pkg/plain/deeper/bad.yaml:6:6"],
    ),
    // kpt: Kptfile is invalid: ... Reason: failed to read functionConfig
    // "fns/config.yaml": MalformedYAMLError: yaml: line 5: ...
    (
        "configPath functionConfig",
        "fns/config.yaml",
        "pipeline:\n  mutators:\n  - exec: cat\n    configPath: fns/config.yaml\n",
        &[
            "`pipeline.mutators[0].configPath`",
            "\"fns/config.yaml\": MalformedYAMLError",
            "<ROOT>/pkg/fns/config.yaml:6:6",
        ],
    ),
];

#[test]
fn malformed_yaml_anywhere_in_the_tree() {
    for (case, file, pipeline, needles) in MALFORMED_CASES {
        let build = |pkg: &Path| {
            base_tree(pkg, pipeline);
            write(&pkg.join(file), MALFORMED);
        };
        println!("case: {case}");
        let args = ["--allow-exec"];
        let (kpt, ours) =
            Runner::default().both("malformed_yaml_anywhere_in_the_tree", &build, &args);
        let mut needles = needles.to_vec();
        needles.extend([*file, "line 5: did not find expected ',' or ']'"]);
        assert_failure(kpt, ours, &needles);
    }
}

/// Bytes the YAML reader refuses before it scans anything, which go-yaml
/// reports without a line (kpt: `yaml: invalid leading UTF-8 octet`):
/// (case, file bytes, where the snippet must point, kpt's words).
const BAD_BYTES_CASES: &[(&str, &[u8], &str, &str)] = &[
    (
        "invalid UTF-8 at the start of a line",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n\xff\xfe: x\n",
        "bad.yaml:6:1",
        "invalid leading UTF-8 octet",
    ),
    (
        "a NUL inside a value",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\x00b\ndata: {}\n",
        "bad.yaml:4:10",
        "control characters are not allowed",
    ),
    (
        "invalid UTF-8 after multi-byte characters",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  é: 'ü\u{80}".as_bytes(),
        "bad.yaml:6:8",
        "control characters are not allowed",
    ),
];

#[test]
fn bad_bytes_are_reported_where_they_are() {
    for (case, bytes, at, words) in BAD_BYTES_CASES {
        let build = |pkg: &Path| {
            base_tree(pkg, "");
            std::fs::write(pkg.join("bad.yaml"), bytes).unwrap();
        };
        println!("case: {case}");
        let (kpt, ours) =
            Runner::default().both("bad_bytes_are_reported_where_they_are", &build, &[]);
        assert_failure(kpt, ours, &[at, words]);
    }
}

#[test]
fn malformed_json_in_subpackage() {
    let build = |pkg: &Path| {
        base_tree(pkg, "");
        write(&pkg.join("sub/bad.json"), "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\",\n \"metadata\": {\"name\": \"j\"},\n \"data\": {\"k\": \"v\",}\n");
    };
    let (kpt, ours) = Runner::default().both("malformed_json_in_subpackage", &build, &[]);
    // kpt: Error: <ROOT>/pkg/sub/bad.json: MalformedYAMLError: yaml: line 3: did not find expected ',' or '}'
    assert_failure(kpt, ours, &["pkg/sub/bad.json", "line 3"]);
}

#[test]
fn broken_kptfile_in_subpackage() {
    let build = |pkg: &Path| {
        base_tree(pkg, "");
        write(
            &pkg.join("sub/Kptfile"),
            &kptfile("sub", "pipeline:\n  mutators:\n  - image: x\n  bogus\n"),
        );
    };
    let (kpt, ours) = Runner::default().both("broken_kptfile_in_subpackage", &build, &[]);
    // kpt: Error: Kptfile at "<ROOT>/pkg/sub" can't be read.\n\nDetails:\nyaml: line 8: could not find expected ':'
    assert_failure(kpt, ours, &["pkg/sub", "Kptfile", "line 8"]);
}

#[test]
fn function_exits_non_zero() {
    let exec = format!("{} 3 2", function("fail.sh"));
    let build = |pkg: &Path| base_tree(pkg, &exec_pipeline(&exec));
    let (kpt, ours) = Runner::default().both("function_exits_non_zero", &build, &["--allow-exec"]);
    assert_failure(
        kpt,
        ours,
        &[
            &format!("[FAIL] \"{exec}\""),
            "Exit code: 3",
            "fail.sh: problem 2 of 2",
        ],
    );
}

#[test]
fn function_writes_garbage() {
    let exec = function("garbage.sh");
    let build = |pkg: &Path| base_tree(pkg, &exec_pipeline(&exec));
    let (kpt, ours) = Runner::default().both("function_writes_garbage", &build, &["--allow-exec"]);
    // kpt: [FAIL] "<fn>" in 0s\nError: MalformedYAMLError: yaml: mapping values are not allowed in this context
    assert_failure(
        kpt,
        ours,
        &[&format!("[FAIL] \"{exec}\""), "MalformedYAMLError"],
    );
}

/// A mutator that exits 0 with nothing (or only whitespace) on stdout.
///
/// INTENDED DIFFERENCE: kpt reads that as an empty ResourceList and deletes
/// every resource file, Kptfiles included (exit 0). krmgraph fails the step
/// like any other function failure (`[FAIL]`, `Error:` line, an item with
/// exit code 1 in `results.yaml`, exit 1) and writes nothing. kpt's
/// deletion is asserted too, so the test notices if kpt changes.
#[test]
fn function_writes_nothing_fails() {
    for exec in [
        function("empty-output.sh"),
        format!("{} whitespace", function("empty-output.sh")),
    ] {
        let build = |pkg: &Path| base_tree(pkg, &exec_pipeline(&exec));
        let args = ["--allow-exec", "--results-dir", "<RESULTS>"];
        let (kpt, ours) = Runner::default().both("function_writes_nothing_fails", &build, &args);
        let error = format!(
            "Error: function \"{exec}\" wrote nothing to stdout; a function that removes every \
             resource must write an empty ResourceList"
        );
        let fail = format!("[FAIL] \"{exec}\" in <T>\n");
        assert_failed_untouched(&ours, &[&fail, &error]);
        let results = ours.results.as_deref().unwrap_or_default();
        let item = format!("  - exec: {exec}\n    exitCode: 1\n");
        assert!(
            results.contains("exitCode: 1\nitems:\n") && results.ends_with(&item),
            "results.yaml must record the failure:\n{results}"
        );
        if let Some(kpt) = kpt {
            assert_eq!(kpt.code, 0, "kpt exit code; stderr:\n{}", kpt.stderr);
            assert!(
                kpt.changes.contains(&"deleted: pkg/Kptfile".to_string()),
                "kpt deletes every file here: {:?}",
                kpt.changes
            );
        }
    }
}

/// A mutator that writes a valid, empty ResourceList (`items: []`) deletes
/// every resource on purpose: every resource file is pruned (kpt-render.md
/// §2.4.1 item 11), exit 0, as kpt does.
#[test]
fn function_writes_empty_list_deletes_everything() {
    let exec = function("empty-list.sh");
    let build = |pkg: &Path| base_tree(pkg, &exec_pipeline(&exec));
    let (kpt, ours) = Runner::default().both(
        "function_writes_empty_list_deletes_everything",
        &build,
        &["--allow-exec"],
    );
    let expected = [
        "deleted: pkg/Kptfile",
        "deleted: pkg/a.yaml",
        "deleted: pkg/sub/Kptfile",
        "deleted: pkg/sub/b.yaml",
    ];
    let mut ours_changes = ours.changes.clone();
    ours_changes.retain(|c| !c.starts_with("changed: pkg/sub") && c != "changed: pkg");
    assert_eq!(ours.code, 0, "krmgraph exit code; stderr:\n{}", ours.stderr);
    assert_eq!(
        ours_changes, expected,
        "krmgraph must prune every resource file (all changes: {:?})",
        ours.changes
    );
    assert!(
        matches!(ours.after.get("pkg/sub"), Some(Entry::Dir { .. })),
        "the emptied directory stays"
    );
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 0);
        assert_eq!(ours.changes, kpt.changes, "changes differ from kpt's");
        assert_eq!(ours.stderr, kpt.stderr, "stderr differs from kpt's");
    }
}

/// A validator's output is discarded (kpt and krmgraph alike), so a
/// validator that writes nothing passes: the render succeeds as kpt's does.
#[test]
fn validator_writes_nothing_passes() {
    let pipeline = format!(
        "pipeline:\n  validators:\n  - exec: {}\n",
        function("empty-output.sh")
    );
    let build = |pkg: &Path| base_tree(pkg, &pipeline);
    let (kpt, ours) =
        Runner::default().both("validator_writes_nothing_passes", &build, &["--allow-exec"]);
    assert_eq!(ours.code, 0, "krmgraph exit code; stderr:\n{}", ours.stderr);
    let a = String::from_utf8_lossy(ours.file("pkg/a.yaml").unwrap_or_default()).to_string();
    assert!(
        a.starts_with("apiVersion") && !a.contains("\n\n"),
        "a.yaml was rendered:\n{a}"
    );
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 0, "kpt exit code; stderr:\n{}", kpt.stderr);
        assert_eq!(ours.stderr, kpt.stderr, "stderr differs from kpt's");
        assert_eq!(ours.contents(), kpt.contents(), "rendered trees differ");
    }
}

#[test]
fn generated_path_escapes_package() {
    let pydir = match python_dir() {
        Ok(d) => d,
        Err(why) => {
            if std::env::var("KRMGRAPH_REQUIRE_KPT").as_deref() == Ok("1") {
                panic!("generated_path_escapes_package: {why}");
            }
            eprintln!("skipping generated_path_escapes_package: {why}");
            return;
        }
    };
    let runner = Runner {
        env: vec![(
            "PATH".into(),
            format!(
                "{}:{}",
                pydir.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )],
        as_user: None,
    };
    let exec = format!("{} ConfigMap:x@../x.yaml", function("generate.py"));
    let build = |pkg: &Path| base_tree(pkg, &exec_pipeline(&exec));
    let (kpt, ours) = runner.both("generated_path_escapes_package", &build, &["--allow-exec"]);
    // kpt: Error: function must not modify resources outside of package: resource has path ../x.yaml
    assert_failure(kpt, ours, &["../x.yaml", "outside of package"]);
}

/// Resource-file symlinks in a loop (`x.yaml -> y.yaml -> x.yaml`): kpt
/// opens them (it follows file links) and fails naming the file.
#[test]
fn symlink_loop_of_resource_files() {
    let build = |pkg: &Path| {
        base_tree(pkg, "");
        std::os::unix::fs::symlink("y.yaml", pkg.join("sub/x.yaml")).unwrap();
        std::os::unix::fs::symlink("x.yaml", pkg.join("sub/y.yaml")).unwrap();
    };
    let (kpt, ours) = Runner::default().both("symlink_loop_of_resource_files", &build, &[]);
    // kpt: Error: <ROOT>/pkg/sub/x.yaml: open <ROOT>/pkg/sub/x.yaml: too many levels of symbolic links
    assert_failure(
        kpt,
        ours,
        &["pkg/sub/x.yaml", "too many levels of symbolic links"],
    );
}

/// Directory symlinks in a loop (`a -> b`, `b -> a`) are not an error for
/// kpt: it never follows directory links, renders normally and exits 0.
/// krmgraph must not loop or fail either, and must leave the links alone.
#[test]
fn symlink_loop_of_directories_is_skipped() {
    let build = |pkg: &Path| {
        base_tree(pkg, "");
        std::os::unix::fs::symlink("b", pkg.join("sub/a")).unwrap();
        std::os::unix::fs::symlink("a", pkg.join("sub/b")).unwrap();
        std::os::unix::fs::symlink(".", pkg.join("self")).unwrap();
    };
    let (kpt, ours) = Runner::default().both("symlink_loop_of_directories_is_skipped", &build, &[]);
    assert_eq!(ours.code, 0, "krmgraph exit code; stderr:\n{}", ours.stderr);
    assert_eq!(
        ours.after.get("pkg/sub/a"),
        Some(&Entry::Link { target: "b".into() })
    );
    assert_eq!(
        ours.after.get("pkg/self"),
        Some(&Entry::Link { target: ".".into() })
    );
    let rendered = String::from_utf8_lossy(ours.file("pkg/a.yaml").unwrap_or_default()).to_string();
    assert!(
        !rendered.is_empty() && !rendered.contains("\n\n"),
        "a.yaml was rendered (blank line dropped):\n{rendered}"
    );
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 0);
        assert_eq!(ours.stderr, kpt.stderr, "stderr differs from kpt's");
        assert_eq!(ours.contents(), kpt.contents(), "rendered trees differ");
    }
}

/// A read-only file that the render rewrites (`m.yaml`, mode 0444).
///
/// INTENDED DIFFERENCE: kpt writes the files in Go map order and fails at
/// the read-only one (`error: failed to save resources: open <ROOT>/pkg/m.yaml:
/// permission denied`, exit 1) after rewriting an unpredictable subset of
/// the others, leaving a half-rendered tree. krmgraph checks that it can
/// write every file before writing any, and fails naming the file with the
/// tree untouched. So only kpt's exit code is compared.
///
/// Root ignores mode bits, so as root both tools run as `nobody` (setpriv);
/// when that is impossible the test skips, or fails under
/// `KRMGRAPH_REQUIRE_KPT=1` (CI) saying what is missing.
#[test]
fn read_only_file_fails_before_writing() {
    let Some(runner) = permission_runner("read_only_file_fails_before_writing") else {
        return;
    };
    let build = |pkg: &Path| {
        base_tree(pkg, "");
        write(&pkg.join("m.yaml"), &configmap("m"));
        write(&pkg.join("z.yaml"), &configmap("z"));
        open_up(pkg);
        std::fs::set_permissions(pkg.join("m.yaml"), std::fs::Permissions::from_mode(0o444))
            .unwrap();
    };
    let (kpt, ours) = runner.both("read_only_file_fails_before_writing", &build, &[]);
    assert_eq!(
        ours.code, 1,
        "krmgraph must exit 1; stderr:\n{}",
        ours.stderr
    );
    assert!(
        ours.changes.is_empty(),
        "krmgraph touched the tree: {:?}",
        ours.changes
    );
    assert!(
        ours.stderr.contains("<ROOT>/pkg/m.yaml"),
        "krmgraph's error must name m.yaml:\n{}",
        ours.stderr
    );
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 1, "kpt exit code; stderr:\n{}", kpt.stderr);
        assert!(
            kpt.stderr
                .contains("open <ROOT>/pkg/m.yaml: permission denied"),
            "kpt:\n{}",
            kpt.stderr
        );
    }
}

/// The runner for a permission test: as root (which ignores mode bits)
/// both tools run as `nobody` through setpriv. `None` (the test skips)
/// when that is impossible; under `KRMGRAPH_REQUIRE_KPT=1` (CI) the test
/// fails instead, saying what is missing.
fn permission_runner(test: &str) -> Option<Runner> {
    if !is_root() {
        return Some(Runner::default());
    }
    let usable = Command::new("setpriv")
        .args(["--reuid", "65534", "--regid", "65534", "--clear-groups"])
        .arg(krmgraph_bin())
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !usable {
        let why = "running as root (which ignores mode bits), and `setpriv --reuid 65534` \
                   cannot run krmgraph as nobody (is util-linux's setpriv installed, and can \
                   uid 65534 read and run the krmgraph binary?)";
        if std::env::var("KRMGRAPH_REQUIRE_KPT").as_deref() == Ok("1") {
            panic!("{test}: KRMGRAPH_REQUIRE_KPT=1 but {why}");
        }
        eprintln!("skipping {test}: {why}");
        return None;
    }
    Some(Runner {
        env: vec![],
        as_user: Some(65534),
    })
}

/// An exec function (a shell script, so `nobody` can run it; the Python
/// ones live under root's home) that adds a ConfigMap `new` without a
/// path: kpt files it as `configmap_new.yaml` in the function's package.
const GENERATE_NEW: &str = r#"#!/bin/sh
sed '/^items:$/a\
- apiVersion: v1\
  kind: ConfigMap\
  metadata:\
    name: new\
  data:\
    k: v'
"#;

/// An exec function that deletes the resource named `old` (items start
/// with `- ` at column 0 in the ResourceList kpt sends).
const DELETE_OLD: &str = r#"#!/bin/sh
awk '
function flush() { if (chunk != "" && chunk !~ /\n    name: old\n/) printf "%s", chunk; chunk = "" }
/^[^ -]/ { flush(); initems = ($0 == "items:"); print; next }
initems && /^- / { flush(); chunk = $0 "\n"; next }
initems { chunk = chunk $0 "\n"; next }
{ print }
END { flush() }'
"#;

/// `base_tree` with `sub`'s pipeline running `script` (written beside
/// `pkg`), `sub/b.yaml` as kpt writes it and `a.yaml` rewritten by every
/// render; everything writable by anyone, then `sub` made read-only.
fn read_only_subpackage(pkg: &Path, script: Option<&str>) {
    base_tree(pkg, "");
    if let Some(script) = script {
        let fn_path = pkg.parent().unwrap().join("fn.sh");
        write(&fn_path, script);
        std::fs::set_permissions(&fn_path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write(
            &pkg.join("sub/Kptfile"),
            &kptfile("sub", &exec_pipeline(&fn_path.to_string_lossy())),
        );
        write(
            &pkg.join("sub/b.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\ndata:\n  k: v\n",
        );
    }
    open_up(pkg);
    std::fs::set_permissions(pkg.join("sub"), std::fs::Permissions::from_mode(0o555)).unwrap();
}

/// A read-only package directory (`sub`, mode 0555) holding a file the
/// render rewrites (`sub/b.yaml`), while `a.yaml` in the writable root
/// package changes too.
///
/// INTENDED DIFFERENCE: kpt writes files in place, so it needs no write
/// permission on the directory: it rewrites both files and exits 0.
/// krmgraph replaces a file by renaming a temporary file over it, which
/// needs the directory writable: it checks that before writing anything
/// and fails naming the file and the directory, the tree untouched
/// (before, it rewrote `a.yaml` and then failed with `failed to save
/// resources: Permission denied (os error 13)`).
#[test]
fn read_only_directory_of_rewritten_file_fails_before_writing() {
    let test = "read_only_directory_of_rewritten_file_fails_before_writing";
    let Some(runner) = permission_runner(test) else {
        return;
    };
    let build = |pkg: &Path| read_only_subpackage(pkg, None);
    let (kpt, ours) = runner.both(test, &build, &[]);
    assert_failed_untouched(
        &ours,
        &[
            "error: failed to save resources: replace <ROOT>/pkg/sub/b.yaml: permission denied (",
            "temporary file in <ROOT>/pkg/sub",
            "make it writable and render again; nothing was written)",
        ],
    );
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 0, "kpt exit code; stderr:\n{}", kpt.stderr);
        assert!(
            kpt.changes.contains(&"changed: pkg/sub/b.yaml".to_string()),
            "kpt rewrites b.yaml in place: {:?}",
            kpt.changes
        );
    }
}

/// A read-only package directory where the render must create a file
/// (`sub/configmap_new.yaml`, from `sub`'s function).
///
/// INTENDED DIFFERENCE: kpt fails the same way (`error: failed to save
/// resources: open <ROOT>/pkg/sub/configmap_new.yaml: permission denied`,
/// exit 1) but after rewriting other files (`a.yaml`); krmgraph fails
/// before writing anything, the tree untouched, with kpt's line plus what
/// to do.
#[test]
fn read_only_directory_of_new_file_fails_before_writing() {
    let test = "read_only_directory_of_new_file_fails_before_writing";
    let Some(runner) = permission_runner(test) else {
        return;
    };
    let build = |pkg: &Path| read_only_subpackage(pkg, Some(GENERATE_NEW));
    let (kpt, ours) = runner.both(test, &build, &["--allow-exec"]);
    let line = "error: failed to save resources: open <ROOT>/pkg/sub/configmap_new.yaml: permission denied";
    assert_failed_untouched(
        &ours,
        &[
            &format!("{line} ("),
            "cannot create files in <ROOT>/pkg/sub: make it writable and render again; nothing was written)",
        ],
    );
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 1, "kpt exit code; stderr:\n{}", kpt.stderr);
        assert!(kpt.stderr.contains(line), "kpt:\n{}", kpt.stderr);
    }
}

/// A read-only package directory holding a file the render must delete
/// (`sub/old.yaml`, whose only resource `sub`'s function deletes).
///
/// INTENDED DIFFERENCE: kpt writes every file, then fails to delete
/// (`error: failed to delete file: unlinkat <ROOT>/pkg/sub/old.yaml:
/// permission denied`, exit 1), leaving the rewritten files; krmgraph
/// fails before writing anything, the tree untouched, with kpt's line plus
/// what to do.
#[test]
fn read_only_directory_of_pruned_file_fails_before_writing() {
    let test = "read_only_directory_of_pruned_file_fails_before_writing";
    let Some(runner) = permission_runner(test) else {
        return;
    };
    let build = |pkg: &Path| {
        read_only_subpackage(pkg, Some(DELETE_OLD));
        std::fs::set_permissions(pkg.join("sub"), std::fs::Permissions::from_mode(0o777)).unwrap();
        write(&pkg.join("sub/old.yaml"), &configmap("old"));
        open_up(pkg);
        std::fs::set_permissions(pkg.join("sub"), std::fs::Permissions::from_mode(0o555)).unwrap();
    };
    let (kpt, ours) = runner.both(test, &build, &["--allow-exec"]);
    let line = "error: failed to delete file: unlinkat <ROOT>/pkg/sub/old.yaml: permission denied";
    assert_failed_untouched(
        &ours,
        &[
            &format!("{line} ("),
            "cannot remove files from <ROOT>/pkg/sub: make it writable and render again; nothing was written)",
        ],
    );
    if let Some(kpt) = kpt {
        assert_eq!(kpt.code, 1, "kpt exit code; stderr:\n{}", kpt.stderr);
        assert!(kpt.stderr.contains(line), "kpt:\n{}", kpt.stderr);
    }
}

/// The rewrite case above with the render cache on, after a render of the
/// same tree (writable, elsewhere) recorded what to write: the replay is
/// held to the same checks (it renders instead, or fails the same way) and
/// leaves the tree untouched.
#[test]
fn read_only_directory_fails_before_writing_from_the_cache() {
    let test = "read_only_directory_fails_before_writing_from_the_cache";
    let Some(mut runner) = permission_runner(test) else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let cache = tmp.path().join("cache");
    std::fs::create_dir(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    runner.env = vec![
        ("KRMGRAPH_NO_CACHE".into(), "0".into()),
        (
            "KRMGRAPH_CACHE_DIR".into(),
            cache.to_string_lossy().to_string(),
        ),
    ];
    let writable = |pkg: &Path| {
        base_tree(pkg, "");
        open_up(pkg);
    };
    let first = runner.run("krmgraph", &tmp.path().join("first"), &writable, &[]);
    assert_eq!(first.code, 0, "the first render; stderr:\n{}", first.stderr);
    assert!(
        first
            .changes
            .contains(&"changed: pkg/sub/b.yaml".to_string()),
        "the first render rewrites b.yaml: {:?}",
        first.changes
    );
    let log = cache.join("log");
    runner.env.push((
        "KRMGRAPH_CACHE_LOG".into(),
        log.to_string_lossy().to_string(),
    ));
    let read_only = |pkg: &Path| read_only_subpackage(pkg, None);
    let ours = runner.run("krmgraph", &tmp.path().join("second"), &read_only, &[]);
    println!(
        "{test}: krmgraph exit {} stderr:\n{}",
        ours.code, ours.stderr
    );
    // the exact record of the whole render is declined (its files cannot
    // be written): the render replays the tree's steps and fails
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        log.contains("replayed subtree pkg"),
        "the cache was used: {log:?}"
    );
    assert_failed_untouched(
        &ours,
        &[
            "error: failed to save resources: replace <ROOT>/pkg/sub/b.yaml: permission denied (",
            "nothing was written)",
        ],
    );
    make_dirs_writable(tmp.path());
}

#[test]
fn package_path_does_not_exist() {
    let build = |_: &Path| {};
    let (kpt, ours) = Runner::default().both("package_path_does_not_exist", &build, &[]);
    // kpt: error: lstat <ROOT>/pkg: no such file or directory
    assert_failure(kpt, ours, &["<ROOT>/pkg", "no such file or directory"]);
}

/// Whether the test runs as root (`/proc/self` belongs to the effective uid).
fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Makes every directory 0777 and file 0666 under `dir` (and `dir`), so
/// another user can render it.
fn open_up(dir: &Path) {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let meta = std::fs::symlink_metadata(entry.path()).unwrap();
        if meta.is_dir() {
            open_up(&entry.path());
        } else if meta.is_file() {
            std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o666)).unwrap();
        }
    }
}

/// Gives the owner write permission on every directory under `dir` that
/// lacks it (errors ignored), so a temporary tree can be removed.
fn make_dirs_writable(dir: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let mode = meta.permissions().mode();
    if mode & 0o200 == 0 {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o700));
    }
    if let Ok(entries) = std::fs::read_dir(dir) {
        for entry in entries.flatten() {
            make_dirs_writable(&entry.path());
        }
    }
}
