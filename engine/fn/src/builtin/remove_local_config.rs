//! `gcr.io/kpt-fn/remove-local-config-resources` (kpt functions SDK):
//! drops every resource whose `config.kubernetes.io/local-config`
//! annotation is set to anything but `false` (the SDK's `IsLocalConfig`).
//!
//! Results (info): `Number of resources pruned: N`, then one
//! `Resource name: [a b]` per file that lost resources, naming them, with
//! the file's path.

use super::apply_setters::report::{self, Item};
use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::Node;

/// The remove-local-config-resources images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "remove-local-config-resources",
    registry: "gcr.io/kpt-fn/",
    tags: &["unstable", "latest", "v0.1", "v0.1.0"],
    version: "1",
    config_kinds: &[],
    run,
    direct: Some(run_direct),
    per_item: None,
}];

/// The annotation that marks local configuration.
pub const LOCAL_CONFIG_ANNOTATION: &str = "config.kubernetes.io/local-config";

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, report::sdk_error, run_list)
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list)
}

fn run_list(mut list: ResourceList) -> Outcome {
    let mut removed: Vec<(String, Vec<String>)> = Vec::new();
    let mut count = 0;
    list.items.retain(|item| {
        let annotations = rnode::get_annotations(item);
        let local = annotations
            .get(LOCAL_CONFIG_ANNOTATION)
            .is_some_and(|v| !v.is_empty() && v != "false");
        if local {
            count += 1;
            let path = report::file_path(item);
            let name = rnode::get_meta(item).unwrap_or_default().name;
            match removed.iter_mut().find(|(p, _)| *p == path) {
                Some((_, names)) => names.push(name),
                None => removed.push((path, vec![name])),
            }
        }
        !local
    });
    let mut results = vec![Item::with_severity(
        format!("Number of resources pruned: {count}"),
        "info",
    )];
    for (path, names) in removed {
        results.push(Item {
            file_path: path,
            ..Item::with_severity(format!("Resource name: [{}]", names.join(" ")), "info")
        });
    }
    report::sdk_output(list, &results, false)
}

#[cfg(test)]
mod tests {
    use super::super::apply_setters::tests::{run_case, Case};

    const RESOURCES: &str = r#"apiVersion: v1
kind: ConfigMap
metadata:
  name: demo-applied
data:
  foo: bar
---
apiVersion: blueprints.cloud.google.com/v1alpha3
kind: ResourceHierarchy
metadata:
  name: sample-hierarchy
  annotations:
    config.kubernetes.io/local-config: "true"
spec:
  parentRef:
    external: "123456789012"
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: not-local
  annotations:
    config.kubernetes.io/local-config: "false"
"#;

    #[test]
    fn catalog_example() {
        let (kept, _) = RESOURCES.split_once("---\napiVersion: blueprints").unwrap();
        let last = RESOURCES.rsplit_once("---\n").unwrap().1;
        run_case(Case {
            run: super::run,
            resources: RESOURCES,
            config: "",
            want_resources: Some(&format!("{kept}---\n{last}")),
            want_results: &[
                "[info]: Number of resources pruned: 1",
                "[info]: Resource name: [sample-hierarchy] (resources.yaml)",
            ],
            want_exit: 0,
            want_stderr: "",
        });
    }
}
