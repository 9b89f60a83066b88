//! Shared helpers: the krmgraph binary under test, the kpt oracle, and
//! temporary package trees.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The `krmgraph` binary built for this test run.
pub fn krmgraph_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_krmgraph"))
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
    let ok = Command::new("kpt")
        .arg("version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("KRMGRAPH_REQUIRE_KPT").as_deref() == Ok("1") {
            panic!("{test}: kpt is required (KRMGRAPH_REQUIRE_KPT=1) but `kpt version` failed");
        }
        eprintln!("skipping {test}: `kpt` is not installed");
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

/// Whether a Docker engine answers here (`docker info`). When none does,
/// returns `false` after printing why, or panics when
/// `KRMGRAPH_REQUIRE_DOCKER=1` asks for one.
pub fn docker_available(test: &str) -> bool {
    let ok = Command::new("docker")
        .args(["info", "--format", "{{.ServerVersion}}"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        if std::env::var("KRMGRAPH_REQUIRE_DOCKER").as_deref() == Ok("1") {
            panic!("{test}: a Docker engine is required (KRMGRAPH_REQUIRE_DOCKER=1) but `docker info` failed");
        }
        eprintln!("skipping {test}: no Docker engine answers (`docker info` failed)");
    }
    ok
}
