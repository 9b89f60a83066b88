//! Function runtimes (§2.6): where each Function's server is, and what
//! identity its calls are cached under. `Development` dials a running
//! server (`render.crossplane.io/runtime-development-target`, default
//! `localhost:9443`); `Docker` (the default) starts `spec.package` (or
//! the override image) as a container (`docker`).

use crate::docker;
use crate::model::Function;
use crate::Error;

/// The runtime annotation.
pub const RUNTIME: &str = "render.crossplane.io/runtime";
/// The Development runtime's target annotation.
pub const DEVELOPMENT_TARGET: &str = "render.crossplane.io/runtime-development-target";

/// Where a function runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Runtime {
    /// A server someone else runs, at this target.
    Development(String),
    /// A container the command starts.
    Docker(docker::Settings),
}

impl Runtime {
    /// The runtime `f`'s annotations ask for.
    pub fn of(f: &Function) -> Result<Runtime, Error> {
        match f.annotation(RUNTIME, "Docker") {
            "Docker" => Ok(Runtime::Docker(docker::Settings::of(f)?)),
            "Development" => Ok(Runtime::Development(
                f.annotation(DEVELOPMENT_TARGET, "localhost:9443").to_string(),
            )),
            other => Err(Error::Input(format!(
                "Function {:?}: unsupported {RUNTIME:?} annotation value {other:?} (unknown runtime)",
                f.name
            ))),
        }
    }
}

/// The identity a Development function's calls are cached under when the
/// server is declared pinned: its name, target and package.
pub fn development_identity(f: &Function, target: &str) -> Vec<u8> {
    let mut id = b"development\0".to_vec();
    for part in [&f.name, target, &f.package] {
        id.extend_from_slice(part.as_bytes());
        id.push(0);
    }
    id
}
