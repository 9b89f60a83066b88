//! Verification of a catalog runtime before anything runs: an exec binary's
//! sha256, a container image's ID or repo digest as the engine reports it,
//! a built-in's existence, and the network and mount requirements.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::{Container, Entry, Platform, Resolved, Runtime};

/// The runtime of `entry`, verified: what the step runs.
pub fn verify(
    entry: &Entry,
    allow_network: bool,
    fetch_dir: Option<&Path>,
) -> Result<Resolved, String> {
    let at = entry.origin();
    match &entry.runtime {
        Runtime::Builtin(name) => builtin_image(name)
            .map(Resolved::Image)
            .ok_or_else(|| format!("{at}: no built-in function is named {name:?}")),
        Runtime::Exec(platforms) => {
            let p = platform(platforms).ok_or_else(|| {
                format!(
                    "{at}: {} {} lists no executable for this platform ({})",
                    entry.api_version(),
                    entry.kind,
                    host_platform()
                )
            })?;
            exec(entry, p, fetch_dir).map_err(|e| format!("{at}: {e}"))
        }
        Runtime::Container(c) => container(c, allow_network).map_err(|e| format!("{at}: {e}")),
    }
}

/// The image a built-in answers for: `NAME` is the built-in's first tag
/// (`registry/NAME:tag`), `NAME:TAG` that tag, if a built-in answers it.
pub fn builtin_image(name: &str) -> Option<String> {
    let (name, tag) = match name.split_once(':') {
        Some((name, tag)) => (name, Some(tag)),
        None => (name, None),
    };
    let b = krmgraph_fn::builtin::all().find(|b| b.name == name)?;
    let image = match (tag, b.tags.iter().find(|t| **t != "*")) {
        (Some(tag), _) | (None, Some(&tag)) => format!("{}{}:{}", b.registry, b.name, tag),
        (None, None) => format!("{}{}", b.registry, b.name),
    };
    krmgraph_fn::builtin::lookup(&image).map(|_| image)
}

/// This machine as the KEP names platforms (`linux/amd64`).
pub fn host_platform() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!("{}/{arch}", std::env::consts::OS)
}

fn platform(platforms: &[Platform]) -> Option<&Platform> {
    let host = host_platform();
    let (os, arch) = host.split_once('/')?;
    platforms
        .iter()
        .find(|p| (p.os.is_empty() || p.os == os) && (p.arch.is_empty() || p.arch == arch))
}

/// The binary's local path: `uri` (`file://`, `http(s)://` or a path) or
/// `bin`, relative to the catalog file's directory.
fn binary_path(entry: &Entry, p: &Platform, fetch_dir: Option<&Path>) -> Result<PathBuf, String> {
    let location = if p.uri.is_empty() { &p.bin } else { &p.uri };
    if location.starts_with("http://") || location.starts_with("https://") {
        let dir =
            fetch_dir.ok_or_else(|| format!("{location}: no cache directory to fetch it into"))?;
        return crate::fetch::fetched(location, &p.sha256, dir);
    }
    let path = Path::new(location.strip_prefix("file://").unwrap_or(location));
    let base = entry.file.parent().unwrap_or(Path::new("."));
    Ok(base.join(path))
}

fn exec(entry: &Entry, p: &Platform, fetch_dir: Option<&Path>) -> Result<Resolved, String> {
    let path = binary_path(entry, p, fetch_dir)?;
    let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let actual = sha256_hex(&bytes);
    if actual != p.sha256 {
        return Err(format!(
            "{} has sha256 {actual}, but the catalog pins {}: refusing to run it",
            path.display(),
            p.sha256
        ));
    }
    let abs = std::path::absolute(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = abs.to_string_lossy().into_owned();
    if text.contains(char::is_whitespace) {
        return Err(format!(
            "{text}: an executable path with spaces cannot be run as `exec:`"
        ));
    }
    Ok(Resolved::Exec(text))
}

fn container(c: &Container, allow_network: bool) -> Result<Resolved, String> {
    if c.require_network && !allow_network {
        return Err(format!(
            "{} requires network access: run with --allow-network",
            c.image
        ));
    }
    if c.require_storage_mount {
        return Err(format!(
            "{} requires a storage mount, which krmgraph render does not give functions",
            c.image
        ));
    }
    let image = krmgraph_fn::resolve_image(&c.image);
    let Some(digests) = krmgraph_fn::container::image_digests(&image) else {
        return Err(format!(
            "cannot verify {image}: the container engine has no such image (or no engine answers)"
        ));
    };
    let matches = digests.iter().any(|d| {
        d.rsplit_once("sha256:")
            .is_some_and(|(_, hex)| hex.eq_ignore_ascii_case(&c.sha256))
    });
    if !matches {
        return Err(format!(
            "{image} is {}, but the catalog pins sha256:{}: refusing to run it",
            digests.join(", "),
            c.sha256
        ));
    }
    Ok(Resolved::Image(c.image.clone()))
}

/// Lower-case hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
