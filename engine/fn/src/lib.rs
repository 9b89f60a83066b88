//! The function boundary, as kpt draws it: building a runner for one
//! pipeline entry (functionConfig, permissions), sending it the ResourceList
//! a function expects, reading its output back, restoring comments and key
//! order, giving generated resources a path and package, enforcing kpt's
//! path invariants, and recording the result.
//!
//! - [`exec`]: the `exec:` runtime (local executables).
//! - [`container`]: the container runtime (images that are not built-ins,
//!   or forced to a container).
//! - [`select`]: selectors, exclusions and merging the output back.
//! - [`results`]: result items, `results.yaml`, kpt's result text.
//! - [`builtin`], [`known`]: the built-in functions and the images they
//!   stand for.
//! - [`event`]: progress events and kpt's progress text.
//! - [`hints`]: what krmgraph adds after kpt's text when a function
//!   cannot run (an `exec:` refused, an image near a built-in's missing).

#![deny(missing_docs)]

pub mod builtin;
pub mod container;
pub mod event;
pub mod exec;
pub mod hints;
pub mod known;
pub mod memos;
pub mod results;
pub mod select;
#[cfg(test)]
mod testing;

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::event::{Event, Reporter};
use builtin::fixed_point;
use krmgraph_kyaml::krm;
use krmgraph_kyaml::{byteio, item_memo, kio_pipeline, kioutil, rnode};
use krmgraph_package::kptfile::Function;
use krmgraph_package::Hint;
use krmgraph_yaml::node::Style;
use krmgraph_yaml::reparse::Restyle;
use krmgraph_yaml::Node;
use rayon::prelude::*;
use results::{parse_results, FnResult};

/// Options that decide which functions may run and how they print.
#[derive(Clone, Debug)]
pub struct RunnerOptions {
    /// `--allow-exec`: exec functions may run.
    pub allow_exec: bool,
    /// `--allow-network`: container functions get network access.
    pub allow_network: bool,
    /// `--image-pull-policy`.
    pub image_pull_policy: String,
    /// `--truncate-output`.
    pub truncate_output: bool,
    /// `--no-builtins`: run every image in a container runtime, never as a
    /// built-in.
    pub no_builtins: bool,
    /// `--no-builtin IMAGE`: these images run in a container runtime even
    /// though krmgraph has a built-in for them (an image with a tag matches
    /// that tag only; without one, every tag).
    pub no_builtin_images: Vec<String>,
    /// `--fn-timeout`: how long one exec or container function may run.
    pub timeout: Duration,
    /// Run every built-in that has a node form on the bytes too, and every
    /// echoed output through the parser, and panic on a difference
    /// (`KRMGRAPH_CHECK_DIRECT=1`; for tests and CI).
    pub check_direct: bool,
    /// The memos the functions learn into and draw on: the render's, or
    /// its `watch` session's.
    pub memos: Arc<memos::Memos>,
}

impl RunnerOptions {
    /// Whether the resolved `image` may run as a built-in.
    pub fn uses_builtin(&self, image: &str) -> bool {
        if self.no_builtins {
            return false;
        }
        let untagged = builtin::split_image(image).0;
        !self.no_builtin_images.iter().any(|listed| {
            let listed = resolve_image(listed);
            listed == image || listed == untagged
        })
    }
}

impl Default for RunnerOptions {
    fn default() -> Self {
        RunnerOptions {
            allow_exec: false,
            allow_network: false,
            image_pull_policy: "IfNotPresent".into(),
            truncate_output: true,
            no_builtins: false,
            no_builtin_images: Vec::new(),
            timeout: exec::DEFAULT_TIMEOUT,
            check_direct: false,
            memos: Arc::default(),
        }
    }
}

/// Why a function step failed.
#[derive(Debug, thiserror::Error)]
pub enum FnError {
    /// The function exited non-zero; kpt has already printed everything
    /// (stderr and exit code), so no `Error:` line follows.
    #[error("function failed with exit code {0}")]
    Reported(Exit),
    /// An `exec:` function without `--allow-exec`: kpt's text, and which
    /// function of which Kptfile.
    #[error("{EXEC_NOT_ALLOWED}")]
    ExecNotAllowed(Box<Hint>),
    /// Any other failure, printed as `Error: <message>`.
    #[error("{0}")]
    Message(String),
}

impl FnError {
    /// What krmgraph adds after kpt's text, if anything.
    pub fn hints(&self) -> &[Hint] {
        match self {
            FnError::Reported(Exit { hint: Some(h), .. }) | FnError::ExecNotAllowed(h) => {
                std::slice::from_ref(h)
            }
            _ => &[],
        }
    }
}

/// How a function that kpt has already reported exited.
#[derive(Debug)]
pub struct Exit {
    /// Its exit code.
    pub code: i32,
    /// What krmgraph adds after kpt's report (an image near a built-in's
    /// that is not there).
    pub hint: Option<Box<Hint>>,
}

impl std::fmt::Display for Exit {
    /// The exit code, as kpt prints it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.code)
    }
}

/// State shared by every function of a render: where events go and the
/// results recorded so far.
pub struct RunContext<'a> {
    /// Receives progress events.
    pub reporter: &'a mut dyn Reporter,
    /// One entry per executed function, in execution order.
    pub results: Vec<FnResult>,
    /// The `exitCode` of `results.yaml`: 1 once a function failed.
    pub exit_code: i32,
}

/// How a step's function runs.
#[derive(Clone, Debug, PartialEq)]
pub enum FunctionKind {
    /// A local executable (`exec:`), with its command line.
    Exec(String),
    /// A container image (`image:`), with its resolved name.
    Image(String),
}

/// A runnable pipeline entry.
#[derive(Clone, Debug)]
pub struct FunctionRunner {
    /// The name kpt prints: the resolved image or the exec command line.
    pub name: String,
    /// How it runs.
    pub kind: FunctionKind,
    /// The functionConfig sent with the input, if any.
    pub config: Option<Node>,
    /// Whether `[RUNNING]` shows the number of selected resources.
    pub show_resource_count: bool,
    /// Absolute directory of the package whose pipeline runs it.
    pub package_dir: String,
    /// Whether images may run as built-ins (`--no-builtins` turns it off).
    pub use_builtins: bool,
    /// Whether outputs without a package get `package_dir` (render does
    /// this; `fn eval` does not).
    pub set_package_path: bool,
    /// How an image runs in a container; its timeout applies to exec
    /// functions too.
    pub container: container::ContainerOptions,
    /// [`RunnerOptions::check_direct`].
    pub check_direct: bool,
    /// [`RunnerOptions::memos`].
    pub memos: Arc<memos::Memos>,
    /// A process [`known::run_echoing`] ran but could not use, with the
    /// stdin it was given: the next call with that stdin takes it instead
    /// of running the function again.
    prefetched: Handoff<(Vec<u8>, Result<exec::ProcessOutput, FnError>)>,
    /// After a run whose function echoed its input: each input item's memo
    /// entry, where its echo read back plainly ([`FunctionRunner::take_echo`]).
    echo: Handoff<item_memo::Entries>,
}

/// A value one call of a runner leaves for a later one. A clone of the
/// runner starts without it.
#[derive(Debug)]
struct Handoff<T>(Mutex<Option<T>>);

impl<T> Default for Handoff<T> {
    fn default() -> Self {
        Handoff(Mutex::new(None))
    }
}

impl<T> Clone for Handoff<T> {
    fn clone(&self) -> Self {
        Handoff::default()
    }
}

impl<T> Handoff<T> {
    fn put(&self, value: T) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some(value);
    }

    fn take(&self) -> Option<T> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).take()
    }

    fn is_set(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }
}

/// Where a run takes its functionConfig from.
#[derive(Clone, Debug)]
pub enum ConfigSource {
    /// The runner's own (from `configMap`, or `configPath` read from disk).
    Runner,
    /// The input resource at this index (a mutator's `configPath` resource,
    /// as edited by earlier functions).
    Input(usize),
    /// This resource (the `configPath` resource when it is not an input).
    Node(Node),
}

/// The error kpt gives for an exec function without `--allow-exec`.
pub const EXEC_NOT_ALLOWED: &str =
    "must run with `--allow-exec` option to allow running function binaries";

/// kpt's image name resolution: a name without `/` is in the kpt functions
/// catalog (`set-labels:v0.1` means `gcr.io/kpt-fn/set-labels:v0.1`).
pub fn resolve_image(image: &str) -> String {
    if image.contains('/') {
        image.to_string()
    } else {
        format!("gcr.io/kpt-fn/{image}")
    }
}

impl FunctionRunner {
    /// Builds the runner for `f` in the package at `package_dir`.
    pub fn new(
        f: &Function,
        package_dir: &Path,
        options: &RunnerOptions,
    ) -> Result<FunctionRunner, FnError> {
        if !f.exec.is_empty() && !options.allow_exec {
            let hint = hints::exec_not_allowed(&f.exec, package_dir);
            return Err(FnError::ExecNotAllowed(Box::new(hint)));
        }
        let kind = if f.exec.is_empty() {
            FunctionKind::Image(resolve_image(&f.image))
        } else {
            FunctionKind::Exec(f.exec.clone())
        };
        let name = match &kind {
            FunctionKind::Exec(s) | FunctionKind::Image(s) => s.clone(),
        };
        let use_builtins = match &kind {
            FunctionKind::Image(image) => options.uses_builtin(image),
            FunctionKind::Exec(_) => false,
        };
        Ok(FunctionRunner {
            name,
            kind,
            config: function_config(f, package_dir)?,
            show_resource_count: !f.selectors.is_empty() || !f.exclusions.is_empty(),
            package_dir: package_dir.to_string_lossy().into_owned(),
            use_builtins,
            set_package_path: true,
            container: container::ContainerOptions {
                network: options.allow_network,
                pull: container::PullPolicy::parse(&options.image_pull_policy)
                    .map_err(FnError::Message)?,
                timeout: options.timeout,
            },
            check_direct: options.check_direct,
            memos: Arc::clone(&options.memos),
            prefetched: Handoff::default(),
            echo: Handoff::default(),
        })
    }

    /// After a run in which the function echoed its input: each input
    /// item's memo entry where the echo is known to read back plainly and
    /// the item was restored so (`None` elsewhere). Taken once.
    pub fn take_echo(&self) -> Option<item_memo::Entries> {
        self.echo.take()
    }

    /// Whether the function runs on the ResourceList's bytes (not a
    /// built-in that runs on nodes).
    pub fn runs_on_bytes(&self) -> bool {
        match &self.kind {
            FunctionKind::Exec(_) => true,
            FunctionKind::Image(image) => {
                !(self.use_builtins && builtin::lookup(image).is_some_and(|b| b.direct.is_some()))
            }
        }
    }

    /// kpt's `[RUNNING]`, for a run on `count` resources.
    fn report_started(&self, count: usize, ctx: &mut RunContext) {
        ctx.reporter.report(&Event::FunctionStarted {
            name: self.name.clone(),
            selected: self.show_resource_count.then_some(count),
        });
    }

    /// Gives each of `output` without a package the runner's (render does
    /// this; `fn eval` does not).
    fn set_package_paths(&self, output: &mut [Node]) {
        if self.set_package_path {
            krmgraph_util::par::for_each_mut(output, |resource| {
                if krm::annotation(resource, kioutil::PACKAGE_PATH_ANNOTATION).is_none() {
                    krm::set_annotation(
                        resource,
                        kioutil::PACKAGE_PATH_ANNOTATION,
                        &self.package_dir,
                    );
                }
            });
        }
    }

    fn new_result(&self) -> FnResult {
        match &self.kind {
            FunctionKind::Exec(s) => FnResult {
                exec: s.clone(),
                ..FnResult::default()
            },
            FunctionKind::Image(s) => FnResult {
                image: s.clone(),
                ..FnResult::default()
            },
        }
    }

    /// Runs the function on `input` (which gains kpt's id annotations, as
    /// kpt's input nodes do) and returns its output; on success `input`
    /// may be left empty (an echoed input is moved into the output). Prints and records as
    /// kpt does. `config` overrides the runner's functionConfig. This is
    /// how validators run (their output is discarded); mutators run through
    /// [`run_in_pipeline`], which also refuses an empty stdout.
    pub fn run(
        &self,
        input: &mut Vec<Node>,
        config: ConfigSource,
        ctx: &mut RunContext,
    ) -> Result<Vec<Node>, FnError> {
        self.run_step(input, config, ctx, OutputUse::Discarded)
    }

    fn run_step(
        &self,
        input: &mut Vec<Node>,
        config: ConfigSource,
        ctx: &mut RunContext,
        output_use: OutputUse,
    ) -> Result<Vec<Node>, FnError> {
        // A run of [`known::run_echoing`] that ended here reported the start.
        if !self.prefetched.is_set() {
            self.report_started(input.len(), ctx);
        }
        let start = Instant::now();
        let mut record = self.new_result();
        let outcome = self.call(input, &config, &mut record, ctx, output_use);
        let duration = start.elapsed();
        match outcome {
            Ok(output) => {
                ctx.reporter.report(&Event::FunctionPassed {
                    name: self.name.clone(),
                    duration,
                    results: record.results.clone(),
                    stderr: record.stderr.clone(),
                });
                Ok(output)
            }
            Err(e) => {
                let exit = match &e {
                    FnError::Reported(exit) => Some((record.stderr.clone(), exit.code)),
                    FnError::ExecNotAllowed(_) | FnError::Message(_) => None,
                };
                ctx.reporter.report(&Event::FunctionFailed {
                    name: self.name.clone(),
                    duration,
                    results: record.results.clone(),
                    exit,
                });
                Err(e)
            }
        }
    }

    /// kpt's `FunctionRunner.do`: the KRM check, the call, and the checks on
    /// the output. Only failures of the call itself are recorded as results.
    fn call(
        &self,
        input: &mut Vec<Node>,
        config: &ConfigSource,
        record: &mut FnResult,
        ctx: &mut RunContext,
        output_use: OutputUse,
    ) -> Result<Vec<Node>, FnError> {
        krmgraph_kyaml::krm::check_all_krm(input).map_err(|e| {
            FnError::Message(format!(
                "input resource list must contain only KRM resources: {e}"
            ))
        })?;
        let output = match self.filter(input, config, record, output_use) {
            Ok(output) => output,
            Err(e) => {
                if let FnError::Message(_) = e {
                    record.exit_code = 1;
                }
                ctx.exit_code = 1;
                ctx.results.push(record.clone());
                return Err(e);
            }
        };
        let mut output = output;
        self.set_package_paths(&mut output);
        enforce_path_invariants(&output).map_err(FnError::Message)?;
        krmgraph_kyaml::krm::check_all_krm(&output).map_err(|e| {
            FnError::Message(format!(
                "output resource list must contain only KRM resources: {e}"
            ))
        })?;
        record.exit_code = 0;
        ctx.results.push(record.clone());
        Ok(output)
    }

    /// kyaml's `FunctionFilter.Filter` with kpt's exec runtime: ids on the
    /// input, the ResourceList on stdin, the output read back with comments
    /// and order restored, and default paths for generated resources.
    fn filter(
        &self,
        input: &mut Vec<Node>,
        config: &ConfigSource,
        record: &mut FnResult,
        output_use: OutputUse,
    ) -> Result<Vec<Node>, FnError> {
        kio_pipeline::set_ids(input).map_err(|e| FnError::Message(e.to_string()))?;
        // The config is read after the ids are set: when it is one of the
        // inputs, the function sees it with them, as with kpt's shared nodes.
        let function_config = match config {
            ConfigSource::Runner => self.config.clone(),
            ConfigSource::Input(i) => input.get(*i).cloned(),
            ConfigSource::Node(node) => Some(node.clone()),
        };
        if let Some(direct) = self.run_on_nodes(input, function_config.as_ref()) {
            let direct = direct?;
            record.stderr = String::from_utf8_lossy(&direct.stderr).into_owned();
            if let Some(results) = &direct.results {
                record.results = parse_results(results);
            }
            let output = direct.items;
            if self.check_direct {
                let mut on_bytes = self.new_result();
                let bytes =
                    self.filter_bytes(input, function_config.as_ref(), &mut on_bytes, output_use);
                builtin::direct::check(&self.name, &output, record, &on_bytes, bytes);
            }
            return Ok(output);
        }
        self.filter_bytes(input, function_config.as_ref(), record, output_use)
    }

    /// The function on the ResourceList bytes: what [`Self::filter`] does
    /// for every function but a built-in that runs on nodes.
    fn filter_bytes(
        &self,
        input: &mut Vec<Node>,
        function_config: Option<&Node>,
        record: &mut FnResult,
        output_use: OutputUse,
    ) -> Result<Vec<Node>, FnError> {
        let (stdin, remembered) = kio_pipeline::function_input_remembering(
            input,
            function_config,
            &self.memos.items,
            self.check_direct,
        )
        .map_err(|e| FnError::Message(e.to_string()))?;
        let process = self.invoke(&stdin)?;
        record.stderr = String::from_utf8_lossy(&process.stderr).into_owned();
        let echo = process.exit_code == Some(0) && process.stdout == stdin;
        // The ResourceList text can be as large as the tree: it goes before
        // the output nodes are built.
        drop(stdin);
        if echo {
            let bare: Vec<bool> = input
                .iter()
                .map(|item| !kio_pipeline::has_document_comments(item))
                .collect();
            if let Some(output) = echoed(
                &self.memos.items,
                input,
                0,
                function_config,
                &remembered,
                &process.stdout,
                self.check_direct,
            ) {
                let output = output.map_err(|e| FnError::Message(e.to_string()))?;
                self.echo.put(plain_entries(remembered, &bare));
                return self.default_paths(output, function_config);
            }
        }
        let read = kio_pipeline::read_function_output(&process.stdout)
            .map_err(|e| FnError::Message(e.to_string()))?;
        let (mut output, results) = (read.nodes, read.results);
        let empty_stdout = process.stdout.iter().all(u8::is_ascii_whitespace);
        let exit_code = process.exit_code;
        drop(process);
        kio_pipeline::copy_comments_and_sync_order(input, &mut output)
            .map_err(|e| FnError::Message(e.to_string()))?;
        if let Some(results) = &results {
            record.results = parse_results(results);
        }
        match exit_code {
            Some(0) => {}
            code => {
                let code = code.unwrap_or(-1);
                record.exit_code = code;
                let hint = self.missing_image_hint().map(Box::new);
                return Err(FnError::Reported(Exit { code, hint }));
            }
        }
        if output_use == OutputUse::Replaces && empty_stdout {
            return Err(FnError::Message(wrote_nothing(&self.name)));
        }
        self.default_paths(output, function_config)
    }

    /// For a container function that failed: the built-in it was probably
    /// meant to be, when its image is not there ([`hints::missing_image`]).
    fn missing_image_hint(&self) -> Option<Hint> {
        let FunctionKind::Image(image) = &self.kind else {
            return None;
        };
        // Only a render's functions come from a Kptfile (`fn eval` does
        // not give outputs a package).
        let kptfile_dir = self.set_package_path.then(|| Path::new(&self.package_dir));
        hints::missing_image(image, kptfile_dir)
    }

    /// A built-in's successful output on nodes ([`builtin::direct`]),
    /// restored as kpt restores a function's output, when it has that form
    /// and answers.
    fn run_on_nodes(
        &self,
        input: &mut [Node],
        function_config: Option<&Node>,
    ) -> Option<Result<builtin::direct::Output, FnError>> {
        let FunctionKind::Image(image) = &self.kind else {
            return None;
        };
        let builtin = builtin::lookup(image).filter(|_| self.use_builtins)?;
        let direct = builtin.direct?;
        if let Some(per_item) = &builtin.per_item {
            return self.run_per_item(image, builtin, per_item, direct, input, function_config);
        }
        let mut run = direct(input, function_config)?;
        let items = std::mem::take(&mut run.items);
        Some(
            self.restore(input, items, function_config)
                .map(|items| builtin::direct::Output { items, ..run }),
        )
    }

    /// [`Self::run_on_nodes`] for a per-item built-in: the items known to
    /// come back as they are ([`fixed_point`]) are given back so without
    /// running it, it runs on the others, and those that came back as they
    /// were are learnt. The runs of items with foot comments, which the
    /// model declines, run on their own ResourceList ([`foot_comment_runs`],
    /// [`Self::run_on_bytes`]), so that a comment costs its run, not the
    /// whole list.
    fn run_per_item(
        &self,
        image: &str,
        builtin: &builtin::Builtin,
        per_item: &builtin::PerItem,
        direct: builtin::direct::DirectFn,
        input: &mut [Node],
        function_config: Option<&Node>,
    ) -> Option<Result<builtin::direct::Output, FnError>> {
        let step = fixed_point::Step::new(image, builtin.version, function_config);
        let fixed_points = &self.memos.fixed_points;
        let (mut lookups, feet) = fixed_points.classify(&step, input);
        let runs = foot_comment_runs(&feet);
        let mut given: Vec<Option<Node>> = vec![None; input.len()];
        let outputs: Vec<Vec<Node>> = runs
            .par_iter()
            .map(|run| self.run_on_bytes(builtin, &input[run.clone()], input, function_config))
            .collect::<Option<_>>()?;
        for (run, output) in runs.into_iter().zip(outputs) {
            for (i, node) in run.zip(output) {
                given[i] = Some(node);
            }
        }
        let transformed = settle_round_tripped(
            fixed_points,
            per_item,
            input,
            &mut lookups,
            &given,
            function_config,
        );
        let to_run: Vec<usize> = (0..input.len())
            .filter(|&i| given[i].is_none() && !lookups[i].is_known())
            .collect();
        let mut run = run_items(
            direct,
            per_item,
            input,
            &to_run,
            transformed,
            function_config,
        )?;
        // Outputs find their inputs by id, which is the position in the
        // whole list.
        if let Err(e) = kio_pipeline::copy_comments_and_sync_order(input, &mut run.items) {
            return Some(Err(FnError::Message(e.to_string())));
        }
        to_run
            .par_iter()
            .zip(run.items.par_iter())
            .for_each(|(&i, output)| match &lookups[i] {
                fixed_point::Lookup::Unknown(keyed) => {
                    fixed_points.learn(per_item.family, keyed, &input[i], output);
                }
                _ => fixed_points.note_output(per_item.family, output),
            });
        let ran = std::mem::take(&mut run.items);
        let output = self
            .merge_known(input, &lookups, given, ran)
            .and_then(|output| self.default_paths(output, function_config));
        Some(output.map(|items| builtin::direct::Output { items, ..run }))
    }

    /// A per-item built-in run the long way on `items` alone, as on
    /// their own ResourceList, and its output read back and restored as kpt
    /// does (`input` is the whole list, whose positions the ids give).
    /// `None` unless it succeeds, as a per-item built-in does, with no
    /// results and nothing on stderr, and gives back as many items.
    fn run_on_bytes(
        &self,
        builtin: &builtin::Builtin,
        items: &[Node],
        input: &[Node],
        function_config: Option<&Node>,
    ) -> Option<Vec<Node>> {
        let mut items = items.to_vec();
        let stdin = kio_pipeline::function_input(&mut items, function_config).ok()?;
        let process = (builtin.run)(&stdin);
        if process.exit_code != Some(0) || !process.stderr.is_empty() {
            return None;
        }
        let read = kio_pipeline::read_function_output(&process.stdout).ok()?;
        if read.results.is_some() || read.nodes.len() != items.len() {
            return None;
        }
        let mut output = read.nodes;
        kio_pipeline::copy_comments_and_sync_order(input, &mut output).ok()?;
        Some(output)
    }

    /// The step's output in input order: each item `given` (by position)
    /// as it is, each known item as [`fixed_point::output`] makes it, the
    /// others from `ran` (the run's restored outputs, in order).
    fn merge_known(
        &self,
        input: &mut [Node],
        lookups: &[fixed_point::Lookup],
        given: Vec<Option<Node>>,
        ran: Vec<Node>,
    ) -> Result<Vec<Node>, FnError> {
        let mut ran = ran.into_iter();
        let mut output = Vec::with_capacity(input.len());
        for ((item, lookup), given) in input.iter_mut().zip(lookups).zip(given) {
            let next = match (given, lookup) {
                (Some(node), _) => node,
                (None, fixed_point::Lookup::Known(look)) => {
                    // The bytes run of the check needs the input whole.
                    let item = if self.check_direct {
                        item.clone()
                    } else {
                        std::mem::take(item)
                    };
                    fixed_point::output(item, look).map_err(|e| FnError::Message(e.to_string()))?
                }
                (None, _) => ran.next().ok_or_else(|| {
                    FnError::Message("a per-item built-in gave fewer items".into())
                })?,
            };
            output.push(next);
        }
        Ok(output)
    }

    /// What kpt does to a successful function's output read back from its
    /// ResourceList: comments and field order restored from the input by
    /// id, generated resources given default paths.
    fn restore(
        &self,
        input: &[Node],
        mut output: Vec<Node>,
        function_config: Option<&Node>,
    ) -> Result<Vec<Node>, FnError> {
        kio_pipeline::copy_comments_and_sync_order(input, &mut output)
            .map_err(|e| FnError::Message(e.to_string()))?;
        self.default_paths(output, function_config)
    }

    fn default_paths(
        &self,
        mut output: Vec<Node>,
        function_config: Option<&Node>,
    ) -> Result<Vec<Node>, FnError> {
        let function_dir = kio_pipeline::function_scope(function_config)
            .map_err(|e| FnError::Message(e.to_string()))?;
        kioutil::default_path_annotation(&function_dir, &mut output)
            .map_err(|e| FnError::Message(e.to_string()))?;
        Ok(output)
    }

    fn invoke(&self, stdin: &[u8]) -> Result<exec::ProcessOutput, FnError> {
        if let Some((sent, process)) = self.prefetched.take() {
            if sent == stdin {
                return process;
            }
            // The function would run twice: the ResourceList from parts
            // differs from the long way's.
            assert!(
                !self.check_direct,
                "KRMGRAPH_CHECK_DIRECT: the long way's ResourceList differs from the one sent from blocks"
            );
        }
        let message = |e: &dyn std::fmt::Display| FnError::Message(e.to_string());
        match &self.kind {
            FunctionKind::Exec(command) => {
                exec::run(command, stdin, self.container.timeout).map_err(|e| message(&e))
            }
            FunctionKind::Image(image) => match builtin::lookup(image) {
                Some(b) if self.use_builtins => Ok((b.run)(stdin)),
                _ => container::run(image, stdin, &self.container).map_err(|e| message(&e)),
            },
        }
    }
}

/// The entries of `remembered` whose echo reads back plainly, of items
/// without document comments (`bare`): those the echo restored plainly.
fn plain_entries(remembered: item_memo::Entries, bare: &[bool]) -> item_memo::Entries {
    remembered
        .into_iter()
        .zip(bare)
        .map(|(entry, &bare)| entry.filter(|e| bare && e.echo_reads_back_plainly()))
        .collect()
}

/// The output of a function that succeeded by printing its input back
/// unchanged (an identity function such as `cat`, or a validator that
/// echoes what it checked), as kpt reads it and restores it: the input
/// items as they parse from that text ([`Restyle::keeping_comments`]),
/// restored from themselves ([`kio_pipeline::restore_echo`]). The items are
/// moved out of `input` and restyled in place; an item whose memo entry
/// (`remembered`, by input position) says its echo reads back plainly only
/// loses its ids, and an item found to read back plainly marks its entry.
/// The items the model declines are read back and restored the long way,
/// each with the run of items its text belongs to ([`echo_windows`]), so
/// a comment the model cannot place costs its own run, not the whole
/// list. `None`, with `input` untouched, when that cannot be done (the
/// output is then parsed whole). `input` may be a run of the list the
/// function was given that starts at position `first` (ids number the
/// whole list; `check` then must be off: it parses the whole output).
/// What is found is learnt into `memo`.
fn echoed(
    memo: &item_memo::ItemMemo,
    input: &mut Vec<Node>,
    first: usize,
    function_config: Option<&Node>,
    remembered: &[Option<Arc<item_memo::Entry>>],
    stdout: &[u8],
    check: bool,
) -> Option<Result<Vec<Node>, krmgraph_kyaml::KyamlError>> {
    debug_assert!(first == 0 || !check);
    let entry = |i: usize| remembered.get(i).and_then(Option::as_ref);
    // Per item: `None` where the model declines; `Some(None)` where the
    // memo knows its echo reads back plainly.
    let plans: Vec<Option<Option<Restyle>>> = input
        .par_iter()
        .enumerate()
        .map(|(i, item)| {
            if entry(i).is_some_and(|e| e.echo_reads_back_plainly())
                && !kio_pipeline::has_document_comments(item)
            {
                return Some(None);
            }
            byteio::cleaning_changes_nothing(item)
                .then(|| Restyle::keeping_comments(rnode::y_node(item)))
                .flatten()
                .map(Some)
        })
        .collect();
    let read_back = echo_windows(input, first, &plans, function_config)?;
    let expected = check.then(|| {
        let mut parsed = kio_pipeline::read_function_output(stdout)
            .unwrap_or_else(|e| {
                panic!("KRMGRAPH_CHECK_DIRECT: an echo the model took does not parse: {e}")
            })
            .nodes;
        kio_pipeline::copy_comments_and_sync_order(input, &mut parsed)
            .expect("KRMGRAPH_CHECK_DIRECT: restoring an echo fails");
        parsed
    });
    let mut items = std::mem::take(input);
    let restored = items
        .par_iter_mut()
        .zip(plans)
        .zip(read_back)
        .enumerate()
        .map(|(i, ((item, plan), read_back))| {
            let entry = entry(i);
            let plan = match (read_back, plan) {
                (Some(output), _) => {
                    *item = output;
                    return Ok(());
                }
                // `echo_windows` reads back every item the model declines.
                (None, None) => return Ok(()),
                (None, Some(None)) => return entry.map_or(Ok(()), |e| e.restore_echo(item)),
                (None, Some(Some(plan))) => plan,
            };
            let unchanged = entry.is_some_and(|_| {
                let ids = item_memo::id_nodes(rnode::y_node(item));
                plan.changes_nothing_except(rnode::y_node(item), &ids)
            });
            let plain = kio_pipeline::restore_echo(item, |output| plan.apply(output))?;
            if let Some(entry) = entry.filter(|_| unchanged && plain) {
                memo.learn_echo(entry, item);
            }
            Ok(())
        })
        .collect::<Vec<_>>()
        .into_iter()
        .collect::<Result<(), _>>();
    if let Err(e) = restored {
        return Some(Err(e));
    }
    if let Some(expected) = expected {
        builtin::direct::check_echo("echo", &items, &expected);
    }
    Some(Ok(items))
}

/// The echoed items the model declined (`plans[i]` is `None`), read back
/// and restored as kpt reads and restores a function's whole output, by
/// input position (`None` for the others). Each is read back within its
/// run, on a ResourceList of its own with the same functionConfig, as
/// [`foot_comment_runs`] says. `None` when any of that fails.
fn echo_windows(
    input: &[Node],
    first: usize,
    plans: &[Option<Option<Restyle>>],
    function_config: Option<&Node>,
) -> Option<Vec<Option<Node>>> {
    let mut read_back: Vec<Option<Node>> = vec![None; input.len()];
    if plans.iter().all(Option::is_some) {
        return Some(read_back);
    }
    let mut windows = Vec::new();
    let mut start = 0;
    for run in byteio::runs_to_end(input) {
        let window = start..start + run.len;
        if plans[window.clone()].iter().any(Option::is_none) {
            windows.push(window);
        }
        start += run.len;
    }
    let outputs: Vec<Vec<Node>> = windows
        .par_iter()
        .map(|run| {
            let mut items = input[run.clone()].to_vec();
            let text = kio_pipeline::function_input(&mut items, function_config).ok()?;
            let mut output = kio_pipeline::read_function_output(&text).ok()?.nodes;
            // Restored by id, which is the position in the whole list.
            kio_pipeline::copy_comments_and_sync_order_at(input, first, &mut output).ok()?;
            (output.len() == run.len()).then_some(output)
        })
        .collect::<Option<_>>()?;
    for (run, output) in windows.into_iter().zip(outputs) {
        for (i, node) in run.zip(output) {
            read_back[i] = Some(node);
        }
    }
    Some(read_back)
}

/// The runs of a list's items that hold a foot comment
/// ([`byteio::runs_to_end`]; `feet` says which items have one), by
/// position: the emitter writes an item's foot comment into the next item's
/// text, and nothing else passes from one item's text to the next, so such
/// a run reads back alone as it does within the list. (The last run may end
/// with a foot comment, which the list's text after the items holds: read
/// alone, a run is given the same functionConfig, so that text is the same
/// too.)
fn foot_comment_runs(feet: &[bool]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut start = 0;
    for run in byteio::runs_of_feet(feet) {
        if run.has_foot_comment {
            runs.push(start..start + run.len);
        }
        start += run.len;
    }
    runs
}

/// What becomes of a step's output.
#[derive(Clone, Copy, Debug, PartialEq)]
enum OutputUse {
    /// It replaces the input (a mutator, `fn eval`'s function): an empty
    /// stdout is an error, not an empty ResourceList.
    Replaces,
    /// It is discarded (a validator): an empty stdout is fine.
    Discarded,
}

/// The error for a mutator that exits 0 with nothing (or only whitespace)
/// on stdout. kpt reads that as an empty ResourceList and deletes every
/// resource the function was given; krmgraph refuses it (a deliberate
/// difference, `docs/conformance.md`). `items: []` still deletes them.
fn wrote_nothing(name: &str) -> String {
    format!(
        "function {} wrote nothing to stdout; a function that removes every resource must \
         write an empty ResourceList (kpt would delete every resource the function was given)",
        krmgraph_util::gostr::quote(name)
    )
}

/// The run on nodes of the items of `input` at the positions `to_run`, in
/// that order: those `transformed` (by position) only finish
/// ([`builtin::PerItem::finish`]), the others run whole. `None` where it
/// declines, or the run is not one of a per-item built-in (as many items
/// back, no results, nothing on stderr).
fn run_items(
    direct: builtin::direct::DirectFn,
    per_item: &builtin::PerItem,
    input: &[Node],
    to_run: &[usize],
    mut transformed: Vec<Option<Node>>,
    function_config: Option<&Node>,
) -> Option<builtin::direct::Output> {
    let is_transformed: Vec<bool> = to_run.iter().map(|&i| transformed[i].is_some()).collect();
    let fresh: Vec<usize> = to_run
        .iter()
        .zip(&is_transformed)
        .filter(|(_, &t)| !t)
        .map(|(&i, _)| i)
        .collect();
    let mut run = if fresh.is_empty() {
        builtin::direct::Output::default()
    } else if fresh.len() == input.len() {
        direct(input, function_config)?
    } else {
        let items: Vec<Node> = fresh.iter().map(|&i| input[i].clone()).collect();
        direct(&items, function_config)?
    };
    if run.items.len() != fresh.len() || run.results.is_some() || !run.stderr.is_empty() {
        return None;
    }
    if fresh.len() == to_run.len() {
        return Some(run);
    }
    let copies: Vec<Node> = to_run
        .iter()
        .filter_map(|&i| transformed[i].take())
        .collect();
    let finished: Vec<Node> = copies
        .into_par_iter()
        .map(per_item.finish)
        .collect::<Option<_>>()?;
    let (mut finished, mut ran) = (
        finished.into_iter(),
        std::mem::take(&mut run.items).into_iter(),
    );
    run.items = is_transformed
        .iter()
        .map(|&t| if t { finished.next() } else { ran.next() })
        .collect::<Option<_>>()?;
    Some(run)
}

/// Makes known the items of `input` that [`fixed_point::FixedPoints::classify`]
/// did not know, that came out of `per_item`'s round trip
/// ([`fixed_point::FixedPoints::round_tripped`]) and that its transformation leaves
/// alone: such an item comes back as it is. Items `given` (run on their
/// own) are left as they are. Returns, by position, the candidates the
/// transformation changed, as the function read and transformed them
/// ([`builtin::Verdict::Transformed`]).
fn settle_round_tripped(
    fixed_points: &fixed_point::FixedPoints,
    per_item: &builtin::PerItem,
    input: &[Node],
    lookups: &mut [fixed_point::Lookup],
    given: &[Option<Node>],
    function_config: Option<&Node>,
) -> Vec<Option<Node>> {
    let mut transformed: Vec<Option<Node>> = vec![None; input.len()];
    let candidates: Vec<(usize, fixed_point::Known)> = lookups
        .par_iter()
        .enumerate()
        .filter_map(|(i, lookup)| match lookup {
            fixed_point::Lookup::Unknown(keyed) if given[i].is_none() => fixed_points
                .round_tripped(per_item.family, keyed)
                .map(|known| (i, known)),
            _ => None,
        })
        .collect();
    if candidates.is_empty() {
        return transformed;
    }
    let items: Vec<&Node> = candidates.iter().map(|(i, _)| &input[*i]).collect();
    let Some(verdicts) = (per_item.leaves_alone)(&items, function_config) else {
        return transformed;
    };
    for ((i, known), verdict) in candidates.into_iter().zip(verdicts) {
        let fixed_point::Lookup::Unknown(keyed) = &lookups[i] else {
            continue;
        };
        match verdict {
            builtin::Verdict::LeftAlone => {
                fixed_points.know(keyed.key, known.clone());
                lookups[i] = fixed_point::Lookup::Known(known);
            }
            builtin::Verdict::Transformed(copy) => transformed[i] = Some(copy),
            builtin::Verdict::Unknown => {}
        }
    }
    transformed
}

/// One mutator inside kyaml's `kio.Pipeline`: the internal-annotation
/// bookkeeping around the call (an empty output list skips
/// reconciliation). A mutator that writes nothing at all fails
/// (`wrote_nothing`). As with [`FunctionRunner::run`], `input` may be
/// left empty on success.
pub fn run_in_pipeline(
    runner: &FunctionRunner,
    input: &mut Vec<Node>,
    config: ConfigSource,
    ctx: &mut RunContext,
) -> Result<Vec<Node>, FnError> {
    let snapshot = kio_pipeline::preprocess_for_internal_annotation_migration(input)
        .map_err(|e| FnError::Message(e.to_string()))?;
    let mut output = runner.run_step(input, config, ctx, OutputUse::Replaces)?;
    kio_pipeline::finish_filter(&mut output, &snapshot)
        .map_err(|e| FnError::Message(e.to_string()))?;
    Ok(output)
}

/// kpt's `newFnConfig`: a `configPath` file read from disk (no reader
/// annotations), a `configMap` turned into a `ConfigMap` named
/// `function-input` with flow-style string data, or none (an empty
/// `configMap: {}` gives none, as `len(f.ConfigMap) != 0` does in kpt).
fn function_config(f: &Function, package_dir: &Path) -> Result<Option<Node>, FnError> {
    if !f.config_path.is_empty() {
        let path = package_dir.join(&f.config_path);
        let bytes = std::fs::read(&path).map_err(|_| {
            FnError::Message(format!(
                "missing function config {}",
                krmgraph_util::gostr::quote(&f.config_path)
            ))
        })?;
        let nodes = byteio::ByteReader {
            omit_reader_annotations: true,
            ..Default::default()
        }
        .read(&bytes)
        .map_err(|e| FnError::Message(e.to_string()))?
        .nodes;
        return Ok(nodes.into_iter().next());
    }
    let Some(data) = f.config_map.as_ref().filter(|m| !m.is_empty()) else {
        return Ok(None);
    };
    let mut config = Node::mapping();
    let mut meta = Node::mapping();
    meta.content
        .extend([Node::string("name"), Node::string("function-input")]);
    let mut data_node = Node::mapping();
    data_node.style = Style::FLOW;
    for (k, v) in data {
        data_node
            .content
            .extend([Node::string(k.clone()), Node::string(v.clone())]);
    }
    config.content.extend([
        Node::string("apiVersion"),
        Node::string("v1"),
        Node::string("kind"),
        Node::string("ConfigMap"),
        Node::string("metadata"),
        meta,
        Node::string("data"),
        data_node,
    ]);
    Ok(Some(config))
}

/// kpt's `enforcePathInvariants`: no resource may leave its package
/// (`../`), and no two resources may share package, path and index.
pub fn enforce_path_invariants(output: &[Node]) -> Result<(), String> {
    check_path_keys(&krmgraph_util::par::map(output, path_key))
}

/// A resource's path, when it leaves its package, and its package,
/// cleaned path and index ([`path_key`]).
pub type PathKey = (Option<String>, [String; 3]);

/// A resource's key as [`enforce_path_invariants`] compares them: its
/// package, cleaned path and index; and its path, when it leaves the
/// package.
pub fn path_key(resource: &Node) -> PathKey {
    let package = krm::annotation(resource, kioutil::PACKAGE_PATH_ANNOTATION).unwrap_or_default();
    let (path, index) = kioutil::get_file_annotations(resource);
    let cleaned = krmgraph_package::kptfile::validate::clean_path(&path);
    let outside = cleaned.starts_with("../").then_some(path);
    (outside, [package, cleaned, index])
}

/// [`enforce_path_invariants`] of resources by their [`path_key`]s.
pub fn check_path_keys(keys: &[PathKey]) -> Result<(), String> {
    // Each key's hash on the pool; the checks in order, so the first
    // failure is the one a loop meets.
    let state = std::hash::RandomState::new();
    let hashes = krmgraph_util::par::map(keys, |(_, key)| {
        std::hash::BuildHasher::hash_one(&state, key)
    });
    // The first resource by each hash: only a resource whose hash was
    // seen has its key compared.
    let mut first: HashMap<u64, usize, BuildHasherDefault<HashedAlready>> = HashMap::default();
    for (i, ((outside, key), hash)) in keys.iter().zip(&hashes).enumerate() {
        if let Some(path) = outside {
            return Err(format!(
                "function must not modify resources outside of package: resource has path {path}"
            ));
        }
        let seen = match first.entry(*hash) {
            Entry::Vacant(slot) => {
                slot.insert(i);
                false
            }
            Entry::Occupied(_) => keys[..i].iter().any(|(_, earlier)| earlier == key),
        };
        if seen {
            // kpt names the cleaned path (`./a.yaml` is reported as `a.yaml`).
            return Err(format!(
                "resource at path {} and index {} already exists",
                krmgraph_util::gostr::quote(&key[1]),
                krmgraph_util::gostr::quote(&key[2])
            ));
        }
    }
    Ok(())
}

/// A hasher for keys that are hashes already.
#[derive(Default)]
struct HashedAlready(u64);

impl std::hash::Hasher for HashedAlready {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{emit, parse};
    use krmgraph_kyaml::kio_pipeline::{
        finish_filter, function_input, preprocess_for_internal_annotation_migration, set_ids,
    };

    /// A resource of package `pkg` at `path`, index `index`.
    fn placed(pkg: &str, path: &str, index: usize) -> Node {
        parse(&format!(
            "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations:\n    internal.config.kubernetes.io/package-path: '{pkg}'\n    internal.config.kubernetes.io/path: '{path}'\n    internal.config.kubernetes.io/index: '{index}'\n"
        ))
    }

    #[test]
    fn path_invariants_find_the_first_duplicate_and_the_first_escape() {
        // Enough resources for the keys to be made on the pool.
        let mut output: Vec<Node> = (0..200)
            .map(|i| placed("p", &format!("f{i}.yaml"), 0))
            .collect();
        assert_eq!(enforce_path_invariants(&output), Ok(()));
        // The same path in another package, or at another index, is fine.
        output.push(placed("q", "f3.yaml", 0));
        output.push(placed("p", "f3.yaml", 1));
        assert_eq!(enforce_path_invariants(&output), Ok(()));
        // `./f7.yaml` is `f7.yaml`: the error names the cleaned path.
        output.push(placed("p", "./f7.yaml", 0));
        output.push(placed("p", "f9.yaml", 0));
        assert_eq!(
            enforce_path_invariants(&output),
            Err("resource at path \"f7.yaml\" and index \"0\" already exists".into())
        );
        // An escape before the duplicate is the one reported.
        output.insert(150, placed("p", "../out.yaml", 0));
        assert_eq!(
            enforce_path_invariants(&output),
            Err("function must not modify resources outside of package: resource has path ../out.yaml".into())
        );
    }

    /// Resources an identity function passes up a tree of pipelines.
    const PASSED_UP: &[&str] = &[
        "# head\napiVersion: v1\nkind: A\nmetadata:\n  name: a # name\n  annotations:\n    x: \"y\"\ndata:\n  x: '1'\n  y: 2\n",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  template:\n    spec:\n      containers:\n        # first key's head\n        - name: x\n          args: [\"a\", 'b']\n          command:\n            - |\n              echo 1\n",
        "apiVersion: v1\nkind: A\nmetadata:\n  name: a\ndata:\n  folded: >-\n    one\n    line\n",
        "# document head\n\napiVersion: v1\nkind: A\nmetadata:\n  name: b\n",
    ];

    /// The echo of `items` through kio.Pipeline's bookkeeping, as one level
    /// of a tree runs it: numbered, encoded through the memo, echoed and
    /// reconciled. `check` holds the memo's texts to fresh encodings and
    /// the echoes to their parses.
    fn one_level(
        memo: &item_memo::ItemMemo,
        items: &mut Vec<Node>,
    ) -> (Vec<u8>, item_memo::Entries) {
        let snapshot = preprocess_for_internal_annotation_migration(items).unwrap();
        set_ids(items).unwrap();
        let (stdin, remembered) =
            kio_pipeline::function_input_remembering(items, None, memo, true).unwrap();
        let mut output = match echoed(memo, items, 0, None, &remembered, &stdin, true) {
            Some(output) => output.unwrap(),
            None => {
                let mut parsed = kio_pipeline::read_function_output(&stdin).unwrap().nodes;
                kio_pipeline::copy_comments_and_sync_order(items, &mut parsed).unwrap();
                parsed
            }
        };
        finish_filter(&mut output, &snapshot).unwrap();
        *items = output;
        (stdin, remembered)
    }

    /// Passes `sources` up four levels through the memo and the long way
    /// (encoded whole, parsed back); returns, per level, how many items'
    /// echoes the memo knew to read back plainly.
    fn pass_up(sources: &[&str]) -> Vec<usize> {
        let memo = item_memo::ItemMemo::default();
        let mut items: Vec<Node> = sources.iter().map(|s| parse(s)).collect();
        let mut long_way = items.clone();
        let mut plain = Vec::new();
        for level in 0..4 {
            // Each level numbers the items from another position.
            items.rotate_left(1);
            long_way.rotate_left(1);
            let (stdin, remembered) = one_level(&memo, &mut items);
            let snapshot = preprocess_for_internal_annotation_migration(&mut long_way).unwrap();
            set_ids(&mut long_way).unwrap();
            assert_eq!(stdin, function_input(&mut long_way.clone(), None).unwrap());
            let mut parsed = kio_pipeline::read_function_output(&stdin).unwrap().nodes;
            kio_pipeline::copy_comments_and_sync_order(&long_way, &mut parsed).unwrap();
            finish_filter(&mut parsed, &snapshot).unwrap();
            long_way = parsed;
            let got: Vec<String> = items.iter().map(emit).collect();
            let want: Vec<String> = long_way.iter().map(emit).collect();
            assert_eq!(got, want, "level {level}");
            plain.push(
                remembered
                    .iter()
                    .filter(|e| e.as_ref().is_some_and(|e| e.echo_reads_back_plainly()))
                    .count(),
            );
        }
        plain
    }

    #[test]
    fn remembered_items_encode_and_echo_as_the_long_way() {
        // The resource whose first key's head comment moves at every echo,
        // and the folded scalar kyaml rewrites, are never plain echoes;
        // the first resource is, from its second echo on.
        assert_eq!(pass_up(&PASSED_UP[..3])[2..], [1, 1]);
        // A document head comment ends up on the item's mapping, before
        // its `- `: the list is still encoded item by item.
        assert_eq!(pass_up(PASSED_UP)[2..], [1, 1]);
    }
}
