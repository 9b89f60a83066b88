//! Command-line flags. Doc comments are the `--help` text.

use std::path::PathBuf;

use clap::{ArgAction, Parser, Subcommand, ValueEnum};

/// Render kpt package hierarchies, byte for byte as `kpt fn render` does.
///
/// Exit codes: 0 success; 1 a render, function or check failed (kpt's);
/// 2 a usage error (unknown flag, bad value); 130 or 143 interrupted
/// (SIGINT, SIGTERM).
#[derive(Debug, Parser)]
#[command(name = "krmgraph", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,

    /// Colour krmgraph's own lines (summary, warnings, errors): `auto` on
    /// a terminal unless `NO_COLOR` is set, `always`, or `never`. kpt's
    /// log is never coloured.
    #[arg(long = "color", value_enum, default_value = "auto", global = true)]
    pub color: ColorArg,

    /// Print errors only: no progress log, summary or warnings.
    #[arg(short = 'q', long = "quiet", global = true, conflicts_with = "verbose")]
    pub quiet: bool,

    /// Print more: what the cache did for each step, and under `watch`
    /// kpt's whole log for every render.
    #[arg(short = 'v', long = "verbose", global = true)]
    pub verbose: bool,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorArg {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Parses the command line. kpt's boolean flags (cobra's) also take
/// `=true` and `=false`; krmgraph's take no value, so that
/// `krmgraph render --no-cache .` leaves the path alone: the `=` forms of
/// its boolean flags are rewritten before clap sees them.
pub fn parse() -> Cli {
    use clap::CommandFactory;
    let flags = boolean_flags(&Cli::command());
    Cli::parse_from(normalize_booleans(std::env::args_os(), &flags))
}

/// The long names of every flag that takes no value, in every subcommand.
fn boolean_flags(command: &clap::Command) -> Vec<String> {
    let own = command
        .get_arguments()
        .filter(|a| matches!(a.get_action(), ArgAction::SetTrue))
        .filter_map(|a| a.get_long().map(str::to_string));
    let nested = command.get_subcommands().flat_map(boolean_flags);
    own.chain(nested).collect()
}

/// `args` with `--flag=true` as `--flag` and `--flag=false` left out, for
/// each boolean flag in `flags` (Go's `ParseBool` spellings), up to `--`.
fn normalize_booleans(
    args: impl IntoIterator<Item = std::ffi::OsString>,
    flags: &[String],
) -> Vec<std::ffi::OsString> {
    let mut out = Vec::new();
    let mut after_dashes = false;
    for arg in args {
        after_dashes |= arg == "--";
        let split = arg
            .to_str()
            .filter(|_| !after_dashes)
            .and_then(|a| a.strip_prefix("--"))
            .and_then(|a| a.split_once('='))
            .filter(|(name, _)| flags.iter().any(|f| f == name));
        match split.map(|(name, value)| (name, go_bool(value))) {
            Some((name, Some(true))) => out.push(format!("--{name}").into()),
            Some((_, Some(false))) => {}
            _ => out.push(arg),
        }
    }
    out
}

/// Go's `strconv.ParseBool`.
fn go_bool(value: &str) -> Option<bool> {
    match value {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Render a package hierarchy: run every Kptfile pipeline, depth-first,
    /// and write the result (kpt's `kpt fn render`).
    Render(RenderArgs),
    /// Render in place, then again whenever a file under the package
    /// changes (saves that change nothing, and the render's own writes, are
    /// not changes). Takes `render`'s flags; Ctrl-C stops it.
    Watch(WatchArgs),
    /// Work with single functions: run a built-in as a KRM function, list
    /// the built-ins.
    #[command(subcommand)]
    Fn(FnCommand),
    /// Inspect and maintain the render cache.
    Cache(CacheArgs),
    /// Show the render as a graph: packages and pipeline steps in execution
    /// order, each with its key, and whether the render cache holds this
    /// tree.
    Graph(GraphArgs),
    /// Crossplane: render composite resources through their Compositions'
    /// function pipelines (classic `crossplane render`), with each function
    /// call cached and many XRs at once.
    #[command(subcommand)]
    Crossplane(crate::crossplane::CrossplaneCommand),
    /// Print krmgraph's version, the commit it was built from, and the kpt
    /// version whose output it matches.
    Version,
    /// Print a shell completion script: `source <(krmgraph completion
    /// bash)`, as with `kpt completion`.
    Completion {
        /// bash, zsh, fish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// Flags of `krmgraph graph`.
#[derive(Debug, clap::Args)]
pub struct GraphArgs {
    /// The root package directory.
    #[arg(default_value = ".")]
    pub pkg_path: PathBuf,

    /// `text`, `dot` (Graphviz) or `json`.
    #[arg(long = "format", value_enum, default_value = "text")]
    pub format: GraphFormat,

    /// The order, as for `render` (default: the root Kptfile's).
    #[arg(long = "order", value_enum)]
    pub order: Option<OrderArg>,

    /// As for `render`: the cache key depends on it.
    #[arg(long = "allow-exec")]
    pub allow_exec: bool,

    /// As for `render`.
    #[arg(long = "no-builtins")]
    pub no_builtins: bool,

    /// Run this image in a container runtime even though krmgraph has a
    /// built-in for it (repeatable; without a tag, every tag).
    #[arg(long = "no-builtin", value_name = "IMAGE")]
    pub no_builtin: Vec<String>,

    /// The cache directory, as for `render`.
    #[arg(long = "cache-dir")]
    pub cache_dir: Option<PathBuf>,
}

/// `krmgraph graph --format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// One line per node.
    Text,
    /// Graphviz.
    Dot,
    /// JSON.
    Json,
}

/// `krmgraph cache ...`.
#[derive(Debug, clap::Args)]
pub struct CacheArgs {
    /// The cache directory (default: `KRMGRAPH_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/krmgraph`, else `~/.cache/krmgraph`).
    #[arg(long = "cache-dir", global = true)]
    pub cache_dir: Option<PathBuf>,

    /// The shared remote cache `stats` checks.
    #[command(flatten)]
    pub remote: RemoteArgs,

    /// What to do.
    #[command(subcommand)]
    pub command: CacheCommand,
}

/// The cache subcommands.
#[derive(Debug, Subcommand)]
pub enum CacheCommand {
    /// Show the number and size of records and blobs.
    Stats,
    /// Remove unusable entries, then the least recently used records until
    /// the cache fits in `--max-size` (e.g. `500M`, `2G`; default: no
    /// limit).
    Gc {
        /// The size to shrink to, in bytes or with a K, M or G suffix.
        #[arg(long = "max-size")]
        max_size: Option<String>,
    },
    /// Remove everything.
    Clear,
    /// Re-hash every blob; remove (and list) what is damaged.
    Verify,
}

/// `krmgraph fn ...`.
#[derive(Debug, Subcommand)]
pub enum FnCommand {
    /// Run a built-in function as a standalone KRM function: a
    /// ResourceList on stdin, the result on stdout (usable from kpt or
    /// kustomize as an `exec:` function).
    Run(FnRunArgs),
    /// List the built-in functions, their tags and config kinds.
    List,
    /// Print the built-ins as a function catalog (KEP-2906 `Catalog`), or
    /// with `--check FILE` validate a catalog.
    Catalog(FnCatalogArgs),
    /// Run one function over a package (subpackages included) or over
    /// resources on stdin (`-`), as `kpt fn eval` does.
    Eval(FnEvalArgs),
}

/// Flags of `krmgraph fn catalog`.
#[derive(Debug, clap::Args)]
pub struct FnCatalogArgs {
    /// Validate these catalog files or directories instead of printing.
    #[arg(long = "check", value_name = "FILE")]
    pub check: Vec<PathBuf>,
}

/// Flags of `krmgraph fn eval` (the flags of `kpt fn eval` krmgraph
/// supports).
#[derive(Debug, clap::Args)]
pub struct FnEvalArgs {
    /// The package directory, or `-` for a ResourceList (or YAML
    /// documents) on stdin.
    #[arg(default_value = ".")]
    pub pkg_path: String,

    /// The function's image (`set-labels:v0.1.4`).
    #[arg(short = 'i', long = "image")]
    pub image: Option<String>,

    /// The function's command line (a local executable).
    #[arg(long = "exec")]
    pub exec: Option<String>,

    /// Where to write the result: `stdout`, `unwrap`, or a new directory.
    /// Default: in place for a directory, stdout for `-`.
    #[arg(short = 'o', long = "output")]
    pub output: Option<String>,

    /// Write `results.yaml` here.
    #[arg(long = "results-dir")]
    pub results_dir: Option<PathBuf>,

    /// Allow container functions network access.
    #[arg(long = "network")]
    pub network: bool,

    /// How long one function (exec or container) may run before it is
    /// killed, and its container removed: `90s`, `5m`, `1h30m`.
    #[arg(long = "fn-timeout", value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub fn_timeout: std::time::Duration,

    /// When to pull function images: Always, IfNotPresent or Never.
    #[arg(long = "image-pull-policy", default_value = "IfNotPresent")]
    pub image_pull_policy: String,

    /// Never run images as built-in functions.
    #[arg(long = "no-builtins")]
    pub no_builtins: bool,

    /// Run this image in a container runtime even though krmgraph has a
    /// built-in for it (repeatable; without a tag, every tag).
    #[arg(long = "no-builtin", value_name = "IMAGE")]
    pub no_builtin: Vec<String>,

    /// Truncate function Results and Stderr to 4 lines.
    #[arg(long = "truncate-output", action = ArgAction::Set, num_args = 0..=1,
          default_value_t = true, default_missing_value = "true", require_equals = true)]
    pub truncate_output: bool,

    /// Arguments after `--`: `key=value` pairs for the functionConfig.
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// Flags of `krmgraph fn run`.
#[derive(Debug, clap::Args)]
pub struct FnRunArgs {
    /// The function: an image reference such as `set-labels:v0.1.4` or
    /// `gcr.io/kpt-fn/set-labels:v0.1.4`.
    pub image: String,
}

/// Flags of `krmgraph render` (the flags of `kpt fn render`).
#[derive(Debug, clap::Args)]
pub struct RenderArgs {
    /// The root package directory.
    #[arg(default_value = ".")]
    pub pkg_path: PathBuf,

    /// Where to write the result: `stdout` (a ResourceList), `unwrap`
    /// (plain multi-document YAML), or a directory that must not exist.
    /// Default: in place.
    #[arg(short = 'o', long = "output")]
    pub output: Option<String>,

    /// Write `results.yaml` (every executed function and its results) here.
    #[arg(long = "results-dir")]
    pub results_dir: Option<PathBuf>,

    /// Allow `exec:` functions (local executables) to run.
    #[arg(long = "allow-exec")]
    pub allow_exec: bool,

    /// Allow container functions network access.
    #[arg(long = "allow-network")]
    pub allow_network: bool,

    /// How long one function (exec or container) may run before it is
    /// killed, and its container removed: `90s`, `5m`, `1h30m`.
    #[arg(long = "fn-timeout", value_name = "DURATION", default_value = "5m", value_parser = parse_duration)]
    pub fn_timeout: std::time::Duration,

    /// When to pull function images: Always, IfNotPresent or Never.
    #[arg(long = "image-pull-policy", default_value = "IfNotPresent")]
    pub image_pull_policy: String,

    /// Accepted for kpt compatibility; WASM functions are not supported.
    #[arg(long = "allow-alpha-wasm")]
    pub allow_alpha_wasm: bool,

    /// Never run images as built-in functions (they then need a container
    /// runtime).
    #[arg(long = "no-builtins")]
    pub no_builtins: bool,

    /// Run this image in a container runtime even though krmgraph has a
    /// built-in for it (repeatable; without a tag, every tag).
    #[arg(long = "no-builtin", value_name = "IMAGE")]
    pub no_builtin: Vec<String>,

    /// The order pipelines run in: `dfs` (subpackages first, kpt's
    /// default) or `bfs` (the root first, level by level). Default: `bfs`
    /// when the root Kptfile has `kpt.dev/bfs-rendering: "true"`, else
    /// `dfs`.
    #[arg(long = "order", value_enum)]
    pub order: Option<OrderArg>,

    /// A function catalog (KEP-2906 `Catalog`, file or directory of them)
    /// that resolves steps naming no `image`/`exec` by their config's
    /// kind, pinned by digest (repeatable; searched in order, then the
    /// `:`-separated `KRMGRAPH_FN_CATALOGS`; docs/catalogs.md).
    #[arg(long = "fn-catalog", value_name = "PATH")]
    pub fn_catalog: Vec<PathBuf>,

    /// A function catalog a subpackage's Kptfile may name in its
    /// `krmgraph.dev/fn-catalogs` annotation (repeatable; searched after
    /// the others). Without it such a catalog is an error.
    #[arg(long = "trust-catalog", value_name = "PATH")]
    pub trust_catalog: Vec<PathBuf>,

    /// How many subtrees and functions may run at once (default: the
    /// number of CPUs; 1 renders sequentially). Output, results and the log
    /// are the same for any value.
    #[arg(long = "jobs", short = 'j')]
    pub jobs: Option<usize>,

    /// Do not read or write the cache: run every pipeline.
    #[arg(long = "no-cache", env = "KRMGRAPH_NO_CACHE", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_cache: bool,

    /// The cache directory (default: `KRMGRAPH_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/krmgraph`, else `~/.cache/krmgraph`).
    #[arg(long = "cache-dir")]
    pub cache_dir: Option<PathBuf>,

    /// Ignore the cache, render, and fail if the cache held a different
    /// result for this tree (a pipeline that is not idempotent).
    #[arg(long = "verify")]
    pub verify: bool,

    /// Truncate function Results and Stderr to 4 lines.
    #[arg(long = "truncate-output", action = ArgAction::Set, num_args = 0..=1,
          default_value_t = true, default_missing_value = "true", require_equals = true)]
    pub truncate_output: bool,

    /// Render in memory and write nothing in the package; list what a
    /// render would write, create or delete. Exit code 0: nothing would
    /// change; 1: something would; 2: the render failed.
    #[arg(long = "check")]
    pub check: bool,

    /// With `--check`: print what would change as a unified diff.
    #[arg(long = "diff", requires = "check")]
    pub diff: bool,

    /// After kpt's log, say why each step ran instead of replaying (what
    /// changed since it last ran in this tree), and which subtrees were
    /// replayed whole.
    #[arg(long = "explain")]
    pub explain: bool,

    /// The shared remote cache.
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// The remote cache flags of `render`, `watch` and `cache stats` (each
/// also an environment variable).
#[derive(Debug, Clone, clap::Args)]
pub struct RemoteArgs {
    /// A shared remote cache, read through on a local miss and written
    /// after a successful render: `grpc://HOST:PORT` or `grpcs://` (the
    /// Remote Execution API: BuildGrid, Buildbarn, BuildBuddy,
    /// bazel-remote...) or `http://[USER:PASSWORD@]HOST:PORT[/PREFIX]` or
    /// `https://` (Bazel's HTTP cache protocol: nginx WebDAV,
    /// bazel-remote). It never fails a render.
    #[arg(
        long = "remote-cache",
        env = "KRMGRAPH_REMOTE_CACHE",
        value_name = "URL",
        hide_env_values = true
    )]
    pub remote_cache: Option<String>,

    /// The REAPI instance name sent on every call.
    #[arg(
        long = "remote-instance-name",
        env = "KRMGRAPH_REMOTE_INSTANCE_NAME",
        value_name = "NAME",
        default_value = ""
    )]
    pub remote_instance_name: String,

    /// A header sent with every remote request, e.g.
    /// `Authorization=Bearer TOKEN` (repeatable; never printed).
    #[arg(
        long = "remote-header",
        env = "KRMGRAPH_REMOTE_HEADER",
        value_name = "NAME=VALUE",
        hide_env_values = true
    )]
    pub remote_header: Vec<String>,

    /// Write to the remote cache (`--remote-upload=false`: read only, as
    /// a developer machine reading what CI wrote).
    #[arg(long = "remote-upload", env = "KRMGRAPH_REMOTE_UPLOAD", action = ArgAction::Set, num_args = 0..=1,
          default_value_t = true, default_missing_value = "true", require_equals = true,
          value_parser = clap::builder::BoolishValueParser::new())]
    pub remote_upload: bool,

    /// How long one remote request may take before it counts as a miss
    /// (and the remote is left alone for the rest of the run).
    #[arg(long = "remote-timeout", env = "KRMGRAPH_REMOTE_TIMEOUT", value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub remote_timeout: std::time::Duration,

    /// A PEM file of CA certificates to trust, besides the system's, for
    /// a `grpcs://` or `https://` remote cache (a private CA).
    #[arg(
        long = "remote-tls-ca",
        env = "KRMGRAPH_REMOTE_TLS_CA",
        value_name = "FILE"
    )]
    pub remote_tls_ca: Option<std::path::PathBuf>,
}

/// Flags of `krmgraph watch`: those of an in-place `render`, and how long
/// the tree must be quiet before a render starts.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// As for `render` (`-o` is refused: watch renders in place).
    #[command(flatten)]
    pub render: RenderArgs,

    /// Milliseconds without a file event before the next render starts, so
    /// that an editor's save (several writes and a rename) renders once.
    #[arg(long = "debounce-ms", default_value_t = 100)]
    pub debounce_ms: u64,

    /// Clear the screen before each render (on a terminal).
    #[arg(long = "clear")]
    pub clear: bool,

    /// Do not render for changes to paths matching this glob (relative to
    /// the package, `*` within a name, `**` across directories;
    /// repeatable). Files a render never reads (not YAML, JSON or a
    /// Kptfile, and not named in a Kptfile; editor swap and backup files)
    /// are ignored already.
    #[arg(long = "ignore", value_name = "GLOB")]
    pub ignore: Vec<String>,
}

/// `--order`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    /// Depth-first: subpackages before their parent.
    Dfs,
    /// Breadth-first: the root first, then each level.
    Bfs,
}

/// A duration as Go writes one: numbers with units `ms`, `s`, `m`, `h`
/// (`90s`, `1m30s`, `1.5h`).
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let invalid = || format!("invalid duration {text:?} (use e.g. 90s, 5m, 1h30m)");
    let mut total = 0.0_f64;
    let mut rest = text;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let number: f64 = rest[..number_len].parse().map_err(|_| invalid())?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(invalid()),
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    if text.is_empty() || total <= 0.0 {
        return Err(invalid());
    }
    Ok(std::time::Duration::from_secs_f64(total))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn boolean_flags_take_go_values_only_with_equals() {
        use clap::CommandFactory;
        let flags = boolean_flags(&Cli::command());
        assert!(flags.iter().any(|f| f == "no-cache"), "{flags:?}");
        assert!(flags.iter().any(|f| f == "allow-exec"), "{flags:?}");
        let args = |line: &str| -> Vec<String> {
            normalize_booleans(line.split(' ').map(Into::into), &flags)
                .into_iter()
                .map(|a| a.into_string().unwrap())
                .collect()
        };
        assert_eq!(
            args("krmgraph render --no-cache=true --allow-exec=false ."),
            ["krmgraph", "render", "--no-cache", "."]
        );
        assert_eq!(
            args("krmgraph render --allow-exec=T -- --no-cache=false"),
            [
                "krmgraph",
                "render",
                "--allow-exec",
                "--",
                "--no-cache=false"
            ]
        );
        assert_eq!(
            args("krmgraph render --no-cache=maybe"),
            ["krmgraph", "render", "--no-cache=maybe"]
        );
        let cli = Cli::parse_from(args("krmgraph render --no-cache --allow-exec ."));
        let Command::Render(render) = cli.command else {
            panic!("not render");
        };
        assert!(render.no_cache && render.allow_exec);
        assert_eq!(render.pkg_path, PathBuf::from("."));
    }

    #[test]
    fn durations_parse_as_go() {
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        for bad in ["", "5", "s", "5x", "0s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
