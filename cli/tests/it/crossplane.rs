//! `krmgraph crossplane render` against real composition function servers:
//! a function written with the Crossplane Python SDK from PyPI
//! (`testdata/crossplane/functions/sdk_function.py`, served on a loopback
//! port, also as a v1beta1-only server) and the published
//! `crossplane-function-pythonic`, both through the Development runtime;
//! and the Docker runtime with an image built from scratch.
//!
//! The cases are data under `testdata/crossplane/cases/<case>/`: `xr.yaml`
//! (or the XR paths in `args`), `composition.yaml`, optional `args` (one
//! argument per line), and `expected.yaml` (the stdout, byte for byte) or
//! `expected-error.txt` (a line stderr must contain; exit 1). The
//! functions file is `testdata/crossplane/functions.yaml` with the servers'
//! ports filled in. `KRMGRAPH_BLESS=1` writes missing `expected.yaml`s.
//!
//! The Python interpreters come from `KRMGRAPH_CROSSPLANE_PYTHON` (with
//! crossplane-function-sdk-python) and `KRMGRAPH_PYTHONIC_PYTHON` (with
//! crossplane-function-pythonic), else `python3`; a test skips with a
//! printed reason when its package is missing, and fails instead under
//! `KRMGRAPH_REQUIRE_CROSSPLANE_SDK=1` (CI installs both).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use crate::util::{krmgraph_bin, repo_root};

const REQUIRE: &str = "KRMGRAPH_REQUIRE_CROSSPLANE_SDK";

/// A function server this test process started (it exits when the test
/// process does: it watches its parent).
struct Server {
    port: u16,
    _child: Child,
}

fn python(var: &str) -> String {
    std::env::var(var).unwrap_or_else(|_| "python3".to_string())
}

/// Whether `python` can import `module`; else skips `test` (or fails it
/// under `KRMGRAPH_REQUIRE_CROSSPLANE_SDK=1`).
fn has_module(test: &str, python: &str, module: &str) -> bool {
    let ok = Command::new(python)
        .args(["-c", &format!("import {module}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var(REQUIRE).as_deref() == Ok("1") {
            panic!("{test}: {python} cannot import {module}, and {REQUIRE}=1");
        }
        eprintln!("skipping {test}: {python} cannot import {module} (pip install it, or set the interpreter)");
    }
    ok
}

/// Starts `sdk_function.py ARGS` and reads its port.
fn start_sdk_server(args: &[&str]) -> Server {
    let script = repo_root().join("testdata/crossplane/functions/sdk_function.py");
    let mut child = Command::new(python("KRMGRAPH_CROSSPLANE_PYTHON"))
        .arg(script)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("python starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("the server prints its port");
    let port = line
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("not a port: {line:?}"));
    Server {
        port,
        _child: child,
    }
}

/// The SDK servers (v1 and v1beta1-only), started once; `None` (skipped)
/// without the SDK.
fn sdk_servers(test: &str) -> Option<&'static (Server, Server)> {
    static SERVERS: OnceLock<(Server, Server)> = OnceLock::new();
    if SERVERS.get().is_none()
        && !has_module(
            test,
            &python("KRMGRAPH_CROSSPLANE_PYTHON"),
            "crossplane.function",
        )
    {
        return None;
    }
    Some(SERVERS.get_or_init(|| (start_sdk_server(&[]), start_sdk_server(&["--beta-only"]))))
}

/// The functions file with the servers' addresses, written into `dir`.
fn functions_file(dir: &Path, servers: &(Server, Server), pythonic: Option<u16>) -> PathBuf {
    let text = std::fs::read_to_string(repo_root().join("testdata/crossplane/functions.yaml"))
        .unwrap()
        .replace("TARGET_SDK", &format!("127.0.0.1:{}", servers.0.port))
        .replace("TARGET_BETA", &format!("127.0.0.1:{}", servers.1.port))
        .replace(
            "TARGET_PYTHONIC",
            &format!("127.0.0.1:{}", pythonic.unwrap_or(1)),
        );
    let path = dir.join("functions.yaml");
    std::fs::write(&path, text).unwrap();
    path
}

/// `krmgraph crossplane render ARGS` in `dir`, with `env`.
fn render(dir: &Path, args: &[String], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(krmgraph_bin());
    command
        .current_dir(dir)
        .args(["crossplane", "render"])
        .args(args)
        .env_remove("KRMGRAPH_NO_CACHE");
    for (k, v) in env {
        command.env(k, v);
    }
    command.output().expect("krmgraph runs")
}

/// The arguments of a case: `args` if present, else the classic three.
fn case_args(case: &Path, functions: &Path) -> Vec<String> {
    let mut args: Vec<String> = match std::fs::read_to_string(case.join("args")) {
        Ok(text) => text
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
            .map(str::to_string)
            .collect(),
        Err(_) => vec!["xr.yaml".into(), "composition.yaml".into()],
    };
    let flags_at = args
        .iter()
        .position(|a| a.starts_with('-'))
        .unwrap_or(args.len());
    args.insert(flags_at, functions.display().to_string());
    args.push("--no-cache".into());
    args
}

/// Runs one case; `Err` says how it failed.
fn run_case(case: &Path, functions: &Path) -> Result<(), String> {
    let out = render(case, &case_args(case, functions), &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if let Ok(want) = std::fs::read_to_string(case.join("expected-error.txt")) {
        let want = want.trim_end();
        if out.status.code() != Some(1) || !stderr.contains(want) || !stdout.is_empty() {
            return Err(format!(
                "want exit 1 and stderr containing {want:?}; got {:?}\nstderr: {stderr}\nstdout: {stdout}",
                out.status.code()
            ));
        }
        return Ok(());
    }
    if !out.status.success() {
        return Err(format!("failed: {stderr}"));
    }
    let expected = case.join("expected.yaml");
    match std::fs::read_to_string(&expected) {
        Ok(want) if want == stdout => Ok(()),
        Ok(want) => Err(format!(
            "output differs\n--- want\n{want}\n--- got\n{stdout}"
        )),
        Err(_) if std::env::var("KRMGRAPH_BLESS").as_deref() == Ok("1") => {
            std::fs::write(&expected, stdout.as_bytes()).unwrap();
            Ok(())
        }
        Err(_) => Err(format!("no {}", expected.display())),
    }
}

fn cases() -> Vec<PathBuf> {
    let dir = repo_root().join("testdata/crossplane/cases");
    let mut cases: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    cases
}

/// Every case under `testdata/crossplane/cases`, against the SDK servers.
#[test]
fn crossplane_render_cases() {
    let Some(servers) = sdk_servers("crossplane_render_cases") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let functions = functions_file(tmp.path(), servers, None);
    let cases = cases();
    assert!(cases.len() >= 10, "the cases are there");
    let failures: Vec<String> = cases
        .iter()
        .filter_map(|case| {
            run_case(case, &functions)
                .err()
                .map(|e| format!("{}: {e}", case.file_name().unwrap().to_string_lossy()))
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// 20 XRs through a two-step pipeline with the cache: every call runs
/// once; after one XR is edited exactly that XR's two calls run again and
/// the rest replay; the output is the uncached output whatever `--jobs`.
/// Development servers are uncached unless `--pinned-development`.
#[test]
fn crossplane_cache_reruns_only_the_edited_xr() {
    let Some(servers) = sdk_servers("crossplane_cache_reruns_only_the_edited_xr") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let functions = functions_file(tmp.path(), servers, None);
    let xrs = tmp.path().join("xrs");
    std::fs::create_dir(&xrs).unwrap();
    let xr = |i: usize, size: usize| {
        format!("apiVersion: example.crossplane.io/v1\nkind: XBucket\nmetadata:\n  name: bucket-{i:02}\nspec:\n  size: {size}\n")
    };
    for i in 0..20 {
        std::fs::write(xrs.join(format!("xr-{i:02}.yaml")), xr(i, 1)).unwrap();
    }
    let composition = repo_root().join("testdata/crossplane/cache/composition.yaml");
    let cache_dir = tmp.path().join("cache");
    let log = tmp.path().join("log");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a = vec![
            xrs.display().to_string(),
            composition.display().to_string(),
            functions.display().to_string(),
            "--cache-dir".into(),
            cache_dir.display().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let env = [("KRMGRAPH_CACHE_LOG", log.to_str().unwrap())];
    let lines = || -> Vec<String> {
        let mut l: Vec<String> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect();
        l.sort();
        l
    };
    let count = |lines: &[String], word: &str| lines.iter().filter(|l| l.starts_with(word)).count();

    // Unpinned Development servers: every call runs, none is recorded.
    let unpinned = render(tmp.path(), &args(&[]), &env);
    assert!(
        unpinned.status.success(),
        "{}",
        String::from_utf8_lossy(&unpinned.stderr)
    );
    let l = lines();
    assert_eq!(l.len(), 40, "{l:?}");
    assert!(l.iter().all(|l| l.ends_with(" uncached")), "{l:?}");

    let cold = render(tmp.path(), &args(&["--pinned-development"]), &env);
    assert!(
        cold.status.success(),
        "{}",
        String::from_utf8_lossy(&cold.stderr)
    );
    let l = lines();
    assert_eq!(
        (count(&l, "ran "), count(&l, "replayed ")),
        (40, 0),
        "{l:?}"
    );
    assert_eq!(cold.stdout, unpinned.stdout, "the cache changes no byte");

    std::fs::write(xrs.join("xr-07.yaml"), xr(7, 2)).unwrap();
    let warm = render(
        tmp.path(),
        &args(&["--pinned-development", "--jobs", "1"]),
        &env,
    );
    assert!(
        warm.status.success(),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    let l = lines();
    let ran: Vec<&String> = l.iter().filter(|l| l.starts_with("ran ")).collect();
    assert_eq!(ran.len(), 2, "{l:?}");
    assert!(ran.iter().all(|l| l.contains("xr-07.yaml#")), "{ran:?}");
    assert_eq!(count(&l, "replayed "), 38, "{l:?}");
    let uncached = render(tmp.path(), &args(&["--no-cache"]), &[]);
    assert_eq!(warm.stdout, uncached.stdout);
    assert!(String::from_utf8_lossy(&warm.stdout).contains("name: bucket-19"));
}

/// `--explain`: the first render says every call is new; after one XR is
/// edited only its calls run, each naming the parts of its request that
/// changed, and the other XR is replayed whole; the function moved to
/// another server is "function changed"; `--no-cache` bypasses the cache.
#[test]
fn crossplane_explain_says_why_calls_ran() {
    let Some(servers) = sdk_servers("crossplane_explain_says_why_calls_ran") else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    functions_file(tmp.path(), servers, None);
    std::fs::create_dir(tmp.path().join("xrs")).unwrap();
    let xr = |name: &str, size: usize| {
        let text = format!("apiVersion: example.crossplane.io/v1\nkind: XBucket\nmetadata:\n  name: {name}\nspec:\n  size: {size}\n");
        std::fs::write(tmp.path().join(format!("xrs/{name}.yaml")), text).unwrap();
    };
    xr("a", 1);
    xr("b", 1);
    let composition = repo_root().join("testdata/crossplane/cache/composition.yaml");
    let explain = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = vec![
            "xrs".into(),
            composition.display().to_string(),
            "functions.yaml".into(),
            "--cache-dir=cache".into(),
            "--pinned-development".into(),
            "--explain".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let out = render(tmp.path(), &args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        stderr
            .lines()
            .filter(|l| l.starts_with("[EXPLAIN]"))
            .map(str::to_string)
            .collect()
    };
    let every = |reason: &str| -> Vec<String> {
        ["a", "b"]
            .iter()
            .flat_map(|x| {
                ["bucket", "status"].map(|step| {
                    format!("[EXPLAIN] xrs/{x}.yaml#{step}/0 function-test ran: {reason}")
                })
            })
            .collect()
    };

    assert_eq!(
        explain(&[]),
        every("no earlier record of this call (its first render)")
    );
    xr("a", 2);
    assert_eq!(
        explain(&[]),
        [
            "[EXPLAIN] xrs/a.yaml#bucket/0 function-test ran: request changed: observed composite",
            "[EXPLAIN] xrs/a.yaml#status/0 function-test ran: request changed: observed composite",
            "[EXPLAIN] xrs/b.yaml replayed whole: no request of its calls changed",
        ]
    );
    let moved = std::fs::read_to_string(tmp.path().join("functions.yaml"))
        .unwrap()
        .replace(
            &format!("127.0.0.1:{}\n", servers.0.port),
            &format!("127.0.0.1:{}\n", servers.1.port),
        );
    std::fs::write(tmp.path().join("functions.yaml"), moved).unwrap();
    assert_eq!(explain(&[]), every("function changed (image ID or target)"));
    assert_eq!(
        explain(&["--no-cache"]),
        every("the cache was bypassed (--no-cache, or a store that cannot be used)")
    );
}

/// Kills a server process when the test ends.
struct Kill(Child);

impl Drop for Kill {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free loopback port (bound, then released for the server).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The published `crossplane-function-pythonic` (PyPI), a function nobody
/// here wrote, rendering its own documented Composition.
#[test]
fn crossplane_renders_with_function_pythonic() {
    let test = "crossplane_renders_with_function_pythonic";
    let python = python("KRMGRAPH_PYTHONIC_PYTHON");
    if !has_module(test, &python, "crossplane.pythonic") {
        return;
    }
    let port = free_port();
    let server = Command::new(&python)
        .args(["-m", "crossplane.pythonic.main", "--insecure", "--address"])
        .arg(format!("127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("function-pythonic starts");
    let _server = Kill(server);
    let dir = repo_root().join("testdata/crossplane/pythonic");
    let tmp = tempfile::tempdir().unwrap();
    let functions = tmp.path().join("functions.yaml");
    let text = std::fs::read_to_string(dir.join("functions.yaml"))
        .unwrap()
        .replace("TARGET_PYTHONIC", &format!("127.0.0.1:{port}"));
    std::fs::write(&functions, text).unwrap();
    let args: Vec<String> = vec![
        "xr.yaml".into(),
        "composition.yaml".into(),
        functions.display().to_string(),
        "--timeout=60s".into(),
        "--no-cache".into(),
        "-r".into(),
    ];
    let out = render(&dir, &args, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = dir.join("expected.yaml");
    let got = String::from_utf8_lossy(&out.stdout).to_string();
    if !expected.exists() && std::env::var("KRMGRAPH_BLESS").as_deref() == Ok("1") {
        std::fs::write(&expected, &got).unwrap();
    }
    assert_eq!(std::fs::read_to_string(expected).unwrap(), got);
}

/// The Docker runtime's test function (`testdata/crossplane/fn`, a static
/// tonic server) as an image built from scratch on the local engine, once
/// per test process: its tag, or the error of the step that failed.
fn docker_function_image() -> Result<String, String> {
    static IMAGE: OnceLock<Result<String, String>> = OnceLock::new();
    IMAGE.get_or_init(build_docker_function_image).clone()
}

fn build_docker_function_image() -> Result<String, String> {
    let root = repo_root();
    let target_dir = root.join("target/xp-test-fn");
    let triple = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let out = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "--locked",
            "--target",
            &triple,
        ])
        .arg("--manifest-path")
        .arg(root.join("testdata/crossplane/fn/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).to_string());
    }
    let binary = target_dir.join(format!("{triple}/release/xp-test-fn"));
    let bytes = std::fs::read(&binary).map_err(|e| format!("{}: {e}", binary.display()))?;
    let tag = format!("krmgraph-test/xp-fn:{}", blake3_short(&bytes));
    let rootfs = crate::test_images::rootfs(&target_dir.join("rootfs"), &bytes, false)?;
    crate::test_images::import(&rootfs, "serve", &tag)?;
    Ok(tag)
}

fn blake3_short(bytes: &[u8]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    bytes.hash(&mut h);
    format!("{:016x}", h.finish())
}

/// The containers (running or not) the krmgraph process `pid` left.
fn crossplane_containers_of(pid: u32) -> Vec<String> {
    let out = Command::new("docker")
        .args(["ps", "-a", "-q", "--filter"])
        .arg(format!("label=dev.krmgraph.crossplane.pid={pid}"))
        .output()
        .expect("docker ps runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// `krmgraph crossplane render` in `dir`, with its pid.
fn render_with_pid(dir: &Path, args: &[String]) -> (Output, u32) {
    let child = Command::new(krmgraph_bin())
        .current_dir(dir)
        .args(["crossplane", "render"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("krmgraph runs");
    let pid = child.id();
    (child.wait_with_output().expect("krmgraph runs"), pid)
}

/// The Docker runtime: the image is started with `--insecure`, its
/// published port found and dialled, the env annotation reaches the
/// function, the call is cached under the image's identity, and no
/// container is left, after success or failure.
#[test]
fn crossplane_docker_runtime_starts_calls_and_removes_the_container() {
    if !crate::util::docker_available("crossplane_docker_runtime") {
        return;
    }
    let image = docker_function_image().expect("building the test function image");
    let dir = repo_root().join("testdata/crossplane/docker");
    let tmp = tempfile::tempdir().unwrap();
    let functions = tmp.path().join("functions.yaml");
    let text = std::fs::read_to_string(dir.join("functions.yaml"))
        .unwrap()
        .replace("IMAGE", &image);
    std::fs::write(&functions, text).unwrap();
    let cache = tmp.path().join("cache");
    let log = tmp.path().join("log");
    let args = |extra: &[&str]| -> Vec<String> {
        let mut a: Vec<String> = vec![
            "xr.yaml".into(),
            "composition.yaml".into(),
            functions.display().to_string(),
            "-r".into(),
            "--cache-dir".into(),
            cache.display().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let (out, pid) = render_with_pid(&dir, &args(&[]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want = std::fs::read_to_string(dir.join("expected.yaml")).unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), want);
    assert_eq!(crossplane_containers_of(pid), Vec::<String>::new());

    // The second render replays the call: the image's identity keys it.
    let warm = Command::new(krmgraph_bin())
        .current_dir(&dir)
        .args(["crossplane", "render"])
        .args(args(&[]))
        .env("KRMGRAPH_CACHE_LOG", &log)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&warm.stdout), want);
    let log_text = std::fs::read_to_string(&log).unwrap();
    assert!(
        log_text.starts_with("replayed xr.yaml#docker/0 function-docker"),
        "{log_text}"
    );

    // A missing image with the Never pull policy: an error, no container.
    let missing = std::fs::read_to_string(&functions)
        .unwrap()
        .replace(&image, "krmgraph-test/xp-fn:missing");
    std::fs::write(&functions, missing).unwrap();
    let (out, pid) = render_with_pid(&dir, &args(&["--no-cache"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot start Function \"function-docker\"")
            && stderr.contains("pull policy is Never"),
        "{stderr}"
    );
    assert_eq!(crossplane_containers_of(pid), Vec::<String>::new());
}

/// Ctrl-C while a render waits on a function: the started container is
/// removed and krmgraph exits 130.
#[test]
fn crossplane_docker_containers_are_removed_on_interrupt() {
    if !crate::util::docker_available("crossplane_docker_interrupt") {
        return;
    }
    let image = docker_function_image().expect("building the test function image");
    let dir = repo_root().join("testdata/crossplane/docker");
    let tmp = tempfile::tempdir().unwrap();
    let functions = tmp.path().join("functions.yaml");
    let text = std::fs::read_to_string(dir.join("functions.yaml"))
        .unwrap()
        .replace("IMAGE", &image);
    std::fs::write(&functions, text).unwrap();
    let child = Command::new(krmgraph_bin())
        .current_dir(&dir)
        .args(["crossplane", "render", "xr.yaml", "composition-waits.yaml"])
        .arg(&functions)
        .args(["--no-cache", "--timeout=60s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("krmgraph runs");
    let pid = child.id();
    let started = std::time::Instant::now();
    while crossplane_containers_of(pid).is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "no container started"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The first step has run once the second waits; give it a moment.
    std::thread::sleep(std::time::Duration::from_millis(500));
    let _ = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    assert_eq!(
        crossplane_containers_of(pid),
        Vec::<String>::new(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
