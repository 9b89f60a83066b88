//! What a depth-first render would do with each step (`krmgraph graph`'s
//! cached / runs / may-run column), told without running anything.
//!
//! A step is **cached** when a recorded subtree holds it, or when its key
//! can be computed from records alone and the store holds that key: a
//! package's first step from its subpackages' recorded outputs and its
//! files as the last run of the step read them (the slot record), a later
//! step from the recorded output of the step before it. It **runs** when
//! it is not keyed, or when what it reads differs from its last run at
//! this place in the tree (an older record may still match, which a
//! render would find). It **may run** when its input is the output of
//! something that runs or may run: the step replays if that output comes
//! out as before (early cutoff).

use krmgraph_cache::Digest;
use krmgraph_fn::FunctionRunner;
use krmgraph_package::kptfile::Function;

use super::explain::{config_names, Slot};
use super::stepcache::{Role, StepCache};

/// What a render would do with a step or package.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Replayed from the store.
    Cached,
    /// Run.
    Runs,
    /// Run unless its input comes out as before.
    MayRun,
}

impl Verdict {
    /// As the graph prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Cached => "cached",
            Verdict::Runs => "runs",
            Verdict::MayRun => "may run",
        }
    }
}

/// A verdict and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Prediction {
    /// What a render would do.
    pub verdict: Verdict,
    /// Why, as `--explain` would say it.
    pub why: String,
}

fn said(verdict: Verdict, why: impl Into<String>) -> Prediction {
    Prediction {
        verdict,
        why: why.into(),
    }
}

/// What feeds a step: for a package's first step its subpackages (their
/// recorded output, when their subtree is recorded) and resource files;
/// for a later step the step before it.
pub(super) enum Feed<'f> {
    First {
        /// Root-relative directory, recorded output digest.
        subpackages: &'f [(String, Option<Digest>)],
        /// Root-relative resource files.
        files: &'f [String],
    },
    After {
        /// The step before: how it is labelled, and its output when it is
        /// cached.
        label: String,
        output: Option<Digest>,
    },
}

/// The prediction for one step of a package no recorded subtree holds,
/// and its output digest when it is cached.
pub(super) fn step(
    cache: &StepCache,
    place: (&str, usize),
    role: Role,
    (f, runner): (&Function, &FunctionRunner),
    feed: Feed,
) -> (Prediction, Option<Digest>) {
    let Some(before) = cache.slot(place.0, place.1) else {
        let why = "no earlier run of this step in this tree is recorded";
        return (said(Verdict::MayRun, why), None);
    };
    let (names, digest, earlier) = match feed {
        Feed::First { subpackages, files } => {
            if let Some((dir, _)) = subpackages.iter().find(|(_, d)| d.is_none()) {
                let why =
                    format!("input may change: the output of {dir}/ (its subtree is not recorded)");
                return (said(Verdict::MayRun, why), None);
            }
            let subs: Vec<(String, Digest)> = subpackages
                .iter()
                .filter_map(|(dir, d)| Some((dir.clone(), (*d)?)))
                .collect();
            (cache.input_names(files, &subs), None, None)
        }
        Feed::After {
            output: None,
            label,
        } => {
            let why = format!("input may change: the output of {label}, which may run");
            return (said(Verdict::MayRun, why), None);
        }
        Feed::After {
            output: Some(d),
            label,
        } => (
            None,
            Some(d),
            Some(format!("input changed: the output of {label}")),
        ),
    };
    // The input digest: the one given, else the last run's when the
    // package's files and subpackage outputs are as it read them.
    let input = digest.unwrap_or_else(|| {
        let same = names
            .as_ref()
            .zip(before.input.as_ref())
            .is_some_and(|(now, was)| now.changes(was).is_empty());
        if same {
            before.inputs.input
        } else {
            Digest::of(b"an input unlike the last run's")
        }
    });
    let Some(inputs) = cache.step_inputs(role, f, runner, &input) else {
        return (said(Verdict::Runs, "not keyed"), None);
    };
    if inputs == before.inputs {
        return match cache.recorded_step(&inputs.key()) {
            Some(output) => (said(Verdict::Cached, "its record is in the store"), output),
            None => (
                said(Verdict::Runs, "its record is gone (evicted or removed)"),
                None,
            ),
        };
    }
    let now = Slot {
        inputs,
        config: config_names(f, runner, cache.root()),
        input: names,
    };
    let mut earlier = earlier;
    (
        said(Verdict::Runs, now.why_not(&before, &mut earlier)),
        None,
    )
}
