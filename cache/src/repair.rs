//! Repairs of a cache directory's layout: what `krmgraph cache verify` and
//! `gc` remove so that the store opens and works again.
//!
//! A render does not repair (it must not delete what it did not write,
//! short of its automatic gc past the size limit): it renders uncached, or
//! without the part that fails, with one warning naming the cause. The
//! maintenance commands open the store with
//! [`SledStore::open_repairing`], which, in a directory that is a
//! krmgraph cache (its `CACHEDIR.TAG` says so), removes whatever stands
//! where the lock file, `blobs/` or `tmp/` belong but is of the wrong kind
//! (a symlink counts as wrong: it could lead out of the cache) — `blobs/`
//! and `tmp/` only once it holds the store's lock, so never under a
//! process using the store — and [`Store::repair`] later removes a marks
//! file that does not check out and non-directories among the blob
//! fan-outs.
//!
//! [`SledStore::open_repairing`]: crate::SledStore::open_repairing
//! [`Store::repair`]: crate::Store::repair

use std::fmt;
use std::fs::{self, File};
use std::path::{Path, PathBuf};

use crate::error::What;
use crate::{files, Error, Result};

/// Something removed because it stood where the store's own file or
/// directory belongs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repair {
    /// What was removed.
    pub path: PathBuf,
    /// What it was, e.g. "a directory where the marks file belongs" (a
    /// phrase for "removed {reason}: `{path}`").
    pub reason: String,
}

impl Repair {
    pub(crate) fn new(path: PathBuf, reason: String) -> Repair {
        Repair { path, reason }
    }
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "removed {}: `{}`", self.reason, self.path.display())
    }
}

/// Removes the lock file of `dir` if it is not a regular file (a
/// directory, a symlink, a FIFO...). Run before the store's lock is taken,
/// which such a lock file prevents. No process holds the store's lock
/// through it: the store locks only a regular file
/// (`files::open_own_file`), and a render never removes or replaces what
/// stands there. Two repairs could still race (one removes the damage and
/// takes the lock on a new file, the other then removes that file), so a
/// repair looks and removes holding a lock on the directory itself.
pub(crate) fn lock_file(dir: &Path) -> Result<Option<Repair>> {
    let path = dir.join("lock");
    if !fs::symlink_metadata(&path).is_ok_and(|m| !m.is_file()) {
        return Ok(None);
    }
    let guard = File::open(dir)
        .and_then(|d| d.lock().map(|()| d))
        .map_err(|e| Error::open_at(dir, What::Lock, dir, e))?;
    let repaired = match fs::symlink_metadata(&path) {
        Ok(meta) if !meta.is_file() => Some(remove(dir, &path, &meta, "the lock file")?),
        _ => None,
    };
    drop(guard);
    Ok(repaired)
}

/// The store's directories in a cache directory.
const DIRS: [&str; 2] = ["blobs", "tmp"];

/// Removes, in `dir`, each of `blobs/` and `tmp/` that is not a directory
/// of its own (a file, a symlink even to a directory). Run holding the
/// store's lock.
pub(crate) fn layout(dir: &Path) -> Result<Vec<Repair>> {
    let mut repaired = Vec::new();
    for name in DIRS {
        let path = dir.join(name);
        match fs::symlink_metadata(&path) {
            Ok(meta) if !meta.is_dir() => {
                let belongs = format!("the `{name}` directory");
                repaired.push(remove(dir, &path, &meta, &belongs)?);
            }
            _ => {}
        }
    }
    Ok(repaired)
}

/// Removes `path` (not following a symlink), which `meta` describes and
/// which stands where `belongs` belongs.
fn remove(dir: &Path, path: &Path, meta: &fs::Metadata, belongs: &str) -> Result<Repair> {
    let reason = format!("{} where {belongs} belongs", files::describe(path, meta));
    files::remove_any(path).map_err(|e| Error::open_at(dir, What::Remove, path, e))?;
    Ok(Repair::new(path.to_path_buf(), reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_of_the_wrong_kind_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("keep"), b"x").unwrap();
        std::fs::create_dir(dir.path().join("lock")).unwrap();
        std::fs::write(dir.path().join("blobs"), b"").unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(outside.path(), dir.path().join("tmp")).unwrap();
        let lock = lock_file(dir.path()).unwrap().unwrap();
        assert_eq!(lock.reason, "a directory where the lock file belongs");
        let said: Vec<String> = layout(dir.path())
            .unwrap()
            .into_iter()
            .map(|r| r.reason)
            .collect();
        assert_eq!(said[0], "a file where the `blobs` directory belongs");
        #[cfg(unix)]
        assert_eq!(
            said[1],
            format!(
                "a symbolic link to `{}` where the `tmp` directory belongs",
                outside.path().display()
            )
        );
        assert!(
            outside.path().join("keep").exists(),
            "a link is not followed"
        );
        assert!(layout(dir.path()).unwrap().is_empty());
        assert!(lock_file(dir.path()).unwrap().is_none());
    }
}
