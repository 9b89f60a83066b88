//! `krmgraph cache` and `krmgraph graph`: the cache's maintenance commands
//! and the DAG view; and the render's size limit
//! (`KRMGRAPH_CACHE_MAX_SIZE`). The cache policy around a render is the
//! render crate's (`krmgraph_render::cache`).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use krmgraph_cache::{SledStore, Store};
use krmgraph_render::shortcut::{self, Snapshot};
use krmgraph_render::RenderOptions;

/// Says that `pkg` needs no render: it is a render's fixed point.
pub fn report_settled(pkg: &Path, ui: &crate::ui::Ui) {
    if !ui.warns() {
        return;
    }
    eprintln!(
        "krmgraph: {} is as its last render left it; nothing to render (--no-cache renders anyway)",
        pkg.display()
    );
}

/// The cache's size limit: `KRMGRAPH_CACHE_MAX_SIZE` (default 2G).
pub fn max_size() -> u64 {
    std::env::var("KRMGRAPH_CACHE_MAX_SIZE")
        .ok()
        .and_then(|v| parse_size(&v).ok())
        .unwrap_or(2 << 30)
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
        CacheCommand::Stats => store.stats().map(|s| {
            print_stats(&shown, &s);
            crate::remote::print_stats(&args.remote);
        }),
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
    println!(
        "records: {:>8}  {:>10}",
        s.records,
        human_size(s.record_bytes)
    );
    for (kind, count) in &s.kinds {
        println!("  {:<14} {count:>3}", kind.to_string());
    }
    println!("blobs:   {:>8}  {:>10}", s.blobs, human_size(s.blob_bytes));
    println!("total:   {:>8}  {:>10}", "", human_size(s.total_bytes()));
}

/// A size as `du -h` and cargo print one: bytes below 1 KiB, else one
/// decimal in the largest binary unit that keeps it at 1 or more.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
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
    use krmgraph_render::{graph, Order, Output};
    let pkg = krmgraph_render::absolute(&args.pkg_path);
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
        None => match krmgraph_render::Package::load(&pkg, pkg.parent().unwrap_or(&pkg)) {
            Ok(root) => Order::of_root(&root),
            Err(e) => {
                eprintln!("Error: {e} ");
                return std::process::ExitCode::from(1);
            }
        },
    };
    let store = SledStore::open_default(args.cache_dir.as_deref()).map(Arc::new);
    let dyn_store = store.as_ref().ok().map(|s| s.clone() as Arc<dyn Store>);
    let mut g = match graph::build(&pkg, effective, &options, dyn_store) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("Error: {e} ");
            return std::process::ExitCode::from(1);
        }
    };
    let has_exec = g
        .order
        .iter()
        .any(|&i| matches!(g.graph[i], graph::GraphNode::Step { exec: true, .. }));
    let state = match &store {
        // A read-only look needs no permission: what a render given
        // --allow-exec would find is shown too.
        Ok(store) if has_exec && !options.runner.allow_exec => {
            let mut allowed = options.clone();
            allowed.runner.allow_exec = true;
            format!(
                "{} without --allow-exec (which a render of this tree needs: it has exec: functions); with --allow-exec: {}",
                cache_state(&pkg, &options, store).0,
                cache_state(&pkg, &allowed, store).0
            )
        }
        Ok(store) => {
            let (state, hit) = cache_state(&pkg, &options, store);
            if hit {
                graph::replayed_whole(&mut g);
            }
            state
        }
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

/// Whether the cache holds a render of this tree, without touching it:
/// the state as the graph prints it, and whether a render is replayed
/// whole.
fn cache_state(pkg: &Path, options: &RenderOptions, store: &SledStore) -> (String, bool) {
    let key = Snapshot::read(pkg)
        .ok()
        .and_then(|s| shortcut::render_key(&s, pkg, options));
    let Some(key) = key else {
        return ("not cacheable".into(), false);
    };
    let short = key.short_hex(12);
    match shortcut::state(store, &key) {
        Ok(Some(shortcut::Recorded::Exact)) => (
            format!("hit: a render of this tree is recorded ({short})"),
            true,
        ),
        Ok(Some(shortcut::Recorded::FixedPoint)) => (
            format!("hit: this tree is a render's fixed point ({short})"),
            true,
        ),
        Ok(None) => (format!("miss ({short})"), false),
        Err(e) => (format!("unavailable ({e})"), false),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn sizes_read_as_du_h() {
        assert_eq!(super::human_size(0), "0 B");
        assert_eq!(super::human_size(1023), "1023 B");
        assert_eq!(super::human_size(1536), "1.5 KiB");
        assert_eq!(super::human_size(5 << 20), "5.0 MiB");
        assert_eq!(super::human_size(3 << 30), "3.0 GiB");
    }

    #[test]
    fn parses_sizes() {
        assert_eq!(super::parse_size("500"), Ok(500));
        assert_eq!(super::parse_size("64K"), Ok(64 << 10));
        assert_eq!(super::parse_size("2G"), Ok(2 << 30));
        assert!(super::parse_size("2T").is_err());
        assert!(super::parse_size("lots").is_err());
    }
}
