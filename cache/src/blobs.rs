//! `BlobDir`: the content-addressed file store for step outputs.
//!
//! A blob lives at `blobs/<first 2 hex>/<other 62 hex>` of its blake3 digest.
//! Writes go to a unique file in `tmp/` (same filesystem) and are renamed
//! into place, so a reader never sees a blob being written. They are not
//! fsynced: a render writes a blob per step (hundreds), an fsync costs
//! milliseconds each, and durability is not what keeps the cache correct —
//! every read re-hashes the bytes, so a blob a crash lost or tore is a miss
//! like any other. Blobs are write-once by name, so two writers of the same
//! content both succeed and either file wins. A missing, unreadable,
//! truncated or altered blob is a miss, and a bad file is removed on the
//! spot.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crate::error::What;
use crate::{files, BlobInfo, Digest, Error, Repair, Result};

/// Numbers temp files within this process; the pid separates processes.
static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// The `blobs/` and `tmp/` directories of a cache directory.
#[derive(Debug)]
pub(crate) struct BlobDir {
    root: PathBuf,
    tmp: PathBuf,
}

impl BlobDir {
    /// Opens (creating) `<dir>/blobs` and `<dir>/tmp`, which must be
    /// directories of the cache's own: a symlink there (even to a
    /// directory) is an [`Error::Open`] saying so. gc, verify and clear
    /// remove such a link rather than work through it, which would orphan
    /// whatever a render had written through it.
    pub(crate) fn open(dir: &Path) -> Result<BlobDir> {
        let blobs = BlobDir::at(dir);
        for sub in [&blobs.root, &blobs.tmp] {
            files::create_own_dir(sub).map_err(|e| Error::open_at(dir, What::Create, sub, e))?;
        }
        Ok(blobs)
    }

    /// The blob directories of `dir`, neither created nor checked: for a
    /// read-only look.
    pub(crate) fn at(dir: &Path) -> BlobDir {
        BlobDir {
            root: dir.join("blobs"),
            tmp: dir.join("tmp"),
        }
    }

    /// The file of blob `digest`.
    pub(crate) fn path(&self, digest: &Digest) -> PathBuf {
        let hex = digest.to_hex();
        self.root.join(&hex[..2]).join(&hex[2..])
    }

    /// The verified bytes of blob `digest`, whose record says it holds
    /// `size` bytes; `None` (and the file removed) when it is missing, not
    /// a regular file, of another size, or does not hash to `digest`. The
    /// size is checked before anything is read, so a huge foreign file
    /// costs no memory.
    pub(crate) fn get(&self, digest: &Digest, size: u64) -> Option<Vec<u8>> {
        let path = self.path(digest);
        let bytes = match files::open_regular(&path) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return None,
            Ok((file, len)) if len == size => read_exactly(file, size),
            _ => None,
        };
        match bytes {
            Some(bytes) if Digest::of(&bytes) == *digest => Some(bytes),
            // Wrong size, wrong bytes or unreadable: drop it so the next put
            // rewrites it. A failed removal changes nothing for the caller:
            // still a miss.
            _ => {
                let _ = files::remove_any(&path);
                None
            }
        }
    }

    /// Whether blob `digest` hashes to its name, read as a stream in a
    /// fixed buffer (memory stays bounded whatever the file's size). A bad
    /// one is removed when `remove`; `Err` only when that removal fails.
    pub(crate) fn check(&self, digest: &Digest, remove: bool) -> Result<bool> {
        let path = self.path(digest);
        if hash_file(&path).is_ok_and(|d| d == *digest) {
            return Ok(true);
        }
        if remove {
            files::remove_any(&path).map_err(|e| Error::io(&path, e))?;
        }
        Ok(false)
    }

    /// Stores `content` and returns its digest.
    pub(crate) fn put(&self, content: &[u8]) -> Result<Digest> {
        self.put_parts(&[content])
    }

    /// Stores the concatenation of `parts` (without joining them) and
    /// returns its digest.
    pub(crate) fn put_parts(&self, parts: &[&[u8]]) -> Result<Digest> {
        let mut hasher = blake3::Hasher::new();
        for part in parts {
            hasher.update(part);
        }
        let digest = Digest::from(hasher.finalize());
        let len: usize = parts.iter().map(|p| p.len()).sum();
        let path = self.path(&digest);
        // Same name means same bytes, so an existing file of the right length
        // is kept; a wrong length is a damaged file and is replaced.
        if fs::symlink_metadata(&path).is_ok_and(|m| m.is_file() && m.len() == len as u64) {
            return Ok(digest);
        }
        let (tmp_path, mut file) = self.create_tmp(&digest)?;
        let written = parts
            .iter()
            .try_for_each(|part| file.write_all(part))
            .map_err(|e| Error::io(&tmp_path, e))
            .and_then(|()| self.install(&tmp_path, &path));
        if written.is_err() {
            let _ = fs::remove_file(&tmp_path);
        }
        written.map(|()| digest)
    }

    /// Whether a regular file for `digest` exists (not verified).
    pub(crate) fn contains(&self, digest: &Digest) -> bool {
        fs::symlink_metadata(self.path(digest)).is_ok_and(|m| m.is_file())
    }

    /// Removes blob `digest`; `false` if it was not there.
    pub(crate) fn remove(&self, digest: &Digest) -> Result<bool> {
        let path = self.path(digest);
        match fs::remove_file(&path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Every blob file with its size. Files whose names are not a digest
    /// are not the store's and are left alone; a fan-out directory that is
    /// a symlink is not followed (it could lead out of the cache, where gc
    /// and verify must not remove anything).
    pub(crate) fn list(&self) -> Result<Vec<BlobInfo>> {
        let mut blobs = Vec::new();
        for fan in read_dir(&self.root)? {
            let Some(prefix) = fan_prefix(&fan) else {
                continue;
            };
            if !fan.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            for entry in read_dir(&fan.path())? {
                let name = entry.file_name();
                let Some(digest) = name
                    .to_str()
                    .and_then(|rest| format!("{prefix}{rest}").parse::<Digest>().ok())
                else {
                    continue;
                };
                // A blob removed since read_dir is simply not listed.
                // `DirEntry::metadata` does not follow a symlink.
                if let Ok(meta) = entry.metadata() {
                    blobs.push(BlobInfo {
                        digest,
                        size: meta.len(),
                    });
                }
            }
        }
        blobs.sort_by_key(|b| b.digest);
        Ok(blobs)
    }

    /// Removes what stands where a fan-out directory belongs but is not a
    /// directory (a file, a symlink): a put into that fan would fail.
    pub(crate) fn repair_fans(&self) -> Result<Vec<Repair>> {
        let mut repaired = Vec::new();
        for fan in read_dir(&self.root)? {
            if fan_prefix(&fan).is_none() || fan.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let path = fan.path();
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            let what = files::describe(&path, &meta);
            files::remove_any(&path).map_err(|e| Error::io(&path, e))?;
            repaired.push(Repair::new(
                path,
                format!("{what} where a blob directory belongs"),
            ));
        }
        Ok(repaired)
    }

    /// Removes everything in `blobs/` and `tmp/` (whatever it is, not
    /// following symlinks) and creates them again, empty. Goes on past a
    /// failure; returns the first.
    pub(crate) fn clear(&self) -> Result<()> {
        let mut first = Ok(());
        for dir in [&self.root, &self.tmp] {
            let cleared = files::remove_any(dir).and_then(|()| files::create_own_dir(dir));
            if let Err(e) = cleared {
                first = first.and(Err(Error::io(dir, e)));
            }
        }
        first
    }

    /// Removes temp files older than `age`: leftovers of a crashed writer.
    /// Younger ones may belong to a put in flight and are kept.
    pub(crate) fn remove_stale_tmp(&self, age: Duration) -> Result<u64> {
        let mut removed = 0;
        let now = SystemTime::now();
        for entry in read_dir(&self.tmp)? {
            let modified = entry.metadata().and_then(|m| m.modified());
            let stale = modified.is_ok_and(|m| now.duration_since(m).unwrap_or_default() >= age);
            if stale && fs::remove_file(entry.path()).is_ok() {
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn create_tmp(&self, digest: &Digest) -> Result<(PathBuf, File)> {
        loop {
            let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
            let name = format!("{}-{}-{}", std::process::id(), n, digest.short_hex(16));
            let path = self.tmp.join(name);
            // create_new: a leftover of an earlier process with our pid is
            // never appended to; we just take the next number.
            match OpenOptions::new().write(true).create_new(true).open(&path) {
                Ok(file) => return Ok((path, file)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(Error::io(path, e)),
            }
        }
    }

    /// Renames a written temp file to `path`.
    fn install(&self, tmp_path: &Path, path: &Path) -> Result<()> {
        let Some(fan) = path.parent() else {
            return Err(Error::io(path, io::ErrorKind::InvalidInput.into()));
        };
        // Not through a symlink either: `repair_fans` removes one.
        files::create_own_dir(fan).map_err(|e| Error::io(fan, e))?;
        fs::rename(tmp_path, path).map_err(|e| Error::io(path, e))
    }
}

/// The two hex digits of a fan-out directory's name, if it has that name.
fn fan_prefix(entry: &fs::DirEntry) -> Option<String> {
    let name = entry.file_name().to_str()?.to_owned();
    (name.len() == 2 && name.bytes().all(|b| b.is_ascii_hexdigit())).then_some(name)
}

/// Reads `size` bytes (the whole file, whose length is known to be
/// `size`); `None` when it turns out shorter or longer (changed since).
fn read_exactly(file: File, size: u64) -> Option<Vec<u8>> {
    let mut bytes = Vec::with_capacity(usize::try_from(size).ok()?);
    file.take(size.checked_add(1)?)
        .read_to_end(&mut bytes)
        .ok()?;
    (bytes.len() as u64 == size).then_some(bytes)
}

/// The blake3 of the regular file at `path`, read in a fixed buffer.
fn hash_file(path: &Path) -> io::Result<Digest> {
    let (file, _) = files::open_regular(path)?;
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(file)?;
    Ok(Digest::from(hasher.finalize()))
}

fn read_dir(dir: &Path) -> Result<Vec<fs::DirEntry>> {
    match fs::read_dir(dir) {
        Ok(entries) => Ok(entries.filter_map(|e| e.ok()).collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(Error::io(dir, e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_two_hex_fan_out() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobDir::open(dir.path()).unwrap();
        let digest = blobs.put(b"content").unwrap();
        let hex = digest.to_hex();
        let want = dir.path().join("blobs").join(&hex[..2]).join(&hex[2..]);
        assert_eq!(fs::read(want).unwrap(), b"content");
        assert_eq!(fs::read_dir(dir.path().join("tmp")).unwrap().count(), 0);
    }

    #[test]
    fn wrong_length_file_is_replaced_on_put() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobDir::open(dir.path()).unwrap();
        let digest = blobs.put(b"abcdef").unwrap();
        fs::write(blobs.path(&digest), b"abc").unwrap();
        blobs.put(b"abcdef").unwrap();
        assert_eq!(blobs.get(&digest, 6).unwrap(), b"abcdef");
    }

    #[test]
    fn list_ignores_foreign_files() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobDir::open(dir.path()).unwrap();
        let digest = blobs.put(b"x").unwrap();
        fs::write(dir.path().join("blobs").join("README"), b"").unwrap();
        fs::create_dir_all(dir.path().join("blobs").join("zz")).unwrap();
        fs::write(dir.path().join("blobs").join("zz").join("nope"), b"").unwrap();
        let listed = blobs.list().unwrap();
        assert_eq!(listed, vec![BlobInfo { digest, size: 1 }]);
    }

    #[test]
    fn stale_tmp_files_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        let blobs = BlobDir::open(dir.path()).unwrap();
        fs::write(dir.path().join("tmp").join("1-0-dead"), b"partial").unwrap();
        assert_eq!(
            blobs.remove_stale_tmp(Duration::from_secs(3600)).unwrap(),
            0
        );
        assert_eq!(blobs.remove_stale_tmp(Duration::ZERO).unwrap(), 1);
    }
}
