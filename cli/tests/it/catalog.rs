//! Function catalogs (KEP-2906): the cases under `testdata/catalog/`, each
//! a `pkg/`, its `catalogs/` (passed as one `--fn-catalog` directory, files
//! searched in name order), optional `args` (more render flags), and either
//! `expected.yaml` (the `-o unwrap` output) or `expected-error` (lines the
//! error must contain; the package must be left untouched). In catalogs,
//! `${FUNCTIONS}` is `testdata/functions` and `${SHA256:FILE}` the sha256
//! of a file there. Then the pieces no data case shows: a tampered binary,
//! a catalog change that the cache must see, and a container image pinned
//! by digest and re-tagged.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

use crate::util::{copy_tree, krmgraph_bin, repo_root};

fn cases_dir() -> PathBuf {
    repo_root().join("testdata/catalog")
}

fn sha256_file(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `${FUNCTIONS}` and `${SHA256:FILE}` of `text`.
fn substitute(text: &str) -> String {
    let functions = repo_root().join("testdata/functions");
    let mut out = text.replace("${FUNCTIONS}", &functions.to_string_lossy());
    while let Some(start) = out.find("${SHA256:") {
        let end = start + out[start..].find('}').expect("closing brace");
        let file = &out[start + "${SHA256:".len()..end];
        let digest = sha256_file(&functions.join(file));
        out.replace_range(start..=end, &digest);
    }
    out
}

/// A copy of `case` in a temporary directory, catalogs substituted.
fn prepare(case: &Path) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    copy_tree(case, tmp.path()).unwrap();
    for entry in std::fs::read_dir(tmp.path().join("catalogs")).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, substitute(&text)).unwrap();
    }
    tmp
}

/// `krmgraph render pkg --fn-catalog catalogs ARGS` in `dir`, own cache.
fn render(dir: &Path, args: &[&str]) -> Output {
    Command::new(krmgraph_bin())
        .current_dir(dir)
        .args([
            "render",
            "pkg",
            "--fn-catalog",
            "catalogs",
            "--cache-dir",
            "cache",
        ])
        .args(args)
        .env_remove("KRMGRAPH_FN_CATALOGS")
        .output()
        .unwrap()
}

fn read_tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

fn run_case(case: &Path) -> Result<(), String> {
    let tmp = prepare(case);
    let extra = std::fs::read_to_string(case.join("args")).unwrap_or_default();
    let mut args: Vec<&str> = extra.split_whitespace().collect();
    let stderr = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    if let Ok(expected) = std::fs::read_to_string(case.join("expected-error")) {
        let before = read_tree(&tmp.path().join("pkg"));
        let out = render(tmp.path(), &args);
        if out.status.success() {
            return Err("rendered, but should have failed".into());
        }
        for line in expected.lines().filter(|l| !l.is_empty()) {
            if !stderr(&out).contains(line) {
                return Err(format!("stderr lacks {line:?}:\n{}", stderr(&out)));
            }
        }
        if read_tree(&tmp.path().join("pkg")) != before {
            return Err("the failed render wrote to the package".into());
        }
        return Ok(());
    }
    args.extend(["-o", "unwrap"]);
    let out = render(tmp.path(), &args);
    if !out.status.success() {
        return Err(format!("render failed:\n{}", stderr(&out)));
    }
    let actual = String::from_utf8_lossy(&out.stdout);
    if std::env::var("KRMGRAPH_BLESS").as_deref() == Ok("1") {
        std::fs::write(case.join("expected.yaml"), actual.as_bytes()).unwrap();
    }
    let expected = std::fs::read_to_string(case.join("expected.yaml"))
        .map_err(|e| format!("expected.yaml: {e}"))?;
    if actual != expected {
        return Err(format!(
            "output differs:\n--- expected\n{expected}\n--- actual\n{actual}"
        ));
    }
    Ok(())
}

#[test]
fn catalog_cases() {
    let mut cases: Vec<PathBuf> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 10, "too few cases under testdata/catalog");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            let name = case.file_name().unwrap().to_string_lossy().into_owned();
            run_case(case).err().map(|e| format!("{name}: {e}"))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// An identity exec function copied next to the catalog, pinned by its
/// digest: it runs; one byte appended and the render is refused, with the
/// package untouched.
#[test]
fn tampered_binary_is_refused() {
    let tmp = prepare(&cases_dir().join("exec-by-kind"));
    let bin = tmp.path().join("catalogs/identity.sh");
    std::fs::copy(repo_root().join("testdata/functions/identity.sh"), &bin).unwrap();
    let catalog = format!(
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {{name: local}}\nspec:\n  krmFunctions:\n  - group: example.com\n    names: {{kind: AddField}}\n    versions:\n    - name: v1\n      runtime:\n        exec:\n          path: identity.sh\n          sha256: {}\n",
        sha256_file(&bin)
    );
    std::fs::write(tmp.path().join("catalogs/add.yaml"), catalog).unwrap();
    let ok = render(tmp.path(), &["--allow-exec", "-o", "unwrap"]);
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert!(String::from_utf8_lossy(&ok.stdout).contains("name: app"));

    let mut bytes = std::fs::read(&bin).unwrap();
    bytes.extend_from_slice(b"# tampered\n");
    std::fs::write(&bin, bytes).unwrap();
    let before = read_tree(&tmp.path().join("pkg"));
    let refused = render(tmp.path(), &["--allow-exec"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("refusing to run it"), "{stderr}");
    assert_eq!(read_tree(&tmp.path().join("pkg")), before);
}

/// The step key holds the resolved runtime: the same package and cache,
/// a catalog that now resolves the kind to another built-in, and the
/// render runs it instead of replaying the first record.
#[test]
fn catalog_change_changes_the_step_key() {
    let tmp = prepare(&cases_dir().join("builtin-by-kind"));
    let first = render(tmp.path(), &["-o", "unwrap"]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let labelled = "  name: app\n  labels:\n    team: blue\n";
    assert!(String::from_utf8_lossy(&first.stdout).contains(labelled));
    let path = tmp.path().join("catalogs/builtins.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace("builtin: set-labels:v0.2.2", "builtin: no-op"),
    )
    .unwrap();
    let second = render(tmp.path(), &["-o", "unwrap"]);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    assert!(!String::from_utf8_lossy(&second.stdout).contains(labelled));
}

/// `KRMGRAPH_FN_CATALOGS` names catalogs too, searched after the flags.
#[test]
fn catalogs_from_the_environment() {
    let tmp = prepare(&cases_dir().join("builtin-by-kind"));
    let out = Command::new(krmgraph_bin())
        .current_dir(tmp.path())
        .args(["render", "pkg", "--cache-dir", "cache", "-o", "unwrap"])
        .env(
            "KRMGRAPH_FN_CATALOGS",
            "/nonexistent-is-fine-if-unused:catalogs",
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // A missing catalog path is an error, not silently skipped.
    assert!(
        !out.status.success() && stderr.contains("nonexistent-is-fine-if-unused"),
        "{stderr}"
    );
    let out = Command::new(krmgraph_bin())
        .current_dir(tmp.path())
        .args(["render", "pkg", "--cache-dir", "cache", "-o", "unwrap"])
        .env("KRMGRAPH_FN_CATALOGS", "catalogs")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("  name: app\n  labels:\n    team: blue\n")
    );
}

fn docker(args: &[&str]) -> String {
    let out = Command::new("docker").args(args).output().unwrap();
    assert!(
        out.status.success(),
        "docker {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A catalog whose container function is pinned by the image ID of a test
/// image built from scratch, under a tag of this test's own: the step
/// resolved by kind runs it, and so does a step naming the image without a
/// tag (the catalog pins it). A different image re-tagged under the same
/// tag is refused before anything runs, with the package untouched.
#[test]
fn container_pinned_by_digest() {
    if !crate::util::docker_available("container_pinned_by_digest") {
        return;
    }
    let images = crate::test_images::test_images();
    let (annotate, echo) = (images.image("annotate"), images.image("echo"));
    let id = docker(&["image", "inspect", "--format", "{{.Id}}", &annotate]);
    let repo = format!("krmgraph-test/catalog-{}", std::process::id());
    let tagged = format!("{repo}:v1");
    docker(&["tag", &annotate, &tagged]);
    let result =
        std::panic::catch_unwind(|| pinned_runs_retagged_refused(&repo, &tagged, &id, &echo));
    let _ = Command::new("docker").args(["rmi", &tagged]).output();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
}

fn pinned_runs_retagged_refused(repo: &str, tagged: &str, id: &str, other: &str) {
    let tmp = prepare(&cases_dir().join("exec-by-kind"));
    let catalog = format!(
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {{name: images}}\nspec:\n  krmFunctions:\n  - group: example.com\n    names: {{kind: AddField}}\n    versions:\n    - name: v1\n      runtime:\n        container: {{image: \"{tagged}\", sha256: \"{id}\", requireNetwork: false}}\n"
    );
    std::fs::write(tmp.path().join("catalogs/add.yaml"), catalog).unwrap();
    let annotated = "test.krmgraph.dev/by: container";
    let by_kind = render(tmp.path(), &["-o", "unwrap", "--no-cache"]);
    let stdout = String::from_utf8_lossy(&by_kind.stdout);
    assert!(
        by_kind.status.success(),
        "{}",
        String::from_utf8_lossy(&by_kind.stderr)
    );
    assert!(stdout.contains(annotated), "{stdout}");

    let kptfile = tmp.path().join("pkg/Kptfile");
    let text = std::fs::read_to_string(&kptfile).unwrap();
    let untagged = text.replace(
        "  - configPath: add.yaml",
        &format!("  - image: {repo}\n    configPath: add.yaml"),
    );
    std::fs::write(&kptfile, untagged).unwrap();
    let pinned = render(tmp.path(), &["-o", "unwrap", "--no-cache"]);
    let stdout = String::from_utf8_lossy(&pinned.stdout);
    assert!(
        pinned.status.success(),
        "{}",
        String::from_utf8_lossy(&pinned.stderr)
    );
    assert!(stdout.contains(annotated), "{stdout}");
    std::fs::write(&kptfile, text).unwrap();

    docker(&["tag", other, tagged]);
    let before = read_tree(&tmp.path().join("pkg"));
    let refused = render(tmp.path(), &[]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(stderr.contains("refusing to run it"), "{stderr}");
    assert_eq!(read_tree(&tmp.path().join("pkg")), before);
}

/// `krmgraph fn catalog` prints the built-ins as a catalog that
/// `--check` accepts and a render resolves by kind (SetLabels here).
#[test]
fn builtin_catalog_round_trips() {
    let tmp = prepare(&cases_dir().join("builtin-by-kind"));
    let printed = Command::new(krmgraph_bin())
        .args(["fn", "catalog"])
        .output()
        .unwrap();
    assert!(printed.status.success());
    let file = tmp.path().join("catalogs/builtins.yaml");
    std::fs::write(&file, &printed.stdout).unwrap();
    let check = Command::new(krmgraph_bin())
        .args(["fn", "catalog", "--check"])
        .arg(&file)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&check.stdout);
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
    for kind in [
        "SetLabels",
        "SetNamespace",
        "SetAnnotations",
        "ApplyReplacements",
        "StarlarkRun",
    ] {
        assert!(
            listed.contains(&format!("fn.kpt.dev/v1alpha1 {kind} ")),
            "{kind}: {listed}"
        );
    }
    let out = render(tmp.path(), &["-o", "unwrap"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("  name: app\n  labels:\n    team: blue\n")
    );
}

/// `fn catalog --check` refuses a bad catalog with its position.
#[test]
fn check_reports_bad_catalogs() {
    let bad = cases_dir().join("bad-missing-sha256/catalogs");
    let out = Command::new(krmgraph_bin())
        .args(["fn", "catalog", "--check"])
        .arg(&bad)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("c.yaml:13:11: the container runtime has no `sha256`"),
        "{stderr}"
    );
}

/// Python's `http.server` serving `testdata/functions` on a free port of
/// 127.0.0.1; killed on drop.
struct Server {
    child: std::process::Child,
    port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server, or `None` (skipped with a reason, or failing when
/// `KRMGRAPH_REQUIRE_PYTHON=1`) when `python3` is missing.
fn serve_functions(test: &str) -> Option<Server> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spawned = Command::new("python3")
        .args(["-m", "http.server", "--bind", "127.0.0.1", "--directory"])
        .arg(repo_root().join("testdata/functions"))
        .arg(port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    let child = match spawned {
        Ok(child) => child,
        Err(e) if std::env::var("KRMGRAPH_REQUIRE_PYTHON").as_deref() == Ok("1") => {
            panic!("{test}: python3 is required (KRMGRAPH_REQUIRE_PYTHON=1): {e}")
        }
        Err(e) => {
            eprintln!("skipping {test}: python3 is not available ({e})");
            return None;
        }
    };
    let server = Server { child, port };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "{test}: http.server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Some(server)
}

fn http_catalog(port: u16, sha256: &str) -> String {
    format!(
        "apiVersion: config.kubernetes.io/v1alpha1\nkind: Catalog\nmetadata: {{name: served}}\nspec:\n  krmFunctions:\n  - group: example.com\n    names: {{kind: AddField}}\n    versions:\n    - name: v1\n      runtime:\n        exec:\n          platforms:\n          - {{bin: annotate, os: linux, arch: amd64, uri: \"http://127.0.0.1:{port}/annotate.sh\", sha256: {sha256}}}\n          - {{bin: annotate, os: linux, arch: arm64, uri: \"http://127.0.0.1:{port}/annotate.sh\", sha256: {sha256}}}\n"
    )
}

/// An exec function served over HTTP by a real server: fetched once into
/// the cache directory by its sha256, verified and run; reused once the
/// server is gone. A wrong digest refuses it: nothing written, nothing
/// kept.
#[test]
fn exec_fetched_over_http() {
    let Some(server) = serve_functions("exec_fetched_over_http") else {
        return;
    };
    let sha256 = sha256_file(&repo_root().join("testdata/functions/annotate.sh"));
    let tmp = prepare(&cases_dir().join("exec-by-kind"));
    let catalog = tmp.path().join("catalogs/add.yaml");

    let wrong = sha256.replace(|c: char| c != '0', "0");
    std::fs::write(&catalog, http_catalog(server.port, &wrong)).unwrap();
    let before = read_tree(&tmp.path().join("pkg"));
    let refused = render(tmp.path(), &["--allow-exec"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success());
    assert!(
        stderr.contains("/annotate.sh has sha256 ") && stderr.contains("refusing to run it"),
        "{stderr}"
    );
    assert_eq!(read_tree(&tmp.path().join("pkg")), before);
    assert!(!tmp.path().join("cache/fn-bin").join(&wrong).exists());

    std::fs::write(&catalog, http_catalog(server.port, &sha256)).unwrap();
    let annotated = "test.krmgraph.dev/by: exec";
    let fetched = render(tmp.path(), &["--allow-exec", "-o", "unwrap"]);
    assert!(
        fetched.status.success(),
        "{}",
        String::from_utf8_lossy(&fetched.stderr)
    );
    assert!(String::from_utf8_lossy(&fetched.stdout).contains(annotated));
    let kept = tmp.path().join("cache/fn-bin").join(&sha256);
    assert_eq!(sha256_file(&kept), sha256);

    drop(server);
    let reused = render(tmp.path(), &["--allow-exec", "-o", "unwrap", "--no-cache"]);
    assert!(
        reused.status.success(),
        "{}",
        String::from_utf8_lossy(&reused.stderr)
    );
    assert!(String::from_utf8_lossy(&reused.stdout).contains(annotated));
}

/// `--explain` says which config resolved to which runtime through which
/// catalog entry.
#[test]
fn explain_shows_the_resolution() {
    let tmp = prepare(&cases_dir().join("builtin-by-kind"));
    let out = render(tmp.path(), &["--explain"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("[EXPLAIN] catalog: ")
            && stderr.contains("labels.yaml (fn.kpt.dev/v1alpha1 SetLabels) runs image gcr.io/kpt-fn/set-labels:v0.2.2 (builtin set-labels:v0.2.2; catalogs/builtins.yaml:13:7)"),
        "{stderr}"
    );
}
