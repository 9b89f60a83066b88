//! `krmgraph watch` on the demo package, with real file events: each edit
//! renders once, to what `krmgraph render` makes of the same tree; the
//! watcher's own writes and saves that change nothing render nothing; bad
//! input is reported, leaves the files alone, and the next good edit
//! renders; Ctrl-C stops it, after the render it interrupts has finished.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::kpt_diff::read_tree;
use crate::util::{copy_tree, krmgraph_bin, repo_root};

/// How long a render may take in a debug build on a loaded machine.
const RENDER_TIMEOUT: Duration = Duration::from_secs(120);
/// How long to wait for a render that must not happen: many debounce
/// periods.
const QUIET: Duration = Duration::from_millis(1500);

/// A running `krmgraph watch`, its stderr collected line by line.
struct Watch {
    child: Child,
    lines: Arc<Mutex<Vec<String>>>,
    arrived: Receiver<()>,
}

impl Watch {
    fn start(pkg: &Path, cache: &Path) -> Watch {
        Watch::start_with(pkg, cache, &[])
    }

    fn start_with(pkg: &Path, cache: &Path, flags: &[&str]) -> Watch {
        Watch::start_env(pkg, cache, flags, "1")
    }

    /// `check_direct`: `KRMGRAPH_CHECK_DIRECT`.
    fn start_env(pkg: &Path, cache: &Path, flags: &[&str], check_direct: &str) -> Watch {
        let mut child = Command::new(krmgraph_bin())
            .process_group(0)
            .args(["watch", "--debounce-ms", "50"])
            .args(flags)
            .arg(pkg)
            .env("KRMGRAPH_CACHE_DIR", cache)
            .env("KRMGRAPH_CHECK_DIRECT", check_direct)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start krmgraph watch");
        let stderr = child.stderr.take().expect("piped stderr");
        let lines = Arc::new(Mutex::new(Vec::new()));
        let (sender, arrived) = channel();
        let collected = lines.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                collected.lock().unwrap().push(line);
                let _ = sender.send(());
            }
        });
        Watch {
            child,
            lines,
            arrived,
        }
    }

    /// The renders finished so far (successful or not).
    fn renders(&self) -> usize {
        self.stderr()
            .lines()
            .filter(|l| {
                l.starts_with("krmgraph watch: rendered")
                    || l.starts_with("krmgraph watch: the render failed")
            })
            .count()
    }

    fn stderr(&self) -> String {
        self.lines.lock().unwrap().join("\n")
    }

    /// Waits until `n` renders have finished.
    fn wait_for_render(&self, n: usize) {
        self.wait_until(&format!("render {n} to finish"), || self.renders() >= n);
    }

    fn wait_until(&self, what: &str, done: impl Fn() -> bool) {
        let deadline = Instant::now() + RENDER_TIMEOUT;
        // A new line of stderr, or a while, before looking again (some
        // conditions are files).
        while !done() {
            assert!(
                Instant::now() < deadline,
                "waited in vain for {what}; stderr:\n{}",
                self.stderr()
            );
            let _ = self.arrived.recv_timeout(Duration::from_millis(20));
        }
    }

    /// Sends SIGINT, as Ctrl-C at a terminal does: to the process group
    /// watch leads (its own, so the test runner is not in it), which also
    /// holds the functions it runs unless they have groups of their own.
    fn interrupt(&self) {
        let group = format!("-{}", self.child.id());
        let status = Command::new("kill")
            .args(["-INT", "--", &group])
            .status()
            .unwrap();
        assert!(status.success());
    }

    /// The exit code, once it has exited by itself.
    fn exit_code(&mut self) -> Option<i32> {
        let deadline = Instant::now() + RENDER_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            assert!(
                Instant::now() < deadline,
                "still running:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The demo package copied to `work/name`.
fn demo(work: &Path, name: &str) -> PathBuf {
    let dir = work.join(name);
    copy_tree(&repo_root().join("testdata/demo"), &dir).unwrap();
    dir
}

/// `krmgraph render --no-cache` of `dir`, which must succeed.
fn render_once(dir: &Path) {
    crate::util::succeed(
        Command::new(krmgraph_bin())
            .arg("render")
            .arg(dir)
            .args(["--no-cache", "--allow-exec"]),
    );
}

/// Applies the same text replacement to `file` under both trees.
fn edit(dirs: &[&Path], file: &str, from: &str, to: &str) {
    for dir in dirs {
        let path = dir.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from), "{file} has no {from:?}");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    }
}

#[test]
fn each_edit_renders_once_to_what_render_makes_of_the_same_tree() {
    let work = tempfile::tempdir().unwrap();
    let watched = demo(work.path(), "watched");
    let expected = demo(work.path(), "expected");
    let watch = Watch::start(&watched, &work.path().join("cache"));
    watch.wait_for_render(1);
    render_once(&expected);
    assert_eq!(read_tree(&watched), read_tree(&expected), "first render");

    // A subpackage edit re-renders it and its parent.
    edit(
        &[&watched, &expected],
        "mysql/statefulset.yaml",
        "containerPort: 3306",
        "containerPort: 3307",
    );
    watch.wait_for_render(2);
    render_once(&expected);
    assert_eq!(read_tree(&watched), read_tree(&expected), "after the edit");
    assert!(
        watch
            .stderr()
            .contains("krmgraph watch: mysql/statefulset.yaml changed; rendering"),
        "{}",
        watch.stderr()
    );

    // A Kptfile edit changes a function's config.
    edit(
        &[&watched, &expected],
        "Kptfile",
        "env: demo",
        "env: staging",
    );
    watch.wait_for_render(3);
    render_once(&expected);
    assert_eq!(
        read_tree(&watched),
        read_tree(&expected),
        "after the Kptfile edit"
    );
    std::thread::sleep(QUIET);
    assert_eq!(
        watch.renders(),
        3,
        "its own writes re-rendered:\n{}",
        watch.stderr()
    );
}

#[test]
fn saves_that_change_nothing_and_git_do_not_render() {
    let work = tempfile::tempdir().unwrap();
    let watched = demo(work.path(), "watched");
    let watch = Watch::start(&watched, &work.path().join("cache"));
    watch.wait_for_render(1);
    let rendered = read_tree(&watched);
    // The same bytes again, as an editor's save without a change does.
    for (path, bytes) in &rendered {
        std::fs::write(watched.join(path), bytes).unwrap();
    }
    std::fs::create_dir_all(watched.join(".git")).unwrap();
    std::fs::write(watched.join(".git/index"), "x").unwrap();
    std::thread::sleep(QUIET);
    assert_eq!(watch.renders(), 1, "{}", watch.stderr());
    // Still watching: a new file renders.
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  a: b\n";
    std::fs::write(watched.join("extra.yaml"), configmap).unwrap();
    watch.wait_for_render(2);
    let extra = std::fs::read_to_string(watched.join("extra.yaml")).unwrap();
    assert!(extra.contains("namespace: wordpress-demo"), "{extra}");

    // Waiting, it holds no lock on the store: a render beside it uses it.
    let other = demo(work.path(), "other");
    let out = Command::new(krmgraph_bin())
        .arg("render")
        .arg(&other)
        .env("KRMGRAPH_CACHE_DIR", work.path().join("cache"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("[WARN]"),
        "{stderr}"
    );
}

#[test]
fn bad_input_is_reported_leaves_the_files_and_the_next_edit_renders() {
    let work = tempfile::tempdir().unwrap();
    let watched = demo(work.path(), "watched");
    let expected = demo(work.path(), "expected");
    let watch = Watch::start(&watched, &work.path().join("cache"));
    watch.wait_for_render(1);
    let good = std::fs::read(watched.join("service.yaml")).unwrap();
    let broken = "apiVersion: v1\nkind: Service\nmetadata:\n  name: [wordpress\n";
    std::fs::write(watched.join("service.yaml"), broken).unwrap();
    let mut before = read_tree(&watched);
    watch.wait_for_render(2);
    let stderr = watch.stderr();
    assert!(
        stderr.contains("krmgraph watch: the render failed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("service.yaml:4:9"),
        "the error names the file, line and column:\n{stderr}"
    );
    assert_eq!(read_tree(&watched), before, "a failed render wrote files");

    std::fs::write(watched.join("service.yaml"), &good).unwrap();
    before.insert("service.yaml".into(), good);
    watch.wait_for_render(3);
    render_once(&expected);
    assert_eq!(read_tree(&watched), read_tree(&expected));
    assert!(
        watch.stderr().ends_with("(Ctrl-C stops)"),
        "{}",
        watch.stderr()
    );
}

#[test]
fn watch_refuses_output_elsewhere() {
    let work = tempfile::tempdir().unwrap();
    let watched = demo(work.path(), "watched");
    for flags in [&["-o", "stdout"][..], &["--check"]] {
        let out = Command::new(krmgraph_bin())
            .arg("watch")
            .args(flags)
            .arg(&watched)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "{flags:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("krmgraph watch renders in place"),
            "{flags:?}: {stderr}"
        );
    }
    assert_eq!(
        read_tree(&watched),
        read_tree(&repo_root().join("testdata/demo"))
    );
}

#[test]
fn ctrl_c_while_waiting_stops_at_once() {
    let work = tempfile::tempdir().unwrap();
    let watched = demo(work.path(), "watched");
    let mut watch = Watch::start(&watched, &work.path().join("cache"));
    watch.wait_for_render(1);
    watch.interrupt();
    assert_eq!(watch.exit_code(), Some(130), "{}", watch.stderr());
    assert!(
        watch.stderr().ends_with("krmgraph watch: stopped"),
        "{}",
        watch.stderr()
    );
}

/// A package whose function (`exec:`, an echo) waits, while `gate`
/// exists, until `go` does, having made `gate`.held: a render the test
/// holds open. Returns the watched and the expected tree, `gate` and `go`.
fn held_package(work: &Path) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let (gate, go) = (work.join("gate"), work.join("go"));
    let script = format!(
        "#!/bin/sh\nif [ -e {gate} ]; then touch {gate}.held; while [ ! -e {go} ]; do sleep 0.02; done; fi\nexec cat\n",
        gate = gate.display(),
        go = go.display()
    );
    let function = work.join("held.sh");
    std::fs::write(&function, script).unwrap();
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(&function, executable).unwrap();
    let kptfile = format!(
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: held\npipeline:\n  mutators:\n  - exec: {}\n",
        function.display()
    );
    let configmap =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a   # edited below\ndata:\n  k: v1\n";
    let trees = ["watched", "expected"].map(|name| {
        let dir = work.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("Kptfile"), &kptfile).unwrap();
        std::fs::write(dir.join("cm.yaml"), configmap).unwrap();
        dir
    });
    let [watched, expected] = trees;
    (watched, expected, gate, go)
}

#[test]
fn ctrl_c_during_a_render_stops_once_it_has_written() {
    let work = tempfile::tempdir().unwrap();
    let (watched, expected, gate, go) = held_package(work.path());
    let mut watch = Watch::start_with(&watched, &work.path().join("cache"), &["--allow-exec"]);
    watch.wait_for_render(1);
    std::fs::write(&gate, "").unwrap();
    edit(&[&watched, &expected], "cm.yaml", "k: v1", "k: v2");
    let held = work.path().join("gate.held");
    watch.wait_until("the function to be held", || held.exists());
    watch.interrupt();
    watch.wait_until("the interrupt to be seen", || {
        watch
            .stderr()
            .contains("stopping once this render has finished")
    });
    std::fs::write(&go, "").unwrap();
    assert_eq!(watch.exit_code(), Some(130), "{}", watch.stderr());
    // Both renders succeeded: the function did not get the interrupt.
    let succeeded = watch
        .stderr()
        .matches("krmgraph watch: rendered in")
        .count();
    assert_eq!(succeeded, 2, "{}", watch.stderr());
    render_once(&expected);
    assert_eq!(read_tree(&watched), read_tree(&expected));
}

#[test]
fn a_file_saved_during_a_render_is_kept_and_rendered_next() {
    let work = tempfile::tempdir().unwrap();
    let (watched, expected, gate, go) = held_package(work.path());
    let watch = Watch::start_with(&watched, &work.path().join("cache"), &["--allow-exec"]);
    watch.wait_for_render(1);
    std::fs::write(&gate, "").unwrap();
    edit(&[&watched], "cm.yaml", "k: v1", "k: v2");
    watch.wait_until("the second render to start", || {
        watch.stderr().contains("cm.yaml changed; rendering")
    });
    // Saved again while the render of the first save runs its function.
    let held = work.path().join("gate.held");
    watch.wait_until("the function to be held", || held.exists());
    edit(&[&watched], "cm.yaml", "k: v2", "k: v3");
    edit(&[&expected], "cm.yaml", "k: v1", "k: v3");
    std::fs::remove_file(&gate).unwrap();
    std::fs::write(&go, "").unwrap();
    watch.wait_for_render(3);
    let stderr = watch.stderr();
    assert!(
        stderr.contains("[WARN] krmgraph: cm.yaml changed while the render ran, so the render left it as it is now"),
        "{stderr}"
    );
    render_once(&expected);
    assert_eq!(read_tree(&watched), read_tree(&expected), "{stderr}");
}

/// The memos' record (`memos` kind) in the store at `cache`: its creation
/// time, which a rewrite changes.
fn memos_record_created(cache: &Path) -> Option<u64> {
    use krmgraph_cache::Store;
    let store = crate::util::open_store(cache);
    let steps = store.steps().unwrap();
    steps
        .into_iter()
        .filter_map(|(_, record)| record.ok())
        .find(|record| record.kind.name == "memos")
        .map(|record| record.created_ms)
}

#[test]
fn a_render_that_learnt_little_leaves_the_memos_record_alone() {
    // A package of 600 ConfigMaps with a built-in: the first render
    // learns an entry or more per item and records the memos; an edit of
    // one item learns a few, well under one per hundred, so the second
    // render of the same watch leaves the record as it is (it used to
    // rewrite it at every render after the first).
    let work = tempfile::tempdir().unwrap();
    let pkg = work.path().join("many");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: many\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.1.4\n      configMap:\n        app: many\n",
    )
    .unwrap();
    for n in 0..600 {
        std::fs::write(
            pkg.join(format!("cm-{n}.yaml")),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{n}\ndata:\n  k: v{n}\n"
            ),
        )
        .unwrap();
    }
    // Rendered once already, as a tree under watch usually is (a render
    // that rewrites every file learns their bytes again the next time).
    render_once(&pkg);
    let cache = work.path().join("cache");
    // (The direct check encodes every file again, and so learns it.)
    let watch = Watch::start_env(&pkg, &cache, &[], "0");
    watch.wait_for_render(1);
    let first = memos_record_created(&cache).expect("the first render records the memos");
    // Creation times are in milliseconds.
    std::thread::sleep(Duration::from_millis(20));
    edit(&[&pkg], "cm-7.yaml", "k: v7", "k: edited");
    watch.wait_for_render(2);
    let labelled = std::fs::read_to_string(pkg.join("cm-7.yaml")).unwrap();
    assert!(
        labelled.contains("k: edited") && labelled.contains("app: many"),
        "{labelled}"
    );
    assert_eq!(
        memos_record_created(&cache),
        Some(first),
        "the second render rewrote the memos' record:\n{}",
        watch.stderr()
    );
}
