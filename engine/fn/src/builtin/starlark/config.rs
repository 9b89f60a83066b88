//! The starlark function's functionConfig: `fn.kpt.dev/v1alpha1
//! StarlarkRun` (`metadata.name`, `source`, `params`) or a `ConfigMap`
//! (`data.source`; the other data keys are the parameters). The script
//! itself reads its parameters from `ctx.resource_list["functionConfig"]`,
//! so only the name and the source are needed here.

use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// The script name when the config has no `metadata.name` (the catalog's
/// spelling, typo included). Go starlark prefixes positions with it.
pub const DEFAULT_NAME: &str = "stalark-function-run";

/// What the function runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The script's file name in positions: the config's `metadata.name`.
    pub name: String,
    /// The Starlark program.
    pub source: String,
}

impl Config {
    /// Reads the functionConfig.
    pub fn decode(function_config: Option<&Node>) -> Result<Config, String> {
        let Some(fc) = function_config.map(rnode::y_node) else {
            return Err("missing function config".into());
        };
        if fc.kind != Kind::Mapping {
            return Err("function config must be a mapping".into());
        }
        let (api_version, kind) = rnode::type_meta(fc);
        let source = match (api_version, kind) {
            ("fn.kpt.dev/v1alpha1", "StarlarkRun") => scalar_at(fc, &["source"]),
            ("v1", "ConfigMap") => scalar_at(fc, &["data", "source"]),
            _ => {
                return Err(format!(
                    "function config must be a StarlarkRun or ConfigMap, got {api_version} {kind}"
                ))
            }
        };
        if source.is_empty() {
            return Err("`source` must not be empty".into());
        }
        let name = scalar_at(fc, &["metadata", "name"]);
        Ok(Config {
            name: if name.is_empty() {
                DEFAULT_NAME.to_string()
            } else {
                name
            },
            source,
        })
    }
}

/// The scalar value at `path`, empty when missing or not a scalar.
fn scalar_at(node: &Node, path: &[&str]) -> String {
    match rnode::lookup(node, path) {
        Ok(Some(n)) if n.kind == Kind::Scalar => n.value.to_string(),
        _ => String::new(),
    }
}
