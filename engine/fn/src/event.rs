//! What a render reports while it runs. The engine never prints; it sends
//! [`Event`]s to a [`Reporter`], and [`kpt_log`] turns them into the exact
//! progress text `kpt fn render` writes to stderr.

use std::time::Duration;

use crate::results::{results_block, stderr_block, ResultItem};

/// One thing that happened during a render.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A package's pipeline is about to run (printed for every package).
    PackageStarted {
        /// The package's display path.
        display_path: String,
    },
    /// A package with a non-empty pipeline finished.
    PackageFinished,
    /// A function is starting.
    FunctionStarted {
        /// Image or exec command line.
        name: String,
        /// Number of selected resources, when selectors or exclusions apply.
        selected: Option<usize>,
    },
    /// A function succeeded.
    FunctionPassed {
        /// Image or exec command line.
        name: String,
        /// Wall time.
        duration: Duration,
        /// Results it reported.
        results: Vec<ResultItem>,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// A function failed.
    FunctionFailed {
        /// Image or exec command line.
        name: String,
        /// Wall time.
        duration: Duration,
        /// Results it reported.
        results: Vec<ResultItem>,
        /// For a non-zero exit: its stderr and exit code.
        exit: Option<(String, i32)>,
    },
    /// A warning that does not stop the render.
    Warning(String),
    /// What the step cache did; kpt prints nothing for it.
    Cache(CacheEvent),
}

/// What the step cache did for a step or a subtree: the render's own log
/// of what ran, for tests (as salsa's logs) and the summary line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CacheEvent {
    /// A step ran: the store held no record for its key.
    StepRan {
        /// The package's display path.
        package: String,
        /// `mutator` or `validator`.
        role: &'static str,
        /// The step's position in the pipeline (mutators, then validators).
        index: usize,
        /// Image or exec command line.
        function: String,
        /// Why it ran: what its key's inputs changed since it last ran in
        /// this tree (`render --explain`).
        reason: String,
    },
    /// A step's record was replayed instead of running it.
    StepReplayed {
        /// The package's display path.
        package: String,
        /// The step's position in the pipeline (mutators, then validators).
        index: usize,
        /// Image or exec command line.
        function: String,
    },
    /// A step that ran passed blocks of replayed resources through without
    /// decoding them (`render::blocks`).
    BlocksPassed {
        /// The package's display path.
        package: String,
        /// The step's position in the pipeline.
        index: usize,
        /// How many blocks.
        blocks: usize,
        /// The resources they hold.
        resources: usize,
    },
    /// A whole subtree was replayed: nothing below it was read or run.
    SubtreeReplayed {
        /// The display path of the subtree's package.
        package: String,
    },
    /// The store failed during the render; the render goes on without it.
    StoreFailed(String),
}

/// One line of the cache's log: `ran <package>#<step> <function>: <reason>`,
/// `replayed <package>#<step> <function>`, `replayed subtree <package>`,
/// `passed <n> blocks (<m> resources) through <package>#<step>`,
/// `store failed: <message>`.
impl std::fmt::Display for CacheEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CacheEvent::StepRan {
                package,
                index,
                function,
                reason,
                ..
            } => write!(f, "ran {package}#{index} {function}: {reason}"),
            CacheEvent::StepReplayed {
                package,
                index,
                function,
            } => write!(f, "replayed {package}#{index} {function}"),
            CacheEvent::SubtreeReplayed { package } => write!(f, "replayed subtree {package}"),
            CacheEvent::BlocksPassed {
                package,
                index,
                blocks,
                resources,
            } => write!(
                f,
                "passed {blocks} blocks ({resources} resources) through {package}#{index}"
            ),
            CacheEvent::StoreFailed(message) => write!(f, "store failed: {message}"),
        }
    }
}

/// Receives events as a render progresses.
pub trait Reporter: Send {
    /// Called for every event, in order.
    fn report(&mut self, event: &Event);
}

/// A reporter that keeps every event, for tests.
#[derive(Default, Debug)]
pub struct RecordingReporter {
    /// Events in the order they were reported.
    pub events: Vec<Event>,
}

impl Reporter for RecordingReporter {
    fn report(&mut self, event: &Event) {
        self.events.push(event.clone());
    }
}

/// kpt's stderr text for an event. `truncate` is `--truncate-output`.
pub fn kpt_log(event: &Event, truncate: bool) -> String {
    let pass_or_fail = |status: &str, name: &str, d: &Duration| {
        format!(
            "[{status}] {} in {}\n",
            krmgraph_util::gostr::quote(name),
            krmgraph_util::gostr::duration_100ms(*d)
        )
    };
    match event {
        Event::PackageStarted { display_path } => {
            format!("Package {}: \n", krmgraph_util::gostr::quote(display_path))
        }
        Event::PackageFinished => "\n".to_string(),
        Event::FunctionStarted { name, selected } => match selected {
            Some(n) => format!(
                "[RUNNING] {} on {n} resource(s)\n",
                krmgraph_util::gostr::quote(name)
            ),
            None => format!("[RUNNING] {}\n", krmgraph_util::gostr::quote(name)),
        },
        Event::FunctionPassed {
            name,
            duration,
            results,
            stderr,
        } => {
            pass_or_fail("PASS", name, duration)
                + &results_block(results, truncate)
                + &stderr_block(stderr, truncate)
        }
        Event::FunctionFailed {
            name,
            duration,
            results,
            exit,
        } => {
            let mut out = pass_or_fail("FAIL", name, duration) + &results_block(results, truncate);
            if let Some((stderr, code)) = exit {
                out += &stderr_block(stderr, truncate);
                out += &format!("  Exit code: {code}\n\n");
            }
            out
        }
        Event::Warning(message) => format!("[WARN] {message}\n"),
        Event::Cache(_) => String::new(),
    }
}
