//! `krmgraph render`: flags to options, the engine's events to kpt's
//! progress text on stderr, and the result to stdout, files and exit code.

use std::io::Write;
use std::path::{Path, PathBuf};

use krmgraph_render::eval::{EvalInput, EvalOptions};
use krmgraph_render::event::{kpt_log, CacheEvent, Event, Reporter};
use krmgraph_render::shortcut::{Change, Snapshot};
use krmgraph_render::Function;
use krmgraph_render::RunnerOptions;
use krmgraph_render::{cache, render, Output, RenderFailure, RenderOptions};

use crate::args::{FnEvalArgs, RenderArgs};
use crate::ui::{Log, Paint, Ui};

/// Prints events as kpt does, as they happen (all of them, or as much as
/// the [`Ui`] asks for); keeps the whole text when `captured` is set (for
/// the cache); on a terminal, keeps a progress bar (packages finished of
/// the tree's packages, functions run) below the log.
struct StderrReporter {
    truncate: bool,
    ui: Ui,
    captured: Option<Vec<u8>>,
    progress: Option<indicatif::ProgressBar>,
    started: u64,
    functions: usize,
    cache: CacheCounts,
}

/// What the step cache did, for the summary line; and its log, one line
/// per event, for `KRMGRAPH_CACHE_LOG=<file>` (why did that re-run?).
#[derive(Default)]
struct CacheCounts {
    ran: usize,
    replayed: usize,
    subtrees: usize,
    log: Vec<String>,
    /// `--explain`'s lines.
    explained: Vec<String>,
}

impl StderrReporter {
    fn new(truncate: bool, ui: &Ui) -> StderrReporter {
        StderrReporter {
            truncate,
            ui: ui.clone(),
            captured: None,
            progress: None,
            started: 0,
            functions: 0,
            cache: CacheCounts::default(),
        }
    }

    /// Counts the step cache's events; warns (once per render: the cache
    /// turns itself off) when the store failed.
    fn count(&mut self, event: &CacheEvent) {
        self.cache.log.push(event.to_string());
        if self.ui.verbose {
            let line = self
                .ui
                .paint(Paint::Dim, &format!("krmgraph: cache: {event}"));
            self.print(&format!("{line}\n"));
        }
        match event {
            CacheEvent::StepRan {
                package,
                role,
                index,
                function,
                reason,
            } => {
                self.cache.ran += 1;
                self.cache.explained.push(format!(
                    "[EXPLAIN] {package} {role}[{index}] {function} ran: {reason}"
                ));
            }
            CacheEvent::StepReplayed { .. } => self.cache.replayed += 1,
            CacheEvent::SubtreeReplayed { package } => {
                self.cache.subtrees += 1;
                self.cache.explained.push(format!(
                    "[EXPLAIN] {package} replayed whole: nothing under it changed"
                ));
            }
            CacheEvent::BlocksPassed { .. } => {}
            CacheEvent::StoreFailed(message) if self.ui.warns() => {
                let text = format!(
                    "[WARN] krmgraph: the cache failed, rendering on without it: {message}"
                );
                self.print(&format!("{}\n", self.ui.paint(Paint::Warn, &text)));
            }
            CacheEvent::StoreFailed(_) => {}
        }
    }

    /// Writes `text` to stderr above the progress bar.
    fn print(&self, text: &str) {
        let write = || {
            let _ = std::io::stderr().write_all(text.as_bytes());
        };
        match &self.progress {
            Some(bar) => bar.suspend(write),
            None => write(),
        }
    }

    /// Whether the [`Ui`] prints this event of kpt's log.
    fn prints(&self, event: &Event) -> bool {
        match self.ui.log {
            Log::Full => true,
            Log::Brief => matches!(event, Event::FunctionFailed { .. } | Event::Warning(_)),
            Log::Errors => matches!(event, Event::FunctionFailed { .. }),
        }
    }

    /// Adds the progress bar when stderr is a terminal.
    fn with_progress(mut self, pkg: &Path) -> StderrReporter {
        use std::io::IsTerminal;
        // A bar redraws itself with escape codes: none without colour.
        if std::io::stderr().is_terminal() && self.ui.log != Log::Errors && self.ui.color {
            let bar = indicatif::ProgressBar::new(count_packages(pkg));
            let style = indicatif::ProgressStyle::with_template(
                "{bar:30} {pos}/{len} packages, {msg} [{elapsed}]",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            bar.set_style(style);
            self.progress = Some(bar);
        }
        self
    }

    fn finish(&self) {
        if let Some(bar) = &self.progress {
            bar.finish_and_clear();
        }
    }
}

impl Reporter for StderrReporter {
    fn report(&mut self, event: &Event) {
        if let Event::Cache(cache) = event {
            self.count(cache);
            return;
        }
        let text = kpt_log(event, self.truncate);
        if self.prints(event) {
            self.print(&text);
        }
        if let Some(bar) = &self.progress {
            match event {
                // The log is in kpt's order: a package starts once the
                // one before it has finished.
                Event::PackageStarted { .. } => {
                    self.started += 1;
                    if self.started > bar.length().unwrap_or(0) {
                        bar.set_length(self.started);
                    }
                    bar.set_position(self.started - 1);
                }
                Event::FunctionStarted { .. } => {
                    self.functions += 1;
                    bar.set_message(format!("{} function(s) run", self.functions));
                }
                _ => {}
            }
        }
        if let Some(buf) = &mut self.captured {
            buf.extend(text.as_bytes());
        }
    }
}

/// The number of Kptfiles under `dir` (`.git` skipped): the progress
/// bar's length.
fn count_packages(dir: &Path) -> u64 {
    let mut count = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() && entry.file_name() != ".git" {
                stack.push(entry.path());
            } else if kind.is_file() && entry.file_name() == "Kptfile" {
                count += 1;
            }
        }
    }
    count
}

/// Warns about each file left alone because it was saved while the render
/// ran.
fn warn_kept(kept: &[String], ui: &Ui) {
    let then = if ui.watching {
        "watch renders it again next"
    } else {
        "render again to render it"
    };
    for path in kept {
        ui.warn(&format!(
            "{path} changed while the render ran, so the render left it as it is now; {then}"
        ));
    }
}

/// Runs `krmgraph render`; the exit code is kpt's (0 or 1). With
/// `--check`, diff(1)'s: 0 nothing would change, 1 files would change, 2
/// the render failed.
pub fn run(args: RenderArgs, ui: &Ui) -> u8 {
    match try_run(&args, None, ui) {
        Ok(Rendered::WouldChange) => 1,
        Ok(_) => 0,
        Err(()) if args.check => 2,
        Err(()) => 1,
    }
}

/// How a render that did not fail ended.
pub enum Rendered {
    /// It wrote (or `-o` printed) its output.
    Done,
    /// `--check`: a render would change nothing.
    Unchanged,
    /// `--check`: a render would write, create or delete files.
    WouldChange,
}

/// A render for `watch`: the tree it just read (the render reads it no
/// more), and what the render did to it.
pub struct Watching<'a> {
    /// The tree under the package, as read just before.
    pub tree: Option<std::sync::Arc<Snapshot>>,
    /// Learns what the render wrote.
    pub left: &'a mut Left,
    /// The session's memos, shared by its renders.
    pub memos: std::sync::Arc<krmgraph_render::Memos>,
    /// The session's use of the memos' record, shared by its renders.
    pub memo_record: std::sync::Arc<krmgraph_render::MemoSession>,
}

/// What a render did to the tree it read, for `watch`, which must tell
/// its own writes from the user's edits without reading the tree again (a
/// file saved while the render ran would be taken for its output).
pub enum Left {
    /// Not known: read the tree again.
    Unknown,
    /// Exactly these writes and deletions (`results.yaml` aside).
    Changes(Vec<Change>),
}

fn fail(message: &str) {
    eprintln!("Error: {message} ");
}

/// kpt's `-o` values: `stdout`, `unwrap`, or a directory that must not
/// exist yet. `None` when not given.
fn parse_output(value: Option<&str>) -> Result<Option<Output>, ()> {
    Ok(Some(match value {
        None | Some("") => return Ok(None),
        Some("stdout") => Output::Stdout,
        Some("unwrap") => Output::Unwrap,
        Some(dir) => {
            if std::fs::symlink_metadata(dir).is_ok() {
                fail(&format!(
                    "directory {} already exists, please delete the directory and retry",
                    krmgraph_util::gostr::quote(dir)
                ));
                return Err(());
            }
            Output::Dir(PathBuf::from(dir))
        }
    }))
}

/// Runs `krmgraph fn eval`; exit codes as kpt's.
pub fn eval(args: FnEvalArgs, ui: &Ui) -> u8 {
    match try_eval(args, ui) {
        Ok(()) => 0,
        Err(()) => 1,
    }
}

fn try_eval(args: FnEvalArgs, ui: &Ui) -> Result<(), ()> {
    let function = match (&args.image, &args.exec) {
        (Some(image), _) => Function {
            image: image.clone(),
            ..Function::default()
        },
        (None, Some(exec)) => Function {
            exec: exec.clone(),
            ..Function::default()
        },
        (None, None) => {
            eprintln!("error: must specify --image or --exec");
            return Err(());
        }
    };
    // kpt: a first argument without `=` names the config's kind; any
    // other must be `key=value`.
    if args.args.iter().skip(1).any(|a| !a.contains('=')) {
        eprintln!("error: args must have keys and values separated by =");
        return Err(());
    }
    check_pull_policy(&args.image_pull_policy)?;
    let output = parse_output(args.output.as_deref())?;
    let input = if args.pkg_path == "-" {
        let mut bytes = Vec::new();
        if let Err(e) = std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes) {
            fail(&format!("reading stdin: {e}"));
            return Err(());
        }
        EvalInput::Stdin(bytes)
    } else {
        EvalInput::Dir(resolve_symlink(Path::new(&args.pkg_path))?)
    };
    let options = EvalOptions {
        input,
        function,
        args: args.args.clone(),
        output: output.clone(),
        results_dir: args.results_dir.clone(),
        runner: RunnerOptions {
            // `fn eval --exec` needs no `--allow-exec`: naming the command
            // on the command line is the permission.
            allow_exec: true,
            allow_network: args.network,
            image_pull_policy: args.image_pull_policy.clone(),
            truncate_output: args.truncate_output,
            no_builtins: args.no_builtins,
            no_builtin_images: args.no_builtin.clone(),
            timeout: args.fn_timeout,
            check_direct: check_direct(),
            memos: Default::default(),
        },
    };
    let mut reporter = StderrReporter::new(args.truncate_output, ui);
    let result = krmgraph_render::eval::eval(&options, &mut reporter);
    let results_file = match &result {
        Ok(outcome) => outcome.results_file.clone(),
        Err(failure) => failure.results_file.clone(),
    };
    if let Ok(outcome) = &result {
        let _ = std::io::stdout().write_all(&outcome.stdout);
    }
    // kpt's eval puts a blank line before the results path.
    if let Some(file) = results_file.filter(|_| ui.warns()) {
        eprintln!("\nFor complete results, see {}", file.display());
    }
    match result {
        Ok(_) => Ok(()),
        Err(failure) => {
            report_error(&failure.error);
            Err(())
        }
    }
}

/// `KRMGRAPH_CHECK_DIRECT=1`: every built-in run on nodes and every echoed
/// output is checked against the bytes (tests and CI set it).
fn check_direct() -> bool {
    std::env::var("KRMGRAPH_CHECK_DIRECT").as_deref() == Ok("1")
}

/// kpt checks `--image-pull-policy` before anything runs.
fn check_pull_policy(value: &str) -> Result<(), ()> {
    krmgraph_render::PullPolicy::parse(value).map_err(|e| {
        eprintln!("error: {e}");
    })?;
    Ok(())
}

/// An in-place (or `-o`) render; `watching` for `watch` (then the process
/// goes on after it).
pub fn try_run(args: &RenderArgs, watching: Option<Watching>, ui: &Ui) -> Result<Rendered, ()> {
    let mut unwatched = Left::Unknown;
    let process_goes_on = watching.is_some();
    let (read, left, memos, memo_record) = match watching {
        Some(Watching {
            tree,
            left,
            memos,
            memo_record,
        }) => (tree, left, memos, memo_record),
        None => (None, &mut unwatched, Default::default(), Default::default()),
    };
    let started = std::time::Instant::now();
    check_pull_policy(&args.image_pull_policy)?;
    let output = match parse_output(args.output.as_deref())? {
        Some(_) if args.check => {
            fail("--check renders in memory and writes nothing: drop -o");
            return Err(());
        }
        None if args.check => Output::Check,
        output => output.unwrap_or(Output::InPlace),
    };
    if let Some(dir) = &args.results_dir {
        if let Err(e) = std::fs::create_dir_all(dir) {
            fail(&format!("{}: {e}", dir.display()));
            return Err(());
        }
    }
    let pkg = resolve_symlink(&args.pkg_path)?;
    let catalogs = crate::catalog::paths(&args.fn_catalog, &pkg, &args.trust_catalog);
    crate::catalog::install(
        &catalogs,
        &pkg,
        args.allow_network,
        args.cache_dir.as_deref(),
    )?;
    let mut options = RenderOptions {
        output: output.clone(),
        results_dir: args.results_dir.clone(),
        runner: RunnerOptions {
            allow_exec: args.allow_exec,
            allow_network: args.allow_network,
            image_pull_policy: args.image_pull_policy.clone(),
            truncate_output: args.truncate_output,
            no_builtins: args.no_builtins,
            no_builtin_images: args.no_builtin.clone(),
            timeout: args.fn_timeout,
            check_direct: check_direct(),
            memos,
        },
        order: args.order.map(|o| match o {
            crate::args::OrderArg::Dfs => krmgraph_render::Order::DepthFirst,
            crate::args::OrderArg::Bfs => krmgraph_render::Order::BreadthFirst,
        }),
        jobs: args.jobs.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
        }),
        cache: None,
        // `KPT_DISABLE_ATTRIBUTION`, read where the engine keeps it.
        ..RenderOptions::default()
    };
    // Keys use the root's directory name, which `.` does not show.
    let root = krmgraph_render::absolute(&pkg);
    let (store, tree) = if args.no_cache {
        (None, None)
    } else {
        // A fixed point has no log or results to replay, and --verify
        // renders anyway.
        let settled_ok = matches!(output, Output::InPlace | Output::Check)
            && args.results_dir.is_none()
            && !args.verify;
        let cache_dir = args.cache_dir.as_deref();
        // A check asks whether the in-place render would change anything:
        // its key is the in-place render's.
        let mut keyed = options.clone();
        keyed.output = Output::InPlace;
        match cache::open_reading(cache_dir, &root, &keyed, read, settled_ok) {
            cache::Opened::Settled(_) if output == Output::Check => {
                summary(
                    ui,
                    "rendered: a render would change nothing (the cache knows this tree)",
                );
                return Ok(Rendered::Unchanged);
            }
            cache::Opened::Settled(tree) => {
                tree.snapshot.remove_stale_temps();
                crate::cache::report_settled(&root, ui);
                if args.explain {
                    eprintln!(
                        "[EXPLAIN] nothing ran: the cache knows this tree as a render's output"
                    );
                }
                *left = Left::Changes(Vec::new());
                summary(
                    ui,
                    &format!("nothing to render ({:.2?})", started.elapsed()),
                );
                forget_unless(process_goes_on, tree);
                return Ok(Rendered::Done);
            }
            cache::Opened::Store(store, tree) => (Some(store), tree),
            cache::Opened::Uncached(why) => {
                ui.warn(&format!("rendering without the cache: {why}"));
                (None, None)
            }
        }
    };
    if output == Output::InPlace {
        match &tree {
            Some(tree) => tree.snapshot.remove_stale_temps(),
            None => krmgraph_util::fsutil::remove_stale_temps(&root),
        }
    }
    // The store the render reads and writes: the local one, behind the
    // shared remote cache when one is configured.
    let (shared, remote) = match &store {
        Some(local) => {
            let (shared, remote) = crate::remote::layer(&args.remote, local, ui);
            (Some(shared), remote)
        }
        None => (None, None),
    };
    // Warnings only: nothing a replay prints is captured for a record.
    let mut warnings = StderrReporter::new(args.truncate_output, ui);
    let lookup = match (&shared, &tree) {
        (Some(store), Some(tree)) if output == Output::InPlace => Some(cache::lookup(
            &root,
            &options,
            store,
            tree,
            args.verify,
            &mut warnings,
        )),
        _ => None,
    };
    if let (Some(tiered), true) = (&remote, lookup.is_some()) {
        crate::remote::warn(tiered, ui);
    }
    let cached = match lookup {
        Some(cache::Lookup::Settled) => {
            crate::cache::report_settled(&root, ui);
            if args.explain {
                eprintln!("[EXPLAIN] nothing ran: the cache knows this tree as a render's output");
            }
            *left = Left::Changes(Vec::new());
            summary(
                ui,
                &format!("rendered from the cache in {:.2?}", started.elapsed()),
            );
            forget_unless(process_goes_on, tree);
            return Ok(Rendered::Done);
        }
        Some(cache::Lookup::Replayed(replayed)) => {
            warn_kept(&replayed.kept, ui);
            if ui.log == Log::Full {
                let _ = std::io::stderr().write_all(&replayed.stderr);
            }
            if args.explain {
                eprintln!("[EXPLAIN] the whole render was replayed: the cache holds a render of this tree with these flags");
                crate::remote::explain(remote.as_ref());
            }
            if ui.warns() {
                print_results_file(replayed.results_file.as_deref());
            }
            *left = Left::Changes(replayed.changes);
            summary(
                ui,
                &format!(
                    "rendered from the cache in {:.2?}{}",
                    started.elapsed(),
                    crate::remote::summary(remote.as_ref())
                ),
            );
            forget_unless(process_goes_on, tree);
            return Ok(Rendered::Done);
        }
        Some(cache::Lookup::Failed(message)) => {
            eprintln!("{message}");
            return Err(());
        }
        Some(cache::Lookup::Miss(cached)) => cached,
        None => None,
    };
    options.cache = shared
        .as_ref()
        .map(|s| cache::step_cache(s, tree.map(|t| t.snapshot), args.verify, memo_record));
    let mut reporter = StderrReporter::new(args.truncate_output, ui).with_progress(&pkg);
    reporter.captured = cached.as_ref().map(|_| Vec::new());
    crate::pages::large();
    let rendered = render(&pkg, &options, &mut reporter);
    crate::pages::render_done();
    reporter.finish();
    if let Some(file) = std::env::var_os("KRMGRAPH_CACHE_LOG") {
        let text: String = reporter
            .cache
            .log
            .iter()
            .map(|l| l.clone() + "\n")
            .collect();
        let _ = std::fs::write(file, text);
    }
    let outcome = match rendered {
        Ok(outcome) => outcome,
        Err(failure) => {
            // A render failing before it writes writes nothing but
            // `results.yaml`; one failing while it writes may have written
            // some files.
            if !failure.error.while_writing() {
                *left = Left::Changes(Vec::new());
            }
            report_failure(&failure);
            return Err(());
        }
    };
    if output == Output::Check {
        let changes = outcome.files.unwrap_or_default();
        crate::check::report(&root, &changes, args.diff, ui);
        return Ok(if changes.is_empty() {
            Rendered::Unchanged
        } else {
            Rendered::WouldChange
        });
    }
    warn_kept(&outcome.kept, ui);
    if let Some(files) = &outcome.files {
        *left = Left::Changes(files.clone());
    }
    if output == Output::InPlace {
        let line = format!(
            "Successfully executed {} function(s) in {} package(s).\n",
            outcome.functions, outcome.packages
        );
        if ui.log == Log::Full {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
        if let Some(buf) = &mut reporter.captured {
            buf.extend(line.as_bytes());
        }
    }
    let _ = std::io::stdout().write_all(&outcome.stdout);
    if let Some(step) = &outcome.verify_mismatch {
        fail(&format!(
            "--verify: {step} gave other output than the cache recorded for the same input: the function is not deterministic, or depends on something its key does not cover (files it reads, the environment); its record was replaced, and --no-cache renders without the cache"
        ));
        return Err(());
    }
    // A render that left files as it found them did not make the tree it
    // computed: nothing to record.
    let recordable = outcome.kept.is_empty();
    if let (Some(cached), Some(stderr), true) = (&cached, &reporter.captured, recordable) {
        let results = outcome.results_file.as_ref();
        let files = outcome.files.as_deref();
        let mut warnings = StderrReporter::new(args.truncate_output, ui);
        let recorded = cached.record(
            &root,
            &options,
            stderr,
            results,
            files,
            args.verify,
            &mut warnings,
        );
        if let Err(message) = recorded {
            eprintln!("{message}");
            return Err(());
        }
    }
    // Before the size check: uploads read the render's blobs back.
    crate::remote::finish(remote.as_ref(), ui);
    if let Some(store) = &store {
        cache::keep_in_size(store, crate::cache::max_size());
    }
    if ui.warns() {
        print_results_file(outcome.results_file.as_deref());
    }
    if args.explain {
        if store.is_none() {
            eprintln!("[EXPLAIN] every step ran: the cache was bypassed (--no-cache, or a store that cannot be used)");
        }
        crate::catalog::explain();
        for line in &reporter.cache.explained {
            eprintln!("{line}");
        }
        crate::remote::explain(remote.as_ref());
    }
    let counts = &reporter.cache;
    summary(
        ui,
        &format!(
            "{} function(s) in {} package(s), {:.2?}{}",
            outcome.functions,
            outcome.packages,
            started.elapsed(),
            if store.is_some() {
                format!(
                    "; steps: {} run, {} replayed; {} subtree(s) replayed whole{}",
                    counts.ran,
                    counts.replayed,
                    counts.subtrees,
                    crate::remote::summary(remote.as_ref())
                )
            } else {
                String::new()
            }
        ),
    );
    Ok(Rendered::Done)
}

/// Leaves the tree read for the cache key to the process's exit, when it
/// is about to exit: its files were read to be hashed, and freeing them one
/// by one is all that would be left of a no-op render.
fn forget_unless<T>(process_goes_on: bool, tree: T) {
    if !process_goes_on {
        std::mem::forget(tree);
    }
}

/// krmgraph's own summary line, on a terminal only (piped or captured
/// stderr stays exactly kpt's), unless `-q`; always in `watch`'s brief
/// mode, where it stands for the log.
fn summary(ui: &Ui, text: &str) {
    use std::io::IsTerminal;
    let shown = match ui.log {
        Log::Full => std::io::stderr().is_terminal(),
        Log::Brief => true,
        Log::Errors => false,
    };
    if shown {
        eprintln!("{}", ui.paint(Paint::Good, &format!("krmgraph: {text}")));
    }
}

fn print_results_file(file: Option<&Path>) {
    if let Some(file) = file {
        eprintln!("For complete results, see {}", file.display());
    }
}

fn report_failure(failure: &RenderFailure) {
    print_results_file(failure.results_file.as_deref());
    report_error(&failure.error);
}

/// kpt's text for `error` (none when kpt has already printed it), then
/// krmgraph's reports (`diagnostic`), each after a blank line.
fn report_error(error: &krmgraph_render::RenderError) {
    if !error.already_reported() {
        if error.printed_lowercase() {
            eprintln!("error: {error}");
        } else if error.printed_bare() {
            eprintln!("{error} ");
        } else {
            fail(&error.to_string());
        }
    }
    let hints = crate::diagnostic::hints(error);
    for hint in hints {
        if let Some(report) = crate::diagnostic::hint(hint) {
            eprint!("\n{report}");
        }
    }
    if let Some(position) = error.source_position().filter(|_| hints.is_empty()) {
        let message = error.to_string();
        let last_line = message.lines().last().unwrap_or_default();
        let message = last_line
            .rsplit("MalformedYAMLError: ")
            .next()
            .unwrap_or(last_line);
        if let Some(report) = crate::diagnostic::syntax_error(message, &position) {
            eprint!("\n{report}");
        }
    }
}

/// kpt's `ResolveSymlink`: a symlinked package path is resolved, with a
/// warning that symlinks inside the package are ignored.
fn resolve_symlink(path: &Path) -> Result<PathBuf, ()> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    let resolved = match eval_symlinks(path) {
        Ok(p) => p,
        Err(e) => {
            // kpt reports this from its argument check, cobra style.
            eprintln!(
                "error: lstat {}: {}",
                path.display(),
                krmgraph_util::gostr::go_errno_text(&e)
            );
            return Err(());
        }
    };
    if is_link {
        eprintln!(
            "[WARN] resolved symlink {} to {}, please note that the symlinks within the package are ignored",
            krmgraph_util::gostr::quote(&path.to_string_lossy()),
            krmgraph_util::gostr::quote(&resolved.to_string_lossy())
        );
    }
    Ok(resolved)
}

/// Go's `filepath.EvalSymlinks`: resolves links but keeps a relative path
/// relative.
fn eval_symlinks(path: &Path) -> std::io::Result<PathBuf> {
    let canonical = std::fs::canonicalize(path)?;
    if path.is_absolute() {
        return Ok(canonical);
    }
    let cwd = std::fs::canonicalize(std::env::current_dir()?)?;
    match canonical.strip_prefix(&cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => Ok(PathBuf::from(".")),
        Ok(rel) => Ok(rel.to_path_buf()),
        Err(_) => Ok(canonical),
    }
}
