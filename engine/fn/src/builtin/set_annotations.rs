//! `gcr.io/kpt-fn/set-annotations` `unstable` / `latest` (kyaml
//! framework with kustomize's annotations filter working on the nodes, so
//! no JSON round trip).
//!
//! Config: a `ConfigMap` whose `data` are the annotations, or
//! `fn.kpt.dev/v1alpha1 SetAnnotations` (legacy kind `SetAnnotationConfig`)
//! with `annotations` and `additionalAnnotationFields` (kustomize field
//! specs: `group`, `version`, `kind`, `path` with `/` separators, `create`;
//! the old name `fieldSpecs` is accepted, not both).
//!
//! Every resource, local configuration included, gets each annotation in
//! key order at every field spec that selects it: kustomize's
//! `commonAnnotations` specs (`metadata/annotations` everywhere, the pod
//! template's annotations of workloads and CronJobs, all created when
//! missing) followed by the additional ones. A spec's path goes through
//! every item of a list it meets. Results: one info result per file, index
//! and field path, `set annotations: {"k":"v"}` (the JSON of the
//! annotations set there), sorted; `no annotations applied` when none was.

use std::collections::BTreeMap;

use super::apply_setters::report::{self, Item};
use super::framework::{self, Outcome, ResourceList};
use super::set_namespace::scope;
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// The set-annotations images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "set-annotations",
    registry: "gcr.io/kpt-fn/",
    tags: &["unstable", "latest"],
    version: "1",
    config_kinds: &["ConfigMap", "SetAnnotations"],
    run,
    direct: Some(run_direct),
    per_item: None,
}];

/// A kustomize field spec.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSpec {
    /// API group; empty matches any.
    pub group: String,
    /// API version; empty matches any.
    pub version: String,
    /// Kind; empty matches any.
    pub kind: String,
    /// `/`-separated path.
    pub path: String,
    /// Whether missing fields are created.
    pub create: bool,
}

impl FieldSpec {
    fn new(group: &str, version: &str, kind: &str, path: &str) -> FieldSpec {
        FieldSpec {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            path: path.into(),
            create: true,
        }
    }

    /// Whether the spec selects a resource of this type.
    pub fn selects(&self, api_version: &str, kind: &str) -> bool {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        [
            (&self.group, group),
            (&self.version, version),
            (&self.kind, kind),
        ]
        .iter()
        .all(|(want, got)| want.is_empty() || want == got)
    }
}

/// kustomize's `commonAnnotations` field specs.
fn common_annotations() -> Vec<FieldSpec> {
    let template = "spec/template/metadata/annotations";
    vec![
        FieldSpec::new("", "", "", "metadata/annotations"),
        FieldSpec::new("", "v1", "ReplicationController", template),
        FieldSpec::new("", "", "Deployment", template),
        FieldSpec::new("", "", "ReplicaSet", template),
        FieldSpec::new("", "", "DaemonSet", template),
        FieldSpec::new("apps", "", "StatefulSet", template),
        FieldSpec::new("batch", "", "Job", template),
        FieldSpec::new(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/metadata/annotations",
        ),
        FieldSpec::new(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/template/metadata/annotations",
        ),
    ]
}

/// The function's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The annotations.
    pub annotations: BTreeMap<String, String>,
    /// `additionalAnnotationFields` (or `fieldSpecs`).
    pub additional: Vec<FieldSpec>,
}

impl Config {
    /// Reads and validates the config.
    pub fn decode(config: Option<&Node>) -> Result<Config, String> {
        let config = config.map(rnode::y_node);
        let meta = config
            .and_then(|c| rnode::get_meta(c).ok())
            .unwrap_or_default();
        let mut cfg = Config::default();
        let map_field = match (meta.api_version.as_str(), meta.kind.as_str()) {
            (_, "ConfigMap") => "data",
            ("fn.kpt.dev/v1alpha1", "SetAnnotations" | "SetAnnotationConfig") => "annotations",
            _ => return Err("`functionConfig` must be a `ConfigMap` or `SetAnnotations`".into()),
        };
        let config = config.expect("a config of a known kind");
        if let Some(map) = rnode::field_value(config, map_field) {
            for (k, v) in rnode::pairs(rnode::y_node(map)) {
                cfg.annotations
                    .insert(k.value.to_string(), rnode::get_value(Some(v)).to_string());
            }
        }
        if map_field == "annotations" {
            let specs = rnode::field_value(config, "additionalAnnotationFields");
            let legacy = rnode::field_value(config, "fieldSpecs");
            if specs.is_some() && legacy.is_some() {
                return Err(
                    "`fieldSpecs` is the old name of `additionalAnnotationFields`: use only one of them"
                        .into(),
                );
            }
            for spec in specs.or(legacy).map(rnode::y_node).into_iter() {
                for fs in spec.content.iter().filter(|n| n.kind == Kind::Mapping) {
                    let text = |name: &str| scope::string_at(fs, &[name]).unwrap_or("").to_string();
                    cfg.additional.push(FieldSpec {
                        group: text("group"),
                        version: text("version"),
                        kind: text("kind"),
                        path: text("path"),
                        create: text("create") == "true",
                    });
                }
            }
        }
        if cfg.annotations.is_empty() {
            return Err("input annotation list cannot be empty".into());
        }
        Ok(cfg)
    }
}

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, run_list)
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list)
}

fn run_list(mut list: ResourceList) -> Outcome {
    let config = match Config::decode(list.function_config.as_ref()) {
        Ok(c) => c,
        Err(e) => return report::kyaml_failure(list, &e),
    };
    let mut applied: BTreeMap<(String, i64, String), BTreeMap<String, String>> = BTreeMap::new();
    let specs: Vec<FieldSpec> = common_annotations()
        .into_iter()
        .chain(config.additional.iter().cloned())
        .collect();
    for item in &mut list.items {
        let (file, index) = (report::file_path(item), report::file_index(item));
        let meta = rnode::get_meta(item).unwrap_or_default();
        for spec in specs
            .iter()
            .filter(|s| s.selects(&meta.api_version, &meta.kind))
        {
            let parts: Vec<&str> = spec.path.split('/').filter(|p| !p.is_empty()).collect();
            visit(rnode::y_node_mut(item), &parts, spec.create, &mut |map| {
                for (key, value) in &config.annotations {
                    if rnode::set_field(map, key, rnode::new_string(value.as_str())).is_ok() {
                        applied
                            .entry((file.clone(), index, parts.join(".")))
                            .or_default()
                            .insert(key.clone(), value.clone());
                    }
                }
            });
        }
    }
    report::kyaml_success(list, &results(&applied))
}

/// The results for the annotations set, by file, index and field path.
fn results(applied: &BTreeMap<(String, i64, String), BTreeMap<String, String>>) -> Vec<Item> {
    if applied.is_empty() {
        return vec![Item::with_severity("no annotations applied", "info")];
    }
    applied
        .iter()
        .map(|((file, index, field), annotations)| Item {
            field_path: field.clone(),
            file_path: file.clone(),
            file_index: *index,
            ..Item::with_severity(format!("set annotations: {}", go_json(annotations)), "info")
        })
        .collect()
}

/// A string map as Go's `encoding/json` writes it (sorted keys, `<`, `>`
/// and `&` escaped).
fn go_json(map: &BTreeMap<String, String>) -> String {
    serde_json::to_string(map)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// Calls `f` on the mapping at `parts` under `node`, creating missing
/// mappings when `create` is set and going through every item of a list
/// met on the way (kustomize's field spec traversal).
fn visit(node: &mut Node, parts: &[&str], create: bool, f: &mut impl FnMut(&mut Node)) {
    if node.kind == Kind::Sequence {
        for item in &mut node.content {
            visit(item, parts, create, f);
        }
        return;
    }
    if node.kind != Kind::Mapping {
        return;
    }
    let Some((first, rest)) = parts.split_first() else {
        f(node);
        return;
    };
    let missing =
        rnode::field_value(node, first).is_none_or(|v| rnode::is_missing_or_null(Some(v)));
    // A missing (or null) field is created only when the spec says so.
    if missing && (!create || rnode::set_field(node, first, Node::mapping()).is_err()) {
        return;
    }
    if let Some(child) = rnode::field_value_mut(node, first) {
        visit(child, rest, create, f);
    }
}

#[cfg(test)]
mod tests;
