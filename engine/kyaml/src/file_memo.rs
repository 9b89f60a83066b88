//! What renders remember of the files they wrote: the blake3 of a file's
//! bytes, under a fingerprint of the resources it was written from and the
//! writer's options. An in-place render encodes every file of the tree to
//! find the few an edit changed; a file whose fingerprint is known, and
//! which already holds bytes with the remembered digest, takes those bytes
//! instead of being encoded.
//!
//! The fingerprint is the item memo's over each resource with nothing left
//! out (kinds, styles, tags, values, anchors, comments, order), in the
//! order the file is written, so resources with equal fingerprints encode
//! to equal bytes. `KRMGRAPH_CHECK_DIRECT=1` (CI) encodes such files anyway
//! and fails on a difference.
//!
//! A [`FileMemo`] is a value its owner passes down (one render's, or a
//! `watch` session's across its renders) and bounded; [`FileMemo::export`]
//! and [`FileMemo::import`] pass the entries a render used on to the next
//! process through the step cache.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::item_memo::{self, Fingerprint, FingerprintMap};
use krmgraph_yaml::Node;

/// The entries the memo keeps before it starts over.
const LIMIT: usize = 1 << 20;

/// A file's fingerprint → the blake3 of its bytes, and whether the memo's
/// owner used the entry.
type Entries = FingerprintMap<(Fingerprint, bool)>;

/// The file memo (see the module doc).
#[derive(Default)]
pub struct FileMemo {
    entries: Mutex<Entries>,
    /// Files learnt that an import did not give.
    learnt: AtomicUsize,
    /// Whether an export was imported (only the first is).
    imported: AtomicBool,
}

impl std::fmt::Debug for FileMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileMemo")
            .field("entries", &self.entries().len())
            .field("learnt", &self.learnt())
            .finish_non_exhaustive()
    }
}

/// The fingerprint of a file written from `nodes` (in the order they are
/// written) by a writer described by `options`.
pub fn key(nodes: &[Node], options: &[u8]) -> Fingerprint {
    let mut h = blake3::Hasher::new();
    h.update(b"krmgraph file memo v1\0");
    h.update(&(options.len() as u64).to_le_bytes());
    h.update(options);
    h.update(&(nodes.len() as u64).to_le_bytes());
    for node in nodes {
        h.update(&item_memo::fingerprint_skipping(node, &[]));
    }
    *h.finalize().as_bytes()
}

impl FileMemo {
    fn entries(&self) -> MutexGuard<'_, Entries> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The blake3 of the bytes a file with fingerprint `key` was written
    /// as.
    pub fn known(&self, key: &Fingerprint) -> Option<Fingerprint> {
        let mut entries = self.entries();
        let (digest, used) = entries.get_mut(key)?;
        *used = true;
        Some(*digest)
    }

    /// Remembers that a file with fingerprint `key` was written as `bytes`.
    pub fn learn(&self, key: Fingerprint, bytes: &[u8]) {
        let digest = *blake3::hash(bytes).as_bytes();
        let mut entries = self.entries();
        if entries.get(&key).map(|(known, _)| *known) != Some(digest) {
            self.learnt.fetch_add(1, Ordering::Relaxed);
        }
        if entries.len() >= LIMIT {
            entries.clear();
        }
        entries.insert(key, (digest, true));
    }

    /// How many files this memo learnt that an import did not give it.
    pub fn learnt(&self) -> usize {
        self.learnt.load(Ordering::Relaxed)
    }

    /// The entries used, for a later process to [`FileMemo::import`];
    /// `None` when there are none. Checksummed as the item memo's.
    pub fn export(&self) -> Option<Vec<u8>> {
        item_memo::framed(EXPORT_HEADER, |out| {
            let mut count = 0u32;
            for (key, (digest, _)) in self.entries().iter().filter(|(_, (_, used))| *used) {
                count += 1;
                out.extend_from_slice(key);
                out.extend_from_slice(digest);
            }
            count
        })
    }

    /// Knows the entries of an [`FileMemo::export`] (as not yet used; the
    /// first one given only). Anything wrong with `bytes` (another version,
    /// damage) and nothing is imported. Returns how many entries were.
    pub fn import(&self, bytes: &[u8]) -> usize {
        if self.imported.swap(true, Ordering::SeqCst) {
            return 0;
        }
        let Some(decoded) = decode_export(bytes) else {
            return 0;
        };
        let count = decoded.len();
        let mut entries = self.entries();
        for (key, digest) in decoded {
            entries.entry(key).or_insert((digest, false));
        }
        count
    }
}

/// The start of an export: what wrote it. Another version's is not read
/// (its writer may write other bytes).
const EXPORT_HEADER: &[u8] =
    concat!("krmgraph file memo v1 ", env!("CARGO_PKG_VERSION"), "\n").as_bytes();

fn decode_export(bytes: &[u8]) -> Option<Vec<(Fingerprint, Fingerprint)>> {
    let (count, mut r) = item_memo::unframed(bytes, EXPORT_HEADER)?;
    let mut decoded = Vec::new();
    for _ in 0..count {
        let key: Fingerprint = r.take(32)?.try_into().ok()?;
        let digest: Fingerprint = r.take(32)?.try_into().ok()?;
        decoded.push((key, digest));
    }
    r.is_done().then_some(decoded)
}

#[cfg(test)]
mod tests {
    use super::*;
    use krmgraph_yaml::decode::parse_documents;

    fn nodes(text: &str) -> Vec<Node> {
        parse_documents(text.as_bytes()).unwrap()
    }

    #[test]
    fn the_key_sees_values_comments_styles_order_and_options() {
        let base = key(&nodes("a: 1\nb: x\n"), b"o");
        for other in [
            "a: 2\nb: x\n",
            "a: 1\nb: x # c\n",
            "a: 1\nb: 'x'\n",
            "b: x\na: 1\n",
        ] {
            assert_ne!(key(&nodes(other), b"o"), base, "{other}");
        }
        assert_ne!(key(&nodes("a: 1\nb: x\n"), b"p"), base);
        assert_eq!(key(&nodes("a: 1\nb: x\n"), b"o"), base);
        let two = nodes("a: 1\n---\nb: 2\n");
        let swapped = [two[1].clone(), two[0].clone()];
        assert_ne!(key(&two, b"o"), key(&swapped, b"o"));
    }

    #[test]
    fn an_export_holds_what_was_used_and_a_damaged_one_is_refused() {
        let memo = FileMemo::default();
        let key = key(&nodes("file memo export test: 1\n"), b"o");
        memo.learn(key, b"bytes");
        let export = memo.export().expect("one entry was used");
        let decoded = decode_export(&export).unwrap();
        let entry = decoded.iter().find(|(k, _)| *k == key).expect("exported");
        assert_eq!(entry.1, *blake3::hash(b"bytes").as_bytes());
        let mut damaged = export.clone();
        let middle = damaged.len() / 2;
        damaged[middle] ^= 1;
        assert!(decode_export(&damaged).is_none());
        assert!(decode_export(&export[..export.len() - 1]).is_none());
    }
}
