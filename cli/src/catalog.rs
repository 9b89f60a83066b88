//! Function catalogs for a render: the paths from `--fn-catalog` and
//! `KRMGRAPH_FN_CATALOGS`, loaded and installed as the Kptfile resolver
//! before the render reads any Kptfile (`krmgraph-catalog`).

use std::path::PathBuf;

/// The catalogs named on the command line, then by `KRMGRAPH_FN_CATALOGS`
/// (`:`-separated), in search order.
pub fn paths(flags: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = flags.to_vec();
    if let Some(env) = std::env::var_os("KRMGRAPH_FN_CATALOGS") {
        out.extend(std::env::split_paths(&env).filter(|p| !p.as_os_str().is_empty()));
    }
    out
}

/// Loads and installs the catalogs at `paths` (nothing when empty); the
/// error is printed.
pub fn install(paths: &[PathBuf], allow_network: bool) -> Result<(), ()> {
    if paths.is_empty() {
        return Ok(());
    }
    let catalogs = krmgraph_catalog::Catalogs::load(paths, allow_network).map_err(|e| {
        eprintln!("Error: function catalog: {e} ");
    })?;
    // A second install (a watch loop's next render) keeps the first: the
    // flags do not change while the process runs.
    krmgraph_package::kptfile::resolver::install(Box::new(catalogs));
    Ok(())
}
