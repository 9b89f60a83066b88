//! File helpers that never follow a symlink out of the cache directory and
//! never block on a special file someone left in it.

use std::fs::{self, File, Metadata};
use std::io;
use std::path::Path;

/// Opens `path` for reading if it is a regular file (not a symlink) and
/// returns it with its size. A FIFO, device, directory or symlink at a
/// blob's or the marks file's name is damage, and opening a FIFO would
/// block forever, so `path` is looked at (`lstat`) before it is opened.
/// The opened file is checked again (`fstat`), and on unix must be the
/// file looked at: something swapped in between is refused too. (Only a
/// FIFO swapped in during those microseconds could still block the open;
/// a fix for that needs `O_NONBLOCK`, which std does not name.)
pub(crate) fn open_regular(path: &Path) -> io::Result<(File, u64)> {
    let looked = fs::symlink_metadata(path)?;
    if !looked.is_file() {
        return Err(not_regular(&looked));
    }
    let file = File::open(path)?;
    let opened = file.metadata()?;
    if !opened.is_file() || !same_file(&looked, &opened) {
        return Err(not_regular(&opened));
    }
    Ok((file, opened.len()))
}

fn not_regular(meta: &Metadata) -> io::Error {
    let kind = kind(meta);
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{kind}, not a regular file"),
    )
}

#[cfg(unix)]
fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_: &Metadata, _: &Metadata) -> bool {
    true
}

/// Removes `path` whatever it is. A directory goes with its contents; a
/// symlink goes itself, its target untouched (`remove_dir_all` never
/// follows links either). Already gone is fine.
pub(crate) fn remove_any(path: &Path) -> io::Result<()> {
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

/// "a file", "a directory", ... for messages.
pub(crate) fn kind(meta: &Metadata) -> &'static str {
    let file_type = meta.file_type();
    if file_type.is_symlink() {
        return "a symbolic link";
    }
    if file_type.is_dir() {
        return "a directory";
    }
    if file_type.is_file() {
        return "a file";
    }
    special_kind(meta)
}

#[cfg(unix)]
fn special_kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let file_type = meta.file_type();
    if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else {
        "a device"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &Metadata) -> &'static str {
    "a special file"
}

/// What is at `path`, not following a symlink; `None` when nothing is.
pub(crate) fn what_is(path: &Path) -> Option<&'static str> {
    fs::symlink_metadata(path).ok().map(|m| kind(&m))
}

/// [`kind`], and for a symlink where it leads: "a symbolic link to
/// `/mnt/x`".
pub(crate) fn describe(path: &Path, meta: &Metadata) -> String {
    match fs::read_link(path) {
        Ok(target) if meta.file_type().is_symlink() => {
            format!("a symbolic link to `{}`", target.display())
        }
        _ => kind(meta).to_owned(),
    }
}

/// The error for what `meta` says stands at `path`, where the store's own
/// `want` ("a directory", "a regular file") belongs: what it is, and that
/// `krmgraph cache verify` removes it. The store follows no symlink in its
/// directory (a link could lead its writes, and the removals of gc and
/// clear, out of the cache), so a link is in the way too.
pub(crate) fn in_the_way(path: &Path, meta: &Metadata, want: &str) -> io::Error {
    let what = describe(path, meta);
    let message = if meta.file_type().is_symlink() {
        format!(
            "{what} is in the way: the cache follows no links \
             (`krmgraph cache verify` removes the link, not what it leads to)"
        )
    } else {
        format!("{what} is in the way, not {want} (`krmgraph cache verify` removes it)")
    };
    io::Error::new(io::ErrorKind::AlreadyExists, message)
}

/// Opens (creating) `path`, a regular file of the store (the lock file),
/// for reading and writing. Anything else there (a symlink, a directory,
/// a FIFO) is refused without being opened: the lock is only ever taken
/// on a regular file, so whatever else stands at its name is held by no
/// one, and a repair may remove it. The file opened must be the one
/// looked at (on unix): not one a symlink swapped in meanwhile leads to.
pub(crate) fn open_own_file(path: &Path) -> io::Result<File> {
    let looked = match fs::symlink_metadata(path) {
        Ok(meta) if !meta.is_file() => return Err(in_the_way(path, &meta, "a regular file")),
        Ok(meta) => Some(meta),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let opened = file.metadata()?;
    let now = fs::symlink_metadata(path)?;
    let same = |meta: &Metadata| meta.is_file() && same_file(meta, &opened);
    if !opened.is_file() || !same(&now) || looked.as_ref().is_some_and(|m| !same(m)) {
        return Err(io::Error::other("replaced while it was being opened"));
    }
    Ok(file)
}

/// Creates the cache directory `path` (and its parents). The cache
/// directory itself may be a symlink (to another disk, say): that is the
/// user's choice, and nothing removes it. On failure the error says what is
/// in the way, which the OS's "File exists" does not: a file or a dangling
/// symlink, or, for a symlink loop or an unreadable parent, the error of
/// looking the path up.
pub(crate) fn create_dir(path: &Path) -> io::Result<()> {
    let Err(created) = fs::create_dir_all(path) else {
        return Ok(());
    };
    if created.kind() != io::ErrorKind::AlreadyExists {
        return Err(created);
    }
    if let Err(lookup) = fs::metadata(path) {
        if lookup.kind() != io::ErrorKind::NotFound {
            return Err(lookup);
        }
    }
    let what = match fs::symlink_metadata(path) {
        Ok(meta) => describe(path, &meta),
        Err(_) => "something".to_owned(),
    };
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("{what} is in the way, not a directory"),
    ))
}

/// Creates `path`, a directory of the store inside the cache directory
/// (`blobs`, `tmp`, a blob fan-out), unless it is one already. Only a real
/// directory will do: a symlink, even to a directory, is refused (the
/// error says so), as gc, verify and clear remove a link in the store's
/// way and would orphan whatever was written through it.
pub(crate) fn create_own_dir(path: &Path) -> io::Result<()> {
    match fs::create_dir(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        created => return created,
    }
    let meta = fs::symlink_metadata(path)?;
    if meta.is_dir() {
        return Ok(());
    }
    Err(in_the_way(path, &meta, "a directory"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_and_links_are_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("file");
        fs::write(&file, b"abc").unwrap();
        assert_eq!(open_regular(&file).unwrap().1, 3);
        let link = dir.path().join("link");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&file, &link).unwrap();
            assert!(open_regular(&link).is_err(), "a symlink is not followed");
            let fifo = dir.path().join("fifo");
            let made = std::process::Command::new("mkfifo").arg(&fifo).status();
            if made.is_ok_and(|s| s.success()) {
                // Opening it would block forever.
                let err = open_regular(&fifo).unwrap_err();
                assert!(err.to_string().contains("FIFO"), "{err}");
            }
        }
        assert!(open_regular(dir.path()).is_err());
        remove_any(&link).unwrap();
        assert!(file.exists(), "removing a link keeps its target");
    }

    #[test]
    fn create_dir_names_what_is_in_the_way() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blobs");
        fs::write(&path, b"").unwrap();
        let err = create_dir(&path).unwrap_err();
        assert!(err.to_string().starts_with("a file is in the way"), "{err}");
        #[cfg(unix)]
        {
            let looped = dir.path().join("loop");
            std::os::unix::fs::symlink(&looped, &looped).unwrap();
            let err = create_dir(&looped.join("x")).unwrap_err();
            assert!(err.to_string().contains("symbolic links"), "{err}");
        }
        create_dir(&dir.path().join("a/b")).unwrap();
        assert!(dir.path().join("a/b").is_dir());
    }
}
