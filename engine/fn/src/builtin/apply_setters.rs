//! `gcr.io/kpt-fn/apply-setters`: sets the fields marked with a
//! `# kpt-set: <pattern>` line comment to the pattern with the
//! functionConfig's setter values substituted (kyaml framework).
//!
//! - Scalars: every `${name}` of a provided setter is replaced by its value;
//!   the other references are recovered from the current value
//!   ([`setters::current_setter_values`]); any left is an error
//!   (`values for setters [${a}] must be provided`). The tag is cleared, so
//!   `"3"` becomes an int again; an empty result is written `""`.
//! - Sequences (the comment on the key, or on a flow sequence itself): the
//!   pattern names one setter whose value is parsed as a YAML list and
//!   replaces the items.
//! - A field is only touched when its pattern mentions a provided setter.
//!
//! Results (kyaml framework, no severity): `set field value to "<value>"`
//! with the field path and file. Errors are reported as
//! `failed to apply setters: <error>`.

pub mod report;
pub mod setters;

use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_util::gostr::quote;
use krmgraph_yaml::{Kind, Node, Style};
use report::Item;
use setters::{extract_setter_pattern, Visitor};

/// The apply-setters images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "apply-setters",
    registry: "gcr.io/kpt-fn/",
    tags: &["v0.1", "v0.1.1", "v0.2", "v0.2.0", "unstable", "latest"],
    version: "1",
    config_kinds: &["ConfigMap"],
    run,
    direct: Some(run_direct),
    per_item: None,
}];

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, run_list)
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list)
}

fn run_list(mut list: ResourceList) -> Outcome {
    let mut apply = ApplySetters {
        setters: setters::data_map(list.function_config.as_ref()),
        ..ApplySetters::default()
    };
    match apply.filter(&mut list.items) {
        Ok(()) => report::kyaml_success(list, &apply.results),
        Err(e) => report::kyaml_failure(list, &format!("failed to apply setters: {e}")),
    }
}

/// The catalog's `applysetters.ApplySetters`.
#[derive(Debug, Default)]
pub struct ApplySetters {
    /// Setter names and values.
    pub setters: Vec<(String, String)>,
    /// One result per field set.
    pub results: Vec<Item>,
    file_path: String,
}

impl ApplySetters {
    /// `Filter`: applies the setters to every resource.
    pub fn filter(&mut self, nodes: &mut [Node]) -> Result<(), String> {
        if self.setters.is_empty() {
            return Err("input setters list cannot be empty".into());
        }
        for node in nodes {
            self.file_path = report::file_path(node);
            setters::accept(self, node, "")?;
        }
        Ok(())
    }

    fn should_set(&self, pattern: &str) -> bool {
        self.setters
            .iter()
            .any(|(name, _)| pattern.contains(&format!("${{{name}}}")))
    }

    fn setter_value(&self, name: &str) -> &str {
        let name = setters::clean(name);
        self.setters
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, v)| v.as_str())
    }

    fn record(&mut self, path: &str, value: &str) {
        self.results.push(Item {
            message: format!("set field value to {}", quote(value)),
            field_path: path.trim_start_matches('.').to_string(),
            file_path: self.file_path.clone(),
            ..Item::default()
        });
    }
}

impl Visitor for ApplySetters {
    fn visit_mapping(&mut self, node: &mut Node, path: &str) -> Result<(), String> {
        let mut i = 1;
        while i < node.content.len() {
            let (key, value) = (&node.content[i - 1], &node.content[i]);
            i += 2;
            if value.kind != Kind::Sequence {
                continue;
            }
            let comment = if value.style.has(Style::FLOW) {
                &value.line_comment()
            } else {
                &key.line_comment()
            };
            let Some(pattern) = extract_setter_pattern(comment).map(str::to_string) else {
                continue;
            };
            if !self.should_set(&pattern) {
                continue;
            }
            let sv = self.setter_value(&pattern).to_string();
            let parsed = krmgraph_yaml::unmarshal(sv.as_bytes())
                .ok()
                .flatten()
                .map(|doc| krmgraph_kyaml::rnode::y_node(&doc).clone())
                .filter(|n| n.kind == Kind::Sequence && !sv.is_empty());
            let Some(items) = parsed else {
                return Err("input to array setter must be an array of values".into());
            };
            let field_path = format!("{path}.{}", key.value);
            let [key, value] = &mut node.content[i - 3..i - 1] else {
                unreachable!("a mapping pair")
            };
            value.content = items.content;
            if value.content.is_empty() && !value.style.has(Style::FLOW) {
                // `[]`, with the comment after it: go-yaml cannot write a
                // key's line comment before a flow sequence.
                value.style |= Style::FLOW;
                value.set_line_comment(key.take_line_comment());
            }
            self.record(&field_path, &sv);
        }
        Ok(())
    }

    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), String> {
        let Some(pattern) = extract_setter_pattern(node.line_comment()) else {
            return Ok(());
        };
        if !self.should_set(pattern) {
            return Ok(());
        }
        let mut value = pattern.to_string();
        for (name, v) in &self.setters {
            value = value.replace(&format!("${{{name}}}"), v);
        }
        for (name, v) in setters::current_setter_values(pattern, &node.value) {
            value = value.replace(&format!("${{{name}}}"), &v);
        }
        let unresolved = setters::unresolved_setters(&value);
        if !unresolved.is_empty() {
            return Err(format!(
                "values for setters {} must be provided",
                setters::go_string_slice(&unresolved)
            ));
        }
        if value.is_empty() {
            node.style = Style::DOUBLE_QUOTED;
        }
        node.value = value.into();
        node.tag.clear();
        let value = node.value.clone();
        self.record(path, &value);
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod tests;
