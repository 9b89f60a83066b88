//! The container tests' images, built from scratch on the local engine (no
//! registry): the test function `testdata/functions/krm-test-fn`, built
//! static (`-C target-feature=+crt-static`) into `target/krm-test-fn`,
//! imported with an `/etc/passwd` that has `nobody` as one image per
//! behaviour (the entrypoint's argument picks it). Tags carry a hash of
//! the binary, so an unchanged build reuses its images, and concurrent
//! test runs (other checkouts on the same engine) share them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use crate::util::repo_root;

/// The repository of the test images.
pub const REPO: &str = "krmgraph-test/fn";

/// The behaviours of the test function (see its module doc).
const MODES: [&str; 8] = [
    "echo", "annotate", "generate", "fail", "warn", "network", "sleep", "whoami",
];

/// The built images.
pub struct TestImages {
    hash: String,
}

impl TestImages {
    /// The image whose function behaves as `mode`.
    pub fn image(&self, mode: &str) -> String {
        format!("{REPO}:{mode}-{}", self.hash)
    }

    /// `whoami`, in an image with no `/etc/passwd`.
    pub fn whoami_without_passwd(&self) -> String {
        format!("{REPO}:nopasswd-whoami-{}", self.hash)
    }

    /// A tag of the test repository that no image has.
    pub fn missing(&self) -> String {
        format!("{REPO}:missing-{}", self.hash)
    }
}

/// Builds the function and its images once per test process; panics with
/// the failing step's output.
pub fn test_images() -> &'static TestImages {
    static IMAGES: OnceLock<Result<TestImages, String>> = OnceLock::new();
    match IMAGES.get_or_init(build) {
        Ok(images) => images,
        Err(e) => panic!("building the test function images: {e}"),
    }
}

fn build() -> Result<TestImages, String> {
    let binary = build_function()?;
    let bytes = std::fs::read(&binary).map_err(|e| format!("{}: {e}", binary.display()))?;
    let hash = {
        use std::hash::{Hash, Hasher};
        let mut h = std::hash::DefaultHasher::new();
        bytes.hash(&mut h);
        format!("{:016x}", h.finish())
    };
    let images = TestImages { hash };
    let work = binary.parent().unwrap().join("rootfs");
    let with_passwd = rootfs(&work.join("passwd"), &bytes, true)?;
    let without_passwd = rootfs(&work.join("nopasswd"), &bytes, false)?;
    for mode in MODES {
        import(&with_passwd, mode, &images.image(mode))?;
    }
    import(&without_passwd, "whoami", &images.whoami_without_passwd())?;
    Ok(images)
}

/// `cargo build` of the test function into its own target directory
/// (so it never waits on the workspace's build lock).
fn build_function() -> Result<PathBuf, String> {
    let root = repo_root();
    let target = root.join("target/krm-test-fn");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| env!("CARGO").to_string());
    let out = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "--locked",
            "--manifest-path",
        ])
        .arg(root.join("testdata/functions/krm-test-fn/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env("RUSTFLAGS", "-C target-feature=+crt-static")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo build of krm-test-fn failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(target.join("release/krm-test-fn"))
}

/// A root filesystem: `/fn`, and with `passwd` an `/etc/passwd` and
/// `/etc/group` that name `nobody`.
pub fn rootfs(dir: &Path, binary: &[u8], passwd: bool) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let io = |e: std::io::Error| format!("{}: {e}", dir.display());
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(io)?;
    std::fs::write(dir.join("fn"), binary).map_err(io)?;
    std::fs::set_permissions(dir.join("fn"), std::fs::Permissions::from_mode(0o755)).map_err(io)?;
    if passwd {
        std::fs::create_dir_all(dir.join("etc")).map_err(io)?;
        std::fs::write(
            dir.join("etc/passwd"),
            "root:x:0:0:root:/:/fn\nnobody:x:65534:65534:nobody:/:/fn\n",
        )
        .map_err(io)?;
        std::fs::write(dir.join("etc/group"), "root:x:0:\nnogroup:x:65534:\n").map_err(io)?;
    }
    Ok(dir.to_path_buf())
}

/// `tar rootfs | docker import` as `tag`, unless the engine has it.
pub fn import(rootfs: &Path, mode: &str, tag: &str) -> Result<(), String> {
    if image_exists(tag) {
        return Ok(());
    }
    let mut tar = Command::new("tar")
        .args(["--owner=0", "--group=0", "-C"])
        .arg(rootfs)
        .args(["-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("running tar: {e}"))?;
    let tar_out = tar.stdout.take().ok_or("tar has no stdout")?;
    let out = Command::new("docker")
        .args(["import", "--change"])
        .arg(format!("ENTRYPOINT [\"/fn\",\"{mode}\"]"))
        .args(["-", tag])
        .stdin(tar_out)
        .output()
        .map_err(|e| format!("running docker import: {e}"))?;
    let _ = tar.wait();
    if !out.status.success() {
        return Err(format!(
            "docker import {tag}: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(())
}

/// Whether the engine has `image`.
pub fn image_exists(image: &str) -> bool {
    Command::new("docker")
        .args(["image", "inspect", "--format", "{{.Id}}", image])
        .output()
        .is_ok_and(|o| o.status.success())
}
