//! The `Store` trait: the interface the engine and `krmgraph cache` use.
//!
//! Implementations provide a handful of primitives over step records and
//! blobs; everything built from them (a verified lookup, recording a step,
//! stats, gc, verify) is a provided method, so every store behaves alike.
//!
//! The contract every implementation keeps: a read never fails because of
//! what is stored. An undecodable record, a missing blob or a blob whose bytes
//! do not hash to its name reads as a miss and is removed. `Err` from a read
//! means the store itself failed (e.g. the index's I/O); callers treat it as a
//! miss plus a warning.

use std::collections::HashMap;
use std::path::Path;

use crate::gc;
use crate::record::now_ms;
use crate::{DecodeError, Digest, Output, RecordKind, Repair, Result, StepRecord};

/// A blob as listed by a store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobInfo {
    /// The blob's name: the blake3 of its content.
    pub digest: Digest,
    /// Its size in bytes as stored.
    pub size: u64,
}

/// A step found with all of its outputs, each verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    /// The record, with `last_used_ms` as it was before this lookup.
    pub record: StepRecord,
    /// The bytes of each output, in `record.outputs` order.
    pub outputs: Vec<Vec<u8>>,
}

/// What `krmgraph cache stats` shows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Decodable step records.
    pub records: u64,
    /// How many of them there are of each kind.
    pub kinds: std::collections::BTreeMap<RecordKind, u64>,
    /// Their size: key plus encoded record.
    pub record_bytes: u64,
    /// Blobs.
    pub blobs: u64,
    /// Their total size.
    pub blob_bytes: u64,
}

impl Stats {
    /// Counts `record`.
    pub(crate) fn count(&mut self, record: &StepRecord) {
        self.records += 1;
        self.record_bytes += gc::record_size(record);
        *self.kinds.entry(record.kind.clone()).or_default() += 1;
    }

    /// The size gc compares with its limit.
    pub fn total_bytes(&self) -> u64 {
        self.record_bytes + self.blob_bytes
    }
}

/// What a gc removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// What stood where the store's own files belong and was removed
    /// ([`Store::repair`]).
    pub repaired: Vec<Repair>,
    /// Step records removed (evicted, dangling or undecodable).
    pub records_removed: u64,
    /// Blobs removed.
    pub blobs_removed: u64,
    /// The store's size before.
    pub bytes_before: u64,
    /// The store's size after.
    pub bytes_after: u64,
}

/// What a verify found (and removed).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Blobs re-hashed.
    pub blobs_checked: u64,
    /// Blobs whose bytes did not match their name, or were unreadable.
    pub bad_blobs: Vec<Digest>,
    /// Records removed because they could not be decoded.
    pub bad_records: Vec<Digest>,
    /// Records removed because an output blob was gone (or bad).
    pub dangling_records: Vec<Digest>,
    /// What stood where the store's own files belong and was removed
    /// ([`Store::repair`]): a damaged marks file, a directory in its
    /// place, a file among the blob directories...
    pub repaired: Vec<Repair>,
}

impl VerifyReport {
    /// Whether nothing was wrong.
    pub fn is_clean(&self) -> bool {
        self.bad_blobs.is_empty()
            && self.bad_records.is_empty()
            && self.dangling_records.is_empty()
            && self.repaired.is_empty()
    }
}

/// A step cache: step key → [`StepRecord`], and blake3-named blobs.
///
/// Synchronous and shareable: rayon workers call it directly.
pub trait Store: Send + Sync {
    /// The record of step `key` without marking it used; an undecodable
    /// record is removed and reads as `None`.
    fn peek_step(&self, key: &Digest) -> Result<Option<StepRecord>>;

    /// Writes the record of step `key`, replacing any other.
    fn put_step(&self, key: &Digest, record: &StepRecord) -> Result<()>;

    /// Removes the record of step `key`; `false` if there was none.
    fn remove_step(&self, key: &Digest) -> Result<bool>;

    /// Every record, decoded or not, in key order. Nothing is removed here;
    /// the provided methods decide what to do with undecodable ones.
    fn steps(&self) -> Result<Vec<(Digest, Result<StepRecord, DecodeError>)>>;

    /// The verified bytes of blob `digest`, which its record says holds
    /// `size` bytes; a missing or bad blob (another size, other bytes) is
    /// `None` and a bad one is removed. A blob of another size is not read
    /// at all, so a huge file in its place costs no memory.
    fn get_blob(&self, digest: &Digest, size: u64) -> Result<Option<Vec<u8>>>;

    /// Whether blob `digest` hashes to its name, hashing it in bounded
    /// memory; a bad one is removed (a missing one is just `false`).
    fn check_blob(&self, digest: &Digest) -> Result<bool>;

    /// Stores `content` under its blake3 digest and returns the digest.
    fn put_blob(&self, content: &[u8]) -> Result<Digest>;

    /// [`Store::put_blob`] of the concatenation of `parts` (which a store
    /// may write without joining them).
    fn put_blob_parts(&self, parts: &[&[u8]]) -> Result<Digest> {
        self.put_blob(&parts.concat())
    }

    /// Whether blob `digest` is present (its bytes are not checked).
    fn contains_blob(&self, digest: &Digest) -> Result<bool>;

    /// Removes blob `digest`; `false` if there was none.
    fn remove_blob(&self, digest: &Digest) -> Result<bool>;

    /// Every blob with its size, in digest order.
    fn blobs(&self) -> Result<Vec<BlobInfo>>;

    /// Removes every record and blob.
    fn clear(&self) -> Result<()>;

    /// Marks `key`, so that [`is_marked`](crate::is_marked) finds it
    /// without opening the store. A store without a directory has no marks.
    fn mark(&self, _key: &Digest) -> Result<()> {
        Ok(())
    }

    /// Removes what stands where the store's own files belong but is not
    /// usable (a damaged marks file or a directory in its place, a file
    /// among the blob directories), and returns what it removed, with any
    /// repairs made when the store was opened. Called by [`Store::gc`] and
    /// [`Store::verify`].
    fn repair(&self) -> Result<Vec<Repair>> {
        Ok(Vec::new())
    }

    /// Makes earlier writes durable. Stores flush on their own as well; this
    /// is for the end of a render.
    fn flush(&self) -> Result<()> {
        Ok(())
    }

    /// The directory the store lives in, if it has one.
    fn location(&self) -> Option<&Path> {
        None
    }

    /// Removes what no read can use any more: temp files of crashed writers.
    /// Called by [`Store::gc`].
    fn sweep(&self) -> Result<()> {
        Ok(())
    }

    /// The record of step `key`, marked as used now.
    fn get_step(&self, key: &Digest) -> Result<Option<StepRecord>> {
        let Some(record) = self.peek_step(key)? else {
            return Ok(None);
        };
        let now = now_ms();
        if now > record.last_used_ms {
            let touched = StepRecord {
                last_used_ms: now,
                ..record.clone()
            };
            self.put_step(key, &touched)?;
        }
        Ok(Some(record))
    }

    /// Whether step `key` would be a hit: its record decodes and every
    /// output blob is present. Nothing is marked used and blobs are not
    /// re-hashed (for `krmgraph graph`).
    fn contains(&self, key: &Digest) -> Result<bool> {
        let Some(record) = self.peek_step(key)? else {
            return Ok(false);
        };
        for output in &record.outputs {
            if !self.contains_blob(&output.digest)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Step `key` with the verified bytes of all its outputs, or `None`. A
    /// record with a missing or bad output is removed, so the step re-runs and
    /// is recorded afresh.
    fn lookup(&self, key: &Digest) -> Result<Option<Hit>> {
        let Some(record) = self.get_step(key)? else {
            return Ok(None);
        };
        let mut outputs = Vec::with_capacity(record.outputs.len());
        for output in &record.outputs {
            match self.get_blob(&output.digest, output.size)? {
                Some(bytes) => outputs.push(bytes),
                None => {
                    self.remove_step(key)?;
                    return Ok(None);
                }
            }
        }
        Ok(Some(Hit { record, outputs }))
    }

    /// [`Store::lookup`] of a record that a shared level behind this store
    /// (a remote cache, [`crate::Tiered`]) may hold when this one does not:
    /// the engine asks this way only for the kinds of record that mean
    /// the same in any checkout. A store without such a level looks up
    /// locally.
    fn lookup_shared(&self, key: &Digest) -> Result<Option<Hit>> {
        self.lookup(key)
    }

    /// Says [`Store::lookup_shared`] of each of `keys` is coming (the
    /// engine's sibling subtrees): a store with a shared level behind it
    /// may ask that level for all of them at once. Never fails; a store
    /// without such a level does nothing.
    fn prefetch_shared(&self, keys: &[Digest]) {
        let _ = keys;
    }

    /// Records a successful step: writes each `(name, bytes)` output as a
    /// blob, then the record (last, so a record never points at a blob that
    /// was not written).
    fn record(
        &self,
        key: &Digest,
        kind: &RecordKind,
        outputs: &[(&str, &[u8])],
        meta: &[u8],
    ) -> Result<StepRecord> {
        let mut written = Vec::with_capacity(outputs.len());
        for (name, bytes) in outputs {
            written.push(Output {
                name: (*name).to_owned(),
                digest: self.put_blob(bytes)?,
                size: bytes.len() as u64,
            });
        }
        let record = StepRecord::new(kind.clone(), written, meta.to_vec());
        self.put_step(key, &record)?;
        Ok(record)
    }

    /// Counts records and blobs.
    fn stats(&self) -> Result<Stats> {
        let mut stats = Stats::default();
        for (_, record) in self.steps()? {
            if let Ok(record) = record {
                stats.count(&record);
            }
        }
        for blob in self.blobs()? {
            stats.blobs += 1;
            stats.blob_bytes += blob.size;
        }
        Ok(stats)
    }

    /// Shrinks the store to at most `max_bytes` ([`Stats::total_bytes`]).
    ///
    /// First the layout is repaired ([`Store::repair`]), then goes what
    /// nothing can use: undecodable records, records whose blobs are gone,
    /// blobs no record references, stale temp files. Then
    /// records are evicted least recently used first, each taking along the
    /// blobs only it referenced, until the store fits.
    ///
    /// Blobs are written before their record, so a gc running while another
    /// thread records a step could take its fresh blobs: run gc when no puts
    /// are in flight (other processes cannot reach the store; it is locked).
    fn gc(&self, max_bytes: u64) -> Result<GcReport> {
        let mut report = GcReport {
            repaired: self.repair()?,
            ..GcReport::default()
        };
        self.sweep()?;
        let mut steps = Vec::new();
        for (key, record) in self.steps()? {
            match record {
                Ok(record) => steps.push((key, record)),
                Err(_) => report.records_removed += u64::from(self.remove_step(&key)?),
            }
        }
        let plan = gc::plan(&steps, &self.blobs()?, max_bytes);
        for key in &plan.steps {
            report.records_removed += u64::from(self.remove_step(key)?);
        }
        for digest in &plan.blobs {
            report.blobs_removed += u64::from(self.remove_blob(digest)?);
        }
        report.bytes_before = plan.bytes_before;
        report.bytes_after = plan.bytes_after;
        Ok(report)
    }

    /// Repairs the layout, re-hashes every blob (as a stream) and checks
    /// every record, removing what is bad.
    fn verify(&self) -> Result<VerifyReport> {
        let mut report = VerifyReport {
            repaired: self.repair()?,
            ..VerifyReport::default()
        };
        let mut good = HashMap::new();
        for blob in self.blobs()? {
            report.blobs_checked += 1;
            if self.check_blob(&blob.digest)? {
                good.insert(blob.digest, blob.size);
            } else {
                report.bad_blobs.push(blob.digest);
            }
        }
        for (key, record) in self.steps()? {
            let Ok(record) = record else {
                self.remove_step(&key)?;
                report.bad_records.push(key);
                continue;
            };
            if !outputs_present(&record, &good) {
                self.remove_step(&key)?;
                report.dangling_records.push(key);
            }
        }
        Ok(report)
    }
}

/// Whether every output of `record` is among the `good` blobs (digest →
/// size) with the size the record says: a record naming a missing, bad or
/// other-sized blob could only ever miss.
pub(crate) fn outputs_present(record: &StepRecord, good: &HashMap<Digest, u64>) -> bool {
    record
        .outputs
        .iter()
        .all(|output| good.get(&output.digest) == Some(&output.size))
}
