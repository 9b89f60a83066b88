//! File writing that never leaves a partial file: write a temporary file in
//! the target's directory, flush it, then rename it over the target.

use std::io::Write;
use std::path::Path;

/// Writes `bytes` to `path` atomically (temp file + fsync + rename), with
/// mode 0644 as kpt's `os.WriteFile(..., 0666)` gives under a usual umask.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".krmgraph-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = match std::fs::metadata(path) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(_) => 0o644,
        };
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
