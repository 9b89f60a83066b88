//! Shared helpers: the krmgraph binary under test, the kpt oracle, and
//! temporary package trees.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `krmgraph` binary built for this test run.
pub fn krmgraph_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_krmgraph"))
}

/// Runs `command`, which must succeed (else the test fails with its
/// stderr); returns its output.
pub fn succeed(command: &mut Command) -> std::process::Output {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The repository root (the workspace directory).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// Whether `kpt` runs here. When it does not, returns `false` after printing
/// why, or panics when `KRMGRAPH_REQUIRE_KPT=1` asks for it.
pub fn kpt_available(test: &str) -> bool {
    available(test, &["kpt", "version"], "KRMGRAPH_REQUIRE_KPT", "`kpt`")
}

/// Whether a Docker engine answers here (`docker info`). When none does,
/// returns `false` after printing why, or panics when
/// `KRMGRAPH_REQUIRE_DOCKER=1` asks for one.
pub fn docker_available(test: &str) -> bool {
    let info = ["docker", "info", "--format", "{{.ServerVersion}}"];
    available(test, &info, "KRMGRAPH_REQUIRE_DOCKER", "a Docker engine")
}

/// Whether `command` succeeds; if not, skips `test` with a printed reason,
/// or fails it when `require` is set to 1.
fn available(test: &str, command: &[&str], require: &str, what: &str) -> bool {
    let ok = Command::new(command[0])
        .args(&command[1..])
        .output()
        .is_ok_and(|o| o.status.success());
    let line = command.join(" ");
    if !ok {
        if std::env::var(require).as_deref() == Ok("1") {
            panic!("{test}: {what} is required ({require}=1) but `{line}` failed");
        }
        eprintln!("skipping {test}: {what} is not available (`{line}` failed)");
    }
    ok
}

/// Copies `src` into `dst` recursively, keeping symlinks as symlinks and
/// making every copied file writable (the corpus is read-only).
pub fn copy_tree(src: &Path, dst: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dst)?;
    for entry in std::fs::read_dir(src)? {
        let entry = entry?;
        let from = entry.path();
        let to = dst.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&from)?;
        if meta.file_type().is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&from)?, &to)?;
        } else if meta.is_dir() {
            copy_tree(&from, &to)?;
        } else {
            std::fs::copy(&from, &to)?;
            let mut perms = std::fs::metadata(&to)?.permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&to, perms)?;
        }
    }
    let mut perms = std::fs::metadata(dst)?.permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(dst, perms)?;
    Ok(())
}

/// Opens the cache store at `cache` in the test process. A store this
/// process closed a moment ago can still be locked: a child that another
/// test thread forked meanwhile holds a copy of the lock's descriptor
/// until it execs, and sled's flusher lets go of its lock after the
/// handle is dropped (`SledStore::open` waits 5 s for the latter only).
/// Tries for a minute.
pub fn open_store(cache: &Path) -> krmgraph_cache::SledStore {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        match krmgraph_cache::SledStore::open(cache) {
            Ok(store) => return store,
            Err(krmgraph_cache::Error::Locked { .. }) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!(
                "the test cannot open the store at {}: {e:?}",
                cache.display()
            ),
        }
    }
}

/// Removes the records of the kinds named `names` from the store at
/// `cache`.
pub fn remove_records(cache: &Path, names: &[&str]) {
    use krmgraph_cache::Store;
    let store = open_store(cache);
    for (key, record) in store.steps().unwrap() {
        if record.is_ok_and(|r| names.contains(&r.kind.name.as_str())) {
            store.remove_step(&key).unwrap();
        }
    }
    store.flush().unwrap();
}
