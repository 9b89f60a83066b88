//! `ReadOnlyView`: a look at a cache this process cannot write (a cache
//! shared read-only with other users, or on a read-only mount), for
//! `krmgraph cache stats` and a `verify` that removes nothing.
//!
//! [`SledStore::open`](crate::SledStore::open) needs write access: it
//! creates and locks `<dir>/lock`, and sled 0.34 opens its database
//! read-write (it has no read-only mode). So the view
//!
//! - lists and hashes the blob files directly (reading needs no write
//!   access), and
//! - reads the records from a copy of `index/` in the system's temp
//!   directory, opened with sled there and deleted after. While copying it
//!   holds a *shared* lock on `<dir>/lock` (a lock needs only a read-only
//!   descriptor), so no writer, which takes it exclusively, changes the
//!   index under the copy; a writer that has the store open makes the
//!   records unreadable for the view (say so, count the blobs anyway), and
//!   one that starts during the copy gets `Locked` and renders uncached.
//!
//! When the records cannot be read (no temp space, the index in use or
//! unreadable), [`ReadOnlyView::records_unread`] says why and the record
//! figures are zero.

use std::collections::HashMap;
use std::fs::{self, File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use crate::blobs::BlobDir;
use crate::error::What;
use crate::sled_store::try_open_index;
use crate::store::outputs_present;
use crate::{DecodeError, Digest, Error, Result, Stats, StepRecord, VerifyReport};

/// Every record of an index: key and decoded record (or why not).
type Records = Vec<(Digest, Result<StepRecord, DecodeError>)>;

/// A cache read without write access; see the module documentation.
#[derive(Debug)]
pub struct ReadOnlyView {
    dir: PathBuf,
    blobs: BlobDir,
    records: Result<Records, String>,
}

impl ReadOnlyView {
    /// Looks at the cache in `dir`, reading its records now. `Err` when
    /// `dir` itself cannot be read.
    pub fn open(dir: &Path) -> Result<ReadOnlyView> {
        fs::read_dir(dir).map_err(|e| Error::open_at(dir, What::Read, dir, e))?;
        Ok(ReadOnlyView {
            dir: dir.to_path_buf(),
            blobs: BlobDir::at(dir),
            records: read_records(dir),
        })
    }

    /// The directory.
    pub fn location(&self) -> &Path {
        &self.dir
    }

    /// Why the records could not be read, if they could not (the record
    /// figures of [`ReadOnlyView::stats`] are then zero).
    pub fn records_unread(&self) -> Option<&str> {
        self.records.as_ref().err().map(String::as_str)
    }

    fn records(&self) -> &[(Digest, Result<StepRecord, DecodeError>)] {
        self.records.as_deref().unwrap_or_default()
    }

    /// Counts records (those read) and blobs, as [`Store::stats`] does.
    ///
    /// [`Store::stats`]: crate::Store::stats
    pub fn stats(&self) -> Result<Stats> {
        let mut stats = Stats::default();
        for (_, record) in self.records() {
            if let Ok(record) = record {
                stats.count(record);
            }
        }
        for blob in self.blobs.list()? {
            stats.blobs += 1;
            stats.blob_bytes += blob.size;
        }
        Ok(stats)
    }

    /// [`Store::verify`] without removing anything: the report lists what
    /// a writable verify would remove. Blobs are hashed as streams.
    ///
    /// [`Store::verify`]: crate::Store::verify
    pub fn verify(&self) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        let mut good = HashMap::new();
        for blob in self.blobs.list()? {
            report.blobs_checked += 1;
            if self.blobs.check(&blob.digest, false)? {
                good.insert(blob.digest, blob.size);
            } else {
                report.bad_blobs.push(blob.digest);
            }
        }
        for (key, record) in self.records() {
            match record {
                Err(_) => report.bad_records.push(*key),
                Ok(record) if !outputs_present(record, &good) => report.dangling_records.push(*key),
                Ok(_) => {}
            }
        }
        Ok(report)
    }
}

/// The records of the index in `dir`, read from a copy; `Err` says why
/// they could not be read.
fn read_records(dir: &Path) -> Result<Records, String> {
    let index = dir.join("index");
    match fs::symlink_metadata(&index) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Ok(meta) if !meta.is_dir() => {
            return Err(format!("`{}` is not a directory", index.display()))
        }
        _ => {}
    }
    let _shared = shared_lock(dir)?;
    let copy = TempCopy::of(&index)?;
    let opened = try_open_index(&copy.index)
        .map_err(|e| format!("the index `{}` will not open: {e}", index.display()))?;
    let entries = opened
        .steps
        .iter()
        .collect::<sled::Result<Vec<_>>>()
        .map_err(|e| format!("cannot read the index `{}`: {e}", index.display()))?;
    // The store drops keys that are not 32 bytes; nothing can look them up.
    Ok(entries
        .into_iter()
        .filter_map(|(key, value)| {
            let key = Digest::from_bytes(key.as_ref().try_into().ok()?);
            Some((key, StepRecord::decode(&value)))
        })
        .collect())
}

/// A shared lock on `<dir>/lock`, opened read-only; `None` when there is
/// no lock file (no store ever opened here, so no writer to keep out).
fn shared_lock(dir: &Path) -> Result<Option<File>, String> {
    let path = dir.join("lock");
    let file = match File::open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("cannot open `{}`: {e}", path.display())),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => {
            Err("the cache is in use by another krmgraph process".to_owned())
        }
        Err(TryLockError::Error(e)) => Err(format!("cannot lock `{}`: {e}", path.display())),
    }
}

/// A copy of an index in the temp directory, deleted on drop.
struct TempCopy {
    /// A directory of a new name, created for the copy: dropping it
    /// removes only what this process made.
    _root: tempfile::TempDir,
    index: PathBuf,
}

impl TempCopy {
    fn of(index: &Path) -> Result<TempCopy, String> {
        let why = |e: io::Error, to: &Path| {
            format!(
                "cannot copy the index `{}` to `{}`: {e}",
                index.display(),
                to.display()
            )
        };
        let root = tempfile::Builder::new()
            .prefix("krmgraph-index-")
            .tempdir()
            .map_err(|e| why(e, &std::env::temp_dir()))?;
        let copy = root.path().join("index");
        copy_dir(index, &copy).map_err(|e| why(e, root.path()))?;
        Ok(TempCopy {
            _root: root,
            index: copy,
        })
    }
}

/// Makes our copy of an index file writable by us, as sled opens it
/// read-write (`fs::copy` copies the mode, and the original's may not be).
#[cfg(unix)]
fn writable(path: &Path) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn writable(_: &Path) -> io::Result<()> {
    Ok(())
}

/// Copies the directory `from` to `to`, files and directories only:
/// sled's index holds nothing else, and a symlink is not followed.
fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    fs::create_dir(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let file_type = entry.file_type()?;
        let target = to.join(entry.file_name());
        if file_type.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if file_type.is_file() {
            fs::copy(entry.path(), &target)?;
            writable(&target)?;
        }
    }
    Ok(())
}
