//! `Tiered`: the local store first, a shared remote cache behind it.
//!
//! The local store answers everything. A [`Store::lookup_shared`] that
//! misses locally asks the [`Remote`]; what it brings back (already
//! verified by the remote layer against the digests it was sent under) is
//! written into the local store, so the next lookup is local. Records
//! written through this store whose kind is shared are queued, and go up
//! only when the caller says the render succeeded
//! ([`Tiered::upload_pending`]); a failed render's records never leave
//! the machine.
//!
//! The remote never fails or changes a render: a remote error, timeout or
//! bad blob is a miss, remembered as the one warning of the run
//! ([`Tiered::take_warning`]), after which the remote is not asked again
//! (reads), or not written again (uploads). This module knows nothing
//! about protocols: [`Remote`] implementations live in `krmgraph-remote`.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::{BlobInfo, DecodeError, Digest, Hit, Repair, Result, StepRecord, Store};

/// A record to upload, with its output blobs' bytes (in
/// `record.outputs` order).
pub struct Upload {
    /// The record's key.
    pub key: Digest,
    /// The record.
    pub record: StepRecord,
    /// Each output's bytes.
    pub outputs: Vec<Vec<u8>>,
    /// Keep each output as one blob on the server, not as content-defined
    /// chunks (the record is read alone, and in one round trip).
    pub whole: bool,
}

/// Why a remote call did not give an answer: a miss to the render, a
/// warning to the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError {
    /// What went wrong, without secrets (headers are never in it).
    pub message: String,
    /// The server refused the credentials (HTTP 401/403, gRPC
    /// UNAUTHENTICATED/PERMISSION_DENIED): on upload, writes stop for the
    /// run.
    pub auth: bool,
}

impl RemoteError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> RemoteError {
        RemoteError {
            message: message.into(),
            auth: false,
        }
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Bytes moved by one remote call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moved {
    /// Bytes received (bodies).
    pub down: u64,
    /// Bytes sent (bodies).
    pub up: u64,
}

/// A shared cache server, as the tiered store uses it: records by key,
/// each with its output blobs. Implementations verify every blob they
/// return against the digest it was stored under and against the record's
/// blake3 names; a record they cannot fully verify is a miss or an error,
/// never a hit.
pub trait Remote: Send + Sync {
    /// The record of `key` with the bytes of all its outputs, `None` when
    /// the server has no (complete) record for it.
    fn fetch(&self, key: &Digest) -> Result<(Option<Hit>, Moved), RemoteError>;

    /// [`Remote::fetch`] of each of `keys`, in order. A protocol that can
    /// asks for them at once (the render's sibling subtrees are asked for
    /// together), so that the round trips are those of one fetch, not one
    /// fetch's per key.
    fn fetch_many(&self, keys: &[Digest]) -> Result<(Vec<Option<Hit>>, Moved), RemoteError> {
        let mut hits = Vec::with_capacity(keys.len());
        let mut moved = Moved::default();
        for key in keys {
            let (hit, m) = self.fetch(key)?;
            moved.down += m.down;
            moved.up += m.up;
            hits.push(hit);
        }
        Ok((hits, moved))
    }

    /// Stores each record and the blobs it names; blobs the server already
    /// has are not sent again.
    fn upload(&self, uploads: &[Upload]) -> Result<Moved, RemoteError>;

    /// The server, for messages (no credentials).
    fn describe(&self) -> String;
}

/// What the remote did in a run, for the summary line and `--explain`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Lookups the remote answered with a record.
    pub hits: u64,
    /// Lookups it had nothing for.
    pub misses: u64,
    /// Body bytes received.
    pub bytes_down: u64,
    /// Body bytes sent.
    pub bytes_up: u64,
    /// Records uploaded.
    pub uploaded: u64,
}

/// The local store, then a remote ([`Remote`]).
pub struct Tiered {
    local: Arc<dyn Store>,
    remote: Arc<dyn Remote>,
    /// The record kinds that go to the remote (the engine's choice).
    shared: HashSet<String>,
    /// Those of them whose blobs stay whole ([`Tiered::whole_kinds`]).
    whole: HashSet<String>,
    upload: bool,
    pending: Mutex<Vec<Digest>>,
    reads_off: AtomicBool,
    writes_off: AtomicBool,
    warning: Mutex<Option<String>>,
    /// Records prefetched for lookups to come ([`Store::prefetch_shared`]).
    prefetched: Mutex<HashMap<Digest, Hit>>,
    /// Keys the remote lacked this run: not asked about again.
    absent: Mutex<HashSet<Digest>>,
    hits: AtomicU64,
    misses: AtomicU64,
    down: AtomicU64,
    up: AtomicU64,
    uploaded: AtomicU64,
}

impl Tiered {
    /// `local` backed by `remote`; records of the kinds named in `shared`
    /// are looked up and (with `upload`) written remotely.
    pub fn new(
        local: Arc<dyn Store>,
        remote: Arc<dyn Remote>,
        shared: &[&str],
        upload: bool,
    ) -> Tiered {
        Tiered {
            local,
            remote,
            shared: shared.iter().map(|s| (*s).to_owned()).collect(),
            whole: HashSet::new(),
            upload,
            pending: Mutex::default(),
            reads_off: AtomicBool::new(false),
            writes_off: AtomicBool::new(false),
            warning: Mutex::default(),
            prefetched: Mutex::default(),
            absent: Mutex::default(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            down: AtomicU64::new(0),
            up: AtomicU64::new(0),
            uploaded: AtomicU64::new(0),
        }
    }

    /// Records of the kinds `whole` go up with each output as one blob:
    /// those read alone (a whole render), for which a round trip per
    /// chunk would cost more than the bytes chunks save.
    pub fn whole_kinds(mut self, whole: &[&str]) -> Tiered {
        self.whole = whole.iter().map(|s| (*s).to_owned()).collect();
        self
    }

    /// What the remote did so far.
    pub fn stats(&self) -> RemoteStats {
        RemoteStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            bytes_down: self.down.load(Ordering::Relaxed),
            bytes_up: self.up.load(Ordering::Relaxed),
            uploaded: self.uploaded.load(Ordering::Relaxed),
        }
    }

    /// The first remote failure of the run, once.
    pub fn take_warning(&self) -> Option<String> {
        lock(&self.warning).take()
    }

    /// Records written since the last upload, waiting for one.
    pub fn pending(&self) -> usize {
        lock(&self.pending).len()
    }

    /// Forgets the queued records: the render failed.
    pub fn discard_pending(&self) {
        lock(&self.pending).clear();
    }

    /// Uploads the records queued since the last call (each with the
    /// blobs it names, read back from the local store). Returns how many
    /// went up; a failure is the run's warning and stops uploads.
    pub fn upload_pending(&self) -> usize {
        let keys = std::mem::take(&mut *lock(&self.pending));
        // A remote that failed on a read is left alone for the run.
        if keys.is_empty() || self.writes_off.load(Ordering::SeqCst) {
            return 0;
        }
        let mut seen = HashSet::new();
        let uploads: Vec<Upload> = keys
            .into_iter()
            .filter(|key| seen.insert(*key))
            .filter_map(|key| self.local_upload(key))
            .collect();
        match self.remote.upload(&uploads) {
            Ok(moved) => {
                self.count(moved);
                self.uploaded
                    .fetch_add(uploads.len() as u64, Ordering::Relaxed);
                uploads.len()
            }
            Err(e) => {
                self.writes_off.store(true, Ordering::SeqCst);
                self.warn(format!("upload to {} failed: {e}", self.remote.describe()));
                0
            }
        }
    }

    /// The local record of `key` with its blobs, if it is still whole.
    fn local_upload(&self, key: Digest) -> Option<Upload> {
        let record = self.local.peek_step(&key).ok()??;
        let mut outputs = Vec::with_capacity(record.outputs.len());
        for output in &record.outputs {
            outputs.push(self.local.get_blob(&output.digest, output.size).ok()??);
        }
        Some(Upload {
            key,
            whole: self.whole.contains(&record.kind.name),
            record,
            outputs,
        })
    }

    fn count(&self, moved: Moved) {
        self.down.fetch_add(moved.down, Ordering::Relaxed);
        self.up.fetch_add(moved.up, Ordering::Relaxed);
    }

    /// Keeps the first failure as the run's warning.
    fn warn(&self, message: String) {
        let mut warning = lock(&self.warning);
        if warning.is_none() {
            *warning = Some(message);
        }
    }

    /// Asks the remote for `key` (unless it said this run it lacks it);
    /// keeps what it has locally.
    fn fetch(&self, key: &Digest) -> Option<Hit> {
        if self.reads_off.load(Ordering::SeqCst) {
            return None;
        }
        if lock(&self.absent).contains(key) {
            self.misses.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let hit = match self.remote.fetch(key) {
            Ok((hit, moved)) => {
                self.count(moved);
                hit
            }
            Err(e) => {
                self.read_failed(e);
                return None;
            }
        };
        let Some(hit) = self.usable(hit) else {
            self.misses.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        self.hits.fetch_add(1, Ordering::Relaxed);
        self.keep(key, &hit);
        Some(hit)
    }

    /// Asks the remote for those of `keys` neither store has yet, at once;
    /// hits wait in memory for their lookup (and are kept locally),
    /// misses are remembered as misses for the run.
    fn prefetch(&self, keys: &[Digest]) {
        if self.reads_off.load(Ordering::SeqCst) {
            return;
        }
        let mut seen = HashSet::new();
        let wanted: Vec<Digest> = keys
            .iter()
            .copied()
            .filter(|key| seen.insert(*key))
            .filter(|key| {
                !lock(&self.prefetched).contains_key(key) && !lock(&self.absent).contains(key)
            })
            .filter(|key| matches!(self.local.peek_step(key), Ok(None)))
            .collect();
        // One key is no better asked now than at its lookup.
        if wanted.len() < 2 {
            return;
        }
        let hits = match self.remote.fetch_many(&wanted) {
            Ok((hits, moved)) => {
                self.count(moved);
                hits
            }
            Err(e) => {
                self.read_failed(e);
                return;
            }
        };
        for (key, hit) in wanted.into_iter().zip(hits) {
            match self.usable(hit) {
                Some(hit) => {
                    self.keep(&key, &hit);
                    lock(&self.prefetched).insert(key, hit);
                }
                None => {
                    lock(&self.absent).insert(key);
                }
            }
        }
    }

    /// A hit of a shared kind; another kind is a miss.
    fn usable(&self, hit: Option<Hit>) -> Option<Hit> {
        hit.filter(|h| self.shared.contains(&h.record.kind.name))
    }

    /// Gradle's rule: a remote that failed once is not asked again this
    /// run (a dead server would cost a timeout per step).
    fn read_failed(&self, e: RemoteError) {
        self.reads_off.store(true, Ordering::SeqCst);
        self.writes_off.store(true, Ordering::SeqCst);
        self.warn(format!(
            "the remote cache {} failed, going on without it: {e}",
            self.remote.describe()
        ));
    }

    /// Writes a remote hit into the local store: blobs first, then the
    /// record, as `Store::record` does. A local write failure costs only
    /// the next run's lookup.
    fn keep(&self, key: &Digest, hit: &Hit) {
        let stored = hit
            .outputs
            .iter()
            .all(|bytes| self.local.put_blob(bytes).is_ok());
        if stored {
            let _ = self.local.put_step(key, &hit.record);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Store for Tiered {
    fn peek_step(&self, key: &Digest) -> Result<Option<StepRecord>> {
        self.local.peek_step(key)
    }

    fn put_step(&self, key: &Digest, record: &StepRecord) -> Result<()> {
        self.local.put_step(key, record)?;
        if self.upload && self.shared.contains(&record.kind.name) {
            lock(&self.pending).push(*key);
        }
        Ok(())
    }

    fn remove_step(&self, key: &Digest) -> Result<bool> {
        self.local.remove_step(key)
    }

    fn steps(&self) -> Result<Vec<(Digest, Result<StepRecord, DecodeError>)>> {
        self.local.steps()
    }

    fn get_blob(&self, digest: &Digest, size: u64) -> Result<Option<Vec<u8>>> {
        self.local.get_blob(digest, size)
    }

    fn check_blob(&self, digest: &Digest) -> Result<bool> {
        self.local.check_blob(digest)
    }

    fn put_blob(&self, content: &[u8]) -> Result<Digest> {
        self.local.put_blob(content)
    }

    fn put_blob_parts(&self, parts: &[&[u8]]) -> Result<Digest> {
        self.local.put_blob_parts(parts)
    }

    fn contains_blob(&self, digest: &Digest) -> Result<bool> {
        self.local.contains_blob(digest)
    }

    fn remove_blob(&self, digest: &Digest) -> Result<bool> {
        self.local.remove_blob(digest)
    }

    fn blobs(&self) -> Result<Vec<BlobInfo>> {
        self.local.blobs()
    }

    fn clear(&self) -> Result<()> {
        self.local.clear()
    }

    fn mark(&self, key: &Digest) -> Result<()> {
        self.local.mark(key)
    }

    fn repair(&self) -> Result<Vec<Repair>> {
        self.local.repair()
    }

    fn flush(&self) -> Result<()> {
        self.local.flush()
    }

    fn location(&self) -> Option<&Path> {
        self.local.location()
    }

    fn sweep(&self) -> Result<()> {
        self.local.sweep()
    }

    // Reading a record marks it used in the local store only: a touch is
    // not a new record, and must not be queued for upload.
    fn get_step(&self, key: &Digest) -> Result<Option<StepRecord>> {
        self.local.get_step(key)
    }

    fn lookup(&self, key: &Digest) -> Result<Option<Hit>> {
        self.local.lookup(key)
    }

    fn lookup_shared(&self, key: &Digest) -> Result<Option<Hit>> {
        if let Some(hit) = lock(&self.prefetched).remove(key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(Some(hit));
        }
        match self.local.lookup(key)? {
            Some(hit) => Ok(Some(hit)),
            None => Ok(self.fetch(key)),
        }
    }

    fn prefetch_shared(&self, keys: &[Digest]) {
        self.prefetch(keys);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MemoryStore, RecordKind};
    use std::collections::HashMap;

    /// A remote in memory: records as the tiered store hands them over.
    #[derive(Default)]
    struct Fake {
        records: Mutex<HashMap<Digest, Hit>>,
        fail: AtomicBool,
        calls: AtomicU64,
    }

    impl Remote for Fake {
        fn fetch(&self, key: &Digest) -> Result<(Option<Hit>, Moved), RemoteError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.fail.load(Ordering::SeqCst) {
                return Err(RemoteError::new("connection refused"));
            }
            Ok((lock(&self.records).get(key).cloned(), Moved::default()))
        }

        fn upload(&self, uploads: &[Upload]) -> Result<Moved, RemoteError> {
            for u in uploads {
                let hit = Hit {
                    record: u.record.clone(),
                    outputs: u.outputs.clone(),
                };
                lock(&self.records).insert(u.key, hit);
            }
            Ok(Moved { down: 0, up: 1 })
        }

        fn describe(&self) -> String {
            "fake".into()
        }
    }

    fn tiered(remote: &Arc<Fake>, upload: bool) -> Tiered {
        Tiered::new(
            Arc::new(MemoryStore::new()),
            remote.clone(),
            &["step"],
            upload,
        )
    }

    #[test]
    fn a_record_goes_up_after_success_and_comes_down_into_another_store() {
        let remote = Arc::new(Fake::default());
        let a = tiered(&remote, true);
        let key = Digest::of(b"k");
        a.record(&key, &RecordKind::new("step", 1), &[("o", b"out")], b"")
            .unwrap();
        a.record(&Digest::of(b"s"), &RecordKind::new("slot", 1), &[], b"")
            .unwrap();
        assert_eq!(a.pending(), 1, "only shared kinds are queued");
        assert_eq!(a.upload_pending(), 1);
        let b = tiered(&remote, true);
        assert!(
            b.lookup(&key).unwrap().is_none(),
            "plain lookups stay local"
        );
        let hit = b.lookup_shared(&key).unwrap().expect("remote hit");
        assert_eq!(hit.outputs, vec![b"out".to_vec()]);
        assert_eq!(b.stats().hits, 1);
        assert_eq!(b.pending(), 0, "a fetched record is not uploaded again");
        assert!(b.local.lookup(&key).unwrap().is_some(), "kept locally");
    }

    #[test]
    fn a_failed_render_uploads_nothing_and_read_only_queues_nothing() {
        let remote = Arc::new(Fake::default());
        let a = tiered(&remote, true);
        a.record(&Digest::of(b"k"), &RecordKind::new("step", 1), &[], b"")
            .unwrap();
        a.discard_pending();
        assert_eq!(a.upload_pending(), 0);
        let ro = tiered(&remote, false);
        ro.record(&Digest::of(b"k"), &RecordKind::new("step", 1), &[], b"")
            .unwrap();
        assert_eq!(ro.pending(), 0);
        assert!(lock(&remote.records).is_empty());
    }

    #[test]
    fn one_failure_is_one_warning_and_the_remote_is_not_asked_again() {
        let remote = Arc::new(Fake::default());
        remote.fail.store(true, Ordering::SeqCst);
        let t = tiered(&remote, true);
        for i in 0..3u8 {
            assert!(t.lookup_shared(&Digest::of(&[i])).unwrap().is_none());
        }
        assert_eq!(remote.calls.load(Ordering::SeqCst), 1);
        assert!(t.take_warning().unwrap().contains("connection refused"));
        assert_eq!(t.take_warning(), None);
    }

    #[test]
    fn a_prefetched_key_is_asked_for_once_and_counted_when_looked_up() {
        let remote = Arc::new(Fake::default());
        let a = tiered(&remote, true);
        let (hit, gone, local) = (Digest::of(b"hit"), Digest::of(b"gone"), Digest::of(b"l"));
        let step = RecordKind::new("step", 1);
        a.record(&hit, &step, &[("o", b"out")], b"").unwrap();
        a.upload_pending();
        let b = tiered(&remote, true);
        b.local.record(&local, &step, &[], b"").unwrap();
        b.prefetch_shared(&[hit, gone, local, hit]);
        assert_eq!(
            remote.calls.load(Ordering::SeqCst),
            2,
            "each key the local store lacks, once"
        );
        assert_eq!(b.stats().hits, 0, "counted at the lookup");
        assert_eq!(b.lookup_shared(&hit).unwrap().unwrap().outputs, [b"out"]);
        assert!(b.lookup_shared(&gone).unwrap().is_none());
        assert!(b.lookup_shared(&local).unwrap().is_some());
        assert_eq!(
            remote.calls.load(Ordering::SeqCst),
            2,
            "nothing asked twice"
        );
        assert_eq!((b.stats().hits, b.stats().misses), (1, 1));
        assert!(b.local.lookup(&hit).unwrap().is_some(), "kept locally");
    }
}
