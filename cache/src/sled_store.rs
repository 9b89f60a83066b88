//! `SledStore`: the default [`Store`], a cache directory on disk.
//!
//! ```text
//! <dir>/
//!   CACHEDIR.TAG        marks the directory as a cache, for backup tools and
//!                       for the store (written first; a non-empty directory
//!                       without it is not used, repaired or cleared)
//!   lock                held (flock) by the one process using the store
//!   index/              sled database; tree "steps-v1": step key → record
//!   marks               keys a reader tests without opening (see `marks`)
//!   blobs/ab/cdef…      output blobs named by blake3 (see `blobs`)
//!   tmp/                blobs being written
//! ```
//!
//! sled allows one process per database and reports a second one only as an
//! I/O error with a message, so the store takes its own non-blocking lock on
//! `lock` first: a second krmgraph gets [`Error::Locked`] at once. Nothing
//! in the directory is followed through a symlink: `lock`, `blobs/` and
//! `tmp/` must be a regular file and directories of their own. sled is
//! beta and has open corruption-after-crash reports; the index is only a
//! cache, so an index that will not open (error or panic) is deleted and
//! opened empty. The blobs survive and gc reclaims them once unreferenced.

use std::fs::{self, File, TryLockError};
use std::io::{self, Read};
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use crate::blobs::BlobDir;
use crate::error::{is_read_only_kind, What};
use crate::{files, location, marks, repair};
use crate::{BlobInfo, DecodeError, Digest, Error, Repair, Result, StepRecord, Store};

/// The sled tree of step records. The suffix is the record schema
/// generation: a layout change that old code must not read gets a new tree.
const STEPS_TREE: &str = "steps-v1";

/// Temp files older than this belong to no live writer.
const STALE_TMP: Duration = Duration::from_secs(3600);

const CACHEDIR_TAG: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
# This file is a cache directory tag created by krmgraph.\n\
# For information about cache directory tags see https://bford.info/cachedir/\n";

/// The on-disk store: sled index plus blob files, in one directory.
#[derive(Debug)]
pub struct SledStore {
    dir: PathBuf,
    blobs: BlobDir,
    /// Always `Some` until `drop`, which takes it to close sled before the
    /// process lock goes (fields drop after `Drop::drop`).
    index: Option<Index>,
    /// Set when sled panicked: its state is unknown, so it is not touched
    /// again in this process.
    broken: AtomicBool,
    /// Bytes of blobs and records this process added (see
    /// [`SledStore::size_estimate`]).
    added: AtomicU64,
    /// What [`SledStore::open_repairing`] removed, until [`Store::repair`]
    /// reports it.
    repaired: Mutex<Vec<Repair>>,
    _lock: File,
}

#[derive(Debug)]
pub(crate) struct Index {
    db: sled::Db,
    pub(crate) steps: sled::Tree,
}

impl SledStore {
    /// Opens (creating) the store in `dir`.
    ///
    /// Fails with [`Error::Locked`] when another process has it open, and
    /// with [`Error::Open`] when it cannot be used even after discarding the
    /// index; callers render uncached then.
    ///
    /// `dir` must be a krmgraph cache (its `CACHEDIR.TAG` says so), or
    /// missing or empty, when it becomes one; any other directory is an
    /// [`Error::Open`] saying so, and nothing in it is created, used or
    /// removed (`--cache-dir` may name the wrong directory).
    ///
    /// It repairs nothing but a broken index: what stands where the lock
    /// file, `blobs/` or `tmp/` belong (a symlink included: the store
    /// follows no link in its directory) is an [`Error::Open`] naming it (a
    /// render must not delete what it did not write; the maintenance
    /// commands use [`SledStore::open_repairing`]).
    pub fn open(dir: &Path) -> Result<SledStore> {
        claim(dir)?;
        let lock = lock(dir)?;
        SledStore::open_in(dir, lock, Vec::new())
    }

    /// [`SledStore::open`], removing whatever stands where the lock file,
    /// `blobs/` or `tmp/` belong but is of the wrong kind (a symlink
    /// included: it could lead out of the cache). [`Store::repair`] (run by
    /// gc and verify) reports what was removed. For `krmgraph cache
    /// verify|gc|clear`.
    ///
    /// Nothing is removed in a directory that is not a krmgraph cache (an
    /// [`Error::Open`] says so), and nothing but a lock file of the wrong
    /// kind, which no process can hold, before this process holds the
    /// store's lock: a cache in use is [`Error::Locked`], unchanged.
    pub fn open_repairing(dir: &Path) -> Result<SledStore> {
        claim(dir)?;
        let mut repaired: Vec<Repair> = repair::lock_file(dir)?.into_iter().collect();
        let lock = lock(dir)?;
        repaired.extend(repair::layout(dir)?);
        SledStore::open_in(dir, lock, repaired)
    }

    /// The rest of an open, holding the process lock.
    fn open_in(dir: &Path, lock: File, repaired: Vec<Repair>) -> Result<SledStore> {
        let blobs = BlobDir::open(dir)?;
        let index = open_index(dir)?;
        Ok(SledStore {
            dir: dir.to_path_buf(),
            index: Some(index),
            blobs,
            broken: AtomicBool::new(false),
            added: AtomicU64::new(0),
            repaired: Mutex::new(repaired),
            _lock: lock,
        })
    }

    /// Opens the store in `explicit`, or where [`location::resolve_dir`]
    /// says.
    pub fn open_default(explicit: Option<&Path>) -> Result<SledStore> {
        SledStore::open(&location::resolve_dir(explicit)?)
    }

    /// Runs `op` on the index. A panic inside sled (it has panicked on
    /// corrupt data) is caught and turns the index off for this process.
    fn index<T>(&self, op: impl FnOnce(&sled::Tree, &sled::Db) -> sled::Result<T>) -> Result<T> {
        let broken = || Error::Broken {
            path: self.dir.clone(),
        };
        if self.broken.load(Ordering::Relaxed) {
            return Err(broken());
        }
        let index = self
            .index
            .as_ref()
            .expect("the index is taken only by drop");
        match panic::catch_unwind(AssertUnwindSafe(|| op(&index.steps, &index.db))) {
            Ok(result) => Ok(result?),
            Err(_) => {
                self.broken.store(true, Ordering::Relaxed);
                Err(broken())
            }
        }
    }

    /// An upper bound of [`Stats::total_bytes`](crate::Stats::total_bytes)
    /// without counting: the size saved by the last
    /// [`SledStore::save_size_estimate`] plus what this process added
    /// since. `None` when none was saved, or when it is time to count again
    /// anyway (after 64 saves without a count): a process that died before
    /// saving left its additions out.
    pub fn size_estimate(&self) -> Option<u64> {
        let saved = self.index(|_, db| db.get(SIZE_ESTIMATE_KEY)).ok()??;
        let (size, saves) = decode_estimate(&saved)?;
        (saves < RECOUNT_EVERY).then(|| size + self.added.load(Ordering::Relaxed))
    }

    /// Saves `size` as the store's size for [`SledStore::size_estimate`]:
    /// `counted` when it was just counted, else an estimate.
    pub fn save_size_estimate(&self, size: u64, counted: bool) -> Result<()> {
        let saves = match self.index(|_, db| db.get(SIZE_ESTIMATE_KEY))? {
            Some(saved) if !counted => decode_estimate(&saved).map_or(0, |(_, n)| n + 1),
            _ => 0,
        };
        let mut bytes = size.to_le_bytes().to_vec();
        bytes.extend(saves.to_le_bytes());
        self.index(|_, db| db.insert(SIZE_ESTIMATE_KEY, bytes))?;
        self.added.store(0, Ordering::Relaxed);
        Ok(())
    }

    /// The size of the sled index on disk (sled's own estimate).
    pub fn index_disk_bytes(&self) -> Result<u64> {
        self.index(|_, db| db.size_on_disk())
    }
}

/// Where the size estimate lives: sled's default tree, beside the steps.
const SIZE_ESTIMATE_KEY: &[u8] = b"size-estimate";

/// An estimate saved this many times without a count is counted again.
const RECOUNT_EVERY: u64 = 64;

/// `u64` size, `u64` saves since the last count; little-endian.
fn decode_estimate(bytes: &[u8]) -> Option<(u64, u64)> {
    let (size, saves) = bytes.split_at_checked(8)?;
    Some((
        u64::from_le_bytes(size.try_into().ok()?),
        u64::from_le_bytes(saves.try_into().ok()?),
    ))
}

/// The cache directory tag's name.
const TAG: &str = "CACHEDIR.TAG";

/// The line a cache directory tag begins with
/// (<https://bford.info/cachedir/>).
const TAG_SIGNATURE: &str = "Signature: 8a477f597d28d172789f06886806bc55\n";

/// The line of [`CACHEDIR_TAG`] that says krmgraph wrote it: a tag of
/// another program (a cargo `target/` has one) marks a cache that is not
/// ours to use or clear.
const TAG_OURS: &str = "\n# This file is a cache directory tag created by krmgraph.\n";

/// Temp files of a tag being written: this, then the writer's pid and a
/// number.
const TAG_TMP_PREFIX: &str = "CACHEDIR.TAG.tmp.";

/// Makes sure `dir` is a krmgraph cache before anything in it is used or
/// changed: it must hold krmgraph's `CACHEDIR.TAG`, or be missing or
/// empty, when it is created and the tag written (first, so that every
/// directory the store has written to is tagged). Anything else is an
/// [`Error::Open`] saying so: `--cache-dir ~/project` must not fill the
/// project with a cache, nor let gc, verify or clear remove its files.
fn claim(dir: &Path) -> Result<()> {
    files::create_dir(dir).map_err(|e| Error::open_at(dir, What::Create, dir, e))?;
    if is_tagged(dir)? {
        return Ok(());
    }
    let mut entries = fs::read_dir(dir).map_err(|e| Error::open_at(dir, What::Read, dir, e))?;
    // A tag being written by a process creating the cache at this moment
    // does not make it a foreign directory.
    let empty = entries.all(|entry| {
        entry.is_ok_and(|e| e.file_name().to_string_lossy().starts_with(TAG_TMP_PREFIX))
    });
    if empty {
        return write_tag(dir);
    }
    // A process creating the cache writes the tag before anything else:
    // what made the directory not empty may be its.
    if is_tagged(dir)? {
        return Ok(());
    }
    Err(Error::Open {
        path: dir.to_path_buf(),
        cause: format!(
            "`{}` is not a krmgraph cache: it is not empty and has no `{TAG}` \
             written by krmgraph, so krmgraph neither uses nor changes anything in it \
             (give --cache-dir or KRMGRAPH_CACHE_DIR the cache's directory, \
             or a new or empty one)",
            dir.display()
        )
        .into(),
    })
}

/// Whether `dir` holds krmgraph's cache directory tag. A tag that is not
/// a regular file, or not krmgraph's, is no tag; one that cannot be read
/// is an error.
fn is_tagged(dir: &Path) -> Result<bool> {
    let path = dir.join(TAG);
    // Missing, or not a regular file (`InvalidData`): no tag.
    let no_tag = |e: &io::Error| {
        matches!(
            e.kind(),
            io::ErrorKind::NotFound | io::ErrorKind::InvalidData
        )
    };
    let file = match files::open_regular(&path) {
        Ok((file, _)) => file,
        Err(e) if no_tag(&e) => return Ok(false),
        Err(e) => return Err(Error::open_at(dir, What::Read, &path, e)),
    };
    let mut text = Vec::new();
    file.take(4096)
        .read_to_end(&mut text)
        .map_err(|e| Error::open_at(dir, What::Read, &path, e))?;
    let text = String::from_utf8_lossy(&text);
    Ok(text.starts_with(TAG_SIGNATURE) && text.contains(TAG_OURS))
}

/// Numbers tag temp files within this process.
static TAG_TMP: AtomicU64 = AtomicU64::new(0);

/// Writes the tag into the new cache `dir`: a temp file renamed into
/// place, so no process sees half a tag.
fn write_tag(dir: &Path) -> Result<()> {
    let n = TAG_TMP.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!("{TAG_TMP_PREFIX}{}.{n}", std::process::id()));
    let path = dir.join(TAG);
    let written = fs::write(&tmp, CACHEDIR_TAG).and_then(|()| fs::rename(&tmp, &path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(|e| Error::open_at(dir, What::Create, &path, e))
}

/// Takes the store's process lock without waiting. Only a regular file is
/// locked (see `files::open_own_file`).
fn lock(dir: &Path) -> Result<File> {
    let path = dir.join("lock");
    let file = files::open_own_file(&path)
        .map_err(|e| Error::open_at(dir, What::OpenForWriting, &path, e))?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(Error::Locked {
            path: dir.to_path_buf(),
        }),
        Err(TryLockError::Error(e)) => Err(Error::open_at(dir, What::Lock, &path, e)),
    }
}

/// Opens the index, discarding it once if it will not open.
fn open_index(dir: &Path) -> Result<Index> {
    let index = dir.join("index");
    let mut first = match try_open_index(&index) {
        Ok(opened) => return Ok(opened),
        Err(e) => e,
    };
    // We hold the process lock, so sled's own lock can only be held by a
    // sled handle of this process that is still shutting down: its flusher
    // and its thread pool's writes drop the database file after the handle
    // is gone, and on a loaded machine that has taken over half a second
    // (`watch` reopens the store for each render). Wait for it, up to 5 s.
    for _ in 0..SLED_LOCK_POLLS {
        if !is_sled_lock_error(&*first) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        first = match try_open_index(&index) {
            Ok(opened) => return Ok(opened),
            Err(e) => e,
        };
    }
    // Our lock makes sled's redundant, but if sled still finds its own lock
    // taken, a live process is using this index: never delete it.
    if is_sled_lock_error(&*first) {
        return Err(Error::Locked {
            path: dir.to_path_buf(),
        });
    }
    // An index this process may not write is not broken but someone
    // else's (a cache shared read-only): never delete it, say why.
    if let Some(denied) = permission_error(&*first) {
        return Err(Error::open_at(dir, What::OpenForWriting, &index, denied));
    }
    files::remove_any(&index).map_err(|e| Error::open_at(dir, What::RemoveIndex, &index, e))?;
    try_open_index(&index).map_err(|e| Error::Open {
        path: dir.to_path_buf(),
        cause: format!(
            "the index `{}` will not open even empty: {e}",
            index.display()
        )
        .into(),
    })
}

/// How many times, 20 ms apart, `open_index` retries sled's own lock.
const SLED_LOCK_POLLS: u32 = 250;

/// The OS error of a sled failure that means "no write access here".
fn permission_error(e: &(dyn std::error::Error + Send + Sync + 'static)) -> Option<io::Error> {
    match e.downcast_ref::<sled::Error>() {
        Some(sled::Error::Io(io)) if is_read_only_kind(io.kind()) => {
            Some(match io.raw_os_error() {
                Some(code) => io::Error::from_raw_os_error(code),
                None => io::Error::new(io.kind(), io.to_string()),
            })
        }
        _ => None,
    }
}

/// Whether sled failed to take its lock: sled 0.34 reports it only as an
/// I/O error with this text (`Config::try_lock`).
fn is_sled_lock_error(e: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    matches!(
        e.downcast_ref::<sled::Error>(),
        Some(sled::Error::Io(io)) if io.to_string().contains("could not acquire lock")
    )
}

type BoxError = crate::error::Cause;

pub(crate) fn try_open_index(index: &Path) -> Result<Index, BoxError> {
    // sled has been seen to panic on a corrupt database (sled#1533); that
    // must cost the cache, not the render.
    let opened = panic::catch_unwind(AssertUnwindSafe(|| {
        let db = sled::Config::new()
            .path(index)
            // Records are small; a large page cache only adds to a render's peak memory.
            .cache_capacity(4 << 20)
            .open()?;
        let steps = db.open_tree(STEPS_TREE)?;
        Ok::<_, sled::Error>(Index { db, steps })
    }));
    match opened {
        Ok(Ok(opened)) => Ok(opened),
        Ok(Err(e)) => Err(Box::new(e)),
        Err(panic) => Err(panic_message(&panic).into()),
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    let text = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    format!("the index panicked while opening: {text}")
}

/// A panic while the list was held cannot leave it half-updated (one
/// `take`), so a poisoned lock is still usable.
fn lock_ignoring_poison<T>(lock: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    lock.lock().unwrap_or_else(|e| e.into_inner())
}

fn key_of(bytes: &[u8]) -> Option<Digest> {
    Some(Digest::from_bytes(bytes.try_into().ok()?))
}

impl Drop for SledStore {
    fn drop(&mut self) {
        let Some(index) = self.index.take() else {
            return;
        };
        if self.broken.load(Ordering::Relaxed) {
            // Dropping sled flushes, which on a state that already panicked
            // may panic or hang again. Leak it; the process lock still goes,
            // and the next open discards the index if it is broken.
            std::mem::forget(index);
        } else {
            // A panic from sled's flush must not escape a drop.
            let _ = panic::catch_unwind(AssertUnwindSafe(|| drop(index)));
        }
    }
}

impl Store for SledStore {
    fn peek_step(&self, key: &Digest) -> Result<Option<StepRecord>> {
        let Some(bytes) = self.index(|steps, _| steps.get(key.as_bytes()))? else {
            return Ok(None);
        };
        match StepRecord::decode(&bytes) {
            Ok(record) => Ok(Some(record)),
            Err(_) => {
                self.remove_step(key)?;
                Ok(None)
            }
        }
    }

    fn put_step(&self, key: &Digest, record: &StepRecord) -> Result<()> {
        let bytes = record.encode();
        let size = (Digest::LEN + bytes.len()) as u64;
        self.added.fetch_add(size, Ordering::Relaxed);
        self.index(|steps, _| steps.insert(key.as_bytes(), bytes))?;
        Ok(())
    }

    fn remove_step(&self, key: &Digest) -> Result<bool> {
        let removed = self.index(|steps, _| steps.remove(key.as_bytes()))?;
        Ok(removed.is_some())
    }

    fn steps(&self) -> Result<Vec<(Digest, Result<StepRecord, DecodeError>)>> {
        let mut steps = Vec::new();
        let entries = self.index(|steps, _| steps.iter().collect::<sled::Result<Vec<_>>>())?;
        for (key, value) in entries {
            match key_of(&key) {
                Some(key) => steps.push((key, StepRecord::decode(&value))),
                // Not a key we wrote; nothing can ever look it up.
                None => {
                    self.index(|steps, _| steps.remove(key))?;
                }
            }
        }
        Ok(steps)
    }

    fn get_blob(&self, digest: &Digest, size: u64) -> Result<Option<Vec<u8>>> {
        Ok(self.blobs.get(digest, size))
    }

    fn check_blob(&self, digest: &Digest) -> Result<bool> {
        self.blobs.check(digest, true)
    }

    fn put_blob(&self, content: &[u8]) -> Result<Digest> {
        // Counted whether or not the blob was there: an estimate may be
        // high, never low.
        self.added
            .fetch_add(content.len() as u64, Ordering::Relaxed);
        self.blobs.put(content)
    }

    fn put_blob_parts(&self, parts: &[&[u8]]) -> Result<Digest> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        self.added.fetch_add(len as u64, Ordering::Relaxed);
        self.blobs.put_parts(parts)
    }

    fn contains_blob(&self, digest: &Digest) -> Result<bool> {
        Ok(self.blobs.contains(digest))
    }

    fn remove_blob(&self, digest: &Digest) -> Result<bool> {
        self.blobs.remove(digest)
    }

    fn blobs(&self) -> Result<Vec<BlobInfo>> {
        self.blobs.list()
    }

    /// Removes every record, the size estimate, the marks (whatever is at
    /// their name) and everything in `blobs/` and `tmp/`, going on past a
    /// failure so that one undeletable entry does not leave the rest;
    /// returns the first failure. Symlinks are removed, never followed.
    /// Entries of the directory that are not the store's are left alone:
    /// the directory may be one the user pointed the cache at by mistake.
    fn clear(&self) -> Result<()> {
        let index = self.index(|steps, db| {
            steps.clear()?;
            db.remove(SIZE_ESTIMATE_KEY)?;
            db.flush()
        });
        let marks = marks::clear(&self.dir).map_err(|e| Error::io(self.dir.join("marks"), e));
        let blobs = self.blobs.clear();
        index.map(|_| ()).and(marks).and(blobs)
    }

    fn mark(&self, key: &Digest) -> Result<()> {
        marks::add(&self.dir, key).map_err(|e| Error::io(self.dir.join("marks"), e))
    }

    fn repair(&self) -> Result<Vec<Repair>> {
        let mut repaired = std::mem::take(&mut *lock_ignoring_poison(&self.repaired));
        let marks = marks::remove_if_damaged(&self.dir)
            .map_err(|e| Error::io(self.dir.join("marks"), e))?;
        repaired.extend(marks);
        repaired.extend(self.blobs.repair_fans()?);
        Ok(repaired)
    }

    fn flush(&self) -> Result<()> {
        self.index(|_, db| db.flush())?;
        Ok(())
    }

    fn location(&self) -> Option<&Path> {
        Some(&self.dir)
    }

    fn sweep(&self) -> Result<()> {
        self.blobs.remove_stale_tmp(STALE_TMP).map(|_| ())
    }
}
