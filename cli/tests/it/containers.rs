//! Container functions on the real Docker engine, through images the
//! tests build from scratch (`test_images`): kpt (which runs `docker run`)
//! and krmgraph write the same bytes, results and exit codes; functions
//! run isolated (no network unless allowed, uid 65534,
//! no-new-privileges); and no container is left behind after success,
//! failure, timeout or Ctrl-C.
//!
//! Each test skips with a printed reason when no engine answers, and fails
//! instead under `KRMGRAPH_REQUIRE_DOCKER=1` (CI).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::kpt_diff::{describe_difference, read_tree, render_with, render_with_env};
use crate::test_images::{test_images, TestImages};
use crate::util::{docker_available, kpt_available, krmgraph_bin};

/// The label krmgraph puts on its containers (with its pid).
const PID_LABEL: &str = "dev.krmgraph.pid";

const CONFIG_MAP: &str =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: NAME # a comment\n  annotations:\n    team: core\ndata:\n  k: v\n";

/// Writes a package `name` under `dir` whose pipeline is `mutators` (each
/// a pipeline item without the leading `- `), with one ConfigMap.
fn write_package(dir: &Path, name: &str, mutators: &[String]) -> PathBuf {
    let pkg = dir.join(name);
    std::fs::create_dir_all(&pkg).unwrap();
    let mut kptfile =
        format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n");
    for m in mutators {
        kptfile.push_str(&format!("    - {m}\n"));
    }
    std::fs::write(pkg.join("Kptfile"), kptfile).unwrap();
    std::fs::write(
        pkg.join("cm.yaml"),
        CONFIG_MAP.replace("NAME", &format!("{name}-cm")),
    )
    .unwrap();
    pkg
}

fn image_item(image: &str) -> String {
    format!("image: {image}")
}

/// The engine and the images, or `None` (skipped) without an engine.
fn setup(test: &str) -> Option<&'static TestImages> {
    docker_available(test).then(test_images)
}

/// The containers (running or not) that the krmgraph process `pid` left.
fn containers_of(pid: u32) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-a", "-q", "--filter"])
        .arg(format!("label={PID_LABEL}={pid}"))
        .output()
        .expect("docker ps runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `krmgraph render PKG ARGS...` uncached, with the process's pid.
fn render(pkg: &Path, args: &[&str]) -> (Output, u32) {
    let child = spawn_render(pkg, args);
    let pid = child.id();
    (child.wait_with_output().expect("krmgraph runs"), pid)
}

fn spawn_render(pkg: &Path, args: &[&str]) -> std::process::Child {
    Command::new(krmgraph_bin())
        .arg("render")
        .arg(pkg)
        .args(args)
        .env("KRMGRAPH_NO_CACHE", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("krmgraph starts")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

#[test]
fn container_functions_write_what_kpt_writes() {
    let Some(images) = setup("container_functions_write_what_kpt_writes") else {
        return;
    };
    if !kpt_available("container_functions_write_what_kpt_writes") {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("src");
    // A mutator and a generator over a parent and its subpackage.
    let tree = write_package(
        &src,
        "tree",
        &[
            image_item(&images.image("annotate")),
            image_item(&images.image("generate")),
        ],
    );
    write_package(&tree, "sub", &[image_item(&images.image("annotate"))]);
    let cases = [
        (tree, 0),
        (
            write_package(&src, "failing", &[image_item(&images.image("fail"))]),
            1,
        ),
        (
            write_package(&src, "stderr", &[image_item(&images.image("warn"))]),
            0,
        ),
        (
            write_package(&src, "nobody", &[image_item(&images.image("whoami"))]),
            0,
        ),
        (
            write_package(&src, "missing", &[image_item(&images.missing())]),
            1,
        ),
    ];
    let args = ["--image-pull-policy", "never", "--results-dir", "<RESULTS>"];
    let mut failures = Vec::new();
    for (pkg, want_exit) in &cases {
        let name = pkg.file_name().unwrap().to_string_lossy().to_string();
        let kpt = render_with("kpt", work.path(), pkg, &args);
        let ours = render_with("krmgraph", work.path(), pkg, &args);
        if kpt.exit_code != *want_exit {
            failures.push(format!(
                "{name}: kpt exited {}: {}",
                kpt.exit_code, kpt.stderr
            ));
        }
        if let Some(d) = describe_difference(&kpt, &ours) {
            failures.push(format!("{name}: {d}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn container_functions_run_isolated_and_leave_nothing() {
    let Some(images) = setup("container_functions_run_isolated_and_leave_nothing") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    // Whoever listens on this port is reachable only with host networking.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let network = format!(
        "image: {}\n      configMap:\n        port: \"{port}\"",
        images.image("network")
    );
    let pkg = write_package(work.path(), "isolated", &[network]);
    let before = read_tree(&pkg);
    let (out, pid) = render(&pkg, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("network: connecting to 127.0.0.1:{port}")),
        "{}",
        stderr(&out)
    );
    assert_eq!(read_tree(&pkg), before, "a failed render wrote files");
    assert_eq!(containers_of(pid), Vec::<String>::new(), "after a failure");

    let (out, pid) = render(&pkg, &["--allow-network"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(containers_of(pid), Vec::<String>::new(), "after a success");

    // uid 65534 and no-new-privileges, with a passwd entry and without
    // one (docker refuses `--user nobody` there; krmgraph uses 65534).
    let users = write_package(
        work.path(),
        "users",
        &[
            image_item(&images.image("whoami")),
            image_item(&images.whoami_without_passwd()),
        ],
    );
    let (out, pid) = render(&users, &["--image-pull-policy", "never"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(containers_of(pid), Vec::<String>::new());
}

#[test]
fn a_function_past_its_timeout_is_killed_and_removed() {
    let Some(images) = setup("a_function_past_its_timeout_is_killed_and_removed") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let pkg = write_package(work.path(), "slow", &[image_item(&images.image("sleep"))]);
    let before = read_tree(&pkg);
    let started = Instant::now();
    let (out, pid) = render(&pkg, &["--fn-timeout", "2s"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(60), "not killed");
    assert!(
        stderr(&out).contains("timed out after 2s; the container was removed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read_tree(&pkg), before);
    assert_eq!(containers_of(pid), Vec::<String>::new());
}

/// Ctrl-C while containers run removes them; with `--jobs 2` and three
/// sibling subpackages, exactly two containers run at once.
#[test]
fn ctrl_c_removes_running_containers() {
    let Some(images) = setup("ctrl_c_removes_running_containers") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let root = write_package(work.path(), "root", &[]);
    for name in ["a", "b", "c"] {
        write_package(&root, name, &[image_item(&images.image("sleep"))]);
    }
    let before = read_tree(&root);
    let mut child = spawn_render(&root, &["--jobs", "2"]);
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    while containers_of(pid).len() < 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    let running = containers_of(pid).len();
    let interrupted = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "krmgraph did not exit after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(running, 2, "containers running at once with --jobs 2");
    assert_eq!(status.code(), Some(130));
    assert_eq!(containers_of(pid), Vec::<String>::new());
    assert_eq!(read_tree(&root), before);
}

#[test]
fn a_retagged_image_invalidates_the_cache() {
    let Some(images) = setup("a_retagged_image_invalidates_the_cache") else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let tag = format!("krmgraph-test/retag-{}:v1", std::process::id());
    let retag = |mode: &str| {
        let ok = Command::new("docker")
            .args(["tag", &images.image(mode), &tag])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "docker tag");
    };
    let pkg = write_package(work.path(), "retag", &[image_item(&tag)]);
    let cache = work.path().join("cache");
    let cached_render = || {
        let env = [
            ("KRMGRAPH_NO_CACHE", "0"),
            ("KRMGRAPH_CACHE_DIR", cache.to_str().unwrap()),
        ];
        render_with_env(
            "krmgraph",
            work.path(),
            &pkg,
            &["--image-pull-policy", "never"],
            &env,
        )
    };
    let counted_render = || {
        let since = unix_now();
        let rendered = cached_render();
        (rendered, containers_created(&tag, &since))
    };
    retag("annotate");
    let (first, created) = counted_render();
    assert_eq!(first.exit_code, 0, "{}", first.stderr);
    assert_eq!(created, 1);
    // The same image: the record is replayed, no container runs.
    let (again, created) = counted_render();
    assert_eq!(again.files, first.files);
    assert_eq!(created, 0, "the same image did not hit the cache");
    retag("generate");
    let (retagged, created) = counted_render();
    let _ = Command::new("docker").args(["rmi", &tag]).output();
    assert_eq!(retagged.exit_code, 0, "{}", retagged.stderr);
    assert_eq!(created, 1, "the re-tagged image did not run");
    assert!(
        retagged
            .files
            .contains_key("configmap_generated-by-container.yaml"),
        "{:?}",
        retagged.files.keys()
    );
    let cm = String::from_utf8_lossy(&retagged.files["cm.yaml"]).to_string();
    assert!(
        !cm.contains("test.krmgraph.dev/by"),
        "the old image's output: {cm}"
    );
}

/// Now as `docker events --since` takes it.
fn unix_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    format!("{}.{:09}", now.as_secs(), now.subsec_nanos())
}

/// How many containers of `image` the engine created since `since`.
fn containers_created(image: &str, since: &str) -> usize {
    let out = Command::new("docker")
        .args(["events", "--since", since, "--until", &unix_now()])
        .args(["--filter", "event=create", "--filter"])
        .arg(format!("image={image}"))
        .args(["--format", "{{.ID}}"])
        .output()
        .expect("docker events runs");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// Without an engine, a container function fails naming the socket, and a
/// render of built-ins needs none.
#[test]
fn without_an_engine_the_error_names_the_socket() {
    let work = tempfile::tempdir().unwrap();
    let socket = work.path().join("no-docker.sock");
    let host = format!("unix://{}", socket.display());
    let pkg = write_package(
        work.path(),
        "needs-engine",
        &[image_item("example.com/not-a-builtin:v1")],
    );
    let before = read_tree(&pkg);
    let out = Command::new(krmgraph_bin())
        .arg("render")
        .arg(&pkg)
        .env("DOCKER_HOST", &host)
        .env("KRMGRAPH_NO_CACHE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains(&format!("no container engine answers at {host}")),
        "{text}"
    );
    assert!(text.contains("built-in functions"), "{text}");
    assert_eq!(read_tree(&pkg), before);

    let builtin = write_package(
        work.path(),
        "builtins-only",
        &["image: set-namespace:v0.4.1\n      configMap:\n        namespace: prod".into()],
    );
    let out = Command::new(krmgraph_bin())
        .arg("render")
        .arg(&builtin)
        .env("DOCKER_HOST", &host)
        .env("KRMGRAPH_NO_CACHE", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}
