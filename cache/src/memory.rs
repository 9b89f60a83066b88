//! `MemoryStore`: the [`Store`] in a process's memory.
//!
//! For the engine's tests and for renders that must not touch the disk. It
//! keeps records encoded, as the sled store does, so the same decoding and
//! removal paths run; blobs are still verified on read.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::{BlobInfo, DecodeError, Digest, Result, StepRecord, Store};

/// A store that lives and dies with the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    steps: RwLock<BTreeMap<Digest, Vec<u8>>>,
    blobs: RwLock<BTreeMap<Digest, Arc<[u8]>>>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }
}

// A panic while a lock is held cannot leave a map half-updated (every
// operation is one insert or remove), so a poisoned lock is still usable.
fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|e| e.into_inner())
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(|e| e.into_inner())
}

impl Store for MemoryStore {
    fn peek_step(&self, key: &Digest) -> Result<Option<StepRecord>> {
        let Some(bytes) = read(&self.steps).get(key).cloned() else {
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
        write(&self.steps).insert(*key, record.encode());
        Ok(())
    }

    fn remove_step(&self, key: &Digest) -> Result<bool> {
        Ok(write(&self.steps).remove(key).is_some())
    }

    fn steps(&self) -> Result<Vec<(Digest, Result<StepRecord, DecodeError>)>> {
        let steps = read(&self.steps);
        Ok(steps
            .iter()
            .map(|(key, bytes)| (*key, StepRecord::decode(bytes)))
            .collect())
    }

    fn get_blob(&self, digest: &Digest, size: u64) -> Result<Option<Vec<u8>>> {
        let Some(bytes) = read(&self.blobs).get(digest).cloned() else {
            return Ok(None);
        };
        if bytes.len() as u64 == size && Digest::of(&bytes) == *digest {
            return Ok(Some(bytes.to_vec()));
        }
        self.remove_blob(digest)?;
        Ok(None)
    }

    fn check_blob(&self, digest: &Digest) -> Result<bool> {
        let Some(bytes) = read(&self.blobs).get(digest).cloned() else {
            return Ok(false);
        };
        if Digest::of(&bytes) == *digest {
            return Ok(true);
        }
        self.remove_blob(digest)?;
        Ok(false)
    }

    fn put_blob(&self, content: &[u8]) -> Result<Digest> {
        let digest = Digest::of(content);
        write(&self.blobs).insert(digest, content.into());
        Ok(digest)
    }

    fn contains_blob(&self, digest: &Digest) -> Result<bool> {
        Ok(read(&self.blobs).contains_key(digest))
    }

    fn remove_blob(&self, digest: &Digest) -> Result<bool> {
        Ok(write(&self.blobs).remove(digest).is_some())
    }

    fn blobs(&self) -> Result<Vec<BlobInfo>> {
        let blobs = read(&self.blobs);
        Ok(blobs
            .iter()
            .map(|(digest, bytes)| BlobInfo {
                digest: *digest,
                size: bytes.len() as u64,
            })
            .collect())
    }

    fn clear(&self) -> Result<()> {
        write(&self.steps).clear();
        write(&self.blobs).clear();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undecodable_record_is_a_miss_and_removed() {
        let store = MemoryStore::new();
        let key = Digest::of(b"step");
        store
            .record(
                &key,
                &crate::RecordKind::new("test", 1),
                &[("out", b"bytes")],
                b"",
            )
            .unwrap();
        write(&store.steps).insert(key, vec![1, 2, 3]);
        assert_eq!(store.lookup(&key).unwrap(), None);
        assert!(read(&store.steps).is_empty());
    }

    #[test]
    fn altered_blob_is_a_miss_and_removed() {
        let store = MemoryStore::new();
        let key = Digest::of(b"step");
        let record = store
            .record(
                &key,
                &crate::RecordKind::new("test", 1),
                &[("out", b"bytes")],
                b"",
            )
            .unwrap();
        let digest = record.outputs[0].digest;
        write(&store.blobs).insert(digest, Arc::from(&b"bytez"[..]));
        assert_eq!(store.lookup(&key).unwrap(), None);
        assert!(!store.contains_blob(&digest).unwrap());
        assert!(!store.contains(&key).unwrap());
    }
}
