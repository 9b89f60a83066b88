//! The shared remote cache (`--remote-cache`) against real servers,
//! started here on 127.0.0.1 at a free port and stopped by their pid:
//! BuildGrid (PyPI `buildgrid==0.4.4`, `bgd server start`) for the Remote
//! Execution API, Debian's nginx with WebDAV `PUT` for Bazel's HTTP
//! protocol. Each test skips with a reason when its server is not
//! installed, and fails instead when `KRMGRAPH_REQUIRE_BUILDGRID=1` /
//! `KRMGRAPH_REQUIRE_NGINX=1` is set (`.ci/run` sets both).
//!
//! Every checkout is a copy of one tree at another path, with its own
//! empty local cache; a counting `exec:` function (a line per run in
//! `$COUNTER`) tells what ran.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{copy_tree, krmgraph_bin};

/// A server this test started; killed (by its pid) when dropped.
struct Server {
    child: Child,
    url: String,
    /// nginx's document root: `cache/{ac,cas}/<hex>` under it.
    data: PathBuf,
    /// The CA that signed the server's certificate (TLS servers).
    ca: Option<PathBuf>,
}

impl Server {
    /// The flags that name this server: the URL, and the CA to trust.
    fn remote(&self) -> Vec<String> {
        let mut args = vec!["--remote-cache".to_owned(), self.url.clone()];
        if let Some(ca) = &self.ca {
            args.extend(["--remote-tls-ca".to_owned(), ca.display().to_string()]);
        }
        args
    }
}

/// A private CA (`ca.pem`) and a certificate it signed for 127.0.0.1
/// (`server.pem`, `server.key`), made with the `openssl` CLI in `dir`;
/// `None` (the test skips, with the reason) without `openssl`.
fn certificates(test: &str, dir: &Path) -> Option<PathBuf> {
    if !installed(test, "openssl", "KRMGRAPH_REQUIRE_OPENSSL") {
        return None;
    }
    let certs = dir.join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    std::fs::write(
        certs.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n\
         keyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
    )
    .unwrap();
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    let script = format!(
        "set -e\n\
         openssl req -x509 {ec} -keyout ca.key -out ca.pem -days 2 -subj '/CN=krmgraph test CA' \
           -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign\n\
         openssl req {ec} -keyout server.key -out server.csr -subj '/CN=127.0.0.1'\n\
         openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile server.ext\n"
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .current_dir(&certs)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(certs)
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Whether `program` is installed; if not, skips `test` with the reason,
/// or fails it when `require` is set to 1.
fn installed(test: &str, program: &str, require: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var(require).as_deref() == Ok("1") {
            panic!("{test}: `{program}` is required ({require}=1) but not installed");
        }
        eprintln!("skipping {test}: `{program}` is not installed");
    }
    found
}

fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} exited before it listened: {status}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{what} did not listen on {port} within 60 s");
}

/// BuildGrid with an in-memory CAS and action cache.
fn buildgrid(test: &str, dir: &Path) -> Option<Server> {
    buildgrid_with(test, dir, "!lru-storage &cas\n    size: 256M", None)
}

/// BuildGrid with the CAS `storage` (a YAML tagged node named `&cas`)
/// and an in-memory action cache; with `certs` ([`certificates`]), over
/// TLS (`grpcs://`).
fn buildgrid_with(test: &str, dir: &Path, storage: &str, certs: Option<&Path>) -> Option<Server> {
    if !installed(test, "bgd", "KRMGRAPH_REQUIRE_BUILDGRID") {
        return None;
    }
    let port = free_port();
    let channel = match certs {
        Some(certs) => format!(
            "insecure-mode: false\n    credentials:\n      tls-server-key: {}\n      tls-server-cert: {}",
            certs.join("server.key").display(),
            certs.join("server.pem").display()
        ),
        None => "insecure-mode: true".to_owned(),
    };
    let config = dir.join("bgd.yml");
    std::fs::write(
        &config,
        format!(
            "server:\n  - !channel\n    address: \"127.0.0.1:{port}\"\n    {channel}\n\
             storages:\n  - {storage}\n\
             caches:\n  - !lru-action-cache &ac\n    storage: *cas\n    max-cached-refs: 100000\n    allow-updates: true\n    cache-failed-actions: false\n\
             instances:\n  - name: ''\n    services:\n      - !action-cache\n        cache: *ac\n      - !cas\n        storage: *cas\n      - !bytestream\n        storage: *cas\n"
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("bgd.log")).unwrap();
    let mut child = Command::new("bgd")
        .args(["server", "start"])
        .arg(&config)
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child, "bgd");
    let scheme = if certs.is_some() { "grpcs" } else { "grpc" };
    Some(Server {
        child,
        url: format!("{scheme}://127.0.0.1:{port}"),
        data: PathBuf::new(),
        ca: certs.map(|c| c.join("ca.pem")),
    })
}

/// nginx as a Bazel HTTP cache (caching.md §1.4); with `auth`, writes
/// need Basic auth as `ci:s3cret` (reads stay anonymous).
fn nginx(test: &str, dir: &Path, auth: bool) -> Option<Server> {
    nginx_with(test, dir, auth, None)
}

/// [`nginx`], over TLS (`https://`) with `certs` ([`certificates`]).
fn nginx_with(test: &str, dir: &Path, auth: bool, certs: Option<&Path>) -> Option<Server> {
    if !installed(test, "nginx", "KRMGRAPH_REQUIRE_NGINX") {
        return None;
    }
    let port = free_port();
    let prefix = dir.join("nginx");
    for sub in ["data", "tmp", "logs"] {
        std::fs::create_dir_all(prefix.join(sub)).unwrap();
    }
    std::fs::write(prefix.join("htpasswd"), "ci:{PLAIN}s3cret\n").unwrap();
    let auth = if auth {
        "limit_except GET HEAD { auth_basic \"cache\"; auth_basic_user_file htpasswd; }"
    } else {
        ""
    };
    let tls = match certs {
        Some(certs) => format!(
            " ssl;\n    ssl_certificate {};\n    ssl_certificate_key {}",
            certs.join("server.pem").display(),
            certs.join("server.key").display()
        ),
        None => String::new(),
    };
    std::fs::write(
        prefix.join("nginx.conf"),
        format!(
            "daemon off;\nmaster_process off;\nworker_processes 1;\npid nginx.pid;\n\
             error_log logs/error.log;\nevents {{ worker_connections 64; }}\n\
             http {{\n  access_log logs/access.log;\n  client_body_temp_path tmp;\n\
             server {{\n    listen 127.0.0.1:{port}{tls};\n    location /cache/ {{\n      root data;\n\
             dav_methods PUT DELETE;\n      create_full_put_path on;\n      client_max_body_size 1G;\n      {auth}\n    }}\n  }}\n}}\n"
        ),
    )
    .unwrap();
    let mut child = Command::new("nginx")
        .arg("-p")
        .arg(format!("{}/", prefix.display()))
        .args(["-c", "nginx.conf", "-e", "logs/error.log"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, &mut child, "nginx");
    let scheme = if certs.is_some() { "https" } else { "http" };
    Some(Server {
        child,
        url: format!("{scheme}://127.0.0.1:{port}/cache"),
        data: prefix.join("data").join("cache"),
        ca: certs.map(|c| c.join("ca.pem")),
    })
}

/// Four packages (root, a, a/c, b), each running the counting function.
/// Files are indented by 4, so a render changes them. Each ConfigMap has
/// enough data (2 KiB) that the subtree records go up as chunks.
fn write_tree(pkg: &Path) {
    let count = r#"sh -c 'echo run >> \"$COUNTER\"; cat'"#;
    for rel in ["", "a", "a/c", "b"] {
        let name = if rel.is_empty() { "root" } else { rel }.replace('/', "-");
        let dir = pkg.join(rel);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("Kptfile"),
            format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: {name}\npipeline:\n  mutators:\n    - exec: \"{count}\"\n"),
        )
        .unwrap();
        std::fs::write(
            dir.join("cm.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: {name}-cm # {name}\ndata:\n    k: 'v'\n{}", bulk(&name)),
        )
        .unwrap();
    }
}

/// ConfigMap data lines, distinct per package.
fn bulk(name: &str) -> String {
    (0..60)
        .map(|i| format!("    key-{i}: '{name} value {i}'\n"))
        .collect()
}

/// A checkout: `<dir>/<name>/pkg` (every checkout's root is named `pkg`,
/// as every CI runner's clone has the repository's name), its own cache
/// and results directory.
struct Checkout {
    base: PathBuf,
}

impl Checkout {
    fn new(dir: &Path, name: &str, source: &Path) -> Checkout {
        let base = dir.join(name);
        copy_tree(source, &base.join("pkg")).unwrap();
        Checkout { base }
    }

    fn pkg(&self) -> PathBuf {
        self.base.join("pkg")
    }

    /// `krmgraph render` here with `args`; (success, stderr, runs so far).
    fn render(&self, counter: &Path, args: &[&str]) -> (bool, String, usize) {
        let out = Command::new(krmgraph_bin())
            .current_dir(&self.base)
            .args(["render", "pkg", "--allow-exec", "--results-dir", "results"])
            .args(args)
            .env("COUNTER", counter)
            .env("KRMGRAPH_NO_CACHE", "0")
            .env("KRMGRAPH_CACHE_DIR", self.base.join("cache"))
            .env_remove("KRMGRAPH_REMOTE_CACHE")
            .output()
            .unwrap();
        let runs = std::fs::read_to_string(counter).map_or(0, |s| s.lines().count());
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.success(), stderr, runs)
    }

    fn results(&self) -> String {
        std::fs::read_to_string(self.base.join("results/results.yaml")).unwrap()
    }
}

/// Every file under `dir`, relative, with its bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.push((rel, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The kpt log: stderr less krmgraph's own lines.
fn kpt_log(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| !l.starts_with("[WARN] krmgraph") && !l.starts_with("krmgraph:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn setup(dir: &Path) -> (PathBuf, PathBuf) {
    let source = dir.join("source");
    write_tree(&source);
    (source, dir.join("counter"))
}

/// The cases every server must pass: a second checkout is one remote hit
/// with the first's files, log and results; an edit in a third replays
/// the untouched subtrees from the remote and equals an uncached render.
fn shares_between_checkouts(server: &Server, dir: &Path) {
    let (source, counter) = setup(dir);
    let remote = server.remote();
    let remote: Vec<&str> = remote.iter().map(String::as_str).collect();
    let one = Checkout::new(dir, "one", &source);
    let (ok, first_log, runs) = one.render(&counter, &remote);
    assert!(ok && runs == 4, "{first_log}");
    assert!(!first_log.contains("[WARN]"), "{first_log}");

    if server.data.is_dir() {
        let results = files(&server.data.join("ac"));
        let chunked = results
            .iter()
            .any(|(_, b)| b.windows(7).any(|w| w == b"chunks/"));
        assert!(chunked, "no record went up as chunks");
    }

    let two = Checkout::new(dir, "two", &source);
    let (ok, log, runs) = two.render(&counter, &remote);
    assert!(ok, "{log}");
    assert_eq!(runs, 4, "the second checkout ran a function:\n{log}");
    assert_eq!(files(&one.pkg()), files(&two.pkg()));
    assert_eq!(kpt_log(&log), kpt_log(&first_log));
    assert_eq!(two.results(), one.results());

    // An edit of one leaf: its pipeline and its ancestors' run (3), `b`
    // comes from the remote whole.
    let three = Checkout::new(dir, "three", &source);
    let edited =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n    name: a-c-cm\ndata:\n    k: 'edited'\n";
    std::fs::write(three.pkg().join("a/c/cm.yaml"), edited).unwrap();
    let uncached = Checkout::new(dir, "uncached", &three.pkg());
    let asked_before = action_gets(server);
    let (ok, log, runs) = three.render(&counter, &[&remote[..], &["--explain"]].concat());
    assert!(ok, "{log}");
    assert_eq!(runs, 4 + 3, "{log}");
    assert!(log.contains("[EXPLAIN] pkg/b replayed whole"), "{log}");
    // `a` and `b` were asked for together; `a`, a miss then, is not
    // asked for again when its lookup comes.
    let mut asked = action_gets(server)[asked_before.len()..].to_vec();
    let all = asked.len();
    asked.sort();
    asked.dedup();
    assert_eq!(asked.len(), all, "an action result was asked for twice");
    let (ok, _, _) = uncached.render(&counter, &["--no-cache"]);
    assert!(ok);
    assert_eq!(files(&three.pkg()), files(&uncached.pkg()));
}

/// The action results nginx was asked for so far (its access log), in
/// order; nothing for other servers.
fn action_gets(server: &Server) -> Vec<String> {
    let log = server.data.join("../../logs/access.log");
    let log = std::fs::read_to_string(log).unwrap_or_default();
    log.lines()
        .filter_map(|l| l.split("\"GET /cache/ac/").nth(1))
        .map(|rest| rest.split(' ').next().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn buildgrid_shares_renders_between_checkouts() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = buildgrid("buildgrid_shares_renders_between_checkouts", dir.path()) else {
        return;
    };
    shares_between_checkouts(&server, dir.path());
}

#[test]
fn nginx_shares_renders_between_checkouts() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nginx("nginx_shares_renders_between_checkouts", dir.path(), false) else {
        return;
    };
    shares_between_checkouts(&server, dir.path());
}

/// Blobs with other bytes than their digest says (written under their
/// names on the server), or missing: a miss, one warning for the bad
/// bytes, and the render's own output.
#[test]
fn bad_or_missing_blobs_are_misses() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nginx("bad_or_missing_blobs_are_misses", dir.path(), false) else {
        return;
    };
    let (source, counter) = setup(dir.path());
    let remote = ["--remote-cache", server.url.as_str()];
    let one = Checkout::new(dir.path(), "one", &source);
    assert!(one.render(&counter, &remote).0);
    let cas: Vec<PathBuf> = std::fs::read_dir(server.data.join("cas"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(!cas.is_empty());
    for blob in &cas {
        std::fs::write(blob, b"not what the digest says").unwrap();
    }
    let two = Checkout::new(dir.path(), "two", &source);
    let (ok, log, runs) = two.render(&counter, &remote);
    assert!(ok, "{log}");
    assert_eq!(runs, 8, "every pipeline ran again");
    assert_eq!(log.matches("[WARN] krmgraph").count(), 1, "{log}");
    assert!(log.contains("other bytes than its digest"), "{log}");
    assert_eq!(files(&one.pkg()), files(&two.pkg()));

    // The run re-uploaded good blobs; now they go missing.
    for blob in std::fs::read_dir(server.data.join("cas")).unwrap() {
        std::fs::remove_file(blob.unwrap().path()).unwrap();
    }
    let three = Checkout::new(dir.path(), "three", &source);
    let (ok, log, runs) = three.render(&counter, &remote);
    assert!(ok, "{log}");
    assert_eq!(runs, 12);
    assert!(
        !log.contains("[WARN]"),
        "a missing blob is a plain miss:\n{log}"
    );
    assert_eq!(files(&one.pkg()), files(&three.pkg()));
}

/// `--remote-upload=false` reads but writes nothing.
#[test]
fn read_only_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nginx("read_only_writes_nothing", dir.path(), false) else {
        return;
    };
    let (source, counter) = setup(dir.path());
    let one = Checkout::new(dir.path(), "one", &source);
    let (ok, log, _) = one.render(
        &counter,
        &["--remote-cache", &server.url, "--remote-upload=false"],
    );
    assert!(ok && !log.contains("[WARN]"), "{log}");
    assert!(files(&server.data).is_empty(), "{:?}", files(&server.data));
}

/// Credentials in the URL reach nginx as Basic auth; refused ones cost
/// the uploads (one warning), never the render.
#[test]
fn basic_auth_reaches_nginx() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nginx("basic_auth_reaches_nginx", dir.path(), true) else {
        return;
    };
    let (source, counter) = setup(dir.path());
    let wrong = server.url.replace("http://", "http://ci:wrong@");
    let one = Checkout::new(dir.path(), "one", &source);
    let (ok, log, _) = one.render(&counter, &["--remote-cache", &wrong]);
    assert!(ok, "{log}");
    assert!(log.contains("credentials were refused"), "{log}");
    assert!(
        !log.contains("wrong"),
        "the password is never shown:\n{log}"
    );
    assert!(files(&server.data).is_empty());

    let right = server.url.replace("http://", "http://ci:s3cret@");
    let two = Checkout::new(dir.path(), "two", &source);
    let (ok, log, _) = two.render(&counter, &["--remote-cache", &right]);
    assert!(ok && !log.contains("[WARN]"), "{log}");
    assert!(!files(&server.data).is_empty());
}

/// A server that accepts connections and never answers costs at most
/// `--remote-timeout` (plus the render itself), with one warning.
#[test]
fn a_silent_server_costs_at_most_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let (source, counter) = setup(dir.path());
    // Bound, listening, never accepted: connections complete in the
    // kernel's backlog and then hear nothing.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let baseline = Checkout::new(dir.path(), "baseline", &source);
    let started = Instant::now();
    assert!(baseline.render(&counter, &[]).0);
    let uncached = started.elapsed();
    for (name, url) in [
        ("grpc", format!("grpc://127.0.0.1:{port}")),
        ("http", format!("http://127.0.0.1:{port}/cache")),
    ] {
        let checkout = Checkout::new(dir.path(), name, &source);
        let started = Instant::now();
        let (ok, log, _) = checkout.render(
            &counter,
            &["--remote-cache", &url, "--remote-timeout", "1s"],
        );
        let took = started.elapsed();
        assert!(ok, "{log}");
        assert_eq!(log.matches("[WARN] krmgraph").count(), 1, "{log}");
        assert!(
            took < uncached + Duration::from_millis(2500),
            "{name}: {took:?} (uncached render {uncached:?}, timeout 1s)\n{log}"
        );
        assert_eq!(files(&baseline.pkg()), files(&checkout.pkg()));
    }
    drop(silent);
}

/// The server gone before a checkout renders: a refused connection is a
/// miss with one warning, and the render is the render.
#[test]
fn a_stopped_server_is_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = buildgrid("a_stopped_server_is_a_miss", dir.path()) else {
        return;
    };
    let (source, counter) = setup(dir.path());
    let url = server.url.clone();
    let one = Checkout::new(dir.path(), "one", &source);
    assert!(one.render(&counter, &["--remote-cache", &url]).0);
    drop(server);
    let two = Checkout::new(dir.path(), "two", &source);
    let (ok, log, runs) = two.render(&counter, &["--remote-cache", &url]);
    assert!(ok, "{log}");
    assert_eq!(runs, 8);
    assert_eq!(log.matches("[WARN] krmgraph").count(), 1, "{log}");
    assert_eq!(files(&one.pkg()), files(&two.pkg()));
}

/// The server killed (by its pid) while a render runs a slow function:
/// the render goes on locally, exits 0 with the bytes of an uncached
/// render and one warning, and waits for no more than the timeout.
fn stopped_mid_render(server: Server, dir: &Path) {
    let (source, counter) = setup(dir);
    // `a/c` announces itself, then takes a while: the server dies while it
    // runs, before `a` and the root look up their steps and upload.
    let slow = r#"sh -c 'echo slow >> \"$COUNTER\"; sleep 2; cat'"#;
    std::fs::write(
        source.join("a/c/Kptfile"),
        format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a-c\npipeline:\n  mutators:\n    - exec: \"{slow}\"\n"),
    )
    .unwrap();
    let uncached = Checkout::new(dir, "uncached", &source);
    let started = Instant::now();
    assert!(uncached.render(&counter, &["--no-cache"]).0);
    let baseline = started.elapsed();
    std::fs::remove_file(&counter).unwrap();

    let one = Checkout::new(dir, "one", &source);
    let url = server.url.clone();
    let killer = std::thread::spawn({
        let counter = counter.clone();
        move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            while !std::fs::read_to_string(&counter).is_ok_and(|s| s.contains("slow")) {
                assert!(Instant::now() < deadline, "the slow function never ran");
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(server);
        }
    });
    let started = Instant::now();
    let (ok, log, _) = one.render(
        &counter,
        &["--remote-cache", &url, "--remote-timeout", "2s"],
    );
    let took = started.elapsed();
    killer.join().unwrap();
    assert!(ok, "{log}");
    assert_eq!(log.matches("[WARN] krmgraph").count(), 1, "{log}");
    assert!(
        took < baseline + Duration::from_millis(2000 + 2500),
        "{took:?} (uncached render {baseline:?}, timeout 2s)\n{log}"
    );
    assert_eq!(files(&one.pkg()), files(&uncached.pkg()));
    assert_eq!(one.results(), uncached.results());
}

#[test]
fn buildgrid_stopped_mid_render() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = buildgrid("buildgrid_stopped_mid_render", dir.path()) else {
        return;
    };
    stopped_mid_render(server, dir.path());
}

#[test]
fn nginx_stopped_mid_render() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = nginx("nginx_stopped_mid_render", dir.path(), false) else {
        return;
    };
    stopped_mid_render(server, dir.path());
}

/// `krmgraph cache stats` names the remote and says whether it answers.
#[test]
fn cache_stats_checks_the_remote() {
    let dir = tempfile::tempdir().unwrap();
    let Some(server) = buildgrid("cache_stats_checks_the_remote", dir.path()) else {
        return;
    };
    let out = Command::new(krmgraph_bin())
        .args(["cache", "--cache-dir"])
        .arg(dir.path().join("cache"))
        .args(["--remote-cache", &server.url, "stats"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("answers; digest function Sha256"), "{text}");
}

/// Action results whose CAS blobs are gone from BuildGrid (its CAS on
/// disk here, so the test can delete them): a miss, without a warning,
/// and the render's own output. BuildGrid keeps the action results (they
/// are CAS messages too, the only ones naming `krmgraph/`) and answers
/// for them until it sees their blobs are missing.
#[test]
fn buildgrid_results_without_their_blobs_are_misses() {
    let dir = tempfile::tempdir().unwrap();
    let test = "buildgrid_results_without_their_blobs_are_misses";
    let cas_dir = dir.path().join("bgd-cas");
    let storage = format!("!disk-storage &cas\n    path: {}", cas_dir.display());
    let Some(server) = buildgrid_with(test, dir.path(), &storage, None) else {
        return;
    };
    let (source, counter) = setup(dir.path());
    let remote = ["--remote-cache", server.url.as_str()];
    let one = Checkout::new(dir.path(), "one", &source);
    let (ok, first_log, runs) = one.render(&counter, &remote);
    assert!(ok && runs == 4, "{first_log}");

    let mut deleted = 0;
    for blob in files(&cas_dir.join("cas/objects")) {
        let named = blob.1.windows(9).any(|w| w == b"krmgraph/");
        if !named {
            std::fs::remove_file(cas_dir.join("cas/objects").join(&blob.0)).unwrap();
            deleted += 1;
        }
    }
    assert!(deleted > 0, "no blobs in {}", cas_dir.display());

    let two = Checkout::new(dir.path(), "two", &source);
    let (ok, log, runs) = two.render(&counter, &remote);
    assert!(ok, "{log}");
    assert_eq!(runs, 8, "every pipeline ran again:\n{log}");
    assert!(
        !log.contains("[WARN]"),
        "a missing blob is a plain miss:\n{log}"
    );
    assert_eq!(files(&one.pkg()), files(&two.pkg()));
    assert_eq!(kpt_log(&log), kpt_log(&first_log));
    assert_eq!(two.results(), one.results());
}

#[test]
fn nginx_over_https_with_a_private_ca() {
    let dir = tempfile::tempdir().unwrap();
    let test = "nginx_over_https_with_a_private_ca";
    let Some(certs) = certificates(test, dir.path()) else {
        return;
    };
    let Some(server) = nginx_with(test, dir.path(), false, Some(&certs)) else {
        return;
    };
    shares_between_checkouts(&server, dir.path());
}

#[test]
fn buildgrid_over_grpcs_with_a_private_ca() {
    let dir = tempfile::tempdir().unwrap();
    let test = "buildgrid_over_grpcs_with_a_private_ca";
    let Some(certs) = certificates(test, dir.path()) else {
        return;
    };
    let storage = "!lru-storage &cas\n    size: 256M";
    let Some(server) = buildgrid_with(test, dir.path(), storage, Some(&certs)) else {
        return;
    };
    shares_between_checkouts(&server, dir.path());
}

/// A TLS server whose certificate the system does not trust (no
/// `--remote-tls-ca`): one warning, nothing read or written, the render
/// is the render.
#[test]
fn an_untrusted_certificate_is_a_miss_with_one_warning() {
    let dir = tempfile::tempdir().unwrap();
    let test = "an_untrusted_certificate_is_a_miss_with_one_warning";
    let Some(certs) = certificates(test, dir.path()) else {
        return;
    };
    let (source, counter) = setup(dir.path());
    let baseline = Checkout::new(dir.path(), "baseline", &source);
    assert!(baseline.render(&counter, &["--no-cache"]).0);
    let storage = "!lru-storage &cas\n    size: 256M";
    let servers = [
        nginx_with(test, dir.path(), false, Some(&certs)),
        buildgrid_with(test, dir.path(), storage, Some(&certs)),
    ];
    for server in servers.iter().flatten() {
        let name = server.url.split(':').next().unwrap();
        let checkout = Checkout::new(dir.path(), name, &source);
        let (ok, log, _) = checkout.render(&counter, &["--remote-cache", &server.url]);
        assert!(ok, "{log}");
        assert_eq!(log.matches("[WARN] krmgraph").count(), 1, "{name}: {log}");
        assert!(log.to_lowercase().contains("certificate"), "{name}: {log}");
        assert_eq!(files(&baseline.pkg()), files(&checkout.pkg()));
    }
    if let Some(nginx) = &servers[0] {
        assert!(
            files(&nginx.data).is_empty(),
            "an untrusted server got uploads"
        );
    }
}
