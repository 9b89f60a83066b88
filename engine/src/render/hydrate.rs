//! Depth-first hydration (kpt's `hydrate` and `runPipeline`): a package's
//! pipeline sees the rendered resources of all its subpackages (sorted by
//! display path), then its own; mutators run in order and replace the
//! resource list; validators run on copies and their output is discarded.
//!
//! With more than one job, sibling subtrees render at once on rayon. Each
//! subtree records its progress events and results, and the parent joins
//! them in display-path order, stopping at the first failure, so the log,
//! `results.yaml` and the error are those of a sequential render (a later
//! sibling may have run, but nothing of it is reported or written).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::RenderError;
use crate::event::{Event, RecordingReporter};
use crate::fnruntime::select::{merge_with_input, select, set_resource_ids};
use crate::fnruntime::{
    ConfigSource, FnError, FunctionRunner, RunContext, RunnerOptions, EXEC_NOT_ALLOWED,
};
use crate::kptfile::validate::{clean_path, ValidateError};
use crate::kptfile::{Function, KptfileError};
use crate::kyaml::{kioutil, pkgio};
use crate::package::{direct_subpackages, Package};
use crate::yaml::Node;

/// Walks the package tree and runs every pipeline.
pub struct Hydrator<'a> {
    root_dir: PathBuf,
    root_parent: PathBuf,
    options: &'a RunnerOptions,
    /// How many subtrees may render at once (1: sequentially).
    pub(super) jobs: usize,
    /// Functions executed so far.
    pub executed: usize,
    /// Packages visited so far.
    pub packages: usize,
    /// Root-relative paths of every file a resource was read from.
    pub input_files: BTreeSet<String>,
}

impl<'a> Hydrator<'a> {
    /// A hydrator for the tree rooted at `root_dir`.
    pub fn new(
        root_dir: &Path,
        root_parent: &Path,
        options: &'a RunnerOptions,
        jobs: usize,
    ) -> Hydrator<'a> {
        Hydrator {
            root_dir: root_dir.to_path_buf(),
            root_parent: root_parent.to_path_buf(),
            options,
            jobs: jobs.max(1),
            executed: 0,
            packages: 0,
            input_files: BTreeSet::new(),
        }
    }

    /// Renders `pkg` and everything below it; returns its output resources.
    pub fn hydrate(
        &mut self,
        pkg: &Package,
        ctx: &mut RunContext,
    ) -> Result<Vec<Node>, RenderError> {
        self.packages += 1;
        let mut input = Vec::new();
        let subs = direct_subpackages(&pkg.dir)?;
        if self.jobs > 1 && subs.len() > 1 {
            let this = &*self;
            let runs: Vec<Recorded<Vec<Node>>> = subs
                .par_iter()
                .map(|dir| {
                    this.recorded(|h, ctx| {
                        let sub = Package::load(dir, &h.root_parent)?;
                        h.hydrate(&sub, ctx)
                    })
                })
                .collect();
            for run in runs {
                input.extend(self.join(run, ctx)?);
            }
        } else {
            for sub_dir in subs {
                let sub = Package::load(&sub_dir, &self.root_parent)?;
                input.extend(self.hydrate(&sub, ctx)?);
            }
        }
        let local = self.local_resources(pkg)?;
        input.extend(local);
        self.run_pipeline(pkg, input, ctx)
    }

    /// A hydrator for a subtree, with nothing counted yet.
    pub(super) fn fork(&self) -> Hydrator<'a> {
        Hydrator::new(&self.root_dir, &self.root_parent, self.options, self.jobs)
    }

    /// Runs `work` on a fresh hydrator (on any thread), recording what it
    /// reports instead of reporting it.
    pub(super) fn recorded<T>(
        &self,
        work: impl FnOnce(&mut Hydrator<'a>, &mut RunContext) -> Result<T, RenderError>,
    ) -> Recorded<T> {
        let mut hydrator = self.fork();
        let mut reporter = RecordingReporter::default();
        let mut ctx = RunContext {
            reporter: &mut reporter,
            results: Vec::new(),
            exit_code: 0,
        };
        let outcome = work(&mut hydrator, &mut ctx);
        let (results, exit_code) = (ctx.results, ctx.exit_code);
        Recorded {
            outcome,
            events: reporter.events,
            results,
            exit_code,
            executed: hydrator.executed,
            packages: hydrator.packages,
            input_files: hydrator.input_files,
        }
    }

    /// Reports a recorded run as if it had run here; returns its outcome.
    pub(super) fn join<T>(
        &mut self,
        run: Recorded<T>,
        ctx: &mut RunContext,
    ) -> Result<T, RenderError> {
        for event in &run.events {
            ctx.reporter.report(event);
        }
        ctx.results.extend(run.results);
        ctx.exit_code = ctx.exit_code.max(run.exit_code);
        self.executed += run.executed;
        self.packages += run.packages;
        self.input_files.extend(run.input_files);
        run.outcome
    }

    /// The directory the root's display path is relative to.
    pub(super) fn root_parent(&self) -> &Path {
        &self.root_parent
    }

    /// `pkg`'s own resources, recording the files they came from.
    pub(super) fn local_resources(&mut self, pkg: &Package) -> Result<Vec<Node>, RenderError> {
        let resources = read_local(pkg)?;
        let rel_pkg = crate::package::display_path(&pkg.dir, &self.root_dir);
        for r in &resources {
            let path = crate::krm::path_of(r);
            let joined = if rel_pkg.is_empty() {
                path
            } else {
                format!("{rel_pkg}/{path}")
            };
            self.input_files.insert(clean_path(&joined));
        }
        Ok(resources)
    }

    /// kpt's `runPipeline`: mutators, then validators on copies.
    pub(super) fn run_pipeline(
        &mut self,
        pkg: &Package,
        input: Vec<Node>,
        ctx: &mut RunContext,
    ) -> Result<Vec<Node>, RenderError> {
        ctx.reporter.report(&Event::PackageStarted {
            display_path: pkg.display_path.clone(),
        });
        let pipeline = &pkg.kptfile.pipeline;
        if pipeline.is_empty() {
            crate::krm::check_all_krm(&input).map_err(|e| {
                RenderError::Message(format!(
                    "input resource list must contain only KRM resources: {e}"
                ))
            })?;
            return Ok(input);
        }
        validate_config_paths(pkg)?;
        let output = self.run_mutators(pkg, input, ctx)?;
        self.run_validators(pkg, &output, ctx)?;
        ctx.reporter.report(&Event::PackageFinished);
        Ok(output)
    }

    fn run_mutators(
        &mut self,
        pkg: &Package,
        mut input: Vec<Node>,
        ctx: &mut RunContext,
    ) -> Result<Vec<Node>, RenderError> {
        let functions = &pkg.kptfile.pipeline.mutators;
        // kpt builds every runner before the first one runs.
        let runners = functions
            .iter()
            .map(|f| FunctionRunner::new(f, &pkg.dir, self.options))
            .collect::<Result<Vec<_>, _>>()?;
        let package_dir = pkg.dir.to_string_lossy().into_owned();
        for (f, runner) in functions.iter().zip(&runners) {
            let config_index = config_resource(&input, &package_dir, f);
            let uses_selection = !f.selectors.is_empty() || !f.exclusions.is_empty();
            if uses_selection {
                set_resource_ids(&mut input);
            }
            let selected = select(&input, &f.selectors, &f.exclusions);
            let mut selected_nodes: Vec<Node> =
                selected.iter().map(|&i| input[i].clone()).collect();
            let config = match config_index {
                Some(i) => match selected.iter().position(|&s| s == i) {
                    Some(pos) => ConfigSource::Input(pos),
                    None => ConfigSource::Node(input[i].clone()),
                },
                None => ConfigSource::Runner,
            };
            let output =
                crate::fnruntime::run_in_pipeline(runner, &mut selected_nodes, config, ctx)?;
            self.executed += 1;
            input = if uses_selection {
                merge_with_input(output, &selected, input)
            } else {
                output
            };
        }
        Ok(input)
    }

    fn run_validators(
        &mut self,
        pkg: &Package,
        input: &[Node],
        ctx: &mut RunContext,
    ) -> Result<(), RenderError> {
        if input.is_empty() {
            return Ok(());
        }
        for f in &pkg.kptfile.pipeline.validators {
            if !f.exec.is_empty() && !self.options.allow_exec {
                return Err(FnError::Message(EXEC_NOT_ALLOWED.into()).into());
            }
            let selected = select(input, &f.selectors, &f.exclusions);
            let runner = FunctionRunner::new(f, &pkg.dir, self.options)?;
            let mut copies: Vec<Node> = selected.iter().map(|&i| input[i].clone()).collect();
            runner.run(&mut copies, ConfigSource::Runner, ctx)?;
            self.executed += 1;
        }
        Ok(())
    }
}

/// What work run on another thread ([`Hydrator::recorded`]) left to
/// report, and its outcome.
pub(super) struct Recorded<T> {
    outcome: Result<T, RenderError>,
    events: Vec<Event>,
    results: Vec<crate::fnruntime::results::FnResult>,
    exit_code: i32,
    executed: usize,
    packages: usize,
    input_files: BTreeSet<String>,
}

impl<T> Recorded<T> {
    /// The outcome, and the rest to report later.
    pub(super) fn take_outcome(self) -> (Result<T, RenderError>, Recorded<()>) {
        let rest = Recorded {
            outcome: Ok(()),
            events: self.events,
            results: self.results,
            exit_code: self.exit_code,
            executed: self.executed,
            packages: self.packages,
            input_files: self.input_files,
        };
        (self.outcome, rest)
    }
}

/// The index of the resource a mutator's `configPath` names: the one of
/// this package whose path annotation equals the configPath.
fn config_resource(input: &[Node], package_dir: &str, f: &Function) -> Option<usize> {
    if f.config_path.is_empty() {
        return None;
    }
    input.iter().rposition(|r| {
        crate::krm::annotation(r, kioutil::PACKAGE_PATH_ANNOTATION).as_deref() == Some(package_dir)
            && crate::krm::path_of(r) == f.config_path
    })
}

/// kpt's `ValidatePipeline`: every `configPath` must name one of the
/// package's own resources (not a subpackage's, not an ignored file).
fn validate_config_paths(pkg: &Package) -> Result<(), RenderError> {
    let pipeline = &pkg.kptfile.pipeline;
    let needs_check = pipeline
        .mutators
        .iter()
        .chain(&pipeline.validators)
        .any(|f| !f.config_path.is_empty());
    if !needs_check {
        return Ok(());
    }
    let local = read_local(pkg)?;
    let paths: BTreeSet<String> = local.iter().map(crate::krm::path_of).collect();
    for (kind, functions) in [
        ("mutators", &pipeline.mutators),
        ("validators", &pipeline.validators),
    ] {
        for (i, f) in functions.iter().enumerate() {
            if !f.config_path.is_empty() && !paths.contains(&clean_path(&f.config_path)) {
                return Err(KptfileError::Invalid(ValidateError {
                    field: format!("pipeline.{kind}[{i}].configPath"),
                    value: Some(f.config_path.clone()),
                    reason: "functionConfig must exist in the current package".into(),
                })
                .into());
            }
        }
    }
    Ok(())
}

/// The package's own resources, read as kpt reads them.
fn read_local(pkg: &Package) -> Result<Vec<Node>, RenderError> {
    Ok(pkgio::LocalPackageReader::kpt(&pkg.dir, &pkg.dir.to_string_lossy()).read()?)
}
