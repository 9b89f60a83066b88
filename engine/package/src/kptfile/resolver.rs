//! The hook through which a function catalog (`krmgraph-catalog`) gives a
//! runtime to pipeline functions that name none. A Kptfile step with
//! neither `image` nor `exec` is an error in kpt; when the process has
//! installed a [`FunctionResolver`], [`super::load`] asks it first, and
//! the step that reaches validation, the runner and the step key is the
//! resolved one (`image` or `exec` filled in).
//!
//! The resolver is process-wide because every Kptfile load (the graph,
//! hydrate, the cache's identities) must see the same resolution, and
//! the CLI installs it once, before a render starts.

use std::path::Path;
use std::sync::OnceLock;

use super::Function;

/// Resolves pipeline functions that name no runtime.
pub trait FunctionResolver: Send + Sync {
    /// Fills in `f.image` or `f.exec` for the function `f` of the package
    /// at `dir` when `f` names no runtime (or an untagged image the catalog
    /// pins); `Ok(false)` when the resolver has nothing to say. The error is
    /// a full message (it names the catalog or config file and position).
    fn resolve(&self, dir: &Path, f: &mut Function) -> Result<bool, String>;

    /// Checks the Kptfile of the package at `dir` before its functions are
    /// resolved (a subpackage may not bring catalogs the user did not
    /// trust).
    fn check(&self, _dir: &Path, _kptfile: &super::Kptfile) -> Result<(), String> {
        Ok(())
    }

    /// Forgets what earlier renders of this process verified, so that a
    /// long-running process (`krmgraph watch`) checks every digest again.
    fn begin_render(&self) {}

    /// One line per resolution made so far, for `--explain` (which config
    /// resolved to which runtime, through which catalog entry).
    fn explain(&self) -> Vec<String> {
        Vec::new()
    }

    /// What identifies every resolution this resolver can make (the
    /// catalogs' bytes and the built-ins they name): the cache keys of
    /// steps resolved through it.
    fn identity(&self) -> Vec<u8>;
}

static RESOLVER: OnceLock<Box<dyn FunctionResolver>> = OnceLock::new();

/// Installs the process's resolver; `false` if one was installed already.
pub fn install(resolver: Box<dyn FunctionResolver>) -> bool {
    RESOLVER.set(resolver).is_ok()
}

/// The installed resolver, if any.
pub fn installed() -> Option<&'static dyn FunctionResolver> {
    RESOLVER.get().map(|r| r.as_ref())
}

/// Whether `f` names no runtime of its own.
pub fn unresolved(f: &Function) -> bool {
    f.image.is_empty() && f.exec.is_empty()
}

/// Resolves every function of `kptfile` with the installed resolver.
pub(super) fn resolve_all(dir: &Path, kptfile: &mut super::Kptfile) -> Result<(), String> {
    let Some(resolver) = installed() else {
        return Ok(());
    };
    resolver.check(dir, kptfile)?;
    let pipeline = &mut kptfile.pipeline;
    for f in pipeline.mutators.iter_mut().chain(&mut pipeline.validators) {
        resolver.resolve(dir, f)?;
    }
    Ok(())
}
