//! Executables a catalog names by `http(s)://` uri: fetched once into a
//! directory of files named by their sha256 (beside the render cache),
//! verified before they are kept, made executable, and reused by digest.
//! A download whose digest is not the catalog's is never kept.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::verify::sha256_hex;

/// How long one download may take.
const TIMEOUT: Duration = Duration::from_secs(120);

/// The local copy of `url`, whose sha256 must be `sha256`: the kept one if
/// there is one, else downloaded now.
pub(crate) fn fetched(url: &str, sha256: &str, dir: &Path) -> Result<PathBuf, String> {
    let path = dir.join(sha256);
    if std::fs::read(&path).is_ok_and(|bytes| sha256_hex(&bytes) == sha256) {
        return Ok(path);
    }
    let bytes = download(url)?;
    let actual = sha256_hex(&bytes);
    if actual != sha256 {
        return Err(format!(
            "{url} has sha256 {actual}, but the catalog pins {sha256}: refusing to run it"
        ));
    }
    keep(&path, &bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

fn download(url: &str) -> Result<Vec<u8>, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .build()
        .into();
    let response = agent.get(url).call().map_err(|e| format!("{url}: {e}"))?;
    if response.status() != 200 {
        return Err(format!("{url}: HTTP {}", response.status()));
    }
    response
        .into_body()
        .with_config()
        .limit(1 << 30)
        .read_to_vec()
        .map_err(|e| format!("{url}: {e}"))
}

/// Writes `bytes` to `path` through a temporary file, mode 0755.
fn keep(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(0o755))?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
