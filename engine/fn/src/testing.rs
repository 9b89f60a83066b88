//! Helpers for the crate's unit tests.

use krmgraph_yaml::Node;

/// The first document of `yaml`.
pub(crate) fn parse(yaml: &str) -> Node {
    krmgraph_yaml::decode::unmarshal(yaml.as_bytes())
        .unwrap()
        .unwrap()
}

/// `node` as kyaml's encoder writes it.
pub(crate) fn emit(node: &Node) -> String {
    krmgraph_kyaml::node_to_string(node).unwrap()
}
