//! Reading a kustomize-era function's config: a `v1` `ConfigMap` (its
//! `data`) or the function's own `fn.kpt.dev/v1alpha1` kind.

use super::error::ConfigError;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::Node;

/// The API version of the typed configs.
const FN_CONFIG_API_VERSION: &str = "fn.kpt.dev/v1alpha1";

/// Which kind of config the function got.
pub enum Kind<'a> {
    /// A `ConfigMap`: its `data` entries, in order.
    ConfigMap(Vec<(String, String)>),
    /// The function's typed config.
    Typed(&'a Node),
}

/// Classifies `fn_config`; anything else (or none) is an error naming the
/// two accepted kinds.
pub fn kind<'a>(
    fn_config: Option<&'a Node>,
    typed_kind: &'static str,
) -> Result<Kind<'a>, ConfigError> {
    let node = fn_config.map(rnode::y_node);
    let (api_version, kind) = node.map(rnode::type_meta).unwrap_or_default();
    match (api_version, kind) {
        ("v1", "ConfigMap") => Ok(Kind::ConfigMap(string_map(
            node.and_then(|n| rnode::field_value(n, "data")),
        ))),
        (FN_CONFIG_API_VERSION, k) if k == typed_kind => {
            Ok(Kind::Typed(node.expect("a config with a kind")))
        }
        _ => Err(ConfigError::WrongKind(typed_kind)),
    }
}

/// The entries of a string map (`data`, `labels`, `annotations`).
pub fn string_map(node: Option<&Node>) -> Vec<(String, String)> {
    node.map(rnode::y_node)
        .map(|n| {
            rnode::pairs(n)
                .map(|(k, v)| (k.value.to_string(), rnode::get_value(Some(v)).to_string()))
                .collect()
        })
        .unwrap_or_default()
}
