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
//!
//! With a step cache ([`StepCache`]), each subtree is first looked up by
//! its files (a hit replays the subtree without reading it), and each step
//! by its input (a hit replays the step without running it); what runs is
//! recorded, its events and results captured as they are reported.

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use krmgraph_cache::Digest;
use rayon::prelude::*;

use super::blocks;
use super::codec::Log;
use super::stepcache::{push_part, Blob, Part, Resources, Role, StepCache, StepInputs, SubtreeRun};
use super::RenderError;
use krmgraph_fn::event::{CacheEvent, Event, RecordingReporter, Reporter};
use krmgraph_fn::select::{merge_with_input, select, set_resource_ids};
use krmgraph_fn::{ConfigSource, FunctionRunner, RunContext, RunnerOptions};
use krmgraph_kyaml::{kioutil, pkgio};
use krmgraph_package::kptfile::validate::{clean_path, ValidateError};
use krmgraph_package::kptfile::{Function, KptfileError};
use krmgraph_package::{direct_subpackages, Package};
use krmgraph_yaml::Node;

/// Walks the package tree and runs every pipeline.
pub struct Hydrator<'a> {
    root_dir: PathBuf,
    root_parent: PathBuf,
    options: &'a RunnerOptions,
    /// The step cache, when the render uses one.
    cache: Option<&'a StepCache<'a>>,
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
    pub(super) fn new(
        root_dir: &Path,
        root_parent: &Path,
        options: &'a RunnerOptions,
        jobs: usize,
        cache: Option<&'a StepCache<'a>>,
    ) -> Hydrator<'a> {
        Hydrator {
            root_dir: root_dir.to_path_buf(),
            root_parent: root_parent.to_path_buf(),
            options,
            cache,
            jobs: jobs.max(1),
            executed: 0,
            packages: 0,
            input_files: BTreeSet::new(),
        }
    }

    /// Renders `pkg` and everything below it; returns its output resources
    /// in parts.
    pub(super) fn hydrate(
        &mut self,
        pkg: &Package,
        ctx: &mut RunContext,
    ) -> Result<Vec<Part>, RenderError> {
        Ok(self.hydrate_subtree(pkg, ctx)?.parts)
    }

    /// The resources `parts` hold, as nodes.
    pub(super) fn nodes_of(&self, mut parts: Vec<Part>) -> Result<Vec<Node>, RenderError> {
        if let [Part::Nodes(nodes) | Part::Decoded(_, nodes)] = parts.as_mut_slice() {
            return Ok(std::mem::take(nodes));
        }
        // Blocks decode at once, as replayed subtrees did when they were
        // decoded where they were replayed.
        let decoded: Vec<Result<Vec<Node>, RenderError>> = parts
            .into_par_iter()
            .map(|part| match part {
                Part::Nodes(nodes) | Part::Decoded(_, nodes) => Ok(nodes),
                Part::Block(block) => self.cache.and_then(|c| c.decode(&block)).ok_or_else(|| {
                    RenderError::Message(format!(
                        "the cache's record {} does not decode; `krmgraph cache clear` empties the cache",
                        block.digest()
                    ))
                }),
            })
            .collect();
        let mut nodes = Vec::new();
        for part in decoded {
            nodes.extend(part?);
        }
        Ok(nodes)
    }

    /// [`Hydrator::hydrate`] through the subtree shortcut: a recorded
    /// subtree is replayed, another is rendered and recorded.
    fn hydrate_subtree(
        &mut self,
        pkg: &Package,
        ctx: &mut RunContext,
    ) -> Result<Resources, RenderError> {
        let Some(cache) = self.cache else {
            return self.hydrate_fresh(pkg, ctx);
        };
        let Some(key) = cache.subtree_key(pkg) else {
            let rendered = self.hydrate_fresh(pkg, ctx)?;
            return Ok(digested(cache, rendered));
        };
        if let Some(hit) = cache.lookup_subtree(&key) {
            ctx.reporter
                .report(&Event::Cache(CacheEvent::SubtreeReplayed {
                    package: pkg.display_path.clone(),
                }));
            self.replay(&hit.log, ctx);
            self.executed += hit.executed;
            self.packages += hit.packages;
            self.input_files.extend(hit.log.files);
            return Ok(hit.output);
        }
        let (executed, packages) = (self.executed, self.packages);
        let results = ctx.results.len();
        let (rendered, events) = teed(ctx, |ctx| self.hydrate_fresh(pkg, ctx));
        let rendered = rendered?;
        let run = SubtreeRun {
            output: &rendered,
            log: Log {
                events,
                results: ctx.results[results..].to_vec(),
                files: self.input_files_under(&pkg.dir),
            },
            executed: self.executed - executed,
            packages: self.packages - packages,
        };
        let stored = cache.record_subtree(&key, &run);
        self.report_cache_failure(ctx);
        let rendered = Resources {
            blob: stored.or(rendered.blob),
            ..rendered
        };
        Ok(digested(cache, rendered))
    }

    /// Renders `pkg`'s subpackages, then its own pipeline.
    fn hydrate_fresh(
        &mut self,
        pkg: &Package,
        ctx: &mut RunContext,
    ) -> Result<Resources, RenderError> {
        self.packages += 1;
        let subs = direct_subpackages(&pkg.dir)?;
        let mut rendered = Vec::with_capacity(subs.len() + 1);
        if let Some(cache) = self.cache.filter(|_| subs.len() > 1) {
            cache.prefetch_subtrees(&subs, &self.root_parent);
        }
        if self.jobs > 1 && subs.len() > 1 {
            let this = &*self;
            let mut runs: Vec<(usize, Recorded<Resources>)> = self
                .start_order(&subs)
                .into_par_iter()
                .map(|i| {
                    let run = this.recorded(|h, ctx| {
                        let sub = Package::load(&subs[i], &h.root_parent)?;
                        h.hydrate_subtree(&sub, ctx)
                    });
                    (i, run)
                })
                .collect();
            runs.sort_by_key(|(i, _)| *i);
            for (_, run) in runs {
                rendered.push(self.join(run, ctx)?);
            }
        } else {
            for sub_dir in &subs {
                let sub = Package::load(sub_dir, &self.root_parent)?;
                rendered.push(self.hydrate_subtree(&sub, ctx)?);
            }
        }
        let (local, files) = self.local_resources(pkg)?;
        let local_blob = self.cache.and_then(|c| c.digest_of(&local));
        rendered.push(Resources::of_nodes(local, local_blob));
        let digest = rendered
            .iter()
            .map(|r| r.blob.map(|b| b.digest()))
            .collect::<Option<Vec<_>>>()
            .map(|parts| StepCache::combine(&parts));
        let names = InputNames {
            files,
            subpackages: subs
                .iter()
                .zip(&rendered)
                .filter_map(|(dir, r)| {
                    let rel = krmgraph_package::display_path(dir, &self.root_dir);
                    Some((rel, r.blob?.digest()))
                })
                .collect(),
            changed: RefCell::new(None),
        };
        let mut input = Vec::new();
        for part in rendered.into_iter().flat_map(|r| r.parts) {
            push_part(&mut input, part);
        }
        self.pipeline(pkg, input, digest, Some(&names), ctx)
    }

    /// The order in which to start the subtrees at `subs` (indices): those
    /// the step cache has no record of first, since they run pipelines,
    /// while the other workers replay the recorded ones. Their results are
    /// joined in display-path order whatever the order they ran in.
    fn start_order(&self, subs: &[PathBuf]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..subs.len()).collect();
        if let Some(cache) = self.cache {
            let recorded: Vec<bool> = subs
                .iter()
                .map(|dir| {
                    let display_path = krmgraph_package::display_path(dir, &self.root_parent);
                    cache
                        .subtree_key_at(dir, &display_path)
                        .is_some_and(|key| cache.has_record(&key))
                })
                .collect();
            order.sort_by_key(|&i| recorded[i]);
        }
        order
    }

    /// The root-relative paths of the input files under `dir`.
    fn input_files_under(&self, dir: &Path) -> Vec<String> {
        let rel = krmgraph_package::display_path(dir, &self.root_dir);
        if rel.is_empty() {
            return self.input_files.iter().cloned().collect();
        }
        let prefix = format!("{rel}/");
        self.input_files
            .range(prefix.clone()..)
            .take_while(|p| p.starts_with(&prefix))
            .cloned()
            .collect()
    }

    /// Reports a recorded log as if it were happening now.
    fn replay(&mut self, log: &Log, ctx: &mut RunContext) {
        for event in &log.events {
            ctx.reporter.report(event);
        }
        ctx.results.extend(log.results.iter().cloned());
    }

    /// Reports the store's first failure, once.
    fn report_cache_failure(&self, ctx: &mut RunContext) {
        if let Some(message) = self.cache.and_then(StepCache::take_failure) {
            ctx.reporter
                .report(&Event::Cache(CacheEvent::StoreFailed(message)));
        }
    }

    /// A hydrator for a subtree, with nothing counted yet.
    pub(super) fn fork(&self) -> Hydrator<'a> {
        Hydrator::new(
            &self.root_dir,
            &self.root_parent,
            self.options,
            self.jobs,
            self.cache,
        )
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

    /// `pkg`'s own resources and the files they came from (root-relative,
    /// each once), recording the files.
    pub(super) fn local_resources(
        &mut self,
        pkg: &Package,
    ) -> Result<(Vec<Node>, Vec<String>), RenderError> {
        let resources = read_local(pkg)?;
        let files = files_of(pkg, &self.root_dir, &resources);
        self.input_files.extend(files.iter().cloned());
        Ok((resources, files))
    }

    /// kpt's `runPipeline`: mutators, then validators on copies.
    pub(super) fn run_pipeline(
        &mut self,
        pkg: &Package,
        input: Vec<Node>,
        ctx: &mut RunContext,
    ) -> Result<Vec<Node>, RenderError> {
        let digest = self
            .cache
            .and_then(|c| c.digest_of(&input))
            .map(|b| b.digest());
        let output = self.pipeline(pkg, vec![Part::Nodes(input)], digest, None, ctx)?;
        self.nodes_of(output.parts)
    }

    /// [`Hydrator::run_pipeline`] on an input whose digest is known (when
    /// the render has a step cache).
    /// `names`: the input by name, for `--explain`.
    fn pipeline(
        &mut self,
        pkg: &Package,
        input: Vec<Part>,
        digest: Option<Digest>,
        names: Option<&InputNames>,
        ctx: &mut RunContext,
    ) -> Result<Resources, RenderError> {
        ctx.reporter.report(&Event::PackageStarted {
            display_path: pkg.display_path.clone(),
        });
        let pipeline = &pkg.kptfile.pipeline;
        if pipeline.is_empty() {
            // A block's resources are a record's, which were checked.
            for part in &input {
                if let Part::Nodes(nodes) = part {
                    krmgraph_kyaml::krm::check_all_krm(nodes).map_err(|e| {
                        RenderError::Message(format!(
                            "input resource list must contain only KRM resources: {e}"
                        ))
                    })?;
                }
            }
            return Ok(Resources {
                parts: input,
                blob: None,
            });
        }
        validate_config_paths(pkg)?;
        if let Some(cache) = self.cache {
            cache.memos_loaded();
        }
        let (mut output, blob) = self.run_mutators(pkg, input, digest, names, ctx)?;
        // Validators see the mutators' output: without mutators, the input.
        let digest = if pipeline.mutators.is_empty() {
            digest
        } else {
            blob.map(|b| b.digest())
        };
        if !pipeline.validators.is_empty() {
            let nodes = self.nodes_of(output)?;
            self.run_validators(pkg, &nodes, digest, names, ctx)?;
            output = vec![Part::Nodes(nodes)];
        }
        ctx.reporter.report(&Event::PackageFinished);
        Ok(Resources {
            parts: output,
            blob,
        })
    }

    /// The mutators in order; returns the output and, when the step cache
    /// knows it, the digest of the last mutator's output.
    fn run_mutators(
        &mut self,
        pkg: &Package,
        mut input: Vec<Part>,
        mut digest: Option<Digest>,
        names: Option<&InputNames>,
        ctx: &mut RunContext,
    ) -> Result<(Vec<Part>, Option<Blob>), RenderError> {
        let functions = &pkg.kptfile.pipeline.mutators;
        // kpt builds every runner before the first one runs.
        let runners = functions
            .iter()
            .map(|f| FunctionRunner::new(f, &pkg.dir, self.options))
            .collect::<Result<Vec<_>, _>>()?;
        let mut blob = None;
        for (index, (f, runner)) in functions.iter().zip(&runners).enumerate() {
            let step = Step {
                pkg,
                index,
                role: Role::Mutator,
                f,
                runner,
                names,
            };
            let (output, out_blob) = self.step(&step, digest, ctx, |h, ctx| {
                h.run_mutator(&step, input, ctx).map(Some)
            })?;
            input = output.unwrap_or_default();
            blob = out_blob;
            digest = blob.map(|b| b.digest());
        }
        Ok((input, blob))
    }

    /// One mutator on `input` in parts: with its blocks kept as they are
    /// when their facts allow ([`blocks`]), else on the decoded list.
    fn run_mutator(
        &mut self,
        step: &Step,
        input: Vec<Part>,
        ctx: &mut RunContext,
    ) -> Result<Vec<Part>, RenderError> {
        let (pkg, f, runner) = (step.pkg, step.f, step.runner);
        let Some(cache) = self.cache else {
            let input = self.nodes_of(input)?;
            return Ok(vec![Part::Nodes(
                self.run_mutator_on_nodes(pkg, f, runner, input, ctx)?,
            )]);
        };
        if input.iter().any(|p| p.block().is_some()) {
            if let Some(output) = blocks::run_known(cache, f, runner, &input, ctx) {
                self.executed += 1;
                let passed = input.iter().filter_map(Part::block);
                ctx.reporter.report(&Event::Cache(CacheEvent::BlocksPassed {
                    package: pkg.display_path.clone(),
                    index: step.index,
                    blocks: passed.clone().count(),
                    resources: passed.map(|b| b.count()).sum(),
                }));
                return Ok(output);
            }
        }
        let layout = blocks::layout(&input);
        let input = self.nodes_of(input)?;
        let output = self.run_mutator_on_nodes(pkg, f, runner, input, ctx)?;
        Ok(blocks::settle(cache, f, runner, &layout, output))
    }

    /// One mutator: its functionConfig, selection, the call, and merging
    /// its output back.
    fn run_mutator_on_nodes(
        &mut self,
        pkg: &Package,
        f: &Function,
        runner: &FunctionRunner,
        mut input: Vec<Node>,
        ctx: &mut RunContext,
    ) -> Result<Vec<Node>, RenderError> {
        let package_dir = pkg.dir.to_string_lossy();
        let config_index = config_resource(&input, &package_dir, f);
        if f.selectors.is_empty() && f.exclusions.is_empty() {
            // The function sees every resource and its output replaces the
            // list: hand it the list itself rather than a copy.
            let config = config_index.map_or(ConfigSource::Runner, ConfigSource::Input);
            let output = krmgraph_fn::run_in_pipeline(runner, &mut input, config, ctx)?;
            self.executed += 1;
            return Ok(output);
        }
        set_resource_ids(&mut input);
        let selected = select(&input, &f.selectors, &f.exclusions);
        let mut selected_nodes: Vec<Node> = selected.iter().map(|&i| input[i].clone()).collect();
        let config = match config_index {
            Some(i) => match selected.iter().position(|&s| s == i) {
                Some(pos) => ConfigSource::Input(pos),
                None => ConfigSource::Node(input[i].clone()),
            },
            None => ConfigSource::Runner,
        };
        let output = krmgraph_fn::run_in_pipeline(runner, &mut selected_nodes, config, ctx)?;
        self.executed += 1;
        Ok(merge_with_input(output, &selected, input))
    }

    fn run_validators(
        &mut self,
        pkg: &Package,
        input: &[Node],
        digest: Option<Digest>,
        names: Option<&InputNames>,
        ctx: &mut RunContext,
    ) -> Result<(), RenderError> {
        if input.is_empty() {
            return Ok(());
        }
        let mutators = pkg.kptfile.pipeline.mutators.len();
        for (i, f) in pkg.kptfile.pipeline.validators.iter().enumerate() {
            // Refuses an `exec:` without `--allow-exec`.
            let runner = FunctionRunner::new(f, &pkg.dir, self.options)?;
            let step = Step {
                pkg,
                index: mutators + i,
                role: Role::Validator,
                f,
                runner: &runner,
                names,
            };
            self.step(&step, digest, ctx, |h, ctx| {
                let selected = select(input, &f.selectors, &f.exclusions);
                let mut copies: Vec<Node> = selected.iter().map(|&i| input[i].clone()).collect();
                runner.run(&mut copies, ConfigSource::Runner, ctx)?;
                h.executed += 1;
                Ok(None)
            })?;
        }
        Ok(())
    }

    /// Runs one step through the step cache: replays its record when the
    /// store has one for its key, else runs `run` (capturing what it
    /// reports) and records it. Returns the output (a mutator's) and the
    /// digest of its encoding when the cache is on.
    fn step(
        &mut self,
        step: &Step,
        input: Option<Digest>,
        ctx: &mut RunContext,
        run: impl FnOnce(&mut Self, &mut RunContext) -> Result<Option<Vec<Part>>, RenderError>,
    ) -> Result<(Option<Vec<Part>>, Option<Blob>), RenderError> {
        let Some(cache) = self.cache else {
            return Ok((run(self, ctx)?, None));
        };
        let inputs = input.and_then(|d| cache.step_inputs(step.role, step.f, step.runner, &d));
        let key = inputs.map(|i| i.key());
        if let Some(hit) = key.as_ref().and_then(|k| cache.lookup_step(k, step.role)) {
            ctx.reporter.report(&step.event(None));
            self.replay(&hit.log, ctx);
            self.executed += 1;
            return Ok(match hit.output {
                Some(r) => (Some(r.parts), r.blob),
                None => (None, None),
            });
        }
        let reason = match &inputs {
            Some(inputs) => step.explain_miss(cache, inputs),
            None => "not keyed: its function's identity or its input is known only once it runs"
                .to_string(),
        };
        ctx.reporter.report(&step.event(Some(reason)));
        let results = ctx.results.len();
        let (output, events) = teed(ctx, |ctx| run(self, ctx));
        let output = output?;
        let log = Log {
            events,
            results: ctx.results[results..].to_vec(),
            files: Vec::new(),
        };
        let blob = cache.record_step(key.as_ref(), output.as_deref(), &log, || step.label());
        self.report_cache_failure(ctx);
        Ok((output, blob))
    }
}

/// `resources` with the digest their parent's step keys need (a package
/// without mutators passes its input on undigested).
fn digested(cache: &StepCache, resources: Resources) -> Resources {
    match resources.blob {
        Some(_) => resources,
        None => Resources {
            blob: cache.digest_of_parts(&resources.parts),
            ..resources
        },
    }
}

/// A step, as the step cache names and keys it.
struct Step<'s> {
    pkg: &'s Package,
    index: usize,
    role: Role,
    f: &'s Function,
    runner: &'s FunctionRunner,
    /// Its package's input by name (depth-first), for `--explain`.
    names: Option<&'s InputNames>,
}

/// A package's pipeline input by name: what `--explain` names when the
/// first step's input changed.
struct InputNames {
    /// Its resource files, root-relative.
    files: Vec<String>,
    /// Its subpackages (root-relative) and their output digests.
    subpackages: Vec<(String, Digest)>,
    /// What the first step found changed, said again by later steps.
    changed: RefCell<Option<String>>,
}

impl Step<'_> {
    /// Why the step runs although its key's inputs are `inputs`.
    fn explain_miss(&self, cache: &StepCache, inputs: &StepInputs) -> String {
        let slot = cache.slot_key(&self.pkg.display_path, self.index);
        let first = self.index == 0;
        let input = self
            .names
            .filter(|_| first)
            .and_then(|n| cache.input_names(&n.files, &n.subpackages));
        let mut earlier = self.names.and_then(|n| n.changed.borrow().clone());
        let reason = cache.explain_miss(&slot, inputs, (self.f, self.runner), input, &mut earlier);
        if let Some(names) = self.names.filter(|_| first) {
            *names.changed.borrow_mut() = earlier;
        }
        reason
    }

    /// The cache event of running the step (with why) or replaying it
    /// (`None`).
    fn event(&self, ran_because: Option<String>) -> Event {
        let (package, index, function) = (
            self.pkg.display_path.clone(),
            self.index,
            self.runner.name.clone(),
        );
        Event::Cache(match ran_because {
            None => CacheEvent::StepReplayed {
                package,
                index,
                function,
            },
            Some(reason) => CacheEvent::StepRan {
                package,
                role: match self.role {
                    Role::Mutator => "mutator",
                    Role::Validator => "validator",
                },
                index,
                function,
                reason,
            },
        })
    }

    /// How `--verify` names the step.
    fn label(&self) -> String {
        format!(
            "function {} in package {}",
            krmgraph_util::gostr::quote(&self.runner.name),
            krmgraph_util::gostr::quote(&self.pkg.display_path)
        )
    }
}

/// A reporter that passes events on and keeps a copy.
struct Tee<'r> {
    inner: &'r mut dyn Reporter,
    events: Vec<Event>,
}

impl Reporter for Tee<'_> {
    fn report(&mut self, event: &Event) {
        self.events.push(event.clone());
        self.inner.report(event);
    }
}

/// Runs `work` with `ctx`, keeping a copy of every event it reports.
fn teed<T>(ctx: &mut RunContext, work: impl FnOnce(&mut RunContext) -> T) -> (T, Vec<Event>) {
    let mut tee = Tee {
        inner: &mut *ctx.reporter,
        events: Vec::new(),
    };
    let mut inner = RunContext {
        reporter: &mut tee,
        results: std::mem::take(&mut ctx.results),
        exit_code: ctx.exit_code,
    };
    let out = work(&mut inner);
    ctx.results = inner.results;
    ctx.exit_code = inner.exit_code;
    (out, tee.events)
}

/// What work run on another thread ([`Hydrator::recorded`]) left to
/// report, and its outcome.
pub(super) struct Recorded<T> {
    outcome: Result<T, RenderError>,
    events: Vec<Event>,
    results: Vec<krmgraph_fn::results::FnResult>,
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
        krmgraph_kyaml::krm::annotation(r, kioutil::PACKAGE_PATH_ANNOTATION).as_deref()
            == Some(package_dir)
            && krmgraph_kyaml::krm::path_of(r) == f.config_path
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
    let paths: BTreeSet<String> = local.iter().map(krmgraph_kyaml::krm::path_of).collect();
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
                    position: None,
                })
                .into());
            }
        }
    }
    Ok(())
}

/// The package's own resources, read as kpt reads them.
/// The files `resources` (of `pkg`) came from, relative to `root_dir`,
/// each once.
pub(super) fn files_of(pkg: &Package, root_dir: &Path, resources: &[Node]) -> Vec<String> {
    let rel_pkg = krmgraph_package::display_path(&pkg.dir, root_dir);
    let mut files: Vec<String> = Vec::new();
    for r in resources {
        let path = krmgraph_kyaml::krm::path_of(r);
        let joined = if rel_pkg.is_empty() {
            path
        } else {
            format!("{rel_pkg}/{path}")
        };
        let file = clean_path(&joined);
        // A file's resources are read one after another.
        if files.last() != Some(&file) {
            files.push(file);
        }
    }
    files
}

/// `pkg`'s own resources.
pub(super) fn read_local(pkg: &Package) -> Result<Vec<Node>, RenderError> {
    Ok(pkgio::LocalPackageReader::kpt(&pkg.dir, &pkg.dir.to_string_lossy()).read()?)
}
