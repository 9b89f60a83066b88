//! Function catalogs for a render: the paths from `--fn-catalog` and
//! `KRMGRAPH_FN_CATALOGS`, loaded and installed as the Kptfile resolver
//! before the render reads any Kptfile (`krmgraph-catalog`).

use std::path::{Path, PathBuf};

use krmgraph_package::kptfile::KPTFILE_NAME;

/// The catalogs in search order: named on the command line, by
/// `KRMGRAPH_FN_CATALOGS` (`:`-separated), by the root Kptfile's
/// `krmgraph.dev/fn-catalogs` annotation, then by `--trust-catalog` (the
/// catalogs subpackages may name).
pub fn paths(flags: &[PathBuf], root: &Path, trusted: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = flags.to_vec();
    if let Some(env) = std::env::var_os("KRMGRAPH_FN_CATALOGS") {
        out.extend(std::env::split_paths(&env).filter(|p| !p.as_os_str().is_empty()));
    }
    let kptfile = std::fs::read(root.join(KPTFILE_NAME))
        .ok()
        .and_then(|bytes| krmgraph_package::kptfile::parse(root, &bytes).ok());
    if let Some(kptfile) = kptfile {
        out.extend(krmgraph_catalog::annotated_paths(root, &kptfile));
    }
    out.extend(trusted.iter().cloned());
    out
}

/// Loads and installs the catalogs at `paths` (installed even when there
/// are none, so that a subpackage naming one is refused); the error is
/// printed.
pub fn install(
    paths: &[PathBuf],
    root: &Path,
    allow_network: bool,
    cache_dir: Option<&Path>,
) -> Result<(), ()> {
    // A watch loop's next render keeps the catalogs it loaded first (the
    // flags do not change while the process runs) but verifies again.
    if let Some(installed) = krmgraph_package::kptfile::resolver::installed() {
        installed.begin_render();
        return Ok(());
    }
    let catalogs = krmgraph_catalog::Catalogs::load(paths, allow_network)
        .map_err(|e| {
            eprintln!("Error: function catalog: {e} ");
        })?
        .with_root(root);
    // Executables fetched over http(s) are kept beside the render cache,
    // by digest, whether or not this render uses the cache.
    let catalogs = match krmgraph_cache::resolve_dir(cache_dir) {
        Ok(dir) => catalogs.with_fetch_dir(dir.join("fn-bin")),
        Err(_) => catalogs,
    };
    krmgraph_package::kptfile::resolver::install(Box::new(catalogs));
    Ok(())
}

/// `krmgraph fn catalog [--check FILE]...`.
pub fn command(args: &crate::args::FnCatalogArgs) -> std::process::ExitCode {
    if args.check.is_empty() {
        print!("{}", krmgraph_catalog::builtins::catalog());
        return std::process::ExitCode::SUCCESS;
    }
    match krmgraph_catalog::Catalogs::load(&args.check, false) {
        Ok(catalogs) => {
            for e in catalogs.entries() {
                println!("{} {} {}", e.api_version(), e.kind, e.origin());
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("Error: function catalog: {e} ");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `--explain`: how the catalogs resolved the steps of this render.
pub fn explain() {
    if let Some(resolver) = krmgraph_package::kptfile::resolver::installed() {
        for line in resolver.explain() {
            eprintln!("{line}");
        }
    }
}
