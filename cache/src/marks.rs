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
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::{files, Digest, Repair};

/// The file's name in the store's directory.
const FILE: &str = "marks";
/// Temp files of a write: this, then the writer's pid.
const TMP_PREFIX: &str = "marks.tmp.";
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

/// The largest file [`MAX_MARKS`] keys make.
const MAX_FILE: u64 = (MAGIC.len() + (MAX_MARKS + 1) * KEY) as u64;

/// The marked keys, oldest first; `None` when there is no usable file.
/// Only a regular file is read, and only up to the largest a marks file
/// can be: a FIFO or a huge file at this name must not stall or bloat
/// every render, which reads it first thing.
pub(crate) fn read(dir: &Path) -> Option<Vec<Digest>> {
    let (file, len) = files::open_regular(&path(dir)).ok()?;
    if len > MAX_FILE {
        return None;
    }
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(MAX_FILE + 1).read_to_end(&mut bytes).ok()?;
    decode(&bytes)
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
    write(dir, &keys).map_err(|e| in_the_way(dir, e))
}

/// A directory at the marks file's name makes every mark fail; the error
/// says so and how to repair it. A render does not remove it itself: it
/// never deletes what it did not write.
fn in_the_way(dir: &Path, e: io::Error) -> io::Error {
    if files::what_is(&path(dir)) != Some("a directory") {
        return e;
    }
    io::Error::new(
        e.kind(),
        format!(
            "{e}: a directory is in the way of the marks file (`krmgraph cache verify` removes it)"
        ),
    )
}

/// Removes every mark: the marks file, whatever is at its name (not
/// following a symlink), and temp files a crashed writer left.
pub(crate) fn clear(dir: &Path) -> io::Result<()> {
    files::remove_any(&path(dir))?;
    for entry in fs::read_dir(dir)?.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().starts_with(TMP_PREFIX) {
            files::remove_any(&entry.path())?;
        }
    }
    Ok(())
}

/// Removes what is at the marks file's name if it is not a usable marks
/// file (damaged, or a directory, FIFO, symlink...), saying what it was.
pub(crate) fn remove_if_damaged(dir: &Path) -> io::Result<Option<Repair>> {
    let file = path(dir);
    let Some(kind) = files::what_is(&file) else {
        return Ok(None);
    };
    if read(dir).is_some() {
        return Ok(None);
    }
    files::remove_any(&file)?;
    let reason = match kind {
        "a file" => "the damaged marks file".to_owned(),
        kind => format!("{kind} where the marks file belongs"),
    };
    Ok(Some(Repair::new(file, reason)))
}

fn write(dir: &Path, keys: &[Digest]) -> io::Result<()> {
    let bytes = encode(keys);
    // No fsync: after a crash the file is old, or damaged and so ignored.
    let tmp = dir.join(format!("{TMP_PREFIX}{}", std::process::id()));
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
        let repair = remove_if_damaged(dir.path()).unwrap().expect("removed");
        assert_eq!(repair.reason, "the damaged marks file");
        assert!(!file.exists());
        assert_eq!(remove_if_damaged(dir.path()).unwrap(), None);
        // Marking over a damaged file starts a new one.
        fs::write(&file, b"junk").unwrap();
        add(dir.path(), &key(3)).unwrap();
        assert_eq!(read(dir.path()).unwrap(), vec![key(3)]);
    }

    #[test]
    fn a_directory_at_the_name_fails_marking_with_the_cause_and_is_removed_by_repair() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(path(dir.path()).join("inside")).unwrap();
        assert!(!is_marked(dir.path(), &key(1)));
        let err = add(dir.path(), &key(1)).unwrap_err();
        assert!(
            err.to_string().contains("a directory is in the way"),
            "{err}"
        );
        let repair = remove_if_damaged(dir.path()).unwrap().expect("removed");
        assert_eq!(repair.reason, "a directory where the marks file belongs");
        add(dir.path(), &key(1)).unwrap();
        assert!(is_marked(dir.path(), &key(1)));
    }

    #[test]
    fn an_oversized_file_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        add(dir.path(), &key(1)).unwrap();
        let file = fs::OpenOptions::new()
            .write(true)
            .open(path(dir.path()))
            .unwrap();
        file.set_len(MAX_FILE + 1).unwrap();
        assert_eq!(read(dir.path()), None);
    }

    #[test]
    fn clear_removes_whatever_is_there_and_leftover_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(path(dir.path()).join("x")).unwrap();
        fs::write(dir.path().join("marks.tmp.123"), b"partial").unwrap();
        fs::write(dir.path().join("other"), b"kept").unwrap();
        clear(dir.path()).unwrap();
        let left: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("other")]);
    }
}
