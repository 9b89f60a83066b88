//! The render shortcut: a whole in-place render, memoized by the bytes of
//! the tree it read, so that rendering an unchanged tree runs nothing.
//!
//! The key ([`render_key`]) covers every file under the root (relative path
//! and bytes; `.git` skipped; symlinks by target), the identity of every
//! function the Kptfiles name (a built-in's name and behaviour version, an
//! exec program's content hash, an image's ID and repo digests), the flags that change a
//! render, the root's directory name (it shows in the log) and krmgraph's
//! version. It does not cover where the tree is: two checkouts share keys.
//!
//! Two kinds of record:
//! * exact: key of the tree before a successful render → the files it
//!   wrote and deleted, its stderr and its `results.yaml`. Replaying it is
//!   that render, byte for byte (timings in the log included).
//! * fixed point: key of the tree a render left → "nothing to do", also
//!   marked in a file beside the store that a no-op render reads without
//!   opening the store ([`krmgraph_cache::is_marked`]). This
//!   relies on pipelines being idempotent — rendering a rendered tree
//!   changes no file — which kpt's own e2e harness requires of every case.
//!   Its log and results are not known, so it is used only when no
//!   `--results-dir` is asked for. `render --verify` checks the contract.
//!   A tree that may hold a foot comment or a comment after a sequence
//!   entry's dash is never a fixed point: kpt adds a copy of such a comment
//!   at each render through a process.
//!
//! A render whose files or log mention the absolute root path is not
//! recorded: replaying it elsewhere would be wrong.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use krmgraph_cache::{Digest, Store};

use super::stepcache::kinds;
use super::RenderOptions;
use krmgraph_fn::{builtin, exec, resolve_image, RunnerOptions};
use krmgraph_package::kptfile::KPTFILE_NAME;

/// The key schema: bump it when what a key covers changes, or when
/// krmgraph renders some input differently (v2: a mutator writing nothing
/// fails).
const KEY_SCHEMA: &str = "krmgraph render shortcut v3";

/// One entry of a tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Entry {
    /// A regular file's bytes (shared: the tree after a render is the tree
    /// before with a few files changed).
    File(Arc<Vec<u8>>),
    /// A symlink's target.
    Link(String),
}

/// Every file under a root, by slash path relative to it.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    /// The entries, sorted by path.
    entries: BTreeMap<String, Entry>,
    /// blake3 of each regular file's bytes, computed once: the render key
    /// of the tree before a render, the step cache's file keys and the
    /// render key of the tree after it all need them.
    digests: OnceLock<BTreeMap<String, Digest>>,
    /// The function identities of each Kptfile (`None`: one does not
    /// decode or names a program that cannot be read), decoded once: the
    /// render key, the step cache's subtree keys and the render key of the
    /// tree after a render all need them. Computed for one render's
    /// runner options.
    identities: OnceLock<KptfileIdentities>,
    /// The temporary files of killed renders found under the root
    /// ([`fsutil::is_stale_temp`](krmgraph_util::fsutil::is_stale_temp)): not
    /// entries; an in-place render removes them
    /// ([`remove_stale_temps`](Snapshot::remove_stale_temps)).
    stale_temps: Vec<PathBuf>,
}

/// [`function_identities`] of every Kptfile of a snapshot, by path.
type KptfileIdentities = BTreeMap<String, Option<Vec<Vec<u8>>>>;

impl PartialEq for Snapshot {
    fn eq(&self, other: &Snapshot) -> bool {
        self.entries == other.entries
    }
}

impl Eq for Snapshot {}

impl Snapshot {
    /// Reads the tree under `root` (skipping `.git` directories, and the
    /// temporary files of renders that were killed): the directories one
    /// after another, then the files on the pool.
    pub fn read(root: &Path) -> std::io::Result<Snapshot> {
        let mut entries = BTreeMap::new();
        let mut files = Vec::new();
        let mut stale_temps = Vec::new();
        let mut stack = vec![(root.to_path_buf(), String::new())];
        while let Some((dir, rel)) = stack.pop() {
            for entry in std::fs::read_dir(&dir)? {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let path = entry.path();
                let rel_path = if rel.is_empty() {
                    name.clone()
                } else {
                    format!("{rel}/{name}")
                };
                let kind = entry.file_type()?;
                if kind.is_symlink() {
                    let target = std::fs::read_link(&path)?;
                    entries.insert(rel_path, Entry::Link(target.to_string_lossy().into_owned()));
                } else if kind.is_dir() {
                    if name != ".git" {
                        stack.push((path, rel_path));
                    }
                } else if krmgraph_util::fsutil::temp_file_owner(&name).is_some() {
                    // A render's temporary file: renamed any moment, or
                    // left by a killed render, never part of the tree.
                    if krmgraph_util::fsutil::is_stale_temp(&name) {
                        stale_temps.push(path);
                    }
                } else {
                    files.push((rel_path, path));
                }
            }
        }
        let read = krmgraph_util::par::each(&files, |(_, path)| std::fs::read(path))?;
        for ((rel_path, _), bytes) in files.into_iter().zip(read) {
            entries.insert(rel_path, Entry::File(Arc::new(bytes)));
        }
        Ok(Snapshot {
            stale_temps,
            ..Snapshot::new(entries)
        })
    }

    /// Removes the temporary files of killed renders the tree held when it
    /// was read (those already gone are fine).
    pub fn remove_stale_temps(&self) {
        for path in &self.stale_temps {
            let _ = std::fs::remove_file(path);
        }
    }

    /// A snapshot of these entries.
    pub fn new(entries: BTreeMap<String, Entry>) -> Snapshot {
        Snapshot {
            entries,
            digests: OnceLock::new(),
            identities: OnceLock::new(),
            stale_temps: Vec::new(),
        }
    }

    /// [`function_identities`] of each Kptfile, by path (decoded on the
    /// pool the first time, with `identities`: one render's).
    pub(crate) fn kptfile_identities(&self, identities: &Identities) -> &KptfileIdentities {
        self.identities.get_or_init(|| {
            let kptfiles: Vec<(&String, &[u8])> = self
                .entries
                .iter()
                .filter_map(|(path, entry)| match entry {
                    Entry::File(bytes) if is_kptfile(path) => Some((path, bytes.as_slice())),
                    _ => None,
                })
                .collect();
            // Decoding every Kptfile is most of a key's cost on a large tree.
            let decoded = krmgraph_util::par::map(&kptfiles, |(path, bytes)| {
                function_identities(path, bytes, identities)
            });
            kptfiles
                .into_iter()
                .zip(decoded)
                .map(|((path, _), identity)| (path.clone(), identity))
                .collect()
        })
    }

    /// The entries, sorted by path.
    pub fn entries(&self) -> &BTreeMap<String, Entry> {
        &self.entries
    }

    /// blake3 of each regular file's bytes, by path (hashed on the pool the
    /// first time).
    pub fn file_digests(&self) -> &BTreeMap<String, Digest> {
        self.digests.get_or_init(|| {
            let files: Vec<(&String, &Arc<Vec<u8>>)> = self
                .entries
                .iter()
                .filter_map(|(path, entry)| match entry {
                    Entry::File(bytes) => Some((path, bytes)),
                    Entry::Link(_) => None,
                })
                .collect();
            let digests = krmgraph_util::par::map(&files, |(_, bytes)| Digest::of(bytes));
            files
                .into_iter()
                .zip(digests)
                .map(|((path, _), digest)| (path.clone(), digest))
                .collect()
        })
    }

    /// Total bytes of the regular files.
    pub fn bytes(&self) -> u64 {
        self.entries
            .values()
            .map(|e| match e {
                Entry::File(b) => b.len() as u64,
                Entry::Link(_) => 0,
            })
            .sum()
    }

    /// The files a render changed: written (new or different bytes) and
    /// deleted, from `self` (before) to `after`.
    pub fn changes_to(&self, after: &Snapshot) -> Vec<Change> {
        let mut changes = Vec::new();
        for (path, entry) in &after.entries {
            if let Entry::File(bytes) = entry {
                if self.entries.get(path) != Some(entry) {
                    changes.push(Change::Write(path.clone(), bytes.to_vec()));
                }
            }
        }
        // A symlink a render removed is a deletion too.
        for path in self.entries.keys() {
            if !after.entries.contains_key(path) {
                changes.push(Change::Delete(path.clone()));
            }
        }
        changes
    }

    /// This snapshot with `changes` applied. File digests already
    /// computed carry over to the files whose bytes stay the same.
    pub fn with(&self, changes: &[Change]) -> Snapshot {
        let mut entries = self.entries.clone();
        let mut digests = self.digests.get().cloned();
        let mut identities = self.identities.get().cloned();
        for change in changes {
            match change {
                Change::Write(path, bytes) => {
                    // Most files of a render are written as they were read.
                    if matches!(entries.get(path), Some(Entry::File(old)) if **old == *bytes) {
                        continue;
                    }
                    if let Some(digests) = &mut digests {
                        digests.insert(path.clone(), Digest::of(bytes));
                    }
                    if is_kptfile(path) {
                        identities = None;
                    }
                    entries.insert(path.clone(), Entry::File(Arc::new(bytes.clone())));
                }
                Change::Delete(path) => {
                    entries.remove(path);
                    if let Some(digests) = &mut digests {
                        digests.remove(path);
                    }
                    if is_kptfile(path) {
                        identities = None;
                    }
                }
            }
        }
        Snapshot {
            entries,
            digests: digests.map(OnceLock::from).unwrap_or_default(),
            identities: identities.map(OnceLock::from).unwrap_or_default(),
            stale_temps: Vec::new(),
        }
    }
}

/// A file a render wrote or deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Written with these bytes.
    Write(String, Vec<u8>),
    /// Deleted.
    Delete(String),
}

/// What replaying a record does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Replay {
    /// An exact record: the render's file changes, stderr and
    /// `results.yaml` (if it wrote one).
    Exact {
        /// Files to write and delete.
        changes: Vec<Change>,
        /// The render's stderr.
        stderr: Vec<u8>,
        /// Its `results.yaml`.
        results: Option<Vec<u8>>,
    },
    /// The tree is as a render left it: nothing to do.
    FixedPoint,
}

/// The shortcut key of rendering the tree `snapshot` of `root` with
/// `options`; `None` when the tree cannot be keyed (a Kptfile that does not
/// decode, an exec program that cannot be read, output not in place), so
/// the render runs uncached and reports its own errors.
pub fn render_key(snapshot: &Snapshot, root: &Path, options: &RenderOptions) -> Option<Digest> {
    if options.output != super::Output::InPlace {
        return None;
    }
    let mut h = Hasher::default();
    h.field(KEY_SCHEMA.as_bytes());
    h.field(super::inputs::digest(options).as_bytes());
    h.field(root.file_name()?.to_string_lossy().as_bytes());
    let runner = &options.runner;
    // Each file is hashed on its own, on the pool (`file_digests`): a
    // no-op render is mostly reading and hashing the tree.
    let digests = snapshot.file_digests();
    for (path, entry) in &snapshot.entries {
        let (kind, digest) = match entry {
            Entry::File(_) => (b"file".as_slice(), digests[path]),
            Entry::Link(target) => (b"link".as_slice(), Digest::of(target.as_bytes())),
        };
        h.field(path.as_bytes());
        h.field(kind);
        h.field(digest.as_bytes());
    }
    let identities = Identities::new(runner);
    for per_kptfile in snapshot.kptfile_identities(&identities).values() {
        for identity in per_kptfile.as_ref()? {
            h.field(identity);
        }
    }
    Some(Digest::from(h.0.finalize()))
}

/// Whether the slash path names a Kptfile.
pub(super) fn is_kptfile(path: &str) -> bool {
    path == KPTFILE_NAME || path.ends_with(&format!("/{KPTFILE_NAME}"))
}

/// Length-prefixed fields, so that no two field lists hash alike.
#[derive(Default)]
pub(super) struct Hasher(pub(super) blake3::Hasher);

impl Hasher {
    pub(super) fn field(&mut self, bytes: &[u8]) {
        self.0.update(&(bytes.len() as u64).to_le_bytes());
        self.0.update(bytes);
    }
}

/// What identifies each function of a Kptfile beyond its text: the
/// built-in's behaviour version, or the exec program's content.
pub(super) fn function_identities(
    path: &str,
    bytes: &[u8],
    identities: &Identities,
) -> Option<Vec<Vec<u8>>> {
    let dir = Path::new(path).parent().unwrap_or(Path::new(""));
    let kptfile = krmgraph_package::kptfile::parse(dir, bytes).ok()?;
    let pipeline = &kptfile.pipeline;
    pipeline
        .mutators
        .iter()
        .chain(&pipeline.validators)
        .map(|f| identities.of(f))
        .collect()
}

/// A function as a Kptfile names it: (exec command line, image).
type FunctionName = (String, String);

/// The function identities of one render, each computed once: an exec
/// program named by many Kptfiles is looked up and hashed once.
pub(crate) struct Identities<'r> {
    runner: &'r RunnerOptions,
    /// By (exec, image); `None`: the program could not be read.
    known: Mutex<HashMap<FunctionName, Option<Vec<u8>>>>,
}

impl<'r> Identities<'r> {
    /// The identities of functions run with `runner`.
    pub(crate) fn new(runner: &'r RunnerOptions) -> Identities<'r> {
        Identities {
            runner,
            known: Mutex::default(),
        }
    }

    /// [`function_identity`] of `f`.
    pub(crate) fn of(&self, f: &krmgraph_package::kptfile::Function) -> Option<Vec<u8>> {
        let id = (f.exec.clone(), f.image.clone());
        if let Some(known) = self.known.lock().ok()?.get(&id) {
            return known.clone();
        }
        let identity = function_identity(f, self.runner);
        self.known.lock().ok()?.insert(id, identity.clone());
        identity
    }
}

/// One function's identity: `builtin <name> <version>`, the blake3 of an
/// exec program's file, or the image's name, ID and repo digests; `None`
/// when the program cannot be read or the image's digest is not known
/// before running (`container::image_identity`).
pub(crate) fn function_identity(
    f: &krmgraph_package::kptfile::Function,
    runner: &RunnerOptions,
) -> Option<Vec<u8>> {
    use krmgraph_package::kptfile::resolver;
    if let Some(catalogs) = resolver::installed() {
        if resolver::unresolved(f) {
            // A step a function catalog resolves by its config's kind: the
            // catalogs pin every runtime's digest (verified before it runs).
            return Some([b"catalog ".as_slice(), &catalogs.identity()].concat());
        }
        let mut pinned = f.clone();
        if catalogs.resolve(Path::new(""), &mut pinned).ok()? {
            return runtime_identity(&pinned, runner);
        }
    }
    runtime_identity(f, runner)
}

/// [`function_identity`] of a function that names its runtime.
fn runtime_identity(
    f: &krmgraph_package::kptfile::Function,
    runner: &RunnerOptions,
) -> Option<Vec<u8>> {
    if !f.exec.is_empty() {
        let words = exec::split_command(&f.exec).ok()?;
        let program = exec::look_path(words.first()?).ok()?;
        let content = std::fs::read(program).ok()?;
        return Some(blake3::hash(&content).as_bytes().to_vec());
    }
    let image = resolve_image(&f.image);
    Some(
        match builtin::lookup(&image).filter(|_| runner.uses_builtin(&image)) {
            Some(b) => format!("builtin {} {}", b.name, b.version).into_bytes(),
            None => krmgraph_fn::container::image_identity(&image, runner)?.into_bytes(),
        },
    )
}

/// Output names and meta kinds of the records.
const CHANGES: &str = "changes";
const STDERR: &str = "stderr";
const RESULTS: &str = "results";

/// The kind of a whole-render record, if it is one.
fn recorded(record: &krmgraph_cache::StepRecord) -> Option<Recorded> {
    if record.kind == kinds::render() {
        Some(Recorded::Exact)
    } else if record.kind == kinds::fixed_point() {
        Some(Recorded::FixedPoint)
    } else {
        None
    }
}

/// What the store holds for `key`, without reading or touching it (for
/// `krmgraph graph`).
pub fn state(store: &dyn Store, key: &Digest) -> krmgraph_cache::Result<Option<Recorded>> {
    Ok(store.peek_step(key)?.as_ref().and_then(recorded))
}

/// The kinds of record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// A render of the tree: its changes, log and results.
    Exact,
    /// A tree a render left: nothing to do.
    FixedPoint,
}

/// The record of `key`, if the store has a usable one. `wants_results`:
/// the render must write `results.yaml`, which a fixed-point record cannot.
pub fn lookup(
    store: &dyn Store,
    key: &Digest,
    wants_results: bool,
) -> krmgraph_cache::Result<Option<Replay>> {
    // A whole render's record means the same in any checkout of the tree.
    let Some(hit) = store.lookup_shared(key)? else {
        return Ok(None);
    };
    let output = |name: &str| {
        hit.record
            .outputs
            .iter()
            .position(|o| o.name == name)
            .map(|i| hit.outputs[i].clone())
    };
    match recorded(&hit.record) {
        // Another kind, or another version of this one: a miss.
        None => {
            store.remove_step(key)?;
            Ok(None)
        }
        Some(Recorded::FixedPoint) if !wants_results => Ok(Some(Replay::FixedPoint)),
        Some(Recorded::Exact) => {
            let changes = output(CHANGES).and_then(|b| decode_changes(&b));
            let stderr = output(STDERR);
            let (Some(changes), Some(stderr)) = (changes, stderr) else {
                store.remove_step(key)?;
                return Ok(None);
            };
            let results = output(RESULTS);
            if wants_results && results.is_none() {
                return Ok(None);
            }
            Ok(Some(Replay::Exact {
                changes,
                stderr,
                results,
            }))
        }
        _ => Ok(None),
    }
}

/// A successful in-place render, as the shortcut records it.
pub struct Rendered<'a> {
    /// The tree before.
    pub before: &'a Snapshot,
    /// The tree after.
    pub after: &'a Snapshot,
    /// Its stderr.
    pub stderr: &'a [u8],
    /// Its `results.yaml`, if it wrote one.
    pub results: Option<&'a [u8]>,
}

/// Records a successful in-place render of `root`: the exact record under
/// `key` (the tree before), and a fixed point under the key of the tree it
/// left. Nothing is recorded when the render's output names `root`'s
/// absolute path. `Ok(false)`: not recorded.
pub fn record(
    store: &dyn Store,
    key: &Digest,
    root: &Path,
    options: &RenderOptions,
    run: &Rendered,
) -> krmgraph_cache::Result<bool> {
    let Rendered {
        before,
        after,
        stderr,
        results,
    } = *run;
    let changes = before.changes_to(after);
    let root_text = root.to_string_lossy();
    let mentions_root = |b: &[u8]| contains(b, root_text.as_bytes());
    let located = changes.iter().any(|c| match c {
        Change::Write(_, b) => mentions_root(b),
        Change::Delete(_) => false,
    }) || mentions_root(stderr)
        || results.is_some_and(mentions_root);
    if located {
        return Ok(false);
    }
    let encoded = encode_changes(&changes);
    let mut outputs: Vec<(&str, &[u8])> = vec![(CHANGES, &encoded), (STDERR, stderr)];
    if let Some(results) = results {
        outputs.push((RESULTS, results));
    }
    store.record(key, &kinds::render(), &outputs, &[])?;
    if let Some(after_key) = render_key(after, root, options) {
        if !super::unsettled::may_hold_unsettled_comments(after) {
            if after_key != *key {
                record_fixed_point(store, &after_key)?;
            } else {
                // The render wrote nothing new (an edit already in kpt's
                // format): the tree it read is its own fixed point. Its
                // exact record stays for --results-dir and --verify; the
                // mark lets a no-op skip the store.
                store.mark(key)?;
            }
        }
    }
    store.flush()?;
    Ok(true)
}

/// Records that the tree of `key` is a render's fixed point, unless the
/// store has a render of that tree already, and marks it
/// ([`Store::mark`]) so that a no-op render finds it without opening the
/// store.
pub fn record_fixed_point(store: &dyn Store, key: &Digest) -> krmgraph_cache::Result<()> {
    match store.peek_step(key)? {
        None => {
            store.record(key, &kinds::fixed_point(), &[], &[])?;
        }
        Some(record) if recorded(&record) != Some(Recorded::FixedPoint) => return Ok(()),
        Some(_) => {}
    }
    store.mark(key)
}

/// Whether `changes` can be applied under `root` as a render would write
/// them: every existing file it rewrites can be opened for writing and
/// every directory it writes in or deletes from is writable
/// ([`fsutil::check`]). When not, the caller renders instead of
/// replaying, so the failure is reported as a render reports it.
///
/// [`fsutil::check`]: krmgraph_util::fsutil::check
pub fn can_apply(root: &Path, changes: &[Change]) -> bool {
    krmgraph_util::fsutil::check(&file_changes(root, changes)).is_ok()
}

/// Applies an exact record's changes under `root`, all or nothing as a
/// render writes ([`fsutil::commit`]). `before` is the tree the replay
/// read: a file that no longer holds what it held there was saved by
/// someone else meanwhile and is left as it is; the paths of those are
/// returned.
///
/// [`fsutil::commit`]: krmgraph_util::fsutil::commit
pub fn apply(
    root: &Path,
    changes: &[Change],
    before: &Snapshot,
) -> Result<Vec<String>, krmgraph_util::fsutil::CommitError> {
    let digests = before.file_digests();
    let file_changes = changes
        .iter()
        .map(|change| match change {
            Change::Write(path, bytes) => match digests.get(path) {
                Some(read) => krmgraph_util::fsutil::FileChange::WriteUnlessChanged(
                    root.join(path),
                    bytes,
                    *read.as_bytes(),
                ),
                None => krmgraph_util::fsutil::FileChange::Write(root.join(path), bytes),
            },
            Change::Delete(path) => match digests.get(path) {
                Some(read) => krmgraph_util::fsutil::FileChange::RemoveUnlessChanged(
                    root.join(path),
                    *read.as_bytes(),
                ),
                None => krmgraph_util::fsutil::FileChange::Remove(root.join(path)),
            },
        })
        .collect::<Vec<_>>();
    let kept = krmgraph_util::fsutil::commit(&file_changes)?;
    Ok(kept
        .iter()
        .filter_map(|path| path.strip_prefix(root).ok())
        .map(|rel| rel.to_string_lossy().replace('\\', "/"))
        .collect())
}

fn file_changes<'a>(
    root: &Path,
    changes: &'a [Change],
) -> Vec<krmgraph_util::fsutil::FileChange<'a>> {
    changes
        .iter()
        .map(|change| match change {
            Change::Write(path, bytes) => {
                krmgraph_util::fsutil::FileChange::Write(root.join(path), bytes)
            }
            Change::Delete(path) => krmgraph_util::fsutil::FileChange::Remove(root.join(path)),
        })
        .collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && memchr::memmem::find(haystack, needle).is_some()
}

/// `u32 count`, then per change `u8 kind (1 write, 0 delete)`, `u32` path
/// length, path, and for writes `u64` length and bytes; little-endian.
fn encode_changes(changes: &[Change]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend((changes.len() as u32).to_le_bytes());
    for change in changes {
        let (kind, path, bytes) = match change {
            Change::Write(p, b) => (1u8, p, Some(b)),
            Change::Delete(p) => (0u8, p, None),
        };
        out.push(kind);
        out.extend((path.len() as u32).to_le_bytes());
        out.extend(path.as_bytes());
        if let Some(bytes) = bytes {
            out.extend((bytes.len() as u64).to_le_bytes());
            out.extend(bytes);
        }
    }
    out
}

fn decode_changes(mut b: &[u8]) -> Option<Vec<Change>> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if b.len() < n {
            return None;
        }
        let (head, tail) = b.split_at(n);
        *b = tail;
        Some(head)
    }
    let count = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?);
    let mut changes = Vec::new();
    for _ in 0..count {
        let kind = take(&mut b, 1)?[0];
        let len = u32::from_le_bytes(take(&mut b, 4)?.try_into().ok()?) as usize;
        let path = String::from_utf8(take(&mut b, len)?.to_vec()).ok()?;
        changes.push(match kind {
            1 => {
                let len = u64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?) as usize;
                Change::Write(path, take(&mut b, len)?.to_vec())
            }
            0 => Change::Delete(path),
            _ => return None,
        });
    }
    b.is_empty().then_some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_round_trip() {
        let changes = vec![
            Change::Write("a/b.yaml".into(), b"x: 1\n".to_vec()),
            Change::Delete("gone.yaml".into()),
            Change::Write("empty".into(), Vec::new()),
        ];
        let encoded = encode_changes(&changes);
        assert_eq!(decode_changes(&encoded), Some(changes));
        assert_eq!(decode_changes(&encoded[..encoded.len() - 1]), None);
        let mut longer = encoded.clone();
        longer.push(0);
        assert_eq!(decode_changes(&longer), None);
    }

    #[test]
    fn keys_follow_content_not_location() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        for dir in [a.path(), b.path()] {
            std::fs::create_dir_all(dir.join("pkg/sub")).unwrap();
            std::fs::write(
                dir.join("pkg/Kptfile"),
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\n",
            )
            .unwrap();
            std::fs::write(dir.join("pkg/sub/cm.yaml"), "kind: ConfigMap\n").unwrap();
        }
        let options = RenderOptions::default();
        let key = |dir: &Path| {
            let root = dir.join("pkg");
            render_key(&Snapshot::read(&root).unwrap(), &root, &options).unwrap()
        };
        assert_eq!(key(a.path()), key(b.path()));
        std::fs::write(b.path().join("pkg/sub/cm.yaml"), "kind: Secret\n").unwrap();
        assert_ne!(key(a.path()), key(b.path()));
    }

    #[test]
    fn replays_only_where_a_render_could_write() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.yaml"), "x: 1\n").unwrap();
        // A directory where the record writes a file: not writable, even
        // for root.
        std::fs::create_dir(tmp.path().join("d.yaml")).unwrap();
        let write = |p: &str| Change::Write(p.into(), b"y: 2\n".to_vec());
        assert!(can_apply(tmp.path(), &[write("a.yaml"), write("new.yaml")]));
        assert!(!can_apply(tmp.path(), &[write("a.yaml"), write("d.yaml")]));
        let before = Snapshot::read(tmp.path()).unwrap();
        let kept = apply(
            tmp.path(),
            &[write("a.yaml"), Change::Delete("gone.yaml".into())],
            &before,
        )
        .unwrap();
        assert!(kept.is_empty());
        assert_eq!(std::fs::read(tmp.path().join("a.yaml")).unwrap(), b"y: 2\n");
    }

    #[test]
    fn a_replay_keeps_a_file_saved_since_the_tree_was_read() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("a.yaml"), "x: 1\n").unwrap();
        std::fs::write(tmp.path().join("b.yaml"), "x: 1\n").unwrap();
        let before = Snapshot::read(tmp.path()).unwrap();
        std::fs::write(tmp.path().join("a.yaml"), "saved: by the user\n").unwrap();
        let write = |p: &str| Change::Write(p.into(), b"y: 2\n".to_vec());
        let kept = apply(tmp.path(), &[write("a.yaml"), write("b.yaml")], &before).unwrap();
        assert_eq!(kept, ["a.yaml"]);
        let read = |p: &str| std::fs::read_to_string(tmp.path().join(p)).unwrap();
        assert_eq!(read("a.yaml"), "saved: by the user\n");
        assert_eq!(read("b.yaml"), "y: 2\n");
    }

    #[test]
    fn snapshot_changes_apply() {
        let mut before = Snapshot::default();
        before
            .entries
            .insert("a".into(), Entry::File(Arc::new(b"1".to_vec())));
        before
            .entries
            .insert("b".into(), Entry::File(Arc::new(b"2".to_vec())));
        let mut after = before.clone();
        after
            .entries
            .insert("a".into(), Entry::File(Arc::new(b"3".to_vec())));
        after.entries.remove("b");
        after
            .entries
            .insert("c".into(), Entry::File(Arc::new(b"4".to_vec())));
        let changes = before.changes_to(&after);
        assert_eq!(changes.len(), 3);
        // Digests computed before carry over, and match the new bytes'.
        before.file_digests();
        let applied = before.with(&changes);
        assert_eq!(applied, after);
        assert_eq!(applied.file_digests(), after.file_digests());
        assert_eq!(applied.file_digests()["a"], Digest::of(b"3"));
        // Rewriting a file with the bytes it has keeps it.
        let same = [Change::Write("c".into(), b"4".to_vec())];
        assert_eq!(applied.with(&same).file_digests(), after.file_digests());
    }

    /// The Kptfiles' identities carry over to the tree after a render that
    /// left every Kptfile as it was, and are decoded again after one that
    /// wrote a Kptfile.
    #[test]
    fn kptfile_identities_follow_the_kptfiles() {
        let kptfile = |image: &str| {
            format!("apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\npipeline:\n  mutators:\n  - image: {image}\n")
        };
        let mut before = Snapshot::default();
        let file = |text: &str| Entry::File(Arc::new(text.as_bytes().to_vec()));
        before.entries.insert(
            "a/Kptfile".into(),
            file(&kptfile("gcr.io/kpt-fn/set-namespace:v0.4.1")),
        );
        before.entries.insert("a/cm.yaml".into(), file("x: 1\n"));
        let runner = RunnerOptions::default();
        let identities = Identities::new(&runner);
        let of = |tree: &Snapshot| tree.kptfile_identities(&identities)["a/Kptfile"].clone();
        let namespace = of(&before).expect("a built-in has an identity");
        assert!(String::from_utf8_lossy(&namespace[0]).starts_with("builtin set-namespace"));
        let edited = before.with(&[Change::Write("a/cm.yaml".into(), b"x: 2\n".to_vec())]);
        assert_eq!(of(&edited), Some(namespace.clone()));
        let relabelled = kptfile("gcr.io/kpt-fn/set-labels:v0.2.0").into_bytes();
        let rewritten = before.with(&[Change::Write("a/Kptfile".into(), relabelled)]);
        let labels = of(&rewritten).expect("a built-in has an identity");
        assert!(String::from_utf8_lossy(&labels[0]).starts_with("builtin set-labels"));
    }
}
