//! `gcr.io/kpt-fn/create-setters`: marks the fields whose values come from
//! the functionConfig's setters with `# kpt-set: <pattern>` line comments
//! (kyaml framework), the inverse of apply-setters.
//!
//! - A `ConfigMap` data value that parses as a YAML list is an array
//!   setter; any other is a scalar setter.
//! - Scalars (field values and list items) containing a scalar setter's
//!   value get the comment, with every setter value in them replaced by
//!   `${name}`; longer values are replaced first.
//! - Sequences of scalars holding the same values as an array setter (in
//!   any order) get `# kpt-set: ${name}` on their key (on the sequence
//!   itself when it is a flow sequence).
//!
//! Results: `Added line comment "<pattern>" for field with value "<v>"`.

use super::apply_setters::report::{self, Item};
use super::apply_setters::setters::{self, Visitor, SETTER_COMMENT};
use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_util::gostr::quote;
use krmgraph_yaml::{Kind, Node, Style};

/// The create-setters images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "create-setters",
    registry: "gcr.io/kpt-fn/",
    tags: &["v0.1", "v0.1.0", "unstable", "latest"],
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
    let mut create = CreateSetters::decode(list.function_config.as_ref());
    match create.filter(&mut list.items) {
        Ok(()) => report::kyaml_success(list, &create.results),
        Err(e) => report::kyaml_failure(list, &format!("failed to create setters: {e}")),
    }
}

/// The catalog's `createsetters.CreateSetters`.
#[derive(Debug, Default)]
pub struct CreateSetters {
    /// Scalar setters (name, value), longest value first.
    pub setters: Vec<(String, String)>,
    /// Array setters (name, values).
    pub array_setters: Vec<(String, Vec<String>)>,
    /// One result per comment added.
    pub results: Vec<Item>,
    file_path: String,
}

impl CreateSetters {
    /// `Decode`: setters from a `ConfigMap`'s data.
    pub fn decode(config: Option<&Node>) -> CreateSetters {
        let mut cs = CreateSetters::default();
        for (name, value) in setters::data_map(config) {
            let parsed = krmgraph_yaml::unmarshal(value.as_bytes()).ok().flatten();
            match parsed.as_ref().map(krmgraph_kyaml::rnode::y_node) {
                Some(seq) if seq.kind == Kind::Sequence => {
                    let values = seq.content.iter().map(|n| n.value.to_string()).collect();
                    cs.array_setters.push((name, values));
                }
                _ => cs.setters.push((name, value)),
            }
        }
        cs.setters
            .sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        cs
    }

    /// `Filter`: adds the comments to every resource.
    pub fn filter(&mut self, nodes: &mut [Node]) -> Result<(), String> {
        if self.setters.is_empty() && self.array_setters.is_empty() {
            return Err("input setters list cannot be empty".into());
        }
        for node in nodes {
            self.file_path = report::file_path(node);
            setters::accept(self, node, "")?;
        }
        Ok(())
    }

    /// `getLineComment`: the pattern for `value`, if any setter value occurs
    /// in it.
    fn line_comment(&self, value: &str) -> Option<String> {
        let mut out = value.to_string();
        let mut matched = false;
        for (name, v) in &self.setters {
            if v.is_empty() || !out.contains(v.as_str()) {
                continue;
            }
            matched = true;
            out = out.replace(v.as_str(), &format!("${{{name}}}"));
        }
        matched.then_some(out)
    }

    fn record(&mut self, path: &str, pattern: &str, value: &str) {
        self.results.push(Item {
            message: format!(
                "Added line comment {} for field with value {}",
                quote(pattern),
                quote(value)
            ),
            field_path: path.trim_start_matches('.').to_string(),
            file_path: self.file_path.clone(),
            ..Item::default()
        });
    }
}

impl Visitor for CreateSetters {
    fn visit_mapping(&mut self, node: &mut Node, path: &str) -> Result<(), String> {
        let mut i = 1;
        while i < node.content.len() {
            let value = &node.content[i];
            i += 2;
            if value.kind != Kind::Sequence
                || value.content.is_empty()
                || value.content.iter().any(|n| n.kind != Kind::Scalar)
            {
                continue;
            }
            let mut values: Vec<&str> = value.content.iter().map(|n| n.value.as_str()).collect();
            values.sort_unstable();
            let Some(name) = self
                .array_setters
                .iter()
                .find(|(_, want)| {
                    let mut want: Vec<&str> = want.iter().map(String::as_str).collect();
                    want.sort_unstable();
                    want == values
                })
                .map(|(name, _)| name.clone())
            else {
                continue;
            };
            let shown = format!(
                "[{}]",
                value
                    .content
                    .iter()
                    .map(|n| n.value.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let pattern = format!("${{{name}}}");
            let comment = format!("{SETTER_COMMENT}{pattern}");
            let [key, value] = &mut node.content[i - 3..i - 1] else {
                unreachable!("a mapping pair")
            };
            if value.style.has(Style::FLOW) {
                value.set_line_comment(comment);
            } else {
                key.set_line_comment(comment);
            }
            let field_path = format!("{path}.{}", key.value);
            self.record(&field_path, &pattern, &shown);
        }
        Ok(())
    }

    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), String> {
        let Some(pattern) = self.line_comment(&node.value) else {
            return Ok(());
        };
        node.set_line_comment(format!("{SETTER_COMMENT}{pattern}"));
        let value = node.value.clone();
        self.record(path, &pattern, &value);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::apply_setters::tests::{run_case, Case};

    const CONFIG: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: setters
data:
  env: |-
    - stage
    - dev
  nginx-replicas: "4"
  tag: 1.16.1
  app: nginx
"#;

    #[test]
    fn catalog_example() {
        run_case(Case {
            run: super::run,
            resources: r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
spec:
  replicas: 4
  template:
    spec:
      containers:
      - name: nginx
        image: "nginx:1.16.1"
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments:
- dev
- stage
flow: [dev, stage]
other: [dev]
"#,
            config: CONFIG,
            want_resources: Some(
                r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx # kpt-set: my-${app}
spec:
  replicas: 4 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
      - name: nginx # kpt-set: ${app}
        image: "nginx:1.16.1" # kpt-set: ${app}:${tag}
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments: # kpt-set: ${env}
- dev
- stage
flow: [dev, stage] # kpt-set: ${env}
other: [dev]
"#,
            ),
            want_results: &[
                r#"[info] metadata.name: Added line comment "my-${app}" for field with value "my-nginx" (resources.yaml)"#,
                r#"[info] spec.replicas: Added line comment "${nginx-replicas}" for field with value "4" (resources.yaml)"#,
                r#"[info] spec.template.spec.containers.name: Added line comment "${app}" for field with value "nginx" (resources.yaml)"#,
                r#"[info] spec.template.spec.containers.image: Added line comment "${app}:${tag}" for field with value "nginx:1.16.1" (resources.yaml)"#,
                r#"[info] environments: Added line comment "${env}" for field with value "[dev, stage]" (resources.yaml)"#,
                r#"[info] flow: Added line comment "${env}" for field with value "[dev, stage]" (resources.yaml)"#,
            ],
            want_exit: 0,
            want_stderr: "",
        });
    }

    #[test]
    fn empty_config_fails() {
        run_case(Case {
            run: super::run,
            resources: "apiVersion: v1\nkind: X\nmetadata:\n  name: p\n",
            config: "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\ndata: {}\n",
            want_resources: None,
            want_results: &[
                "[error]: failed to create setters: input setters list cannot be empty",
            ],
            want_exit: 1,
            want_stderr: "[error] : failed to create setters: input setters list cannot be empty\n",
        });
    }
}
