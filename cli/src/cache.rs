//! The render cache around an in-place `krmgraph render`: open the store,
//! replay a recorded render of the same tree (or skip a tree that is a
//! render's fixed point), and record a successful render. The cache never
//! fails a render: a store that cannot be used means one warning and an
//! uncached render.

use std::io::Write;
use std::path::{Path, PathBuf};

use krmgraph_cache::{Digest, SledStore, Store};
use krmgraph_engine::render::shortcut::{self, Replay, Snapshot};
use krmgraph_engine::render::RenderOptions;

/// A render's view of the cache: the store, the tree as read before the
/// render, and its key.
pub struct Cached {
    store: SledStore,
    before: Snapshot,
    key: Digest,
}

/// What the cache did for a render.
pub enum Lookup {
    /// Nothing: render.
    Miss(Option<Cached>),
    /// The render was replayed or skipped; the process exit code is 0.
    Done,
    /// The replay failed (writing a file); exit code 1.
    Failed,
}

/// Opens the store, keys the tree at `pkg` and replays what it holds for
/// it. `verify` never replays.
pub fn lookup(
    pkg: &Path,
    options: &RenderOptions,
    cache_dir: Option<&Path>,
    verify: bool,
) -> Lookup {
    let store = match SledStore::open_default(cache_dir) {
        Ok(store) => store,
        Err(e) => {
            eprintln!("[WARN] krmgraph: rendering without the cache: {e}");
            return Lookup::Miss(None);
        }
    };
    let Ok(before) = Snapshot::read(pkg) else {
        return Lookup::Miss(None);
    };
    let Some(key) = shortcut::render_key(&before, pkg, options) else {
        return Lookup::Miss(None);
    };
    let cached = Cached { store, before, key };
    if verify {
        return Lookup::Miss(Some(cached));
    }
    let replay = match shortcut::lookup(&cached.store, &key, options.results_dir.is_some()) {
        Ok(replay) => replay,
        Err(e) => {
            eprintln!("[WARN] krmgraph: cache read failed, rendering: {e}");
            None
        }
    };
    match replay {
        None => Lookup::Miss(Some(cached)),
        Some(Replay::FixedPoint) => {
            eprintln!(
                "krmgraph: {} is as its last render left it; nothing to render (--no-cache renders anyway)",
                pkg.display()
            );
            Lookup::Done
        }
        Some(Replay::Exact {
            changes,
            stderr,
            results,
        }) => {
            if let Err(e) = shortcut::apply(pkg, &changes) {
                eprintln!("error: failed to save resources: {e}");
                return Lookup::Failed;
            }
            let _ = std::io::stderr().write_all(&stderr);
            if let (Some(dir), Some(results)) = (&options.results_dir, results) {
                let file = dir.join("results.yaml");
                if let Err(e) = krmgraph_engine::fsutil::write_atomic(&file, &results) {
                    eprintln!("error: {}: {e}", file.display());
                    return Lookup::Failed;
                }
                eprintln!("For complete results, see {}", file.display());
            }
            Lookup::Done
        }
    }
}

impl Cached {
    /// Records the successful in-place render of `pkg` that printed
    /// `stderr`; with `verify`, first checks it against what the cache held.
    /// `Err` is a verify failure, already reported.
    pub fn record(
        &self,
        pkg: &Path,
        options: &RenderOptions,
        stderr: &[u8],
        results_file: Option<&PathBuf>,
        verify: bool,
    ) -> Result<(), ()> {
        let Ok(after) = Snapshot::read(pkg) else {
            return Ok(());
        };
        if verify {
            self.verify(&after)?;
        }
        let results = results_file.and_then(|f| std::fs::read(f).ok());
        let run = shortcut::Rendered {
            before: &self.before,
            after: &after,
            stderr,
            results: results.as_deref(),
        };
        if let Err(e) = shortcut::record(&self.store, &self.key, pkg, options, &run) {
            eprintln!("[WARN] krmgraph: could not record the render in the cache: {e}");
        }
        Ok(())
    }

    /// `--verify`: the fresh render must have done what the cache says a
    /// render of this tree does.
    fn verify(&self, after: &Snapshot) -> Result<(), ()> {
        let expected = match shortcut::lookup(&self.store, &self.key, false) {
            Ok(Some(Replay::FixedPoint)) => self.before.clone(),
            Ok(Some(Replay::Exact { changes, .. })) => self.before.with(&changes),
            _ => return Ok(()),
        };
        let differing = expected
            .entries
            .keys()
            .chain(after.entries.keys())
            .find(|path| expected.entries.get(*path) != after.entries.get(*path));
        match differing {
            None => Ok(()),
            Some(path) => {
                let _ = self.store.remove_step(&self.key);
                eprintln!(
                    "Error: --verify: the cached render of this tree differs from a fresh render at {path}: a pipeline is not idempotent (rendering its own output changes it) or a function is not deterministic "
                );
                Err(())
            }
        }
    }
}
