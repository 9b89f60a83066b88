//! The kustomize-era catalog functions: `set-namespace`, `set-labels` and
//! `set-annotations` v0.1.x. Each wraps one of kustomize's transformers
//! (namespace, labels, annotations) with its default field specs, in a
//! kyaml `framework` command.
//!
//! What sets them apart from the newer, SDK-based versions (other files of
//! `builtin`), and what kpt's e2e cases pin:
//!
//! - they change **every** item: the Kptfile, function configs and
//!   `local-config` resources too;
//! - every item goes through kustomize's `resmap`, which hands it back
//!   through JSON ([`json_roundtrip`]): quotes normalised, keys sorted (so
//!   new fields land in that order after kpt restores the known ones);
//! - no results on success; a failure is `[error] : <message>` on stderr,
//!   one error result, exit 1 (`failed to configure function: ...` for a
//!   bad config, `failed to run function: ...` for a transformer error).

pub mod annotations;
mod config;
pub mod fieldspec;
pub mod json_roundtrip;
pub mod labels;
pub mod namespace;

use super::apply_setters::report;
use super::{framework, Builtin};
use crate::fnruntime::exec::ProcessOutput;
use crate::yaml::Node;

/// The v0.1.x tags of the three functions. `v0.1` floats to the newest
/// v0.1.x, which behaves the same.
const TAGS: &[&str] = &[
    "v0.1", "v0.1.0", "v0.1.1", "v0.1.2", "v0.1.3", "v0.1.4", "v0.1.5",
];

/// The kustomize-era images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "set-namespace",
        registry: "gcr.io/kpt-fn/",
        tags: TAGS,
        version: "1",
        config_kinds: &["ConfigMap", "SetNamespaceConfig"],
        run: run::<namespace::SetNamespace>,
    },
    Builtin {
        name: "set-labels",
        registry: "gcr.io/kpt-fn/",
        tags: TAGS,
        version: "1",
        config_kinds: &["ConfigMap", "SetLabelConfig"],
        run: run::<labels::SetLabels>,
    },
    Builtin {
        name: "set-annotations",
        registry: "gcr.io/kpt-fn/",
        tags: TAGS,
        version: "1",
        config_kinds: &["ConfigMap", "SetAnnotationConfig"],
        run: run::<annotations::SetAnnotations>,
    },
];

/// A kustomize-era function: a config read from the functionConfig, and a
/// transformation of one item.
pub trait Function: Sized {
    /// The kind of its typed config (`fn.kpt.dev/v1alpha1`).
    const CONFIG_KIND: &'static str;

    /// Reads and validates the functionConfig.
    fn configure(fn_config: Option<&Node>) -> Result<Self, String>;

    /// Transforms one item in place (before the JSON round trip).
    fn transform(&self, item: &mut Node) -> Result<(), String>;
}

/// Runs `F` as its kyaml framework command does.
pub fn run<F: Function>(input: &[u8]) -> ProcessOutput {
    let mut list = match framework::read(input) {
        Ok(list) => list,
        Err(e) => return framework::failure(&e),
    };
    let function = match F::configure(list.function_config.as_ref()) {
        Ok(f) => f,
        Err(e) => {
            return report::kyaml_failure(list, &format!("failed to configure function: {e}"))
        }
    };
    let result = list.items.iter_mut().try_for_each(|item| {
        function.transform(item)?;
        json_roundtrip::normalize(item)
    });
    match result {
        Ok(()) => report::kyaml_success(list, &[]),
        Err(e) => {
            // The function assigns its (nil) output to the items on error.
            list.items.clear();
            report::kyaml_failure(list, &format!("failed to run function: {e}"))
        }
    }
}

#[cfg(test)]
mod tests;
