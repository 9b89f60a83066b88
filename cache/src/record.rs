//! `StepRecord`: what the index keeps per step key, and its byte encoding.
//!
//! Records stay small (output digests, sizes, times and a little opaque
//! engine metadata); the outputs themselves are blobs. The encoding is
//! hand-written and length-prefixed so it cannot change under us with a
//! serialisation crate's version, and it starts with a schema version byte:
//! a record of another version decodes as an error, which the stores treat as
//! a miss and remove.
//!
//! Version 2, all integers little-endian:
//!
//! ```text
//! u8   version (2)
//! u32  kind name length, kind name (UTF-8)
//! u32  kind version      the engine's format version of that kind
//! u64  created_ms        unix time in milliseconds
//! u64  last_used_ms      unix time in milliseconds
//! u32  output count, then per output:
//!        u32 name length, name (UTF-8), 32-byte blake3 digest, u64 size
//! u32  meta length, meta bytes
//! ```
//!
//! Nothing may follow the meta bytes.

use std::time::{SystemTime, UNIX_EPOCH};

use crate::Digest;

/// The record schema version written by [`StepRecord::encode`]. Bump it when
/// the layout above changes; old records then read as misses.
pub const RECORD_VERSION: u8 = 2;

/// What kind of record this is, as the engine names it (`step`,
/// `subtree`, ...), and the version of that kind's format. The store only
/// counts records by kind ([`crate::Stats::kinds`]); the engine treats a
/// record of another kind or version under a key as a miss, so a format
/// change of one kind leaves the others' records usable.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordKind {
    /// The kind's name.
    pub name: String,
    /// Its format version.
    pub version: u32,
}

impl RecordKind {
    /// The kind `name`, format `version`.
    pub fn new(name: &str, version: u32) -> RecordKind {
        RecordKind {
            name: name.to_string(),
            version,
        }
    }
}

impl std::fmt::Display for RecordKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} v{}", self.name, self.version)
    }
}

/// One output of a step: a name the engine chooses (e.g. `resources`,
/// `results`) and the blob holding its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// The engine's name for this output.
    pub name: String,
    /// The blob holding the output's bytes.
    pub digest: Digest,
    /// The blob's length in bytes.
    pub size: u64,
}

/// What the index maps a step key to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepRecord {
    /// What kind of record it is.
    pub kind: RecordKind,
    /// The step's outputs, in the engine's order.
    pub outputs: Vec<Output>,
    /// Small engine-defined bytes (e.g. duration, an input summary for
    /// explaining misses). The store never looks inside.
    pub meta: Vec<u8>,
    /// When the record was first written, unix milliseconds.
    pub created_ms: u64,
    /// When the record was last written or read, unix milliseconds; gc
    /// evicts the smallest first.
    pub last_used_ms: u64,
}

/// Why record bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The version byte is not [`RECORD_VERSION`] (or the record is empty).
    #[error("unknown step record version {0:?}")]
    Version(Option<u8>),
    /// The bytes end inside a field.
    #[error("step record is truncated")]
    Truncated,
    /// An output or kind name is not UTF-8.
    #[error("step record has a non-UTF-8 name")]
    Name,
    /// Bytes follow the last field.
    #[error("step record has {0} trailing bytes")]
    Trailing(usize),
}

impl StepRecord {
    /// A record of `kind` for `outputs` created and used now.
    pub fn new(kind: RecordKind, outputs: Vec<Output>, meta: Vec<u8>) -> StepRecord {
        let now = now_ms();
        StepRecord {
            kind,
            outputs,
            meta,
            created_ms: now,
            last_used_ms: now,
        }
    }

    /// The total size of the output blobs.
    pub fn output_bytes(&self) -> u64 {
        self.outputs.iter().map(|o| o.size).sum()
    }

    /// The record's bytes in the version-2 layout.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + self.meta.len() + 64 * self.outputs.len());
        out.push(RECORD_VERSION);
        put_bytes(&mut out, self.kind.name.as_bytes());
        out.extend_from_slice(&self.kind.version.to_le_bytes());
        out.extend_from_slice(&self.created_ms.to_le_bytes());
        out.extend_from_slice(&self.last_used_ms.to_le_bytes());
        out.extend_from_slice(&len_u32(self.outputs.len()).to_le_bytes());
        for output in &self.outputs {
            put_bytes(&mut out, output.name.as_bytes());
            out.extend_from_slice(output.digest.as_bytes());
            out.extend_from_slice(&output.size.to_le_bytes());
        }
        put_bytes(&mut out, &self.meta);
        out
    }

    /// Decodes bytes written by [`StepRecord::encode`].
    pub fn decode(bytes: &[u8]) -> Result<StepRecord, DecodeError> {
        let mut r = Reader(bytes);
        let version = r.take(1).ok().map(|b| b[0]);
        if version != Some(RECORD_VERSION) {
            return Err(DecodeError::Version(version));
        }
        let name = String::from_utf8(r.bytes()?.to_vec()).map_err(|_| DecodeError::Name)?;
        let kind = RecordKind {
            name,
            version: r.u32()?,
        };
        let created_ms = r.u64()?;
        let last_used_ms = r.u64()?;
        let count = r.u32()?;
        // No preallocation from `count`: garbage must not make us allocate.
        let mut outputs = Vec::new();
        for _ in 0..count {
            let name = r.bytes()?;
            let name = String::from_utf8(name.to_vec()).map_err(|_| DecodeError::Name)?;
            let digest = Digest::from_bytes(r.take(32)?.try_into().expect("32 bytes"));
            let size = r.u64()?;
            outputs.push(Output { name, digest, size });
        }
        let meta = r.bytes()?.to_vec();
        if !r.0.is_empty() {
            return Err(DecodeError::Trailing(r.0.len()));
        }
        Ok(StepRecord {
            kind,
            outputs,
            meta,
            created_ms,
            last_used_ms,
        })
    }
}

/// The current unix time in milliseconds (0 if the clock is before 1970).
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

fn len_u32(len: usize) -> u32 {
    // Names and meta are small by contract; a length past u32 is a caller bug.
    u32::try_from(len).expect("step record field longer than 4 GiB")
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&len_u32(bytes.len()).to_le_bytes());
    out.extend_from_slice(bytes);
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError::Truncated);
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Ok(head)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let len = self.u32()? as usize;
        self.take(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StepRecord {
        StepRecord {
            kind: RecordKind::new("step", 3),
            outputs: vec![
                Output {
                    name: "resources".into(),
                    digest: Digest::of(b"a"),
                    size: 1,
                },
                Output {
                    name: "results".into(),
                    digest: Digest::of(b"bb"),
                    size: 2,
                },
            ],
            meta: b"ran in 12ms".to_vec(),
            created_ms: 1_700_000_000_000,
            last_used_ms: 1_700_000_000_500,
        }
    }

    #[test]
    fn round_trip() {
        let record = sample();
        assert_eq!(StepRecord::decode(&record.encode()).unwrap(), record);
        assert_eq!(record.output_bytes(), 3);
    }

    #[test]
    fn pinned_layout() {
        // Changing these bytes changes the on-disk format: bump RECORD_VERSION.
        let record = StepRecord {
            kind: RecordKind::new("k", 4),
            outputs: vec![Output {
                name: "o".into(),
                digest: Digest::from_bytes([7; 32]),
                size: 5,
            }],
            meta: vec![9],
            created_ms: 1,
            last_used_ms: 2,
        };
        let mut want = vec![2u8];
        want.extend_from_slice(&1u32.to_le_bytes());
        want.push(b'k');
        want.extend_from_slice(&4u32.to_le_bytes());
        want.extend_from_slice(&1u64.to_le_bytes());
        want.extend_from_slice(&2u64.to_le_bytes());
        want.extend_from_slice(&1u32.to_le_bytes());
        want.extend_from_slice(&1u32.to_le_bytes());
        want.push(b'o');
        want.extend_from_slice(&[7; 32]);
        want.extend_from_slice(&5u64.to_le_bytes());
        want.extend_from_slice(&1u32.to_le_bytes());
        want.push(9);
        assert_eq!(record.encode(), want);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample().encode();
        for len in 0..bytes.len() {
            assert!(StepRecord::decode(&bytes[..len]).is_err(), "prefix {len}");
        }
    }

    #[test]
    fn bad_version_and_trailing_bytes_are_errors() {
        let mut bytes = sample().encode();
        bytes.push(0);
        assert_eq!(StepRecord::decode(&bytes), Err(DecodeError::Trailing(1)));
        bytes[0] = 1;
        assert_eq!(
            StepRecord::decode(&bytes),
            Err(DecodeError::Version(Some(1)))
        );
    }

    #[test]
    fn huge_counts_in_garbage_do_not_allocate() {
        let mut bytes = vec![RECORD_VERSION];
        bytes.extend_from_slice(&[0; 8]);
        bytes.extend_from_slice(&[0; 16]);
        bytes.extend_from_slice(&u32::MAX.to_le_bytes());
        assert_eq!(StepRecord::decode(&bytes), Err(DecodeError::Truncated));
    }
}
