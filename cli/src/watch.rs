//! `krmgraph watch`: render a package in place, then render it again
//! whenever the tree under it changes. File events only say when to look:
//! once they stop for `--debounce-ms`, the tree is read and compared with
//! what the last render left (the tree it read with its own writes, not a
//! second read, so a file saved while it ran still counts). The render's
//! own writes, saves that change nothing, `.git` and `results.yaml` are
//! therefore not changes. Renders run in this process and share what the
//! engine remembers between renders (the item memo); the cache store is
//! opened per render, so other krmgraph processes can use it meanwhile.
//!
//! Ctrl-C (or SIGTERM) while waiting stops at once; during a render it
//! stops when the render has finished, so no render is cut off halfway
//! through writing the tree. A second one stops at once.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use krmgraph_engine::render::shortcut::{Entry, Snapshot};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::args::WatchArgs;
use crate::render::{try_run, Left};

/// How often the polling watcher looks when inotify cannot watch the tree.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How often waiting looks whether it was interrupted.
const TICK: Duration = Duration::from_millis(50);

/// Runs `krmgraph watch` until it is interrupted (exit code 130 for
/// SIGINT, 143 for SIGTERM, as a shell reports them); exit code 1 when the
/// tree cannot be watched or read.
pub fn run(args: WatchArgs) -> ExitCode {
    if args.render.output.as_deref().is_some_and(|o| !o.is_empty()) {
        eprintln!("Error: krmgraph watch renders in place: drop -o (krmgraph render -o writes elsewhere once) ");
        return ExitCode::from(1);
    }
    let stop = match Stop::register() {
        Ok(stop) => stop,
        Err(e) => {
            eprintln!("Error: cannot handle Ctrl-C: {e} ");
            return ExitCode::from(1);
        }
    };
    match watch(&args, stop.as_ref()) {
        Ok(()) => {
            eprintln!("krmgraph watch: stopped");
            ExitCode::from(stop.exit_code())
        }
        Err(message) => {
            eprintln!("Error: {message} ");
            ExitCode::from(1)
        }
    }
}

/// Whether SIGINT or SIGTERM arrived, and whether a render is running; a
/// second signal exits the process at once.
struct Stop {
    signal: AtomicI32,
    rendering: AtomicBool,
}

impl Stop {
    fn register() -> std::io::Result<Arc<Stop>> {
        use signal_hook::consts::{SIGINT, SIGTERM};
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        let stop = Arc::new(Stop {
            signal: AtomicI32::new(0),
            rendering: AtomicBool::new(false),
        });
        let seen = stop.clone();
        std::thread::spawn(move || {
            for signal in signals.forever() {
                if seen.signal.swap(signal, Ordering::SeqCst) != 0 {
                    std::process::exit(exit_code(signal).into());
                }
                if seen.rendering.load(Ordering::SeqCst) {
                    eprintln!("\nkrmgraph watch: stopping once this render has finished (Ctrl-C again stops now)");
                }
            }
        });
        Ok(stop)
    }

    fn requested(&self) -> bool {
        self.signal.load(Ordering::SeqCst) != 0
    }

    fn exit_code(&self) -> u8 {
        exit_code(self.signal.load(Ordering::SeqCst))
    }
}

/// As a shell reports a process ended by the signal.
fn exit_code(signal: i32) -> u8 {
    if signal == signal_hook::consts::SIGTERM {
        143
    } else {
        130
    }
}

fn watch(args: &WatchArgs, stop: &Stop) -> Result<(), String> {
    let pkg = &args.render.pkg_path;
    let root = std::fs::canonicalize(pkg).map_err(|e| format!("{}: {e}", pkg.display()))?;
    let ignored = results_dir_inside(args, &root);
    // Watching starts before the first read, so no edit falls between.
    let (sender, events) = channel();
    let _watcher = start_watcher(&root, sender)?;
    let debounce = Duration::from_millis(args.debounce_ms);
    let mut known = render(args, &root, read(&root)?, stop);
    loop {
        match wait_until_quiet(&events, debounce, stop) {
            Wait::Changed => {}
            Wait::Stopped => return Ok(()),
            Wait::Gone => return Err(format!("stopped watching {}", root.display())),
        }
        let now = read(&root)?;
        let changed = changed_paths(&known, &now, ignored.as_deref());
        if let Some(first) = changed.first() {
            eprintln!(
                "krmgraph watch: {first}{} changed; rendering",
                match changed.len() {
                    1 => String::new(),
                    n => format!(" and {} other file(s)", n - 1),
                }
            );
            known = render(args, &root, now, stop);
        }
    }
}

fn read(root: &Path) -> Result<Snapshot, String> {
    Snapshot::read(root).map_err(|e| format!("reading {}: {e}", root.display()))
}

/// Renders once; the tree as the render left it.
fn render(args: &WatchArgs, root: &Path, before: Snapshot, stop: &Stop) -> Snapshot {
    let started = Instant::now();
    let mut left = Left::Unknown;
    stop.rendering.store(true, Ordering::SeqCst);
    let ok = try_run(&args.render, &mut left).is_ok();
    stop.rendering.store(false, Ordering::SeqCst);
    // A write through a symlink changes its target, which the list of
    // writes does not show.
    let has_link = before.entries.values().any(|e| matches!(e, Entry::Link(_)));
    let after = match left {
        Left::Changes(changes) if !has_link => before.with(&changes),
        _ => Snapshot::read(root).unwrap_or(before),
    };
    eprintln!(
        "krmgraph watch: {} in {:.2?}; watching {} (Ctrl-C stops)",
        if ok { "rendered" } else { "the render failed" },
        started.elapsed(),
        args.render.pkg_path.display()
    );
    after
}

/// The files that differ between `known` and `now` (written, created,
/// deleted, or a symlink retargeted), sorted, less those under `ignored`.
fn changed_paths(known: &Snapshot, now: &Snapshot, ignored: Option<&str>) -> Vec<String> {
    let keys = known.entries.keys().chain(now.entries.keys());
    let mut changed: Vec<String> = keys
        .filter(|path| known.entries.get(*path) != now.entries.get(*path))
        .filter(|path| ignored.is_none_or(|dir| !path.starts_with(&format!("{dir}/"))))
        .cloned()
        .collect();
    changed.sort();
    changed.dedup();
    changed
}

/// `--results-dir` as a slash path relative to the root, when it is inside
/// it: each render rewrites `results.yaml`, which is not an edit.
fn results_dir_inside(args: &WatchArgs, root: &Path) -> Option<String> {
    let dir = args.render.results_dir.as_ref()?;
    std::fs::create_dir_all(dir).ok()?;
    let dir = std::fs::canonicalize(dir).ok()?;
    let rel = dir.strip_prefix(root).ok()?;
    Some(rel.to_string_lossy().replace('\\', "/"))
}

/// Watches `root` recursively, sending one message per event that may
/// have changed a file. Falls back, with a warning, to polling when
/// inotify refuses (its per-user watch limit).
fn start_watcher(root: &Path, sender: Sender<()>) -> Result<Box<dyn Watcher>, String> {
    let native = notify::recommended_watcher(handler(sender.clone())).and_then(|mut w| {
        w.watch(root, RecursiveMode::Recursive)?;
        Ok(w)
    });
    let error = match native {
        Ok(watcher) => return Ok(Box::new(watcher)),
        Err(e) => e,
    };
    eprintln!(
        "[WARN] krmgraph watch: cannot watch {} for events ({error}; raising fs.inotify.max_user_watches helps); polling every {}s instead",
        root.display(),
        POLL_INTERVAL.as_secs()
    );
    let config = notify::Config::default().with_poll_interval(POLL_INTERVAL);
    let mut poller = notify::PollWatcher::new(handler(sender), config)
        .map_err(|e| format!("cannot watch {}: {e}", root.display()))?;
    poller
        .watch(root, RecursiveMode::Recursive)
        .map_err(|e| format!("cannot watch {}: {e}", root.display()))?;
    Ok(Box::new(poller))
}

/// The watcher's callback: events that may change a file outside `.git`
/// (and errors, which say the tree must be looked at) become a message.
fn handler(sender: Sender<()>) -> impl notify::EventHandler {
    move |event: notify::Result<notify::Event>| {
        let relevant = match &event {
            Ok(event) => may_change_files(event),
            Err(_) => true,
        };
        if relevant {
            let _ = sender.send(());
        }
    }
}

fn may_change_files(event: &notify::Event) -> bool {
    let in_git = |path: &PathBuf| path.components().any(|c| c.as_os_str() == ".git");
    !matches!(event.kind, EventKind::Access(_)) && !event.paths.iter().all(in_git)
}

/// How waiting for events ended.
enum Wait {
    /// Events came, then none for the debounce period.
    Changed,
    /// SIGINT or SIGTERM.
    Stopped,
    /// The watcher is gone.
    Gone,
}

/// Blocks until an event arrives, then until none has for `quiet`, looking
/// every `TICK` whether to stop.
fn wait_until_quiet(events: &Receiver<()>, quiet: Duration, stop: &Stop) -> Wait {
    let mut last_event = None::<Instant>;
    loop {
        if stop.requested() {
            return Wait::Stopped;
        }
        if last_event.is_some_and(|at| at.elapsed() >= quiet) {
            return Wait::Changed;
        }
        match events.recv_timeout(TICK.min(quiet)) {
            Ok(()) => last_event = Some(Instant::now()),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return Wait::Gone,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[(&str, &str)]) -> Snapshot {
        Snapshot {
            entries: files
                .iter()
                .map(|(p, b)| (p.to_string(), Entry::File(b.as_bytes().to_vec())))
                .collect(),
        }
    }

    #[test]
    fn changed_paths_are_edits_creations_and_deletions_less_the_results_dir() {
        let known = tree(&[
            ("Kptfile", "k"),
            ("a.yaml", "a"),
            ("b.yaml", "b"),
            ("out/results.yaml", "r"),
        ]);
        let now = tree(&[
            ("Kptfile", "k"),
            ("a.yaml", "A"),
            ("c.yaml", "c"),
            ("out/results.yaml", "R"),
        ]);
        assert_eq!(
            changed_paths(&known, &now, Some("out")),
            ["a.yaml", "b.yaml", "c.yaml"]
        );
        assert_eq!(changed_paths(&known, &now, None).len(), 4);
        assert!(changed_paths(&known, &known.clone(), None).is_empty());
    }

    #[test]
    fn events_inside_git_or_reads_do_not_count() {
        let event = |kind, path: &str| notify::Event::new(kind).add_path(PathBuf::from(path));
        let modify = EventKind::Modify(notify::event::ModifyKind::Any);
        let access = EventKind::Access(notify::event::AccessKind::Any);
        assert!(may_change_files(&event(modify, "/p/a.yaml")));
        assert!(!may_change_files(&event(modify, "/p/.git/index")));
        assert!(!may_change_files(&event(access, "/p/a.yaml")));
    }
}
