//! Results and process output of the catalog functions in this family, in
//! the two shapes the catalog uses:
//!
//! - kyaml's `framework` (apply-setters, create-setters, list-setters,
//!   search-replace, apply-replacements v0.1): results carry a message and
//!   optionally a field and file, no severity on success; a failure writes
//!   the items with one error result to stdout, `[error] : <message>` to
//!   stderr, and exits 1 (kyaml's `ResultItem.String()` without a resource
//!   reference or field).
//! - the kpt functions SDK (`fn.AsMain`; set-image, remove-local-config-
//!   resources, apply-replacements latest): results with a severity; a
//!   failure still writes the ResourceList, logs
//!   `failed to evaluate function: <err>` (no newline) and exits 1.
//!
//! kpt re-reads the results into its own `framework.Result` and writes
//! `results.yaml` from that, so only the content of the result nodes
//! matters here, not their layout.

use super::super::framework::{Outcome, ResourceList};
use crate::exec::ProcessOutput;
use krmgraph_yaml::{Kind, Node};

/// One result item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Item {
    /// The message.
    pub message: String,
    /// `error`, `warning`, `info`, or empty (omitted).
    pub severity: &'static str,
    /// The resource the result is about.
    pub resource_ref: Option<ResourceRef>,
    /// `field.path`, omitted when empty.
    pub field_path: String,
    /// `file.path`, omitted (with the index) when empty.
    pub file_path: String,
    /// `file.index`, omitted when 0.
    pub file_index: i64,
}

/// A result's `resourceRef`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceRef {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
    /// `namespace`.
    pub namespace: String,
}

impl Item {
    /// A result with only a message.
    pub fn message(message: impl Into<String>) -> Item {
        Item {
            message: message.into(),
            ..Item::default()
        }
    }

    /// A result with a message and a severity.
    pub fn with_severity(message: impl Into<String>, severity: &'static str) -> Item {
        Item {
            message: message.into(),
            severity,
            ..Item::default()
        }
    }

    fn to_node(&self) -> Node {
        let mut map = Node::mapping();
        push(&mut map, "message", Node::string(&self.message));
        if !self.severity.is_empty() {
            push(&mut map, "severity", Node::string(self.severity));
        }
        if let Some(r) = &self.resource_ref {
            let mut m = Node::mapping();
            for (k, v) in [
                ("apiVersion", &r.api_version),
                ("kind", &r.kind),
                ("name", &r.name),
                ("namespace", &r.namespace),
            ] {
                if !v.is_empty() {
                    push(&mut m, k, Node::string(v.as_str()));
                }
            }
            push(&mut map, "resourceRef", m);
        }
        if !self.field_path.is_empty() {
            let mut m = Node::mapping();
            push(&mut m, "path", Node::string(&self.field_path));
            push(&mut map, "field", m);
        }
        if !self.file_path.is_empty() || self.file_index != 0 {
            let mut m = Node::mapping();
            if !self.file_path.is_empty() {
                push(&mut m, "path", Node::string(&self.file_path));
            }
            if self.file_index != 0 {
                let mut n = Node::string(self.file_index.to_string());
                n.tag = krmgraph_yaml::node::tag::INT.into();
                push(&mut m, "index", n);
            }
            push(&mut map, "file", m);
        }
        map
    }
}

fn push(map: &mut Node, key: &str, value: Node) {
    map.content.push(Node::string(key));
    map.content.push(value);
}

/// The `results` node for `items`; `None` when there are none.
pub fn results_node(items: &[Item]) -> Option<Node> {
    if items.is_empty() {
        return None;
    }
    let mut seq = Node::sequence();
    seq.kind = Kind::Sequence;
    seq.content = items.iter().map(Item::to_node).collect();
    Some(seq)
}

/// A kyaml-framework function that succeeded with `items` as results.
pub fn kyaml_success(mut list: ResourceList, items: &[Item]) -> Outcome {
    list.results = results_node(items);
    Outcome::success(list)
}

/// A kyaml-framework function that failed with `message`.
pub fn kyaml_failure(mut list: ResourceList, message: &str) -> Outcome {
    list.results = results_node(&[Item::with_severity(message, "error")]);
    Outcome::Wrote {
        list,
        stderr: format!("[error] : {message}\n").into_bytes(),
        exit_code: 1,
        unwritable: None,
    }
}

/// An SDK function's output: the list with `items` as results; with
/// `failed`, the SDK's `error: function failure` on stderr and exit 1.
pub fn sdk_output(mut list: ResourceList, items: &[Item], failed: bool) -> Outcome {
    list.results = results_node(items);
    let stderr = if failed {
        b"failed to evaluate function: error: function failure".to_vec()
    } else {
        Vec::new()
    };
    Outcome::Wrote {
        list,
        stderr,
        exit_code: i32::from(failed),
        unwritable: Some(sdk_error),
    }
}

/// An SDK function whose input could not be read.
pub fn sdk_error(message: &str) -> ProcessOutput {
    ProcessOutput {
        stdout: Vec::new(),
        stderr: format!("failed to evaluate function: {message}").into_bytes(),
        exit_code: Some(1),
    }
}

/// `config.kubernetes.io/path` of a resource, as `kioutil.GetFileAnnotations`
/// reads it.
pub fn file_path(node: &Node) -> String {
    krmgraph_kyaml::kioutil::get_file_annotations(node).0
}

/// `config.kubernetes.io/index` of a resource, 0 when absent or invalid.
pub fn file_index(node: &Node) -> i64 {
    krmgraph_kyaml::kioutil::get_file_annotations(node)
        .1
        .parse()
        .unwrap_or(0)
}
