//! The render cache around an in-place `krmgraph render`: open the store,
//! replay a recorded render of the same tree (or skip a tree that is a
//! render's fixed point), and record a successful render. The cache never
//! fails a render: a store that cannot be used means one warning and an
//! uncached render.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use krmgraph_cache::{Digest, SledStore, Store};
use krmgraph_engine::render::shortcut::{self, Change, Replay, Snapshot};
use krmgraph_engine::render::{settled_subtrees, RenderCache, RenderOptions};

/// A render's view of the cache: the store, the tree as read before the
/// render, and its key.
pub struct Cached {
    store: Arc<SledStore>,
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
    /// The store — `None`, with one warning, when it cannot be used (the
    /// render then runs uncached) — and the tree, if it could be read.
    Store(Option<Arc<SledStore>>, Option<Tree>),
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
        Ok(store) => Opened::Store(Some(Arc::new(store)), tree),
        Err(e) => {
            eprintln!("[WARN] krmgraph: rendering without the cache: {e}");
            Opened::Store(None, None)
        }
    }
}

/// Says that `pkg` needs no render: it is a render's fixed point.
pub fn report_settled(pkg: &Path) {
    eprintln!(
        "krmgraph: {} is as its last render left it; nothing to render (--no-cache renders anyway)",
        pkg.display()
    );
}

/// The step cache of a render using `store` and the tree as read before it.
pub fn step_cache(
    store: &Arc<SledStore>,
    snapshot: Option<Arc<Snapshot>>,
    verify: bool,
) -> RenderCache {
    RenderCache {
        store: store.clone(),
        snapshot,
        verify,
    }
}

/// What the cache did for a render.
pub enum Lookup {
    /// Nothing: render.
    Miss(Option<Cached>),
    /// The render was replayed (with these writes and deletions) or
    /// skipped (none); the process exit code is 0.
    Done(Vec<Change>),
    /// The replay failed (writing a file); exit code 1.
    Failed,
}

/// Replays what `store` holds for the tree at `pkg` (as read, with its
/// key). `verify` never replays.
pub fn lookup(
    pkg: &Path,
    options: &RenderOptions,
    store: &Arc<SledStore>,
    tree: &Tree,
    verify: bool,
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
            eprintln!("[WARN] krmgraph: cache read failed, rendering: {e}");
            None
        }
    };
    match replay {
        None => Lookup::Miss(Some(cached)),
        Some(Replay::FixedPoint) => {
            // Not marked, or the no-op would not have opened the store: the
            // marks file lost it (trimmed, damaged, removed).
            let _ = cached.store.mark(&key);
            report_settled(pkg);
            Lookup::Done(Vec::new())
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
                Err(e) => {
                    if e.removing {
                        eprintln!("error: failed to delete file: {e}");
                    } else {
                        eprintln!("error: failed to save resources: {e}");
                    }
                    return Lookup::Failed;
                }
            };
            crate::render::warn_kept(&kept);
            let changes: Vec<Change> = changes
                .into_iter()
                .filter(|c| match c {
                    Change::Write(path, _) | Change::Delete(path) => !kept.contains(path),
                })
                .collect();
            let _ = std::io::stderr().write_all(&stderr);
            if let (Some(dir), Some(results)) = (&options.results_dir, results) {
                let file = dir.join("results.yaml");
                if let Err(e) = krmgraph_engine::fsutil::write_atomic(&file, &results) {
                    eprintln!("error: {}: {e}", file.display());
                    return Lookup::Failed;
                }
                eprintln!("For complete results, see {}", file.display());
            }
            Lookup::Done(changes)
        }
    }
}

impl Cached {
    /// Records the successful in-place render of `pkg` that printed
    /// `stderr` and left `files` (its output files and deletions); with
    /// `verify`, first checks it against what the cache held. `Err` is a
    /// verify failure, already reported.
    pub fn record(
        &self,
        pkg: &Path,
        options: &RenderOptions,
        stderr: &[u8],
        results_file: Option<&PathBuf>,
        files: Option<&[Change]>,
        verify: bool,
    ) -> Result<(), ()> {
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
        let root = krmgraph_engine::render::absolute(pkg);
        // Only with the whole render recorded (see `settled_subtrees`).
        let subtrees = |whole: bool| {
            if !whole {
                return Ok(0);
            }
            settled_subtrees::record(
                self.store.as_ref(),
                &root,
                &options.runner,
                &self.before,
                &after,
            )
        };
        if let Err(e) = recorded.and_then(subtrees) {
            eprintln!("[WARN] krmgraph: could not record the render in the cache: {e}");
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
    fn verify(&self, after: &Snapshot) -> Result<(), ()> {
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
                eprintln!(
                    "Error: --verify: the cached render of this tree differs from a fresh render at {path}: a pipeline is not idempotent (rendering its own output changes it) or a function is not deterministic; the stale record was removed, and --no-cache renders this tree without the cache "
                );
                Err(())
            }
        }
    }
}

/// Keeps the cache under `KRMGRAPH_CACHE_MAX_SIZE` (default 2G): past it,
/// the least recently used records go until it is at 80 % of it. Run after
/// a render, when nothing is being recorded. The store is counted (every
/// record decoded, every blob listed: milliseconds on a large cache) only
/// when its size estimate, the last count plus what renders added since,
/// passes the limit, or when the estimate is old.
pub fn keep_in_size(store: &SledStore) {
    let max = std::env::var("KRMGRAPH_CACHE_MAX_SIZE")
        .ok()
        .and_then(|v| parse_size(&v).ok())
        .unwrap_or(2 << 30);
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

/// `krmgraph cache stats|gc|clear|verify`. `gc`, `clear` and `verify`
/// open the store repairing its layout (what stands where its own files
/// belong), once they hold its lock; `stats` repairs nothing. None of them
/// uses or changes a directory that is not a krmgraph cache (the error
/// says so and what to do). A cache this process may not write is still
/// shown by `stats` and checked (nothing removed) by `verify`.
pub fn command(args: crate::args::CacheArgs) -> std::process::ExitCode {
    use crate::args::CacheCommand;
    let dir = match krmgraph_cache::resolve_dir(args.cache_dir.as_deref()) {
        Ok(dir) => dir,
        Err(e) => return failed(&e),
    };
    let repairing = !matches!(args.command, CacheCommand::Stats);
    let opened = if repairing {
        SledStore::open_repairing(&dir)
    } else {
        SledStore::open(&dir)
    };
    let store = match opened {
        Ok(store) => store,
        Err(e) if e.is_read_only() => return read_only(&dir, &args.command, &e),
        Err(e) => return failed(&e),
    };
    let shown = dir.display();
    let outcome = match args.command {
        CacheCommand::Stats => store.stats().map(|s| print_stats(&shown, &s)),
        CacheCommand::Gc { max_size } => {
            let max = match max_size.as_deref().map(parse_size) {
                None => u64::MAX,
                Some(Ok(n)) => n,
                Some(Err(e)) => {
                    eprintln!("Error: --max-size: {e} ");
                    return std::process::ExitCode::from(1);
                }
            };
            store.gc(max).map(|r| {
                print_repairs(&r.repaired);
                println!(
                    "removed {} records and {} blobs: {} → {} bytes",
                    r.records_removed, r.blobs_removed, r.bytes_before, r.bytes_after
                );
            })
        }
        CacheCommand::Clear => store.clear().map(|()| println!("cleared {shown}")),
        CacheCommand::Verify => store.verify().map(|r| {
            print_repairs(&r.repaired);
            print_verify(&r, "removed");
        }),
    };
    match outcome.and_then(|()| store.flush()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => failed(&e),
    }
}

/// Prints `e` (its message carries its cause) as kpt prints errors; exit 1.
fn failed(e: &krmgraph_cache::Error) -> std::process::ExitCode {
    eprintln!("Error: {e} ");
    std::process::ExitCode::from(1)
}

fn print_stats(dir: &dyn std::fmt::Display, s: &krmgraph_cache::Stats) {
    println!("cache: {dir}");
    println!("records: {} ({} bytes)", s.records, s.record_bytes);
    println!("blobs:   {} ({} bytes)", s.blobs, s.blob_bytes);
    println!("total:   {} bytes", s.total_bytes());
}

fn print_repairs(repaired: &[krmgraph_cache::Repair]) {
    for repair in repaired {
        println!("{repair}");
    }
}

/// The findings of a verify; `done` is "removed", or what a verify that
/// could not remove says instead.
fn print_verify(r: &krmgraph_cache::VerifyReport, done: &str) {
    println!("checked {} blobs", r.blobs_checked);
    for d in &r.bad_blobs {
        println!("{done} damaged blob {d}");
    }
    for d in r.bad_records.iter().chain(&r.dangling_records) {
        println!("{done} unusable record {d}");
    }
}

/// `stats` and `verify` of a cache this process may not write (`opening`
/// says why): through [`krmgraph_cache::ReadOnlyView`], which lists and
/// hashes the blob files and reads the records from a copy of the index.
/// `gc` and `clear` must write: they fail with the cause.
fn read_only(
    dir: &Path,
    command: &crate::args::CacheCommand,
    opening: &krmgraph_cache::Error,
) -> std::process::ExitCode {
    use crate::args::CacheCommand;
    if !matches!(command, CacheCommand::Stats | CacheCommand::Verify) {
        return failed(opening);
    }
    let view = match krmgraph_cache::ReadOnlyView::open(dir) {
        Ok(view) => view,
        Err(e) => return failed(&e),
    };
    eprintln!("krmgraph: the cache is read-only here ({opening}); reading it without writing");
    if let Some(why) = view.records_unread() {
        eprintln!("krmgraph: records not counted: {why}");
    }
    let outcome = match command {
        CacheCommand::Verify => view.verify().map(|r| {
            print_verify(&r, "found (not removed: read-only)");
            r.is_clean()
        }),
        _ => view
            .stats()
            .map(|s| print_stats(&dir.display(), &s))
            .map(|()| true),
    };
    match outcome {
        Ok(true) => std::process::ExitCode::SUCCESS,
        // Damage that a read-only verify could not remove.
        Ok(false) => std::process::ExitCode::from(1),
        Err(e) => failed(&e),
    }
}

/// `500`, `64K`, `500M`, `2G` (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => text.split_at(i),
        None => (text, ""),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 500M, 2G)"))?;
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (use K, M or G)")),
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?} is too large"))
}

/// `krmgraph graph`: the render graph with the cache's state for the tree.
pub fn graph(args: crate::args::GraphArgs) -> std::process::ExitCode {
    use krmgraph_engine::render::{graph, Order, Output};
    let pkg = krmgraph_engine::render::absolute(&args.pkg_path);
    let order = match args.order {
        Some(crate::args::OrderArg::Dfs) => Some(Order::DepthFirst),
        Some(crate::args::OrderArg::Bfs) => Some(Order::BreadthFirst),
        None => None,
    };
    let mut options = RenderOptions {
        output: Output::InPlace,
        order,
        ..RenderOptions::default()
    };
    options.runner.allow_exec = args.allow_exec;
    options.runner.no_builtins = args.no_builtins;
    options.runner.no_builtin_images = args.no_builtin.clone();
    let effective = match order {
        Some(o) => o,
        None => match krmgraph_engine::package::Package::load(&pkg, pkg.parent().unwrap_or(&pkg)) {
            Ok(root) => Order::of_root(&root),
            Err(e) => {
                eprintln!("Error: {e} ");
                return std::process::ExitCode::from(1);
            }
        },
    };
    let store = SledStore::open_default(args.cache_dir.as_deref()).map(Arc::new);
    let dyn_store = store.as_ref().ok().map(|s| s.clone() as Arc<dyn Store>);
    let g = match graph::build(&pkg, effective, &options.runner, dyn_store) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("Error: {e} ");
            return std::process::ExitCode::from(1);
        }
    };
    let state = match &store {
        Ok(store) => cache_state(&pkg, &options, store),
        Err(e) => format!("unavailable ({e})"),
    };
    let text = match args.format {
        crate::args::GraphFormat::Text => graph::to_text(&g, &state),
        crate::args::GraphFormat::Dot => graph::to_dot(&g),
        crate::args::GraphFormat::Json => graph::to_json(&g, &state),
    };
    let _ = std::io::stdout().write_all(text.as_bytes());
    std::process::ExitCode::SUCCESS
}

/// Whether the cache holds a render of this tree, without touching it.
fn cache_state(pkg: &Path, options: &RenderOptions, store: &SledStore) -> String {
    let key = Snapshot::read(pkg)
        .ok()
        .and_then(|s| shortcut::render_key(&s, pkg, options));
    let Some(key) = key else {
        return "not cacheable".into();
    };
    let short = key.short_hex(12);
    match shortcut::state(store, &key) {
        Ok(Some(shortcut::Recorded::Exact)) => {
            format!("hit: a render of this tree is recorded ({short})")
        }
        Ok(Some(shortcut::Recorded::FixedPoint)) => {
            format!("hit: this tree is a render's fixed point ({short})")
        }
        Ok(None) => format!("miss ({short})"),
        Err(e) => format!("unavailable ({e})"),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_sizes() {
        assert_eq!(super::parse_size("500"), Ok(500));
        assert_eq!(super::parse_size("64K"), Ok(64 << 10));
        assert_eq!(super::parse_size("2G"), Ok(2 << 30));
        assert!(super::parse_size("2T").is_err());
        assert!(super::parse_size("lots").is_err());
    }
}
