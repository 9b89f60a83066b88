//! `krmgraph crossplane render`: Crossplane's classic (v2.2)
//! `crossplane render` — a composite resource (XR) through a Composition's
//! pipeline of composition functions, called over gRPC — with each
//! function call a step of krmgraph's cache and many XRs rendered at once.
//! Specification: `porch-crossplane-catalog.md` Part 2; `docs/crossplane.md`.
//!
//! | module | owns |
//! | --- | --- |
//! | `load` | reading YAML inputs (files or directories) as JSON, errors at `file:line:col` |
//! | `model` | Compositions, steps, Functions; the checks before rendering |
//! | `runtime` | which runtime a Function asks for (Development or Docker) |
//! | `docker` | the Docker runtime: start, port discovery, cleanup |
//! | `client` | the gRPC client: connect with retry, v1 with the v1beta1 fallback |
//! | `runner` | a call as a cached step (key: function identity + request encoding) |
//! | `explain` | why a call ran: its request's parts against the last call at its place |
//! | `render` | the render loop of one XR, the requirements loop |
//! | `fetch` | required resources answered to selectors (`FilteringFetcher`) |
//! | `schemas` | `--required-schemas`: OpenAPI v3 documents answering schema requirements |
//! | `compose` | composed-resource metadata, the XR's conditions, Result and Context documents |
//! | `sigsyaml` | the output documents as `sigs.k8s.io/yaml` writes them |
//! | `value` | JSON ↔ protobuf `Struct` |
//! | `xrd` | `--xrd`: an XRD's schema defaults applied to the XR (structural defaulting) |
//! | `proto` | the generated v1 and v1beta1 protocol |

#![deny(missing_docs)]

mod client;
mod compose;
mod docker;
mod error;
mod explain;
mod fetch;
mod load;
mod model;
pub mod proto;
mod render;
mod runner;
mod runtime;
mod schemas;
mod sigsyaml;
mod value;
mod xrd;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use krmgraph_cache::Store;
use serde_json::Value;

pub use error::Error;

use load::Doc;
use model::{Composition, Function, RESOURCE_NAME};
use runner::{Handle, Runner};
use runtime::Runtime;

/// What `krmgraph crossplane render` was asked.
#[derive(Default)]
pub struct Options {
    /// XR files or directories of XR files, rendered in this order.
    pub xrs: Vec<PathBuf>,
    /// A Composition file, or a file or directory of several from which
    /// each XR's is selected.
    pub composition: PathBuf,
    /// The Functions: a file or a directory.
    pub functions: PathBuf,
    /// `--context-files k=file`.
    pub context_files: Vec<(String, PathBuf)>,
    /// `--context-values k=json`.
    pub context_values: Vec<(String, String)>,
    /// `-r`.
    pub include_results: bool,
    /// `-x`.
    pub include_full_xr: bool,
    /// `-c`.
    pub include_context: bool,
    /// `-o`.
    pub observed: Option<PathBuf>,
    /// `-e` and `--extra-resources`.
    pub required: Vec<PathBuf>,
    /// `-s/--required-schemas`: OpenAPI v3 documents.
    pub required_schemas: Option<PathBuf>,
    /// `--function-credentials`.
    pub credentials: Option<PathBuf>,
    /// `-a k=v`.
    pub annotations: Vec<(String, String)>,
    /// `--xrd`: XRDs (a file or directory) whose schema defaults are
    /// applied to each XR.
    pub xrd: Option<PathBuf>,
    /// `--timeout`.
    pub timeout: Duration,
    /// XRs rendered at once.
    pub jobs: usize,
    /// The cache, if any.
    pub store: Option<Arc<dyn Store>>,
    /// `--pinned-development`: Development servers' calls are cached too.
    pub pinned_development: bool,
}

/// What a command produced.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every XR's output stream, in input order (empty if any failed).
    pub output: Vec<u8>,
    /// The XRs that failed, each error naming its file.
    pub errors: Vec<String>,
    /// The cache's log: one line per function call.
    pub log: Vec<String>,
    /// `--explain`: why each call ran (`SITE FUNCTION ran: REASON`), and
    /// the XRs whose calls were all replayed, in input order.
    pub explained: Vec<String>,
}

/// An XR to render.
struct Job {
    label: String,
    xr: Value,
    composition: usize,
}

/// Runs the command.
pub fn run(options: &Options) -> Result<Outcome, Error> {
    let compositions = compositions(options)?;
    let jobs = jobs(options, &compositions)?;
    let functions = functions(options, &compositions, &jobs)?;
    let shared = shared(options)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Runtime(format!("cannot start the async runtime: {e}")))?;
    rt.block_on(async {
        let deadline = tokio::time::Instant::now() + options.timeout;
        let (handles, started, docker) = start(options, &functions).await?;
        let runner = Runner::new(handles, options.store.clone(), deadline);
        type Rendered = (Result<Vec<u8>, String>, Vec<String>);
        let rendered: Vec<Rendered> = futures_util::stream::iter(&jobs)
            .map(|job| {
                let (runner, shared, compositions) = (&runner, &shared, &compositions);
                async move {
                    let comp = &compositions[job.composition];
                    let mut explained = Vec::new();
                    let result =
                        render::render(runner, shared, &job.label, &job.xr, comp, &mut explained)
                            .await
                            .map_err(|e| {
                                format!("{}: cannot render composite resource: {e}", job.label)
                            });
                    (result, explained)
                }
            })
            .buffered(options.jobs.max(1))
            .collect()
            .await;
        docker::wait_if_interrupted().await;
        if let Some(docker) = &docker {
            for s in &started {
                docker::clean(docker, &s.id, s.cleanup).await;
            }
        }
        let mut outcome = Outcome {
            log: runner.log(),
            ..Outcome::default()
        };
        for (result, explained) in rendered {
            outcome.explained.extend(explained);
            match result {
                Ok(bytes) => outcome.output.extend(bytes),
                Err(e) => outcome.errors.push(e),
            }
        }
        if !outcome.errors.is_empty() {
            outcome.output.clear();
        }
        Ok(outcome)
    })
}

/// The Compositions.
fn compositions(options: &Options) -> Result<Vec<Composition>, Error> {
    let docs = load::documents(&options.composition)?;
    let comps: Vec<Composition> = docs
        .iter()
        .filter(|d| d.str_at(&["kind"]) == "Composition")
        .map(Composition::from_doc)
        .collect::<Result<_, _>>()?;
    if comps.is_empty() {
        let first = docs.first().map(Composition::from_doc);
        return match first {
            Some(Err(e)) => Err(e),
            _ => Err(Error::Input(format!(
                "{}: no Composition",
                options.composition.display()
            ))),
        };
    }
    Ok(comps)
}

/// Every XR with its Composition, checked.
fn jobs(options: &Options, compositions: &[Composition]) -> Result<Vec<Job>, Error> {
    let xrds = options.xrd.as_deref().map(xrd::Xrds::load).transpose()?;
    let mut jobs = Vec::new();
    for path in &options.xrs {
        for file in load::files(path)? {
            let docs = load::file_documents(&file)?;
            let several = docs.len() > 1;
            for mut doc in docs {
                let label = if several {
                    doc.origin.clone()
                } else {
                    file.display().to_string()
                };
                if let Some(xrds) = &xrds {
                    xrds.default_xr(&mut doc.value)
                        .map_err(|e| Error::Input(format!("{label}: {e}")))?;
                }
                let composition = if compositions.len() == 1 {
                    0
                } else {
                    compositions
                        .iter()
                        .position(|c| c.selected_by(&doc.value))
                        .ok_or_else(|| {
                            Error::Input(format!(
                                "{label}: no Composition in {} for this XR ({} {})",
                                options.composition.display(),
                                doc.str_at(&["apiVersion"]),
                                doc.str_at(&["kind"])
                            ))
                        })?
                };
                compositions[composition]
                    .check(&doc.value)
                    .map_err(|e| Error::Input(format!("{label}: {e}")))?;
                jobs.push(Job {
                    label,
                    xr: doc.value,
                    composition,
                });
            }
        }
    }
    if jobs.is_empty() {
        return Err(Error::Input("no composite resource to render".into()));
    }
    Ok(jobs)
}

/// The Functions the XRs' pipelines use; a step naming a Function the
/// file does not have is an error.
fn functions(
    options: &Options,
    compositions: &[Composition],
    jobs: &[Job],
) -> Result<Vec<Function>, Error> {
    let all: Vec<Function> = load::documents(&options.functions)?
        .iter()
        .map(|d| Function::from_doc(d, &options.annotations))
        .collect::<Result<_, _>>()?;
    let mut used = Vec::new();
    for job in jobs {
        let comp = &compositions[job.composition];
        for step in &comp.pipeline {
            let Some(f) = all.iter().find(|f| f.name == step.function) else {
                return Err(Error::Input(format!(
                    "{}: Composition {:?} step {:?} uses Function {:?}, which is not in {}",
                    job.label,
                    comp.name,
                    step.name,
                    step.function,
                    options.functions.display()
                )));
            };
            if !used.iter().any(|u: &Function| u.name == f.name) {
                used.push(f.clone());
            }
        }
    }
    Ok(used)
}

/// What every XR shares: observed and required resources, Secrets and
/// the initial context.
fn shared(options: &Options) -> Result<render::Shared, Error> {
    let mut observed = serde_json::Map::new();
    if let Some(path) = &options.observed {
        for doc in load::documents(path)? {
            let name = doc.str_at(&["metadata", "annotations", RESOURCE_NAME]);
            if name.is_empty() {
                return Err(Error::Input(format!(
                    "{}: observed resource has no {RESOURCE_NAME} annotation",
                    doc.origin
                )));
            }
            observed.insert(name.to_string(), doc.value.clone());
        }
    }
    let mut required = Vec::new();
    for path in &options.required {
        required.extend(load::documents(path)?.into_iter().map(|d| d.value));
    }
    let secrets = match &options.credentials {
        Some(path) => load::documents(path)?
            .into_iter()
            .filter(|d| d.str_at(&["kind"]) == "Secret")
            .map(|d| d.value)
            .collect(),
        None => Vec::new(),
    };
    let mut context = serde_json::Map::new();
    for (key, file) in &options.context_files {
        let docs = load::file_documents(file)?;
        let value = docs.into_iter().next().map_or(Value::Null, |d| d.value);
        context.insert(key.clone(), value);
    }
    for (key, text) in &options.context_values {
        let origin = PathBuf::from(format!("--context-values {key}"));
        let docs = load::parse(&origin, text.as_bytes())?;
        let value = docs
            .into_iter()
            .next()
            .map_or(Value::Null, |d: Doc| d.value);
        context.insert(key.clone(), value);
    }
    Ok(render::Shared {
        observed,
        fetcher: fetch::Fetcher::new(required),
        schemas: match &options.required_schemas {
            Some(path) => schemas::Schemas::load(path)?,
            None => schemas::Schemas::default(),
        },
        secrets,
        context: value::to_struct(&Value::Object(context)),
        include_results: options.include_results,
        include_full_xr: options.include_full_xr,
        include_context: options.include_context,
    })
}

/// Starts (Docker) or locates (Development) every function.
async fn start(
    options: &Options,
    functions: &[Function],
) -> Result<
    (
        BTreeMap<String, Handle>,
        Vec<docker::Started>,
        Option<bollard::Docker>,
    ),
    Error,
> {
    let mut handles = BTreeMap::new();
    let mut to_start = Vec::new();
    for f in functions {
        match Runtime::of(f)? {
            Runtime::Development(target) => {
                let identity = options
                    .pinned_development
                    .then(|| runtime::development_identity(f, &target));
                let client = client::Client::new(&target);
                handles.insert(f.name.clone(), Handle { client, identity });
            }
            Runtime::Docker(settings) => to_start.push((f.name.clone(), settings)),
        }
    }
    if to_start.is_empty() {
        return Ok((handles, Vec::new(), None));
    }
    let docker = docker::connect().await?;
    tokio::spawn(docker::clean_on_interrupt(docker.clone()));
    let results = futures_util::future::join_all(
        to_start
            .iter()
            .map(|(name, s)| docker::start(&docker, name, s)),
    )
    .await;
    let mut started = Vec::new();
    let mut failure = None;
    for ((name, _), result) in to_start.iter().zip(results) {
        match result {
            Ok(s) => {
                let client = client::Client::new(&s.target);
                handles.insert(
                    name.clone(),
                    Handle {
                        client,
                        identity: Some(s.identity.clone()),
                    },
                );
                started.push(s);
            }
            Err(e) => {
                failure.get_or_insert(format!("cannot start Function {name:?}: {e}"));
            }
        }
    }
    if let Some(e) = failure {
        for s in &started {
            docker::clean(&docker, &s.id, s.cleanup).await;
        }
        return Err(Error::Runtime(e));
    }
    Ok((handles, started, Some(docker)))
}
