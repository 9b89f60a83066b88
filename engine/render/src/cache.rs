//! The cache policy around an in-place render: open the store, replay a
//! recorded render of the same tree (or skip a tree that is a render's
//! fixed point), record a successful render, and keep the store in size.
//! The cache never fails a render: a store that cannot be used means one
//! warning and an uncached render. Nothing here prints: warnings go to the
//! caller's [`Reporter`], and what a replay prints comes back to it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use krmgraph_cache::{Digest, SledStore, Store};
use krmgraph_fn::event::{Event, Reporter};

use crate::shortcut::{self, Change, Replay, Snapshot};
use crate::{settled_subtrees, MemoSession, RenderCache, RenderOptions};

fn warn(reporter: &mut dyn Reporter, message: String) {
    reporter.report(&Event::Warning(format!("krmgraph: {message}")));
}

/// A render's view of the cache: the store, the tree as read before the
/// render, and its key.
pub struct Cached {
    store: Arc<dyn Store>,
    before: Arc<Snapshot>,
    key: Digest,
}

/// The tree a render reads, and (in place) its whole-render key.
pub struct Tree {
    /// Every file under the root.
    pub snapshot: Arc<Snapshot>,
    /// `shortcut::render_key` of the snapshot, if the render has one.
    pub key: Option<Digest>,
}

/// What [`open_reading`] found.
pub enum Opened {
    /// The tree (as read) is marked as a render's fixed point: nothing to
    /// render, and the store was not opened.
    Settled(Tree),
    /// The store and the tree, if it could be read.
    Store(Arc<SledStore>, Option<Tree>),
    /// The store cannot be used (why): the render runs uncached.
    Uncached(String),
}

/// Reads the tree at `root` (unless `read` is the tree just read) and
/// computes its whole-render key; then, unless `settled_ok` and the key is
/// marked as a fixed point ([`krmgraph_cache::is_marked`]), opens the
/// cache store. A no-op render so never opens the store: opening it takes
/// about as long as reading a large tree.
pub fn open_reading(
    cache_dir: Option<&Path>,
    root: &Path,
    options: &RenderOptions,
    read: Option<Arc<Snapshot>>,
    settled_ok: bool,
) -> Opened {
    let snapshot = match read {
        Some(snapshot) => Some(snapshot),
        None => Snapshot::read(root).ok().map(Arc::new),
    };
    let tree = snapshot.map(|snapshot| Tree {
        key: shortcut::render_key(&snapshot, root, options),
        snapshot,
    });
    let dir = krmgraph_cache::resolve_dir(cache_dir);
    let marked = |tree: &Tree| match (tree.key, &dir) {
        (Some(key), Ok(dir)) => settled_ok && krmgraph_cache::is_marked(dir, &key),
        _ => false,
    };
    let tree = match tree {
        Some(tree) if marked(&tree) => return Opened::Settled(tree),
        tree => tree,
    };
    match dir.and_then(|dir| SledStore::open(&dir)) {
        Ok(store) => Opened::Store(Arc::new(store), tree),
        Err(e) => Opened::Uncached(e.to_string()),
    }
}

/// The record kinds a shared remote cache serves and keeps
/// ([`krmgraph_cache::Tiered`]).
pub fn shared_kinds() -> [&'static str; 5] {
    crate::stepcache::kinds::shared()
}

/// Of those, the kinds a remote keeps whole, not in content-defined
/// chunks: the whole-render record, which a fresh checkout reads alone
/// (one lookup), and whose files no other record repeats.
pub fn whole_kinds() -> [&'static str; 1] {
    ["render"]
}

/// The step cache of a render using `store` and the tree as read before
/// it, in the session `memos` (one per `render`, one for all the renders
/// of a `watch`).
pub fn step_cache(
    store: &Arc<dyn Store>,
    snapshot: Option<Arc<Snapshot>>,
    verify: bool,
    memos: Arc<MemoSession>,
) -> RenderCache {
    RenderCache {
        store: store.clone(),
        snapshot,
        verify,
        memos,
    }
}

/// What the cache did for a render.
pub enum Lookup {
    /// Nothing: render.
    Miss(Option<Cached>),
    /// The tree is a render's fixed point: nothing to render.
    Settled,
    /// The render was replayed; the process exit code is 0.
    Replayed(Replayed),
    /// The replay failed writing a file (kpt's message); exit code 1.
    Failed(String),
}

/// A replayed render, for its caller to print as the render printed.
pub struct Replayed {
    /// The writes and deletions made.
    pub changes: Vec<Change>,
    /// Files left alone because they changed while the replay ran.
    pub kept: Vec<String>,
    /// What the render printed to stderr.
    pub stderr: Vec<u8>,
    /// The `results.yaml` written, with `--results-dir`.
    pub results_file: Option<PathBuf>,
}

/// Replays what `store` holds for the tree at `pkg` (as read, with its
/// key). `verify` never replays.
pub fn lookup(
    pkg: &Path,
    options: &RenderOptions,
    store: &Arc<dyn Store>,
    tree: &Tree,
    verify: bool,
    reporter: &mut dyn Reporter,
) -> Lookup {
    let Some(key) = tree.key else {
        return Lookup::Miss(None);
    };
    let cached = Cached {
        store: store.clone(),
        before: tree.snapshot.clone(),
        key,
    };
    if verify {
        return Lookup::Miss(Some(cached));
    }
    let replay = match shortcut::lookup(cached.store.as_ref(), &key, options.results_dir.is_some())
    {
        Ok(replay) => replay,
        Err(e) => {
            warn(reporter, format!("cache read failed, rendering: {e}"));
            None
        }
    };
    match replay {
        None => Lookup::Miss(Some(cached)),
        Some(Replay::FixedPoint) => {
            // Not marked, or the no-op would not have opened the store: the
            // marks file lost it (trimmed, damaged, removed).
            let _ = cached.store.mark(&key);
            Lookup::Settled
        }
        Some(Replay::Exact { changes, .. }) if !shortcut::can_apply(pkg, &changes) => {
            Lookup::Miss(Some(cached))
        }
        Some(Replay::Exact {
            changes,
            stderr,
            results,
        }) => {
            let kept = match shortcut::apply(pkg, &changes, &cached.before) {
                Ok(kept) => kept,
                Err(e) if e.removing => {
                    return Lookup::Failed(format!("error: failed to delete file: {e}"))
                }
                Err(e) => return Lookup::Failed(format!("error: failed to save resources: {e}")),
            };
            let changes: Vec<Change> = changes
                .into_iter()
                .filter(|c| match c {
                    Change::Write(path, _) | Change::Delete(path) => !kept.contains(path),
                })
                .collect();
            let mut results_file = None;
            if let (Some(dir), Some(results)) = (&options.results_dir, results) {
                let file = dir.join("results.yaml");
                if let Err(e) = krmgraph_util::fsutil::write_atomic(&file, &results) {
                    return Lookup::Failed(format!("error: {}: {e}", file.display()));
                }
                results_file = Some(file);
            }
            Lookup::Replayed(Replayed {
                changes,
                kept,
                stderr,
                results_file,
            })
        }
    }
}

impl Cached {
    /// Records the successful in-place render of `pkg` that printed
    /// `stderr` and left `files` (its output files and deletions); with
    /// `verify`, first checks it against what the cache held. `Err` is a
    /// verify failure, with the message to print.
    #[allow(clippy::too_many_arguments)] // one per input of a record
    pub fn record(
        &self,
        pkg: &Path,
        options: &RenderOptions,
        stderr: &[u8],
        results_file: Option<&PathBuf>,
        files: Option<&[Change]>,
        verify: bool,
        reporter: &mut dyn Reporter,
    ) -> Result<(), String> {
        let Some(after) = self.after(pkg, results_file, files) else {
            return Ok(());
        };
        if verify {
            self.verify(&after)?;
        }
        let results = results_file.and_then(|f| std::fs::read(f).ok());
        let run = shortcut::Rendered {
            before: self.before.as_ref(),
            after: &after,
            stderr,
            results: results.as_deref(),
        };
        let recorded = shortcut::record(self.store.as_ref(), &self.key, pkg, options, &run);
        let root = crate::absolute(pkg);
        // Only with the whole render recorded (see `settled_subtrees`).
        let subtrees = |whole: bool| {
            if !whole {
                return Ok(0);
            }
            settled_subtrees::record(self.store.as_ref(), &root, options, &self.before, &after)
        };
        let left = |n| crate::explain::record_left(self.store.as_ref(), &root, &after).map(|()| n);
        if let Err(e) = recorded.and_then(subtrees).and_then(left) {
            warn(
                reporter,
                format!("could not record the render in the cache: {e}"),
            );
        }
        Ok(())
    }

    /// The tree as the render left it: the tree it read with the files it
    /// wrote and deleted, so that an edit made while it ran is not taken
    /// for its output (and the next render renders it). Read again where
    /// that cannot be told from the writes: a symlink in the tree (a write
    /// through it changes its target), or `results.yaml` written inside it.
    fn after(
        &self,
        pkg: &Path,
        results_file: Option<&PathBuf>,
        files: Option<&[Change]>,
    ) -> Option<Snapshot> {
        let has_link = || {
            self.before
                .entries()
                .values()
                .any(|e| matches!(e, shortcut::Entry::Link(_)))
        };
        let results_outside = || match results_file {
            None => true,
            Some(file) => match (std::fs::canonicalize(file), std::fs::canonicalize(pkg)) {
                (Ok(file), Ok(pkg)) => !file.starts_with(pkg),
                _ => false,
            },
        };
        match files {
            Some(files) if !has_link() && results_outside() => Some(self.before.with(files)),
            _ => Snapshot::read(pkg).ok(),
        }
    }

    /// `--verify`: the fresh render must have done what the cache says a
    /// render of this tree does.
    fn verify(&self, after: &Snapshot) -> Result<(), String> {
        let expected = match shortcut::lookup(self.store.as_ref(), &self.key, false) {
            Ok(Some(Replay::FixedPoint)) => self.before.as_ref().clone(),
            Ok(Some(Replay::Exact { changes, .. })) => self.before.with(&changes),
            _ => return Ok(()),
        };
        let differing = expected
            .entries()
            .keys()
            .chain(after.entries().keys())
            .find(|path| expected.entries().get(*path) != after.entries().get(*path));
        match differing {
            None => Ok(()),
            Some(path) => {
                let _ = self.store.remove_step(&self.key);
                Err(format!(
                    "Error: --verify: the cached render of this tree differs from a fresh render at {path}: a pipeline is not idempotent (rendering its own output changes it) or a function is not deterministic; the stale record was removed, and --no-cache renders this tree without the cache "
                ))
            }
        }
    }
}

/// Keeps the cache under `max` bytes: past it, the least recently used
/// records go until it is at 80 % of it. Run after a render, when nothing
/// is being recorded. The store is counted (every record decoded, every
/// blob listed: milliseconds on a large cache) only when its size
/// estimate, the last count plus what renders added since, passes the
/// limit, or when the estimate is old.
pub fn keep_in_size(store: &SledStore, max: u64) {
    if let Some(estimate) = store.size_estimate().filter(|&size| size <= max) {
        let _ = store.save_size_estimate(estimate, false);
        return;
    }
    let Ok(stats) = store.stats() else {
        return;
    };
    let mut size = stats.total_bytes();
    if size > max {
        match store.gc(max / 10 * 8) {
            Ok(report) => size = report.bytes_after,
            Err(_) => return,
        }
    }
    let _ = store.save_size_estimate(size, true);
}
