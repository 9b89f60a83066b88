//! File writing that never leaves a partial file: write a temporary file in
//! the target's directory, flush it, then rename it over the target; and
//! [`commit`], which does that for a set of files all or nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

/// Writes `bytes` to `path` atomically (temp file + fsync + rename), with
/// mode 0644 as kpt's `os.WriteFile(..., 0666)` gives under a usual umask.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".krmgraph-")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = match std::fs::metadata(path) {
            Ok(m) => m.permissions().mode() & 0o7777,
            Err(_) => 0o644,
        };
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// One change of a [`commit`].
#[derive(Clone, Debug)]
pub enum FileChange<'a> {
    /// Write the file with these bytes: through a symlink to the file it
    /// points at, creating missing parent directories, keeping an existing
    /// file's permissions. A file that already holds the bytes is left
    /// alone.
    Write(PathBuf, &'a [u8]),
    /// The same, unless the file no longer holds the bytes with this
    /// blake3 that the render read (nor the new ones): someone saved or
    /// deleted it while the render ran, and their version is left as it
    /// is ([`commit`] returns it).
    WriteUnlessChanged(PathBuf, &'a [u8], [u8; 32]),
    /// Remove the file (or directory tree); nothing to do if it is gone.
    Remove(PathBuf),
    /// Remove the file unless it no longer holds the bytes with this blake3
    /// that the render read: someone saved it while the render ran, and it
    /// is left ([`commit`] returns it).
    RemoveUnlessChanged(PathBuf, [u8; 32]),
}

/// Why a [`commit`] (or [`check`]) failed: Go's `op path: reason`, then
/// in parentheses what it means and whether anything was changed.
#[derive(Debug)]
pub struct CommitError {
    /// The failure was about removing a file (kpt reports those as
    /// `failed to delete file: ...`), not writing one.
    pub removing: bool,
    /// The message.
    pub message: String,
}

impl std::fmt::Display for CommitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CommitError {}

/// Applies `changes` all or nothing, as far as the OS allows:
///
/// 1. check, touching nothing: every file to rewrite can be opened for
///    writing, and every directory that gets a temporary file, a new file
///    or directory, or loses a file is writable (and, if sticky, lets us
///    replace or remove the file); on a failure the error names the path
///    and nothing was changed;
/// 2. stage: create the missing directories and write each new content to
///    a temporary file beside its target (fsynced); on a failure (a full
///    disk, say) the temporary files and the directories created are
///    removed and nothing was changed but the directories' mtimes;
/// 3. rename each temporary file over its target (all at once), then
///    remove the files to remove. Only a failure here, after everything
///    before succeeded, leaves some changes made; the error says how many.
///
/// Returns the paths of the [`FileChange::WriteUnlessChanged`] left as
/// found because they had changed.
pub fn commit(changes: &[FileChange]) -> Result<Vec<PathBuf>, CommitError> {
    let plan = Plan::new(changes)?;
    let mut kept = plan.kept.clone();
    let staged = plan.stage()?;
    kept.extend(staged.apply()?);
    Ok(kept)
}

/// Step 1 of [`commit`] alone: whether `changes` can be applied, as far as
/// can be told without touching anything.
pub fn check(changes: &[FileChange]) -> Result<(), CommitError> {
    Plan::new(changes).map(|_| ())
}

/// Fails, as [`commit`] would, if the existing file at `path` cannot be
/// opened for writing. Opening it changes nothing.
pub fn check_file_writable(path: &Path) -> Result<(), CommitError> {
    match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) => Err(refused(
            "open",
            path,
            &e,
            "the render rewrites this file: make it writable and render again",
        )),
    }
}

/// A write that changes a file.
struct PlannedWrite<'a> {
    /// The file written (a symlink resolved).
    target: PathBuf,
    bytes: &'a [u8],
    /// An existing file's permissions, kept.
    permissions: Option<std::fs::Permissions>,
    /// For a [`FileChange::WriteUnlessChanged`]: what must still be there
    /// just before the rename.
    unless: Option<Unless>,
}

/// A write's condition: the target still is the file the plan read, or
/// holds the bytes the render read (or the new ones).
struct Unless {
    /// The path the change named (reported when the file is kept).
    path: PathBuf,
    /// The blake3 of what the render read.
    read: [u8; 32],
    /// The target's identity when the plan read it.
    planned: FileId,
}

/// What changes when a file is replaced or rewritten: a save by rename
/// gives a new inode, a write in place a new change time (and usually
/// size and modification time). The change time is set by the kernel
/// only, so no tool can put it back.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FileId {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileId {
    fn of(meta: &std::fs::Metadata) -> FileId {
        use std::os::unix::fs::MetadataExt;
        FileId {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

impl Unless {
    /// Whether `target` changed since the plan read it and now holds
    /// neither what the render read nor `new`: someone saved it while the
    /// render ran, and their bytes stay. Checked just before the rename or
    /// removal, so that only a save in the microseconds between the two is
    /// lost.
    fn changed_since_planned(&self, target: &Path, new: Option<&[u8]>) -> bool {
        // A write's target is resolved and was read through links; a
        // removal's is the link itself.
        let meta = match new {
            Some(_) => std::fs::metadata(target),
            None => std::fs::symlink_metadata(target),
        };
        match meta {
            Ok(meta) if FileId::of(&meta) == self.planned => false,
            Ok(meta) if !meta.is_file() => true,
            Ok(_) => match std::fs::read(target) {
                Ok(now) => {
                    Some(now.as_slice()) != new && blake3::hash(&now).as_bytes() != &self.read
                }
                Err(_) => true,
            },
            // Gone: a write puts it back, a removal has nothing to do.
            Err(_) => new.is_some(),
        }
    }
}

impl PlannedWrite<'_> {
    /// [`Unless::changed_since_planned`] for this write.
    fn changed_since_planned(&self) -> bool {
        self.unless
            .as_ref()
            .is_some_and(|u| u.changed_since_planned(&self.target, Some(self.bytes)))
    }
}

/// A file or directory to remove.
struct PlannedRemove {
    path: PathBuf,
    /// For a [`FileChange::RemoveUnlessChanged`]: what must still be there
    /// just before the removal.
    unless: Option<Unless>,
}

/// Whether the file a [`FileChange::RemoveUnlessChanged`] names still
/// holds what the render read (`Err` with the path when not: it is kept);
/// with its identity, taken before it was read. A file already gone is
/// nothing to remove (`Ok(None)`).
fn remove_target(path: &Path, read: &[u8; 32]) -> Result<Option<Unless>, PathBuf> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(None);
    };
    let planned = FileId::of(&meta);
    match std::fs::read(path) {
        Ok(now) if meta.is_file() && blake3::hash(&now).as_bytes() == read => Ok(Some(Unless {
            path: path.to_path_buf(),
            read: *read,
            planned,
        })),
        _ => Err(path.to_path_buf()),
    }
}

/// The file a write to `path` writes (a symlink resolved), and whether
/// it already holds `bytes`: such a file is left alone, since most files
/// of a render come out as they went in, and rewriting one costs a file
/// creation and an fsync (and wakes every watcher).
///
/// With `read`, the blake3 of what the render read there: a file that
/// holds neither those bytes nor `bytes`, or is gone, changed meanwhile.
///
/// Also the target's identity, taken before it was read, for the check
/// before the rename ([`PlannedWrite::changed_since_planned`]).
fn write_target(
    path: &Path,
    bytes: &[u8],
    read: Option<&[u8; 32]>,
) -> (PathBuf, Found, Option<FileId>) {
    let target = match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let id = std::fs::metadata(&target).ok().map(|m| FileId::of(&m));
    let old = std::fs::read(&target).ok();
    let found = match (old, read) {
        (Some(old), _) if old == bytes => Found::Same,
        (Some(old), Some(read)) if blake3::hash(&old).as_bytes() != read => Found::ChangedMeanwhile,
        (None, Some(_)) => Found::ChangedMeanwhile,
        _ => Found::Other,
    };
    (target, found, id)
}

/// What a write's target holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    /// The new bytes already.
    Same,
    /// Not what the render read: leave it.
    ChangedMeanwhile,
    /// Anything else: write it.
    Other,
}

/// A change with its write target resolved (and the path it names when
/// the file changed meanwhile).
enum Resolved<'a> {
    Write(PathBuf, Found, &'a [u8], Option<PathBuf>, Option<Unless>),
    Remove(PathBuf, Option<Unless>),
    Kept(PathBuf),
}

struct Plan<'a> {
    writes: Vec<PlannedWrite<'a>>,
    removes: Vec<PlannedRemove>,
    /// Directories to create, parents first.
    mkdirs: Vec<PathBuf>,
    /// Directories found writable, with the owner of a sticky one.
    writable: std::collections::HashMap<PathBuf, Option<u32>>,
    /// Every file a write was planned for.
    targets: std::collections::HashSet<PathBuf>,
    /// Files left alone because they changed while the render ran.
    kept: Vec<PathBuf>,
}

impl<'a> Plan<'a> {
    fn new(changes: &[FileChange<'a>]) -> Result<Plan<'a>, CommitError> {
        let mut plan = Plan {
            writes: Vec::new(),
            removes: Vec::new(),
            mkdirs: Vec::new(),
            writable: Default::default(),
            targets: Default::default(),
            kept: Vec::new(),
        };
        // Reading every file to compare is most of the planning; it runs on
        // the pool, the rest in order.
        let resolved = crate::par::map(changes, |change| match change {
            FileChange::Write(path, bytes) => {
                let (target, found, _) = write_target(path, bytes, None);
                Resolved::Write(target, found, bytes, None, None)
            }
            FileChange::WriteUnlessChanged(path, bytes, read) => {
                let (target, found, id) = write_target(path, bytes, Some(read));
                let kept = (found == Found::ChangedMeanwhile).then(|| path.clone());
                let unless = id.map(|planned| Unless {
                    path: path.clone(),
                    read: *read,
                    planned,
                });
                Resolved::Write(target, found, bytes, kept, unless)
            }
            FileChange::Remove(path) => Resolved::Remove(path.clone(), None),
            FileChange::RemoveUnlessChanged(path, read) => match remove_target(path, read) {
                Ok(unless) => Resolved::Remove(path.clone(), unless),
                Err(path) => Resolved::Kept(path),
            },
        });
        for change in resolved {
            match change {
                Resolved::Write(_, _, _, Some(path), _) => plan.kept.push(path),
                Resolved::Write(target, found, bytes, _, unless) => {
                    plan.plan_write(target, found == Found::Same, bytes, unless)?
                }
                Resolved::Remove(path, unless) => plan.plan_remove(&path, unless)?,
                Resolved::Kept(path) => plan.kept.push(path),
            }
        }
        Ok(plan)
    }

    /// Plans writing `bytes` to `target` (from [`write_target`]; `same`:
    /// the file already holds them).
    fn plan_write(
        &mut self,
        target: PathBuf,
        same: bool,
        bytes: &'a [u8],
        unless: Option<Unless>,
    ) -> Result<(), CommitError> {
        // Two paths naming one file (a symlink and its target): the last
        // write wins, as if they were written one after the other.
        if !self.targets.insert(target.clone()) {
            self.writes.retain(|w| w.target != target);
        }
        if same {
            return Ok(());
        }
        let dir = parent(&target);
        match std::fs::metadata(&target) {
            Ok(meta) if meta.is_dir() => {
                let e = std::io::Error::from_raw_os_error(libc::EISDIR);
                return Err(refused("open", &target, &e, "a directory is in the way"));
            }
            Ok(meta) => {
                check_file_writable(&target)?;
                let sticky_owner = match self.dir_writable(&dir) {
                    Ok(owner) => owner,
                    Err(e) => {
                        return Err(refused(
                            "replace",
                            &target,
                            &e,
                            &format!(
                            "the new content is written to a temporary file in {} and renamed over \
                             the file, so the directory must be writable: make it writable and \
                             render again",
                            dir.display()
                        ),
                        ))
                    }
                };
                check_sticky(&dir, sticky_owner, &meta, "replace", &target)?;
                self.writes.push(PlannedWrite {
                    target,
                    bytes,
                    permissions: Some(meta.permissions()),
                    unless,
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.plan_mkdirs(&dir, &target)?;
                self.writes.push(PlannedWrite {
                    target,
                    bytes,
                    permissions: None,
                    unless,
                });
            }
            Err(e) => return Err(refused("open", &target, &e, "")),
        }
        Ok(())
    }

    /// Plans the creation of `dir` and its missing parents, and checks the
    /// nearest existing one lets us create `target` (or the first missing
    /// directory) in it.
    fn plan_mkdirs(&mut self, dir: &Path, target: &Path) -> Result<(), CommitError> {
        let mut missing = Vec::new();
        let mut existing = dir.to_path_buf();
        loop {
            if self.mkdirs.contains(&existing) {
                break;
            }
            match std::fs::metadata(&existing) {
                Ok(meta) if meta.is_dir() => {
                    let first = missing.last().map(PathBuf::as_path);
                    if let Err(e) = self.dir_writable(&existing) {
                        let (op, path, what) = match first {
                            Some(d) => ("mkdir", d, "directories"),
                            None => ("open", target, "files"),
                        };
                        return Err(refused(
                            op,
                            path,
                            &e,
                            &format!(
                                "cannot create {what} in {}: make it writable and render again",
                                existing.display()
                            ),
                        ));
                    }
                    break;
                }
                Ok(_) => {
                    let e = std::io::Error::from_raw_os_error(libc::ENOTDIR);
                    let path = missing.last().map(PathBuf::as_path).unwrap_or(target);
                    return Err(refused(
                        "mkdir",
                        path,
                        &e,
                        &format!("{} is a file", existing.display()),
                    ));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    missing.push(existing.clone());
                    match existing.parent() {
                        Some(p) if !p.as_os_str().is_empty() => existing = p.to_path_buf(),
                        _ => break,
                    }
                }
                Err(e) => return Err(refused("mkdir", &existing, &e, "")),
            }
        }
        self.mkdirs.extend(missing.into_iter().rev());
        Ok(())
    }

    fn plan_remove(&mut self, path: &Path, unless: Option<Unless>) -> Result<(), CommitError> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(removal_refused(path, &e, "")),
        };
        let dir = parent(path);
        let sticky_owner = self.dir_writable(&dir).map_err(|e| {
            removal_refused(
                path,
                &e,
                &format!(
                    "cannot remove files from {}: make it writable and render again",
                    dir.display()
                ),
            )
        })?;
        check_sticky(&dir, sticky_owner, &meta, "unlinkat", path).map_err(|mut e| {
            e.removing = true;
            e
        })?;
        self.removes.push(PlannedRemove {
            path: path.to_path_buf(),
            unless,
        });
        Ok(())
    }

    /// [`dir_writable`], once per directory; the owner of a sticky one.
    fn dir_writable(&mut self, dir: &Path) -> std::io::Result<Option<u32>> {
        use std::os::unix::fs::MetadataExt;
        if let Some(owner) = self.writable.get(dir) {
            return Ok(*owner);
        }
        dir_writable(dir)?;
        let owner = std::fs::metadata(dir)
            .ok()
            .filter(|m| m.mode() & 0o1000 != 0)
            .map(|m| m.uid());
        self.writable.insert(dir.to_path_buf(), owner);
        Ok(owner)
    }

    /// Creates the directories and the temporary files; undoes that on a
    /// failure.
    fn stage(self) -> Result<Staged<'a>, CommitError> {
        let mut staged = Staged {
            plan: self,
            created: Vec::new(),
            temps: Vec::new(),
        };
        let mut failure = None;
        for dir in &staged.plan.mkdirs {
            match std::fs::create_dir(dir) {
                Ok(()) => staged.created.push(dir.clone()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
                Err(e) => {
                    failure = Some(refused("mkdir", dir, &e, ""));
                    break;
                }
            }
        }
        if failure.is_none() {
            // Files are written on the pool, then fsynced all at once, each
            // on its own (one syncfs would also wait for every other dirty
            // file of the filesystem, the cache's blobs among them). On a
            // failure every temporary file written is removed, and the first
            // failure in plan order is reported.
            let written: Vec<_> = staged.plan.writes.par_iter().map(write_temp).collect();
            let synced = map_blocking(&written, |w| w.as_ref().ok().map(sync_temp));
            for ((w, written), synced) in staged.plan.writes.iter().zip(written).zip(synced) {
                match synced.unwrap_or(written) {
                    Ok(tmp) => staged.temps.push(tmp),
                    Err((op, e)) if failure.is_none() => {
                        let why = format!(
                            "writing a temporary file in {}",
                            parent(&w.target).display()
                        );
                        failure = Some(refused(op, &w.target, &e, &why));
                    }
                    Err(_) => {}
                }
            }
        }
        match failure {
            None => Ok(staged),
            Some(e) => {
                staged.undo();
                Err(e)
            }
        }
    }
}

struct Staged<'a> {
    plan: Plan<'a>,
    /// Directories created, parents first.
    created: Vec<PathBuf>,
    /// The temporary file of each planned write, in order.
    temps: Vec<PathBuf>,
}

impl Staged<'_> {
    fn undo(&self) {
        for tmp in &self.temps {
            let _ = std::fs::remove_file(tmp);
        }
        for dir in self.created.iter().rev() {
            let _ = std::fs::remove_dir(dir);
        }
    }

    /// Renames the temporary files and removes what goes; returns the
    /// files left alone because they changed just before their rename.
    fn apply(self) -> Result<Vec<PathBuf>, CommitError> {
        let total = self.temps.len() + self.plan.removes.len();
        // At once, like the fsyncs: replacing a file frees the old one's
        // blocks, which waits on the disk (a discard, on a filesystem
        // mounted with `discard`). Every rename is tried; a temporary file
        // that could not be renamed, or whose target changed, is removed.
        let pairs: Vec<_> = self.temps.iter().zip(&self.plan.writes).collect();
        let renamed = map_blocking(&pairs, |(tmp, w)| {
            if w.changed_since_planned() {
                let _ = std::fs::remove_file(tmp);
                return Ok(false);
            }
            std::fs::rename(tmp, &w.target)
                .map(|()| true)
                .inspect_err(|_| {
                    let _ = std::fs::remove_file(tmp);
                })
        });
        let mut kept: Vec<PathBuf> = pairs
            .iter()
            .zip(&renamed)
            .filter(|(_, r)| matches!(r, Ok(false)))
            .filter_map(|((_, w), _)| w.unless.as_ref().map(|u| u.path.clone()))
            .collect();
        let done = renamed.iter().filter(|r| matches!(r, Ok(true))).count();
        if let Some(((tmp, w), Err(e))) = pairs.iter().zip(&renamed).find(|(_, r)| r.is_err()) {
            return Err(CommitError {
                removing: false,
                message: format!(
                    "rename {} {}: {} ({done} of {total} changes were already made)",
                    tmp.display(),
                    w.target.display(),
                    crate::gostr::go_errno_text(e)
                ),
            });
        }
        let mut removed = 0;
        for remove in &self.plan.removes {
            let path = &remove.path;
            if let Some(unless) = &remove.unless {
                if unless.changed_since_planned(path, None) {
                    kept.push(path.clone());
                    continue;
                }
            }
            let result = match std::fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
                Ok(_) => std::fs::remove_file(path),
                Err(_) => Ok(()),
            };
            if let Err(e) = result {
                return Err(CommitError {
                    removing: true,
                    message: format!(
                        "unlinkat {}: {} ({} of {total} changes were already made)",
                        path.display(),
                        crate::gostr::go_errno_text(&e),
                        done + removed
                    ),
                });
            }
            removed += 1;
        }
        Ok(kept)
    }
}

/// Writes `w`'s bytes to a new temporary file beside its target; on a
/// failure removes it and returns the failing operation.
fn write_temp(w: &PlannedWrite) -> Result<PathBuf, (&'static str, std::io::Error)> {
    let dir = parent(&w.target);
    let name = w
        .target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let (tmp, mut file) = create_temp(&dir, &name).map_err(|e| ("open", e))?;
    let result = (|| {
        file.write_all(w.bytes).map_err(|e| ("write", e))?;
        if let Some(perms) = &w.permissions {
            file.set_permissions(perms.clone())
                .map_err(|e| ("chmod", e))?;
        }
        Ok(())
    })();
    match result {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// The most threads [`map_blocking`] starts.
const BLOCKING_THREADS: usize = 32;

/// `items.iter().map(f)`, run on up to [`BLOCKING_THREADS`] threads of its
/// own, results in item order. For work that mostly waits on the disk:
/// a disk syncs many files at once far faster than one after another
/// (1,364 staged files here: 0.25 s fsynced on two threads, 0.08 s on
/// 32), and the render's pool has one thread per core.
fn map_blocking<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let threads = items.len().min(BLOCKING_THREADS);
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let work = || {
        let mut out = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break out };
            out.push((i, f(item)));
        }
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        // As many helpers as the system gives (none is fine: this thread
        // works through the items too).
        let helpers: Vec<_> = (1..threads)
            .map_while(|_| std::thread::Builder::new().spawn_scoped(scope, work).ok())
            .collect();
        let mut done = work();
        for helper in helpers {
            done.extend(
                helper
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
        }
        done
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Flushes the temporary file `tmp` to the disk (fsync works on the file,
/// so a new descriptor does; staged files are not kept open, since there
/// may be more of them than a process may open). On a failure removes it.
fn sync_temp(tmp: &PathBuf) -> Result<PathBuf, (&'static str, std::io::Error)> {
    let result = std::fs::File::open(tmp)
        .map_err(|e| ("open", e))
        .and_then(|f| f.sync_all().map_err(|e| ("sync", e)));
    match result {
        Ok(()) => Ok(tmp.clone()),
        Err(e) => {
            let _ = std::fs::remove_file(tmp);
            Err(e)
        }
    }
}

/// Whether `name` is one of the temporary files a commit stages; with the
/// id of the process that made it.
pub fn temp_file_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, ids) = rest.rsplit_once(".krmgraph-")?;
    let (pid, n) = ids.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(pid) && digits(n))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether `name` is a temporary file of a krmgraph process that is gone
/// (killed while it staged its files): it is never read as part of the
/// tree, and an in-place render removes it ([`remove_stale_temps`],
/// `Snapshot::remove_stale_temps`). The process is looked up in this pid
/// namespace: a render of the same tree at the same time from another
/// container or machine is not seen (two renders writing one tree at once
/// conflict anyway).
pub fn is_stale_temp(name: &str) -> bool {
    temp_file_owner(name).is_some_and(|pid| !process_exists(pid))
}

/// Removes the temporary files of killed renders under `root` (not in
/// `.git`), for an in-place render that did not read the tree itself.
pub fn remove_stale_temps(root: &Path) {
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let kind = entry.file_type();
            if kind.as_ref().is_ok_and(|k| k.is_dir()) && name != ".git" {
                dirs.push(entry.path());
            } else if kind.is_ok_and(|k| k.is_file()) && name.to_str().is_some_and(is_stale_temp) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) with signal 0 only checks the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    alive || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// A new, empty file `.<name>.krmgraph-<pid>-<n>.tmp` in `dir`.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::os::unix::fs::OpenOptionsExt;
    let pid = std::process::id();
    for n in 0..1000 {
        let tmp = dir.join(format!(".{name}.krmgraph-{pid}-{n}.tmp"));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        std::io::ErrorKind::AlreadyExists,
        "no free temporary file name",
    ))
}

fn parent(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Whether we may create and remove entries in `dir` (`access(2)` with
/// the effective ids: write and search permission, ACLs and read-only
/// mounts included).
fn dir_writable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
    // SAFETY: `c` is a valid NUL-terminated path for the whole call.
    let r = unsafe {
        libc::faccessat(
            libc::AT_FDCWD,
            c.as_ptr(),
            libc::W_OK | libc::X_OK,
            libc::AT_EACCESS,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// In a sticky directory (`/tmp`) only the owner of an entry, of the
/// directory, or root may rename over it or remove it.
/// `sticky_owner`: the owner of `dir` if it is sticky.
fn check_sticky(
    dir: &Path,
    sticky_owner: Option<u32>,
    entry: &std::fs::Metadata,
    op: &str,
    path: &Path,
) -> Result<(), CommitError> {
    use std::os::unix::fs::MetadataExt;
    let Some(dir_owner) = sticky_owner else {
        return Ok(());
    };
    // SAFETY: geteuid cannot fail and touches no memory.
    let euid = unsafe { libc::geteuid() };
    if euid == 0 || euid == entry.uid() || euid == dir_owner {
        return Ok(());
    }
    let e = std::io::Error::from_raw_os_error(libc::EPERM);
    Err(refused(
        op,
        path,
        &e,
        &format!(
            "{} is sticky and neither it nor the file is yours",
            dir.display()
        ),
    ))
}

/// `op path: errno (why; nothing was written)`.
fn refused(op: &str, path: &Path, e: &std::io::Error, why: &str) -> CommitError {
    let why = if why.is_empty() {
        String::new()
    } else {
        format!("{why}; ")
    };
    CommitError {
        removing: false,
        message: format!(
            "{op} {}: {} ({why}nothing was written)",
            path.display(),
            crate::gostr::go_errno_text(e)
        ),
    }
}

fn removal_refused(path: &Path, e: &std::io::Error, why: &str) -> CommitError {
    CommitError {
        removing: true,
        ..refused("unlinkat", path, e, why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_file_names_name_their_process() {
        assert_eq!(temp_file_owner(".cm.yaml.krmgraph-123-0.tmp"), Some(123));
        assert_eq!(temp_file_owner(".a.krmgraph-b.krmgraph-7-12.tmp"), Some(7));
        for other in [
            "cm.yaml",
            "cm.krmgraph-1-0.tmp",
            ".cm.yaml.krmgraph-x-0.tmp",
            ".cm.yaml.krmgraph-1-.tmp",
            ".cm.yaml.krmgraph-1-0.tmpx",
            ".krmgraph-1-0.tmp",
        ] {
            assert_eq!(temp_file_owner(other), None, "{other}");
        }
        let ours = format!(".cm.yaml.krmgraph-{}-0.tmp", std::process::id());
        assert!(!is_stale_temp(&ours), "this process is alive");
    }

    #[test]
    fn a_file_saved_after_staging_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let path = |name: &str| tmp.path().join(name);
        for name in ["renamed.yaml", "rewritten.yaml", "untouched.yaml"] {
            std::fs::write(path(name), "old").unwrap();
        }
        let read = *blake3::hash(b"old").as_bytes();
        let changes: Vec<FileChange> = ["renamed.yaml", "rewritten.yaml", "untouched.yaml"]
            .iter()
            .map(|name| FileChange::WriteUnlessChanged(path(name), b"new", read))
            .collect();
        let staged = Plan::new(&changes).unwrap().stage().unwrap();
        // Saved as editors do, by rename, and in place (the same length: a
        // later change time tells it; the kernel's clock for it is coarse).
        std::fs::write(path("saving"), "saved").unwrap();
        std::fs::rename(path("saving"), path("renamed.yaml")).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(path("rewritten.yaml"), "sav").unwrap();
        let kept = staged.apply().unwrap();
        assert_eq!(kept, [path("renamed.yaml"), path("rewritten.yaml")]);
        let read = |name: &str| std::fs::read_to_string(path(name)).unwrap();
        assert_eq!(read("renamed.yaml"), "saved");
        assert_eq!(read("rewritten.yaml"), "sav");
        assert_eq!(read("untouched.yaml"), "new");
        let left: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 3, "no temporary file left");
    }

    #[test]
    fn a_file_saved_before_its_removal_is_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let path = |name: &str| tmp.path().join(name);
        for name in ["saved-early.yaml", "saved-late.yaml", "stale.yaml"] {
            std::fs::write(path(name), "old").unwrap();
        }
        let read = *blake3::hash(b"old").as_bytes();
        // Saved before the plan reads it, and after.
        std::fs::write(path("saved-early.yaml"), "new resource").unwrap();
        let changes: Vec<FileChange> = [
            "saved-early.yaml",
            "saved-late.yaml",
            "stale.yaml",
            "gone.yaml",
        ]
        .iter()
        .map(|name| FileChange::RemoveUnlessChanged(path(name), read))
        .collect();
        let plan = Plan::new(&changes).unwrap();
        assert_eq!(plan.kept, [path("saved-early.yaml")]);
        let staged = plan.stage().unwrap();
        std::fs::write(path("saving"), "saved").unwrap();
        std::fs::rename(path("saving"), path("saved-late.yaml")).unwrap();
        assert_eq!(staged.apply().unwrap(), [path("saved-late.yaml")]);
        assert!(!path("stale.yaml").exists());
        assert!(path("saved-early.yaml").exists() && path("saved-late.yaml").exists());
    }

    #[test]
    fn map_blocking_keeps_item_order() {
        let items: Vec<u64> = (0..500).collect();
        let out = map_blocking(&items, |&i| {
            // Uneven work, so threads finish out of order.
            std::thread::sleep(std::time::Duration::from_micros((i * 7919) % 300));
            i * i
        });
        assert_eq!(out, items.iter().map(|i| i * i).collect::<Vec<_>>());
        assert_eq!(map_blocking(&[3u8], |&b| b + 1), vec![4]);
        assert!(map_blocking(&[] as &[u8], |&b| b).is_empty());
    }

    /// Every entry under `dir` with its bytes (directories as `/`).
    fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap().flatten() {
                let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
                if e.path().is_dir() {
                    stack.push(e.path());
                    out.push((rel + "/", Vec::new()));
                } else {
                    out.push((rel, std::fs::read(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }

    #[test]
    fn commit_writes_creates_and_removes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.yaml"), "old\n").unwrap();
        std::fs::write(root.join("same.yaml"), "same\n").unwrap();
        std::fs::write(root.join("gone.yaml"), "gone\n").unwrap();
        let before = std::fs::metadata(root.join("same.yaml"))
            .unwrap()
            .modified()
            .unwrap();
        commit(&[
            FileChange::Write(root.join("a.yaml"), b"new\n"),
            FileChange::Write(root.join("same.yaml"), b"same\n"),
            FileChange::Write(root.join("d/e/b.yaml"), b"b\n"),
            FileChange::Write(root.join("d/c.yaml"), b"c\n"),
            FileChange::Remove(root.join("gone.yaml")),
            FileChange::Remove(root.join("never-was.yaml")),
        ])
        .unwrap();
        let got = tree(root);
        let want: Vec<(String, Vec<u8>)> = [
            ("a.yaml", "new\n"),
            ("d/", ""),
            ("d/c.yaml", "c\n"),
            ("d/e/", ""),
            ("d/e/b.yaml", "b\n"),
            ("same.yaml", "same\n"),
        ]
        .iter()
        .map(|(p, b)| (p.to_string(), b.as_bytes().to_vec()))
        .collect();
        assert_eq!(got, want);
        let after = std::fs::metadata(root.join("same.yaml"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after, "an unchanged file is not rewritten");
    }

    #[test]
    fn commit_writes_through_symlinks_last_write_wins() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("t.yaml"), "t\n").unwrap();
        std::os::unix::fs::symlink("t.yaml", root.join("u.yaml")).unwrap();
        commit(&[
            FileChange::Write(root.join("t.yaml"), b"changed\n"),
            FileChange::Write(root.join("u.yaml"), b"t\n"),
        ])
        .unwrap();
        assert_eq!(std::fs::read(root.join("t.yaml")).unwrap(), b"t\n");
        assert!(std::fs::symlink_metadata(root.join("u.yaml"))
            .unwrap()
            .file_type()
            .is_symlink());
    }

    /// A check that fails (a path through a file) stops everything before
    /// anything is touched.
    #[test]
    fn failed_check_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.yaml"), "old\n").unwrap();
        std::fs::write(root.join("gone.yaml"), "gone\n").unwrap();
        std::fs::write(root.join("x"), "a file\n").unwrap();
        let before = tree(root);
        let changes = [
            FileChange::Write(root.join("a.yaml"), b"new\n"),
            FileChange::Write(root.join("n/new.yaml"), b"new\n"),
            FileChange::Write(root.join("x/b.yaml"), b"b\n"),
            FileChange::Remove(root.join("gone.yaml")),
        ];
        let err = check(&changes).unwrap_err();
        assert_eq!(
            err.message,
            format!(
                "open {}/x/b.yaml: not a directory (nothing was written)",
                root.display()
            )
        );
        assert!(!err.removing);
        assert_eq!(commit(&changes).unwrap_err().message, err.message);
        assert_eq!(tree(root), before);
    }

    /// A failure while staging (here a name too long for a temporary file)
    /// removes the temporary files and directories created so far.
    #[test]
    fn failed_staging_is_undone() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.yaml"), "old\n").unwrap();
        let before = tree(root);
        let long = format!("{}.yaml", "x".repeat(240));
        let err = commit(&[
            FileChange::Write(root.join("a.yaml"), b"new\n"),
            FileChange::Write(root.join("n/m/new.yaml"), b"new\n"),
            FileChange::Write(root.join(&long), b"long\n"),
        ])
        .unwrap_err();
        assert!(
            err.message
                .starts_with(&format!("open {}/{long}: ", root.display()))
                && err.message.ends_with("nothing was written)"),
            "{}",
            err.message
        );
        assert_eq!(tree(root), before);
    }
}
