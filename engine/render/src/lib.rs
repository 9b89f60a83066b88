//! `render`: runs the pipelines of a package hierarchy depth-first, as
//! `kpt fn render` v1.0.0-beta.56 does, and writes the result in place, to
//! stdout (wrapped or unwrapped) or to another directory.
//!
//! The flow: load the root Kptfile → `hydrate` every package (its
//! subpackages first, in display-path order; each pipeline sees the
//! subpackages' rendered resources, then its own; or breadth-first,
//! `bfs`, when the root Kptfile asks for it) → make paths
//! root-relative → add attribution → write every file (or print) → delete
//! files whose resources are gone → save `results.yaml`. On any failure
//! nothing is written or deleted.
//!
//! With a [`RenderCache`], hydration goes through the step cache
//! (`stepcache`): unchanged subtrees and steps are replayed from their
//! records, and what runs is recorded; [`cache`] is the policy around an
//! in-place render (whole-render replay and record, the store's size).
//!
//! [`eval`]: `fn eval`, one function over a package or stdin.

#![deny(missing_docs)]

mod bfs;
mod blocks;
pub mod cache;
mod codec;
pub mod eval;
mod explain;
pub(crate) mod finish;
pub mod graph;
mod hydrate;
mod inputs;
pub mod predict;
mod settled_subtrees;
pub mod shortcut;
mod stepcache;
mod unsettled;

pub use krmgraph_package::{Hint, SourcePosition};

// What a render's caller (the CLI) needs of the layers below, so that it
// depends on this crate, the cache and the shared helpers alone.
pub use bfs::{Order, BFS_ANNOTATION};
pub use krmgraph_fn::container::{handles_interrupts, PullPolicy};
pub use krmgraph_fn::exec::kill_running;
pub use krmgraph_fn::{builtin, event, resolve_image};
pub use krmgraph_kyaml::gitignore::GitIgnore;
pub use krmgraph_kyaml::pkgio::IGNORE_FILE_NAME;
pub use krmgraph_package::kptfile::Function;
pub use stepcache::{MemoSession, RenderCache};

use std::path::{Path, PathBuf};

use krmgraph_fn::event::{CacheEvent, Reporter};
pub use krmgraph_fn::memos::Memos;
pub use krmgraph_fn::RunnerOptions;
use krmgraph_fn::{FnError, RunContext};
use krmgraph_kyaml::pkgio;
use krmgraph_package::kptfile::KptfileError;
pub use krmgraph_package::Package;
use krmgraph_package::PackageError;

/// Where the rendered resources go.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Back into the package's files.
    InPlace,
    /// One `ResourceList` on stdout (`-o stdout`).
    Stdout,
    /// Multi-document YAML on stdout (`-o unwrap`).
    Unwrap,
    /// A new directory (`-o DIR`), which must not exist.
    Dir(PathBuf),
    /// Nowhere (`render --check`): what an in-place render would write,
    /// create and delete is returned ([`RenderOutcome::files`]), and
    /// nothing in the package is touched.
    Check,
}

/// How to render.
#[derive(Clone, Debug)]
pub struct RenderOptions {
    /// Where the result goes.
    pub output: Output,
    /// `--results-dir`: where `results.yaml` is written.
    pub results_dir: Option<PathBuf>,
    /// Which functions may run and how output is truncated.
    pub runner: RunnerOptions,
    /// `--order`: overrides the root Kptfile's `kpt.dev/bfs-rendering`.
    pub order: Option<Order>,
    /// `--jobs`: how many subtrees and functions may run at once.
    pub jobs: usize,
    /// The step cache (`None`: run every step).
    pub cache: Option<RenderCache>,
    /// kpt's attribution of Config Connector resources: on unless
    /// `KPT_DISABLE_ATTRIBUTION` is set (the default reads it).
    pub attribution: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            output: Output::InPlace,
            results_dir: None,
            runner: RunnerOptions::default(),
            order: None,
            jobs: 1,
            cache: None,
            attribution: std::env::var_os("KPT_DISABLE_ATTRIBUTION").is_none(),
        }
    }
}

/// A successful render.
#[derive(Debug, Default)]
pub struct RenderOutcome {
    /// Functions executed (mutators and validators).
    pub functions: usize,
    /// Packages rendered.
    pub packages: usize,
    /// Bytes for stdout (`-o stdout` / `-o unwrap`), empty otherwise.
    pub stdout: Vec<u8>,
    /// The `results.yaml` written, if `--results-dir` was given.
    pub results_file: Option<PathBuf>,
    /// In place: every file of the output with its bytes and every input
    /// file deleted, by slash path relative to the root: what the tree now
    /// is, without reading it again.
    pub files: Option<Vec<shortcut::Change>>,
    /// In place: files left as they were because they changed while the
    /// render ran (not in `files`); rendering again renders them.
    pub kept: Vec<String>,
    /// With a verifying cache: the first step whose output differed from
    /// its record.
    pub verify_mismatch: Option<String>,
}

/// Why a render failed.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// A Kptfile could not be loaded or is invalid.
    #[error(transparent)]
    Kptfile(#[from] KptfileError),
    /// Package discovery failed.
    #[error(transparent)]
    Package(#[from] PackageError),
    /// A function failed.
    #[error(transparent)]
    Function(#[from] FnError),
    /// Reading the package's files failed (malformed YAML, unreadable
    /// files).
    #[error(transparent)]
    Read(#[from] krmgraph_kyaml::KyamlError),
    /// Writing the rendered files in place failed; nothing was written
    /// unless the message says otherwise.
    #[error("failed to save resources: {0}")]
    Save(String),
    /// Deleting a file whose resources are gone failed (kpt's wording);
    /// nothing was written unless the message says otherwise.
    #[error("failed to delete file: {0}")]
    Delete(String),
    /// Writing `-o stdout|unwrap|DIR` output failed.
    #[error("{0}")]
    Output(String),
    /// Anything else, with kpt's message.
    #[error("{0}")]
    Message(String),
}

impl RenderError {
    /// Whether the render failed while writing in place, when some files
    /// may have been written or deleted (the message says how many).
    pub fn while_writing(&self) -> bool {
        matches!(self, RenderError::Save(_) | RenderError::Delete(_))
    }

    /// Whether the failure was already printed in full (a function's
    /// non-zero exit), so no `Error:` line should follow.
    pub fn already_reported(&self) -> bool {
        matches!(self, RenderError::Function(FnError::Reported(_)))
    }

    /// The file and position a syntax error points at, if any.
    pub fn source_position(&self) -> Option<SourcePosition> {
        use krmgraph_kyaml::KyamlError;
        use krmgraph_package::kptfile::validate::ValidateError;
        match self {
            RenderError::Kptfile(KptfileError::Unreadable {
                dir,
                mark: Some((line, column)),
                ..
            })
            | RenderError::Package(PackageError::Kptfile(KptfileError::Unreadable {
                dir,
                mark: Some((line, column)),
                ..
            })) => Some(SourcePosition {
                path: dir.join(krmgraph_package::kptfile::KPTFILE_NAME),
                line: *line,
                column: *column,
            }),
            RenderError::Kptfile(KptfileError::Invalid(ValidateError {
                position: Some(position),
                ..
            }))
            | RenderError::Package(PackageError::Kptfile(KptfileError::Invalid(ValidateError {
                position: Some(position),
                ..
            }))) => Some(position.clone()),
            RenderError::Read(KyamlError::File { path, source }) => match source.as_ref() {
                KyamlError::MalformedYaml { mark, .. } => Some(SourcePosition {
                    path: PathBuf::from(path),
                    line: mark.0,
                    column: mark.1,
                }),
                _ => None,
            },
            _ => None,
        }
    }

    /// Whether kpt reports the error from its command layer, as
    /// `error: <message>` (write failures after a successful hydration).
    pub fn printed_lowercase(&self) -> bool {
        matches!(
            self,
            RenderError::Save(_) | RenderError::Delete(_) | RenderError::Output(_)
        )
    }

    /// Whether kpt prints the message bare, without `Error: ` (Kptfile
    /// validation errors).
    pub fn printed_bare(&self) -> bool {
        matches!(self, RenderError::Kptfile(KptfileError::Invalid(_)))
    }
}

/// A failed render, with the `results.yaml` written, if any.
#[derive(Debug)]
pub struct RenderFailure {
    /// What went wrong.
    pub error: RenderError,
    /// The `results.yaml` written, if `--results-dir` was given.
    pub results_file: Option<PathBuf>,
}

impl From<RenderError> for RenderFailure {
    fn from(error: RenderError) -> Self {
        RenderFailure {
            error,
            results_file: None,
        }
    }
}

/// Renders the package hierarchy rooted at `root`.
// A render returns once, and its failure is read once: boxing it would
// buy nothing.
#[allow(clippy::result_large_err)]
pub fn render(
    root: &Path,
    options: &RenderOptions,
    reporter: &mut dyn Reporter,
) -> Result<RenderOutcome, RenderFailure> {
    let root_dir = absolute(root);
    let root_parent = root_dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("/"));
    let root_pkg = Package::load(&root_dir, &root_parent).map_err(RenderError::from)?;
    let mut ctx = RunContext {
        reporter,
        results: Vec::new(),
        exit_code: 0,
    };
    let order = options.order.unwrap_or_else(|| Order::of_root(&root_pkg));
    let cache = options
        .cache
        .as_ref()
        .map(|c| stepcache::StepCache::new(c, &root_dir, options, order == Order::DepthFirst));
    let mut hydrator = hydrate::Hydrator::new(
        &root_dir,
        &root_parent,
        &options.runner,
        options.jobs,
        cache.as_ref(),
    );
    let hydrate = |hydrator: &mut hydrate::Hydrator, ctx: &mut RunContext| match order {
        Order::DepthFirst => hydrator.hydrate(&root_pkg, ctx),
        Order::BreadthFirst => hydrator
            .hydrate_bfs(root_pkg.clone(), ctx)
            .map(|nodes| vec![stepcache::Part::Nodes(nodes)]),
    };
    let pool = (options.jobs > 1)
        .then(|| krmgraph_util::par::pool(options.jobs).ok())
        .flatten();
    let hydrated = match pool {
        Some(pool) => pool.install(|| hydrate(&mut hydrator, &mut ctx)),
        None => hydrate(&mut hydrator, &mut ctx),
    };
    // The records are made durable once the files are written, so that the
    // file memo holds the files of this render.
    let close_cache = |ctx: &mut RunContext| {
        if let Some(cache) = &cache {
            cache.flush();
            if let Some(message) = cache.take_failure() {
                ctx.reporter
                    .report(&krmgraph_fn::event::Event::Cache(CacheEvent::StoreFailed(
                        message,
                    )));
            }
        }
    };
    let save = |ctx: &RunContext| finish::save_results(options.results_dir.as_deref(), ctx);
    let parts = match hydrated {
        Ok(parts) => parts,
        Err(error) => {
            close_cache(&mut ctx);
            let results_file = save(&ctx)?;
            return Err(RenderFailure {
                error,
                results_file,
            });
        }
    };
    let read_digest = |path: &str| cache.as_ref()?.read_digest(path);
    let read_bytes = |path: &str| cache.as_ref()?.read_bytes(path);
    let existing = pkgio::Existing {
        memo: &options.runner.memos.files,
        digest: &read_digest,
        bytes: &read_bytes,
        check: options.runner.check_direct,
    };
    let existing = cache.as_ref().map(|c| {
        c.memos_loaded();
        &existing
    });
    // kpt saves results after writing in place (and not at all when the
    // write fails), but before writing other outputs.
    let (written, results_file) = if options.output == Output::InPlace {
        let written = match (&cache, existing) {
            (Some(cache), Some(existing)) => {
                finish::finish_in_place(parts, &hydrator, &root_dir, existing, cache)
            }
            _ => hydrator.nodes_of(parts).and_then(|resources| {
                finish::finish(resources, &hydrator, &root_dir, options, existing)
            }),
        };
        close_cache(&mut ctx);
        (written?, save(&ctx)?)
    } else {
        close_cache(&mut ctx);
        let results_file = save(&ctx)?;
        let written = hydrator
            .nodes_of(parts)
            .and_then(|resources| finish::finish(resources, &hydrator, &root_dir, options, None));
        match written {
            Ok(written) => (written, results_file),
            Err(error) => {
                return Err(RenderFailure {
                    error,
                    results_file,
                })
            }
        }
    };
    Ok(RenderOutcome {
        functions: hydrator.executed,
        packages: hydrator.packages,
        stdout: written.stdout,
        results_file,
        files: written.files,
        kept: written.kept,
        verify_mismatch: cache.and_then(|c| c.take_mismatch()),
    })
}

/// An absolute, lexically cleaned path (Go's `filepath.Abs`), without
/// resolving symlinks.
pub fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(path)
    };
    let cleaned = krmgraph_package::kptfile::validate::clean_path(&joined.to_string_lossy());
    PathBuf::from(cleaned)
}
