//! The command line as a person uses it (issue 29): boolean flags before
//! the path, `version`, shell completion, `-q`/`-v`/`--color`, `fn list`,
//! `cache stats`, `graph` on a tree with `exec:` functions, and `watch` on
//! a real terminal (a pseudo-terminal from `script(1)`): one header and
//! one summary line per render, and no render for files a render does not
//! read.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::{copy_tree, krmgraph_bin, repo_root, succeed};

fn krmgraph(args: &[&str]) -> std::process::Output {
    Command::new(krmgraph_bin()).args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A copy of the demo package (built-in functions only) in `dir`.
fn demo(dir: &Path) -> std::path::PathBuf {
    let pkg = dir.join("demo");
    copy_tree(&repo_root().join("testdata/demo"), &pkg).unwrap();
    pkg
}

#[test]
fn every_boolean_flag_goes_before_the_path() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache_arg = format!("--cache-dir={}", cache.display());
    let flags = [
        "--no-cache",
        "--allow-exec",
        "--allow-network",
        "--allow-alpha-wasm",
        "--verify",
        "--truncate-output",
        "--no-cache=true",
        "--allow-exec=false",
        "--truncate-output=false",
    ];
    for (i, flag) in flags.iter().enumerate() {
        let pkg = demo(&tmp.path().join(i.to_string()));
        let out = krmgraph(&["render", &cache_arg, flag, pkg.to_str().unwrap()]);
        assert!(out.status.success(), "{flag}: {}", text(&out.stderr));
        let deployment = std::fs::read_to_string(pkg.join("deployment.yaml")).unwrap();
        assert!(
            deployment.contains("namespace:"),
            "{flag}: the package was not rendered:\n{deployment}"
        );
    }
    // A value where none is taken is the path, as with kpt: an error
    // naming it, not a silently ignored flag.
    let pkg = demo(&tmp.path().join("value"));
    let out = Command::new(krmgraph_bin())
        .current_dir(&pkg)
        .args(["render", "--no-cache", "maybe"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("maybe"), "{}", text(&out.stderr));
    // A usage error is exit code 2.
    assert_eq!(
        krmgraph(&["render", "--no-such-flag"]).status.code(),
        Some(2)
    );
}

#[test]
fn version_names_the_commit_and_kpt() {
    let out = krmgraph(&["version"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with(&format!("krmgraph {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{stdout}"
    );
    assert!(stdout.contains("matches kpt 1.0.0-beta.56"), "{stdout}");
}

#[test]
fn completion_scripts_load() {
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let out = krmgraph(&["completion", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        assert!(text(&out.stdout).contains("krmgraph"), "{shell}");
    }
    let script = format!(
        "source <({} completion bash) && complete -p krmgraph",
        krmgraph_bin().display()
    );
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("krmgraph"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn quiet_prints_errors_only_and_verbose_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let cache_arg = format!("--cache-dir={}", tmp.path().join("cache").display());
    let pkg = demo(&tmp.path().join("q"));
    let out = krmgraph(&["render", "-q", &cache_arg, pkg.to_str().unwrap()]);
    assert!(out.status.success());
    assert_eq!(text(&out.stderr), "", "-q printed more than errors");
    let pkg = demo(&tmp.path().join("v"));
    let out = krmgraph(&["render", "-v", "--no-cache", pkg.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(!text(&out.stderr).contains("krmgraph: cache:"));
    let other_cache = format!("--cache-dir={}", tmp.path().join("other").display());
    let out = krmgraph(&["render", "--verbose", &other_cache, pkg.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("krmgraph: cache: "), "{stderr}");
    // Beside the cache's lines, kpt's log as it is.
    assert!(stderr.contains("Successfully executed"), "{stderr}");
    // Errors stay under -q.
    std::fs::write(pkg.join("bad.yaml"), "a: [\n").unwrap();
    let out = krmgraph(&["render", "-q", "--no-cache", pkg.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("bad.yaml"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn fn_list_is_an_aligned_table_with_descriptions() {
    let out = krmgraph(&["fn", "list"]);
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("IMAGE "), "{stdout}");
    let column = lines[0].find("DESCRIPTION").unwrap();
    for line in &lines[1..] {
        assert!(line.len() > column, "no description: {line}");
        let before = &line[..column];
        assert!(before.ends_with("  "), "not aligned: {line}");
        assert!(!line[column..].starts_with(' '), "not aligned: {line}");
    }
    assert!(stdout.contains("set-namespace"), "{stdout}");
}

#[test]
fn cache_stats_are_human_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let cache = tmp.path().join("cache");
    let cache_arg = format!("--cache-dir={}", cache.display());
    let pkg = demo(tmp.path());
    succeed(Command::new(krmgraph_bin()).args(["render", &cache_arg, pkg.to_str().unwrap()]));
    let out = krmgraph(&["cache", &cache_arg, "stats"]);
    let stdout = text(&out.stdout);
    let total = stdout.lines().find(|l| l.starts_with("total:")).unwrap();
    assert!(
        total.ends_with(" B") || total.ends_with("iB"),
        "not a human size: {stdout}"
    );
    assert!(!total.contains("bytes"), "{stdout}");
}

/// A package whose pipeline runs an `exec:` script that changes nothing.
fn exec_package(dir: &Path) -> std::path::PathBuf {
    let pkg = dir.join("exec-pkg");
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::write(
        pkg.join("Kptfile"),
        "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: exec-pkg\npipeline:\n  mutators:\n    - exec: ./identity.sh\n",
    )
    .unwrap();
    std::fs::write(pkg.join("identity.sh"), "#!/bin/sh\ncat\n").unwrap();
    std::fs::set_permissions(
        pkg.join("identity.sh"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    std::fs::write(
        pkg.join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  a: b\n",
    )
    .unwrap();
    pkg
}

#[test]
fn graph_looks_without_permission_and_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let cache_arg = format!("--cache-dir={}", tmp.path().join("cache").display());
    let pkg = exec_package(tmp.path());
    // `exec: ./identity.sh` is found from the working directory, as kpt
    // finds it.
    let in_pkg = |args: &[&str]| {
        Command::new(krmgraph_bin())
            .current_dir(&pkg)
            .args(args)
            .output()
            .unwrap()
    };
    let path = ".";
    let out = in_pkg(&["render", "--allow-exec", &cache_arg, path]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = in_pkg(&["graph", &cache_arg, path]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("not keyed: exec: functions run only with --allow-exec"),
        "{stdout}"
    );
    let first = stdout.lines().next().unwrap();
    assert!(first.contains("without --allow-exec"), "{first}");
    assert!(first.contains("with --allow-exec: hit"), "{first}");
    let out = in_pkg(&["graph", "--allow-exec", &cache_arg, path]);
    let stdout = text(&out.stdout);
    assert!(stdout.lines().next().unwrap().contains("hit"), "{stdout}");
    assert!(!stdout.contains("not keyed"), "{stdout}");
}

/// `script(1)`, which runs a command on a pseudo-terminal, or why not.
fn script_available(test: &str) -> bool {
    let ok = Command::new("script")
        .args(["-q", "-e", "-c", "true", "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipping {test}: script(1) (util-linux) is not available");
    }
    ok
}

/// A command on a pseudo-terminal, all it prints collected.
struct Terminal {
    child: Child,
    output: Arc<Mutex<String>>,
}

impl Terminal {
    fn start(command: &str, env: &[(&str, &str)]) -> Terminal {
        let mut child = Command::new("script")
            .args(["-q", "-f", "-e", "-c", command, "/dev/null"])
            .env_remove("NO_COLOR")
            .envs(env.iter().copied())
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let output = Arc::new(Mutex::new(String::new()));
        let collected = output.clone();
        std::thread::spawn(move || {
            let mut buf = [0; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                collected
                    .lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Terminal { child, output }
    }

    fn text(&self) -> String {
        self.output.lock().unwrap().clone()
    }

    fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done(&self.text()) {
            assert!(
                Instant::now() < deadline,
                "waited in vain for {what}:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn stop(mut self) -> String {
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-INT", "--", &group]).status();
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.wait();
        self.text()
    }
}

fn summaries(text: &str) -> usize {
    text.lines()
        .filter(|l| l.contains("krmgraph: ") && l.contains("function(s) in"))
        .count()
}

#[test]
fn watch_on_a_terminal_is_a_header_and_a_summary_per_render() {
    if !script_available("watch_on_a_terminal_is_a_header_and_a_summary_per_render") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let pkg = demo(tmp.path());
    std::fs::write(pkg.join(".gitignore"), "build.log\n").unwrap();
    std::fs::write(pkg.join(".krmignore"), "krmignored.yaml\n").unwrap();
    let command = format!(
        "{} watch --debounce-ms 50 --ignore 'scratch/**' --cache-dir {} {}",
        krmgraph_bin().display(),
        tmp.path().join("cache").display(),
        pkg.display()
    );
    let term = Terminal::start(&command, &[]);
    term.wait_for("the first render", |t| summaries(t) == 1);
    // Not read by a render: no render.
    std::fs::write(pkg.join(".deployment.yaml.swp"), "swap").unwrap();
    std::fs::write(pkg.join("deployment.yaml~"), "backup").unwrap();
    std::fs::write(pkg.join("build.log"), "gitignored").unwrap();
    std::fs::create_dir(pkg.join("scratch")).unwrap();
    // (Read by the next render all the same: only watch ignores it.)
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n";
    std::fs::write(pkg.join("scratch/x.yaml"), config_map).unwrap();
    std::fs::write(pkg.join("krmignored.yaml"), "kind: X\n").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        summaries(&term.text()),
        1,
        "rendered for an ignored file:\n{}",
        term.text()
    );
    // A YAML edit renders.
    let service = std::fs::read_to_string(pkg.join("service.yaml")).unwrap();
    std::fs::write(pkg.join("service.yaml"), service + "# edited\n").unwrap();
    term.wait_for("the edit's render", |t| summaries(t) == 2);
    let text = term.stop();
    let headers: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("krmgraph watch: "))
        .collect();
    assert!(
        headers
            .iter()
            .any(|h| h.contains("service.yaml changed; rendering")),
        "{text}"
    );
    // One header and one summary per render, and kpt's log not at all.
    let renders = headers.iter().filter(|h| h.contains("rendering")).count();
    assert_eq!(renders, 2, "{text}");
    assert_eq!(summaries(&text), 2, "{text}");
    assert!(
        !text.contains("[RUNNING]"),
        "kpt's log on a terminal:\n{text}"
    );
}

#[test]
fn no_color_means_no_escape_codes() {
    if !script_available("no_color_means_no_escape_codes") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let cases: [(&str, &[(&str, &str)]); 3] = [
        ("--color never", &[]),
        ("", &[("NO_COLOR", "1")]),
        ("--color always", &[]),
    ];
    for (i, (flag, env)) in cases.iter().enumerate() {
        let pkg = demo(&tmp.path().join(i.to_string()));
        let command = format!(
            "{} render {flag} --no-cache {}",
            krmgraph_bin().display(),
            pkg.display()
        );
        let mut term = Terminal::start(&command, env);
        let _ = term.child.wait();
        std::thread::sleep(Duration::from_millis(100));
        let text = term.text();
        assert!(text.contains("krmgraph: "), "{flag}: no summary:\n{text}");
        let escapes = text.contains('\x1b');
        assert_eq!(
            escapes,
            *flag == "--color always",
            "{flag} {env:?}:\n{text:?}"
        );
    }
}
