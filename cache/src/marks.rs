//! Marks: a small set of keys in one checksummed file beside the index
//! (`<dir>/marks`), which a reader tests without opening the store or
//! taking its lock ([`is_marked`]).
//!
//! The engine marks the whole-render key of a tree that is a render's fixed
//! point, so that rendering an unchanged tree need not open sled at all
//! (opening it costs about as much as reading a 1,700-file tree).
//!
//! The file keeps the newest [`MAX_MARKS`] keys. Only the process holding
//! the store's lock writes it; it writes a temp file and renames it over
//! the old one, so a reader sees one or the other, whole. A file that does
//! not check out reads as no marks: a mark is a hint, and a missing one
//! only means opening the store to look the key up there.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::Digest;

/// The file's name in the store's directory.
const FILE: &str = "marks";
/// The format, first in the file.
const MAGIC: &[u8; 8] = b"krmgmk01";
/// Keys kept: 128 KiB of them, enough for every tree a machine renders.
pub(crate) const MAX_MARKS: usize = 4096;

const KEY: usize = 32;

fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// Whether `key` is marked in the store at `dir`. Reads only the marks
/// file; a missing, unreadable or damaged one reads as no marks.
pub fn is_marked(dir: &Path, key: &Digest) -> bool {
    read(dir).is_some_and(|keys| keys.contains(key))
}

/// The marked keys, oldest first; `None` when there is no usable file.
pub(crate) fn read(dir: &Path) -> Option<Vec<Digest>> {
    decode(&fs::read(path(dir)).ok()?)
}

/// Marks `key`, newest; the oldest go past [`MAX_MARKS`].
pub(crate) fn add(dir: &Path, key: &Digest) -> io::Result<()> {
    let mut keys = read(dir).unwrap_or_default();
    if keys.last() == Some(key) {
        return Ok(());
    }
    keys.retain(|k| k != key);
    keys.push(*key);
    let excess = keys.len().saturating_sub(MAX_MARKS);
    keys.drain(..excess);
    write(dir, &keys)
}

/// Removes every mark.
pub(crate) fn clear(dir: &Path) -> io::Result<()> {
    match fs::remove_file(path(dir)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Whether the marks file is damaged (present but not usable); a damaged
/// one is removed.
pub(crate) fn remove_if_damaged(dir: &Path) -> io::Result<bool> {
    if !path(dir).exists() || read(dir).is_some() {
        return Ok(false);
    }
    clear(dir).map(|()| true)
}

fn write(dir: &Path, keys: &[Digest]) -> io::Result<()> {
    let bytes = encode(keys);
    // No fsync: after a crash the file is old, or damaged and so ignored.
    let tmp = dir.join(format!("{FILE}.tmp.{}", std::process::id()));
    let written = fs::write(&tmp, bytes).and_then(|()| fs::rename(&tmp, path(dir)));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// `MAGIC`, the keys, then the blake3 of everything before it.
fn encode(keys: &[Digest]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(MAGIC.len() + (keys.len() + 1) * KEY);
    bytes.extend(MAGIC);
    for key in keys {
        bytes.extend(key.as_bytes());
    }
    let sum = blake3::hash(&bytes);
    bytes.extend(sum.as_bytes());
    bytes
}

fn decode(bytes: &[u8]) -> Option<Vec<Digest>> {
    let body = bytes.strip_prefix(MAGIC.as_slice())?;
    if body.len() < KEY || body.len() % KEY != 0 {
        return None;
    }
    let (keys, sum) = body.split_at(body.len() - KEY);
    if blake3::hash(&bytes[..bytes.len() - KEY]).as_bytes() != sum {
        return None;
    }
    keys.chunks_exact(KEY)
        .map(|k| Some(Digest::from_bytes(k.try_into().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u32) -> Digest {
        Digest::of(&n.to_le_bytes())
    }

    #[test]
    fn marks_are_found_without_a_store() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_marked(dir.path(), &key(1)));
        add(dir.path(), &key(1)).unwrap();
        add(dir.path(), &key(2)).unwrap();
        add(dir.path(), &key(1)).unwrap();
        assert!(is_marked(dir.path(), &key(1)));
        assert!(is_marked(dir.path(), &key(2)));
        assert!(!is_marked(dir.path(), &key(3)));
        // Marking again moves a key to the newest end, once.
        assert_eq!(read(dir.path()).unwrap(), vec![key(2), key(1)]);
        clear(dir.path()).unwrap();
        assert!(!is_marked(dir.path(), &key(1)));
    }

    #[test]
    fn the_oldest_marks_go_first() {
        let dir = tempfile::tempdir().unwrap();
        let keys: Vec<Digest> = (0..MAX_MARKS as u32 + 2).map(key).collect();
        write(dir.path(), &keys[..MAX_MARKS]).unwrap();
        add(dir.path(), &keys[MAX_MARKS]).unwrap();
        add(dir.path(), &keys[MAX_MARKS + 1]).unwrap();
        let kept = read(dir.path()).unwrap();
        assert_eq!(kept.len(), MAX_MARKS);
        assert_eq!(kept.first(), Some(&keys[2]));
        assert!(!is_marked(dir.path(), &keys[1]));
        assert!(is_marked(dir.path(), &keys[MAX_MARKS + 1]));
    }

    #[test]
    fn a_damaged_file_reads_as_no_marks() {
        let dir = tempfile::tempdir().unwrap();
        add(dir.path(), &key(1)).unwrap();
        add(dir.path(), &key(2)).unwrap();
        let file = path(dir.path());
        let good = fs::read(&file).unwrap();
        for damaged in [
            good[..good.len() - 1].to_vec(),
            {
                let mut b = good.clone();
                b[MAGIC.len() + 3] ^= 1;
                b
            },
            b"krmgmk01".to_vec(),
            Vec::new(),
        ] {
            fs::write(&file, &damaged).unwrap();
            assert!(!is_marked(dir.path(), &key(1)), "{damaged:?}");
        }
        assert!(remove_if_damaged(dir.path()).unwrap());
        assert!(!file.exists());
        assert!(!remove_if_damaged(dir.path()).unwrap());
        // Marking over a damaged file starts a new one.
        fs::write(&file, b"junk").unwrap();
        add(dir.path(), &key(3)).unwrap();
        assert_eq!(read(dir.path()).unwrap(), vec![key(3)]);
    }
}
