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
//! through writing the tree (exec functions run in process groups of their
//! own, so a terminal's Ctrl-C does not reach them). A second one kills
//! the running functions and stops at once.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use krmgraph_render::shortcut::{Entry, Snapshot};
use notify::{EventKind, RecursiveMode, Watcher};

use crate::args::WatchArgs;
use crate::render::{try_run, Left, Watching};
use crate::ui::{Log, Paint, Ui};

/// How often the polling watcher looks when inotify cannot watch the tree.
const POLL_INTERVAL: Duration = Duration::from_secs(1);

/// How often waiting looks whether it was interrupted.
const TICK: Duration = Duration::from_millis(50);

/// Runs `krmgraph watch` until it is interrupted (exit code 130 for
/// SIGINT, 143 for SIGTERM, as a shell reports them); exit code 1 when the
/// tree cannot be watched or read.
pub fn run(args: WatchArgs, mut ui: Ui) -> ExitCode {
    use std::io::IsTerminal;
    ui.watching = true;
    // On a terminal, each render is a header and a summary line (or the
    // failure); `-v` (or a pipe) gets kpt's whole log.
    if ui.log == Log::Full && !ui.verbose && std::io::stderr().is_terminal() {
        ui.log = Log::Brief;
    }
    let ignore = match Ignore::new(&args.ignore) {
        Ok(ignore) => ignore,
        Err(message) => {
            eprintln!("Error: {message} ");
            return ExitCode::from(2);
        }
    };
    if args.render.check {
        eprintln!("Error: krmgraph watch renders in place after every change: --check is render's (krmgraph render --check) ");
        return ExitCode::from(1);
    }
    if args.render.output.as_deref().is_some_and(|o| !o.is_empty()) {
        eprintln!("Error: krmgraph watch renders in place: drop -o (krmgraph render -o writes elsewhere once) ");
        return ExitCode::from(1);
    }
    // A Ctrl-C at the terminal goes to the whole foreground process group;
    // exec functions run in groups of their own, so the render it
    // interrupts finishes.
    let stop = match Stop::register() {
        Ok(stop) => stop,
        Err(e) => {
            eprintln!("Error: cannot handle Ctrl-C: {e} ");
            return ExitCode::from(1);
        }
    };
    let session = Session {
        args: &args,
        ui: &ui,
        stop: stop.as_ref(),
        ignore,
        memos: Arc::default(),
        memo_record: Arc::default(),
    };
    match session.watch() {
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
                    krmgraph_render::kill_running();
                    // The render's progress bar, if one is drawn, goes.
                    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                        eprint!("\r\x1b[2K");
                    }
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

/// One `krmgraph watch`: its flags, how it prints, its stop flag and what
/// it does not render for.
struct Session<'a> {
    args: &'a WatchArgs,
    ui: &'a Ui,
    stop: &'a Stop,
    ignore: Ignore,
    /// The memos every render of the session learns into and draws on.
    memos: Arc<krmgraph_render::Memos>,
    /// The memos' record: read by the first render, written again only
    /// when a render learnt enough since.
    memo_record: Arc<krmgraph_render::MemoSession>,
}

impl Session<'_> {
    fn watch(&self) -> Result<(), String> {
        let pkg = &self.args.render.pkg_path;
        let root = std::fs::canonicalize(pkg).map_err(|e| format!("{}: {e}", pkg.display()))?;
        let ignored = ignored_paths(self.args, &root);
        // Watching starts before the first read, so no edit falls between.
        let (sender, events) = channel();
        let _watcher = start_watcher(&root, sender)?;
        let debounce = Duration::from_millis(self.args.debounce_ms);
        self.header(&format!("rendering {}", pkg.display()), true);
        let mut known = self.render(&root, read(&root)?);
        loop {
            match wait_until_quiet(&events, debounce, self.stop) {
                Wait::Changed => {}
                Wait::Stopped => return Ok(()),
                Wait::Gone => return Err(format!("stopped watching {}", root.display())),
            }
            let Some(now) = read_settled(&root)? else {
                continue;
            };
            let changed: Vec<String> = changed_paths(&known, &now, &ignored)
                .into_iter()
                .filter(|path| !self.ignore.matches(path) && render_reads(path, &now, &root))
                .collect();
            let Some(first) = changed.first() else {
                // Nothing a render reads: the next render compares with
                // the tree as it is now.
                known = now;
                continue;
            };
            if self.stop.requested() {
                return Ok(());
            }
            let others = match changed.len() {
                1 => String::new(),
                n => format!(" and {} other file(s)", n - 1),
            };
            self.header(&format!("{first}{others} changed; rendering"), false);
            known = self.render(&root, now);
        }
    }

    /// The line before a render (with kpt's whole log, none before the
    /// first); in the brief mode with the time of day. After `--clear`.
    fn header(&self, text: &str, first: bool) {
        use std::io::IsTerminal;
        let terminal = std::io::stderr().is_terminal();
        if self.args.clear && terminal {
            eprint!("\x1b[2J\x1b[3J\x1b[H");
        }
        match self.ui.log {
            Log::Brief => eprintln!(
                "{} krmgraph watch: {text}",
                self.ui.paint(Paint::Dim, &time_of_day())
            ),
            _ if first => {}
            _ => eprintln!("krmgraph watch: {text}"),
        }
    }
    /// Renders once; the tree as the render left it.
    fn render(&self, root: &Path, before: Snapshot) -> Snapshot {
        let started = Instant::now();
        let mut left = Left::Unknown;
        self.stop.rendering.store(true, Ordering::SeqCst);
        let before = Arc::new(before);
        let watching = Watching {
            tree: Some(before.clone()),
            left: &mut left,
            memos: self.memos.clone(),
            memo_record: self.memo_record.clone(),
        };
        let ok = try_run(&self.args.render, Some(watching), self.ui).is_ok();
        self.stop.rendering.store(false, Ordering::SeqCst);
        // A write through a symlink changes its target, which the list of
        // writes does not show.
        let has_link = before
            .entries()
            .values()
            .any(|e| matches!(e, Entry::Link(_)));
        let after = match left {
            Left::Changes(changes) if !has_link => before.with(&changes),
            _ => Snapshot::read(root).unwrap_or_else(|_| before.as_ref().clone()),
        };
        // The brief mode's summary line (or the failure) said it.
        if self.ui.log != Log::Brief {
            eprintln!(
                "krmgraph watch: {} in {:.2?}; watching {} (Ctrl-C stops)",
                if ok { "rendered" } else { "the render failed" },
                started.elapsed(),
                self.args.render.pkg_path.display()
            );
        }
        after
    }
}

fn read(root: &Path) -> Result<Snapshot, String> {
    Snapshot::read(root).map_err(|e| format!("reading {}: {e}", root.display()))
}

/// Reads the tree; a file that goes away between listing and reading it
/// (an editor's swap file) means trying again a little later, and after a
/// while `None` (the next event tries again). An error when the root
/// itself is gone.
fn read_settled(root: &Path) -> Result<Option<Snapshot>, String> {
    let mut last = String::new();
    for _ in 0..20 {
        match Snapshot::read(root) {
            Ok(snapshot) => return Ok(Some(snapshot)),
            Err(e) if root.is_dir() => last = e.to_string(),
            Err(e) => return Err(format!("reading {}: {e}", root.display())),
        }
        std::thread::sleep(TICK);
    }
    eprintln!(
        "[WARN] krmgraph watch: cannot read {}: {last}; waiting for the next change",
        root.display()
    );
    Ok(None)
}

/// The local time of day, `HH:MM:SS`.
fn time_of_day() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let now = libc::time_t::try_from(now).unwrap_or_default();
    // SAFETY: localtime_r reads `now` and writes only the tm it is given.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&now, &mut tm) }.is_null();
    if !ok {
        return "--:--:--".to_string();
    }
    format!("{:02}:{:02}:{:02}", tm.tm_hour, tm.tm_min, tm.tm_sec)
}

/// Whether a render may read `path` (a slash path under the root), as
/// far as watch can tell without rendering: resources (`.yaml`, `.yml`,
/// `.json`), Kptfiles and `.krmignore`, and any other file a Kptfile of
/// `tree` names (an `exec:` program, a `configPath`). Editor swap, backup
/// and lock files are not (`.a.yaml.swp`, `a.yaml~`, `#a.yaml#`,
/// `.#a.yaml`). A `.gitignore`d resource is read: kpt does not look at
/// `.gitignore`.
fn render_reads(path: &str, tree: &Snapshot, root: &Path) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name.ends_with('~') || name.starts_with('#') || name.starts_with(".#") {
        return false;
    }
    if krmignored(path, tree, root) {
        return false;
    }
    if name == "Kptfile" || name == ".krmignore" {
        return true;
    }
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    if matches!(extension.as_deref(), Some("yaml" | "yml" | "json")) {
        return true;
    }
    tree.entries().iter().any(|(p, entry)| {
        let is_kptfile = p == "Kptfile" || p.ends_with("/Kptfile");
        match entry {
            Entry::File(bytes) if is_kptfile => {
                memchr::memmem::find(bytes, name.as_bytes()).is_some()
            }
            _ => false,
        }
    })
}

/// Whether the `.krmignore` of the package `path` is in ignores it (the
/// package reader then never reads it).
fn krmignored(path: &str, tree: &Snapshot, root: &Path) -> bool {
    let file = |p: &str| match tree.entries().get(p) {
        Some(Entry::File(bytes)) => Some(bytes.clone()),
        _ => None,
    };
    let mut dir = path;
    while !dir.is_empty() {
        dir = dir.rsplit_once('/').map_or("", |(parent, _)| parent);
        let under = |name: &str| match dir {
            "" => name.to_string(),
            dir => format!("{dir}/{name}"),
        };
        if !tree.entries().contains_key(&under("Kptfile")) {
            continue;
        }
        // The nearest package decides.
        let Some(patterns) = file(&under(krmgraph_render::IGNORE_FILE_NAME)) else {
            return false;
        };
        let base = root.join(dir).to_string_lossy().into_owned();
        let base = base.trim_end_matches('/');
        let ignore = krmgraph_render::GitIgnore::parse(base, &patterns);
        return ignore.matches(&root.join(path).to_string_lossy(), false);
    }
    false
}

/// `--ignore` globs.
struct Ignore(globset::GlobSet);

impl Ignore {
    fn new(globs: &[String]) -> Result<Ignore, String> {
        let mut set = globset::GlobSetBuilder::new();
        for glob in globs {
            let glob = globset::GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|e| format!("--ignore {glob:?}: {e}"))?;
            set.add(glob);
        }
        set.build()
            .map(Ignore)
            .map_err(|e| format!("--ignore: {e}"))
    }

    /// Whether `path`, or a directory it is under, matches.
    fn matches(&self, path: &str) -> bool {
        let mut prefix = path;
        loop {
            if self.0.is_match(prefix) {
                return true;
            }
            match prefix.rsplit_once('/') {
                Some((parent, _)) => prefix = parent,
                None => return false,
            }
        }
    }
}

/// The files that differ between `known` and `now` (written, created,
/// deleted, or a symlink retargeted), sorted, less `ignored` ones and
/// those under an `ignored` directory.
fn changed_paths(known: &Snapshot, now: &Snapshot, ignored: &[String]) -> Vec<String> {
    let is_ignored = |path: &str| {
        ignored.iter().any(|i| {
            path == i
                || path
                    .strip_prefix(i.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
    };
    let keys = known.entries().keys().chain(now.entries().keys());
    let mut changed: Vec<String> = keys
        .filter(|path| known.entries().get(*path) != now.entries().get(*path))
        .filter(|path| !is_ignored(path))
        .cloned()
        .collect();
    changed.sort();
    changed.dedup();
    changed
}

/// What a render itself writes inside the tree, as slash paths relative to
/// the root: `results.yaml` of `--results-dir`, and the cache directory.
/// Neither is an edit (and taking them for one would render forever).
fn ignored_paths(args: &WatchArgs, root: &Path) -> Vec<String> {
    let mut ignored = Vec::new();
    if let Some(dir) = &args.render.results_dir {
        ignored.extend(inside(root, &dir.join("results.yaml")));
    }
    if !args.render.no_cache {
        let cache_dir = krmgraph_cache::resolve_dir(args.render.cache_dir.as_deref());
        ignored.extend(cache_dir.ok().and_then(|dir| inside(root, &dir)));
    }
    ignored
}

/// `path` as a slash path relative to `root`, if it is inside it (its
/// parent resolved, so it need not exist yet).
fn inside(root: &Path, path: &Path) -> Option<String> {
    let absolute = std::path::absolute(path).ok()?;
    let name = absolute.file_name()?;
    let parent = std::fs::canonicalize(absolute.parent()?).ok()?;
    let rel = parent.join(name).strip_prefix(root).ok()?.to_path_buf();
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
    // An event without paths (inotify's queue overflowed: rescan) may
    // stand for any change.
    let anywhere = event.paths.is_empty() || event.need_rescan();
    !matches!(event.kind, EventKind::Access(_)) && (anywhere || !event.paths.iter().all(in_git))
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
        // Until an event comes, only the stop flag needs looking at.
        let wait = match last_event {
            None => TICK,
            Some(at) => quiet
                .saturating_sub(at.elapsed())
                .clamp(Duration::from_millis(1), TICK),
        };
        match events.recv_timeout(wait) {
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
        Snapshot::new(
            files
                .iter()
                .map(|(p, b)| {
                    (
                        p.to_string(),
                        Entry::File(std::sync::Arc::new(b.as_bytes().to_vec())),
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn changed_paths_are_edits_creations_and_deletions_less_ignored_paths() {
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
        let results = ["out/results.yaml".to_string()];
        assert_eq!(
            changed_paths(&known, &now, &results),
            ["a.yaml", "b.yaml", "c.yaml"]
        );
        assert_eq!(changed_paths(&known, &now, &["out".to_string()]).len(), 3);
        assert_eq!(changed_paths(&known, &now, &["ou".to_string()]).len(), 4);
        assert_eq!(changed_paths(&known, &now, &[]).len(), 4);
        assert!(changed_paths(&known, &known.clone(), &[]).is_empty());
    }

    #[test]
    fn a_cache_or_results_dir_inside_the_tree_is_ignored() {
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        std::fs::create_dir(root.join("out")).unwrap();
        assert_eq!(
            inside(&root, &root.join("out/results.yaml")).as_deref(),
            Some("out/results.yaml")
        );
        assert_eq!(
            inside(&root, &root.join("results.yaml")).as_deref(),
            Some("results.yaml")
        );
        assert_eq!(inside(&root, Path::new("/")), None);
    }

    #[test]
    fn an_overflow_without_paths_counts() {
        let overflow = notify::Event::new(EventKind::Other).set_flag(notify::event::Flag::Rescan);
        assert!(may_change_files(&overflow));
        assert!(may_change_files(&notify::Event::new(EventKind::Any)));
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
