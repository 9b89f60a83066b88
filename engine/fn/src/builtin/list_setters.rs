//! `gcr.io/kpt-fn/list-setters`: reports the setters the resources use,
//! one result per setter name, sorted by name:
//! `Name: tag, Value: 1.16.2, Type: str, Count: 1` (kyaml framework, no
//! severity). The value is recovered from the first field that uses the
//! setter; a sequence gives its items sorted (`[a, b]`) and type `array`; a
//! scalar the type of its tag (`str`, `int`, `bool`, ...). Resources are
//! not changed.

use super::apply_setters::report::{self, Item};
use super::apply_setters::setters::{self, extract_setter_pattern, Visitor};
use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_yaml::{node::short_tag, Kind, Node, Style};

/// The list-setters images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "list-setters",
    registry: "gcr.io/kpt-fn/",
    tags: &["v0.1", "v0.1.0", "unstable", "latest"],
    version: "1",
    config_kinds: &[],
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
    let mut ls = ListSetters::default();
    for node in &mut list.items {
        if let Err(e) = setters::accept(&mut ls, node, "") {
            return report::kyaml_failure(list, &e);
        }
    }
    let mut found = ls.setters;
    found.sort_by(|a, b| a.name.cmp(&b.name));
    let items: Vec<Item> = found
        .iter()
        .map(|s| {
            Item::message(format!(
                "Name: {}, Value: {}, Type: {}, Count: {}",
                s.name, s.value, s.kind, s.count
            ))
        })
        .collect();
    report::kyaml_success(list, &items)
}

/// One setter found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Setter {
    /// The setter name.
    pub name: String,
    /// Its current value.
    pub value: String,
    /// `array`, or the scalar's type.
    pub kind: String,
    /// How many fields use it.
    pub count: usize,
}

/// The walk state.
#[derive(Debug, Default)]
pub struct ListSetters {
    /// Setters in the order first seen.
    pub setters: Vec<Setter>,
}

impl ListSetters {
    fn add(&mut self, name: &str, value: String, kind: String) {
        match self.setters.iter_mut().find(|s| s.name == name) {
            Some(s) => s.count += 1,
            None => self.setters.push(Setter {
                name: name.to_string(),
                value,
                kind,
                count: 1,
            }),
        }
    }
}

impl Visitor for ListSetters {
    fn visit_mapping(&mut self, node: &mut Node, _path: &str) -> Result<(), String> {
        for pair in node.content.chunks(2) {
            let [key, value] = pair else { continue };
            if value.kind != Kind::Sequence {
                continue;
            }
            let comment = if value.style.has(Style::FLOW) {
                &value.line_comment()
            } else {
                &key.line_comment()
            };
            let Some(pattern) = extract_setter_pattern(comment) else {
                continue;
            };
            let names = setters::unresolved_setters(pattern);
            if names.len() != 1 || names[0] != pattern {
                continue;
            }
            // The catalog example shows `- stage\n- dev` as `[dev, stage]`.
            let mut values: Vec<&str> = value.content.iter().map(|n| n.value.as_str()).collect();
            values.sort_unstable();
            let value = format!("[{}]", values.join(", "));
            self.add(setters::clean(pattern), value, "array".into());
        }
        Ok(())
    }

    fn visit_scalar(&mut self, node: &mut Node, _path: &str) -> Result<(), String> {
        let Some(pattern) = extract_setter_pattern(node.line_comment()) else {
            return Ok(());
        };
        let kind = short_tag(&node.tag).trim_start_matches('!').to_string();
        for (name, value) in setters::current_setter_values(pattern, &node.value) {
            self.add(&name, value, kind.clone());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::apply_setters::tests::{run_case, Case};

    #[test]
    fn catalog_example() {
        run_case(Case {
            run: super::run,
            resources: r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: my-nginx
spec:
  replicas: 3 # kpt-set: ${nginx-replicas}
  template:
    spec:
      containers:
      - name: nginx
        image: "nginx:1.16.2" # kpt-set: nginx:${tag}
---
apiVersion: v1
kind: MyKind
metadata:
  name: foo
environments: # kpt-set: ${env}
- stage
- dev
---
apiVersion: v1
kind: MyKind
metadata:
  name: bar
env: [a] # kpt-set: ${env}
"#,
            config: "",
            want_resources: None,
            want_results: &[
                "[info]: Name: env, Value: [dev, stage], Type: array, Count: 2",
                "[info]: Name: nginx-replicas, Value: 3, Type: int, Count: 1",
                "[info]: Name: tag, Value: 1.16.2, Type: str, Count: 1",
            ],
            want_exit: 0,
            want_stderr: "",
        });
    }
}
