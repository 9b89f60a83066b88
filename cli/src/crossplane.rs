//! `krmgraph crossplane render`: the flags of classic `crossplane render`
//! (v2.2) plus krmgraph's (`--jobs`, the cache), handed to
//! `krmgraph-crossplane`. The rendered stream goes to stdout; errors to
//! stderr with exit 1; a cache that cannot be opened means an uncached
//! render with one warning.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use krmgraph_cache::{SledStore, Store};
use krmgraph_crossplane::Options;

use crate::args::parse_duration;
use crate::ui::Ui;

/// `krmgraph crossplane ...`.
#[derive(Debug, clap::Subcommand)]
pub enum CrossplaneCommand {
    /// Render composite resources (XRs) through a Composition's function
    /// pipeline, as `crossplane render` (v2.2, classic) does:
    /// `krmgraph crossplane render XR... COMPOSITION FUNCTIONS`. Several
    /// XRs (files or directories) render at once, each with the
    /// Composition it selects when COMPOSITION holds several.
    Render(RenderArgs),
}

/// Flags of `krmgraph crossplane render`.
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// XR... COMPOSITION FUNCTIONS: XR files or directories, a Composition
    /// file (or a file or directory of Compositions), and a file or
    /// directory of `pkg.crossplane.io` Functions.
    #[arg(required = true, num_args = 3.., value_name = "PATHS")]
    pub paths: Vec<PathBuf>,

    /// Context keys from files: `key=file` (YAML or JSON; repeatable, or
    /// comma-separated).
    #[arg(long = "context-files", value_name = "KEY=FILE", value_delimiter = ',')]
    pub context_files: Vec<String>,

    /// Context keys from inline JSON: `key=value` (repeatable); overrides
    /// `--context-files` for the same key.
    #[arg(long = "context-values", value_name = "KEY=JSON")]
    pub context_values: Vec<String>,

    /// Add a `Result` document for each non-fatal function result.
    #[arg(short = 'r', long = "include-function-results")]
    pub include_results: bool,

    /// Copy the input XR's spec and metadata onto the rendered XR.
    #[arg(short = 'x', long = "include-full-xr")]
    pub include_full_xr: bool,

    /// Add a final `Context` document with the pipeline's context.
    #[arg(short = 'c', long = "include-context")]
    pub include_context: bool,

    /// Observed composed resources (a file or directory), keyed by their
    /// `crossplane.io/composition-resource-name` annotation.
    #[arg(short = 'o', long = "observed-resources", value_name = "PATH")]
    pub observed: Option<PathBuf>,

    /// Resources functions may require (a file or directory; repeatable).
    #[arg(short = 'e', long = "required-resources", value_name = "PATH")]
    pub required: Vec<PathBuf>,

    /// Deprecated: the same as `--required-resources`.
    #[arg(long = "extra-resources", value_name = "PATH")]
    pub extra: Vec<PathBuf>,

    /// OpenAPI v3 JSON documents (`kubectl get --raw /openapi/v3/GROUP/VERSION`;
    /// a file or directory of `.json` files) answering the schemas
    /// functions require.
    #[arg(short = 's', long = "required-schemas", value_name = "DIR")]
    pub required_schemas: Option<PathBuf>,

    /// `v1` Secrets for the steps' `credentials` (a file or directory).
    #[arg(long = "function-credentials", value_name = "PATH")]
    pub credentials: Option<PathBuf>,

    /// Override an annotation on every Function: `key=value` (repeatable),
    /// e.g. `render.crossplane.io/runtime=Development`.
    #[arg(short = 'a', long = "function-annotations", value_name = "KEY=VALUE")]
    pub annotations: Vec<String>,

    /// CompositeResourceDefinitions (a file or directory): each XR gets
    /// the schema defaults of its XRD's version before it is rendered.
    #[arg(long = "xrd", value_name = "PATH")]
    pub xrd: Option<PathBuf>,

    /// How long the whole render may take, starting functions included.
    #[arg(long = "timeout", default_value = "1m", value_parser = parse_duration)]
    pub timeout: std::time::Duration,

    /// XRs rendered at once (default: 4 per CPU: they mostly wait on
    /// functions). The output is in input order whatever this is.
    #[arg(short = 'j', long = "jobs")]
    pub jobs: Option<usize>,

    /// Cache Development-runtime calls too: the servers are pinned (the
    /// same code for the life of the cache).
    #[arg(long = "pinned-development")]
    pub pinned_development: bool,

    /// Say on stderr why each function call ran instead of replaying
    /// (`[EXPLAIN] XR#STEP/CALL FUNCTION ran: REASON`), and which XRs were
    /// replayed whole.
    #[arg(long = "explain")]
    pub explain: bool,

    /// Call every function (also `KRMGRAPH_NO_CACHE=1`).
    #[arg(long = "no-cache")]
    pub no_cache: bool,

    /// The cache directory (default `KRMGRAPH_CACHE_DIR`,
    /// `$XDG_CACHE_HOME/krmgraph`).
    #[arg(long = "cache-dir")]
    pub cache_dir: Option<PathBuf>,
}

/// Runs `krmgraph crossplane ...`.
pub fn run(command: CrossplaneCommand, ui: &Ui) -> ExitCode {
    let CrossplaneCommand::Render(args) = command;
    match render(args, ui) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("krmgraph: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn render(args: RenderArgs, ui: &Ui) -> Result<ExitCode, String> {
    let mut paths = args.paths;
    let functions = paths.pop().expect("clap requires 3 paths");
    let composition = paths.pop().expect("clap requires 3 paths");
    let options = Options {
        xrs: paths,
        composition,
        functions,
        context_files: pairs(&args.context_files, "--context-files")?
            .into_iter()
            .map(|(k, v)| (k, PathBuf::from(v)))
            .collect(),
        context_values: pairs(&args.context_values, "--context-values")?,
        include_results: args.include_results,
        include_full_xr: args.include_full_xr,
        include_context: args.include_context,
        observed: args.observed,
        required: args.required.into_iter().chain(args.extra).collect(),
        required_schemas: args.required_schemas,
        credentials: args.credentials,
        annotations: pairs(&args.annotations, "--function-annotations")?,
        xrd: args.xrd,
        timeout: args.timeout,
        jobs: args
            .jobs
            .unwrap_or_else(|| 4 * std::thread::available_parallelism().map_or(1, |n| n.get())),
        store: open_store(args.no_cache, args.cache_dir.as_deref(), ui),
        pinned_development: args.pinned_development,
    };
    let outcome = krmgraph_crossplane::run(&options).map_err(|e| e.to_string())?;
    if let Some(store) = &options.store {
        let _ = store.flush();
    }
    if let Some(file) = std::env::var_os("KRMGRAPH_CACHE_LOG") {
        let text: String = outcome.log.iter().map(|l| format!("{l}\n")).collect();
        let _ = std::fs::write(file, text);
    }
    if args.explain {
        for line in &outcome.explained {
            eprintln!("[EXPLAIN] {line}");
        }
    }
    if !outcome.errors.is_empty() {
        return Err(outcome.errors.join("\nkrmgraph: error: "));
    }
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(&outcome.output)
        .and_then(|()| stdout.flush())
        .map_err(|e| format!("writing the output: {e}"))?;
    Ok(ExitCode::SUCCESS)
}

/// `key=value` arguments.
fn pairs(args: &[String], flag: &str) -> Result<Vec<(String, String)>, String> {
    args.iter()
        .map(|a| {
            a.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("{flag}: {a:?} is not key=value"))
        })
        .collect()
}

/// The cache, unless turned off; a cache that cannot be opened is a
/// warning and no cache.
fn open_store(no_cache: bool, dir: Option<&std::path::Path>, ui: &Ui) -> Option<Arc<dyn Store>> {
    let off = std::env::var("KRMGRAPH_NO_CACHE").is_ok_and(|v| !v.is_empty() && v != "0");
    if no_cache || off {
        return None;
    }
    match SledStore::open_default(dir) {
        Ok(store) => Some(Arc::new(store)),
        Err(e) => {
            ui.warn(&format!("rendering without the cache: {e}"));
            None
        }
    }
}
