//! `SledStore`: the default [`Store`], a cache directory on disk.
//!
//! ```text
//! <dir>/
//!   CACHEDIR.TAG        marks the directory as a cache for backup tools
//!   lock                held (flock) by the one process using the store
//!   index/              sled database; tree "steps-v1": step key → record
//!   marks               keys a reader tests without opening (see `marks`)
//!   blobs/ab/cdef…      output blobs named by blake3 (see `blobs`)
//!   tmp/                blobs being written
//! ```
//!
//! sled allows one process per database and reports a second one only as an
//! I/O error with a message, so the store takes its own non-blocking lock on
//! `lock` first: a second krmgraph gets [`Error::Locked`] at once. sled is
//! beta and has open corruption-after-crash reports; the index is only a
//! cache, so an index that will not open (error or panic) is deleted and
//! opened empty. The blobs survive and gc reclaims them once unreferenced.

use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::blobs::BlobDir;
use crate::{location, marks, BlobInfo, DecodeError, Digest, Error, Result, StepRecord, Store};

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
    _lock: File,
}

#[derive(Debug)]
struct Index {
    db: sled::Db,
    steps: sled::Tree,
}

impl SledStore {
    /// Opens (creating) the store in `dir`.
    ///
    /// Fails with [`Error::Locked`] when another process has it open, and
    /// with [`Error::Open`] when it cannot be used even after discarding the
    /// index; callers render uncached then.
    pub fn open(dir: &Path) -> Result<SledStore> {
        let open_err = |source: io::Error| Error::Open {
            path: dir.to_path_buf(),
            source: Box::new(source),
        };
        fs::create_dir_all(dir).map_err(open_err)?;
        let lock = lock(dir)?;
        if !dir.join("CACHEDIR.TAG").exists() {
            // Only a hint for backup tools; not worth failing over.
            let _ = fs::write(dir.join("CACHEDIR.TAG"), CACHEDIR_TAG);
        }
        let blobs = BlobDir::open(dir).map_err(open_err)?;
        let index = open_index(dir)?;
        Ok(SledStore {
            dir: dir.to_path_buf(),
            index: Some(index),
            blobs,
            broken: AtomicBool::new(false),
            added: AtomicU64::new(0),
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

/// Takes the store's process lock without waiting.
fn lock(dir: &Path) -> Result<File> {
    let path = dir.join("lock");
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| Error::Open {
            path: dir.to_path_buf(),
            source: Box::new(e),
        })?;
    match file.try_lock() {
        Ok(()) => Ok(file),
        Err(TryLockError::WouldBlock) => Err(Error::Locked {
            path: dir.to_path_buf(),
        }),
        Err(TryLockError::Error(e)) => Err(Error::Open {
            path: dir.to_path_buf(),
            source: Box::new(e),
        }),
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
    remove_any(&index).map_err(|e| Error::Open {
        path: dir.to_path_buf(),
        source: Box::new(e),
    })?;
    try_open_index(&index).map_err(|source| Error::Open {
        path: dir.to_path_buf(),
        source,
    })
}

/// How many times, 20 ms apart, `open_index` retries sled's own lock.
const SLED_LOCK_POLLS: u32 = 250;

/// Whether sled failed to take its lock: sled 0.34 reports it only as an
/// I/O error with this text (`Config::try_lock`).
fn is_sled_lock_error(e: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    matches!(
        e.downcast_ref::<sled::Error>(),
        Some(sled::Error::Io(io)) if io.to_string().contains("could not acquire lock")
    )
}

/// Removes `path` whatever it is (a broken index may even be a file).
fn remove_any(path: &Path) -> io::Result<()> {
    let removed = match fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) => Err(e),
    };
    match removed {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        other => other,
    }
}

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn try_open_index(index: &Path) -> Result<Index, BoxError> {
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

    fn get_blob(&self, digest: &Digest) -> Result<Option<Vec<u8>>> {
        Ok(self.blobs.get(digest))
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

    fn clear(&self) -> Result<()> {
        self.index(|steps, db| {
            steps.clear()?;
            db.flush()
        })?;
        marks::clear(&self.dir).map_err(|e| Error::io(self.dir.join("marks"), e))?;
        self.blobs.clear()
    }

    fn mark(&self, key: &Digest) -> Result<()> {
        marks::add(&self.dir, key).map_err(|e| Error::io(self.dir.join("marks"), e))
    }

    fn remove_damaged_marks(&self) -> Result<bool> {
        marks::remove_if_damaged(&self.dir).map_err(|e| Error::io(self.dir.join("marks"), e))
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
