//! `gcr.io/kpt-fn/ensure-name-substring` `unstable` / `latest` (kyaml
//! framework around kustomize's prefix/suffix and name-reference
//! transformers).
//!
//! Config: a `ConfigMap` with exactly one of `data.prepend` and
//! `data.append`, or `fn.kpt.dev/v1alpha1 EnsureNameSubstring` with
//! `substring`, `editMode` (`prepend`, the default, or `append`) and
//! `additionalNameFields` (kustomize field specs).
//!
//! Every resource but local configuration (except the functionConfig
//! itself, when it is one of the resources) and `CustomResourceDefinition`,
//! `Namespace` and `APIService` objects gets the substring added to
//! `metadata.name` (and to the additional name fields that select it)
//! unless the name already contains it. References to renamed resources
//! follow ([`nameref`]), and so do `depends-on` annotations naming them.
//!
//! The original hands every resource through a kustomize resource map,
//! which strips kyaml's path, index and sequence-indent annotations (legacy
//! and internal) and the migration id, but not the resource ids, and sets
//! the other annotations again (`remove_build_annotations`): kpt then
//! restores comments and field order, and writes each resource to its
//! default path (`<namespace>/<kind>_<name>.yaml`, compact sequences), as
//! the catalog examples show. No results on success; failures as kyaml's
//! framework reports them.

pub mod nameref;

use super::apply_setters::report;
use super::framework::{self, Outcome, ResourceList};
use super::set_annotations::FieldSpec;
use super::set_namespace::depends_on::{self, ObjectRef};
use super::set_namespace::scope;
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_kyaml::{kioutil, rnode};
use krmgraph_yaml::{Kind, Node};
use nameref::Rename;

/// The ensure-name-substring images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "ensure-name-substring",
    registry: "gcr.io/kpt-fn/",
    tags: &["unstable", "latest"],
    version: "2",
    config_kinds: &["ConfigMap", "EnsureNameSubstring"],
    run,
    direct: Some(run_direct),
    per_item: None,
}];

/// The kinds that are never renamed.
const SKIPPED_KINDS: &[&str] = &["CustomResourceDefinition", "Namespace", "APIService"];

/// The annotations the kustomize resource map drops.
const DROPPED_ANNOTATIONS: &[&str] = &[
    kioutil::PATH_ANNOTATION,
    kioutil::INDEX_ANNOTATION,
    kioutil::LEGACY_PATH_ANNOTATION,
    kioutil::LEGACY_INDEX_ANNOTATION,
    kioutil::SEQ_INDENT_ANNOTATION,
    kioutil::INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION,
];

/// Where the substring goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EditMode {
    /// Before the name.
    #[default]
    Prepend,
    /// After the name.
    Append,
}

/// The function's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The substring every name must contain.
    pub substring: String,
    /// Where it goes when missing.
    pub mode: EditMode,
    /// `additionalNameFields`.
    pub additional: Vec<FieldSpec>,
}

impl Config {
    /// Reads and validates the config.
    pub fn decode(config: Option<&Node>) -> Result<Config, String> {
        let config = config.map(rnode::y_node);
        let meta = config
            .and_then(|c| rnode::get_meta(c).ok())
            .unwrap_or_default();
        let text = |path: &[&str]| {
            config
                .and_then(|c| scope::string_at(c, path))
                .map(str::to_string)
        };
        let cfg = match (meta.api_version.as_str(), meta.kind.as_str()) {
            (_, "ConfigMap") => match (text(&["data", "prepend"]), text(&["data", "append"])) {
                (Some(p), None) => Config {
                    substring: p,
                    mode: EditMode::Prepend,
                    ..Config::default()
                },
                (None, Some(a)) => Config {
                    substring: a,
                    mode: EditMode::Append,
                    ..Config::default()
                },
                _ => {
                    return Err(
                        "the ConfigMap must contain exactly one of `prepend` and `append`".into(),
                    )
                }
            },
            ("fn.kpt.dev/v1alpha1", "EnsureNameSubstring") => {
                let mode = match text(&["editMode"]).unwrap_or_default().as_str() {
                    "" | "prepend" => EditMode::Prepend,
                    "append" => EditMode::Append,
                    other => {
                        return Err(format!(
                            "unknown editMode {other:?}: it must be `prepend` or `append`"
                        ))
                    }
                };
                Config {
                    substring: text(&["substring"]).unwrap_or_default(),
                    mode,
                    additional: additional_fields(config.expect("a typed config")),
                }
            }
            _ => {
                return Err(
                    "`functionConfig` must be a `ConfigMap` or `EnsureNameSubstring`".into(),
                )
            }
        };
        if cfg.substring.is_empty() {
            return Err("the substring must not be empty".into());
        }
        Ok(cfg)
    }

    /// `name` with the substring, or `None` when it already has it.
    pub fn edit(&self, name: &str) -> Option<String> {
        if name.contains(&self.substring) {
            return None;
        }
        Some(match self.mode {
            EditMode::Prepend => format!("{}{name}", self.substring),
            EditMode::Append => format!("{name}{}", self.substring),
        })
    }
}

fn additional_fields(config: &Node) -> Vec<FieldSpec> {
    let Some(seq) = rnode::field_value(config, "additionalNameFields").map(rnode::y_node) else {
        return Vec::new();
    };
    seq.content
        .iter()
        .filter(|n| n.kind == Kind::Mapping)
        .map(|fs| {
            let text = |name: &str| scope::string_at(fs, &[name]).unwrap_or("").to_string();
            FieldSpec {
                group: text("group"),
                version: text("version"),
                kind: text("kind"),
                path: text("path"),
                create: text("create") == "true",
            }
        })
        .collect()
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
    let own = list.function_config.as_ref().map(ObjectRef::of);
    transform(&mut list.items, &config, own.as_ref());
    Outcome::success(list)
}

/// Applies the function to `items`; `own` names the functionConfig: when the package
/// holds it (`fn eval --fn-config` on a file of the package), it is renamed
/// although it is local configuration, as the catalog's function was seen
/// doing (issue 34); other local configuration is left alone.
fn transform(items: &mut [Node], config: &Config, own: Option<&ObjectRef>) {
    let renamed =
        |i: &Node| !scope::is_local_config(i) || own.is_some_and(|o| ObjectRef::of(i) == *o);
    let mut renames = Vec::new();
    let mut moved: Vec<(ObjectRef, String)> = Vec::new();
    for item in items.iter_mut().filter(|i| renamed(i)) {
        let meta = rnode::get_meta(item).unwrap_or_default();
        if SKIPPED_KINDS.contains(&meta.kind.as_str()) {
            continue;
        }
        let before = ObjectRef::of(item);
        if let Some(new) = config.edit(&meta.name) {
            scope::set_string_at(item, &["metadata", "name"], &new, false);
            let namespace = if !meta.namespace.is_empty() {
                meta.namespace.clone()
            } else if scope::is_cluster_scoped_kind(&meta.api_version, &meta.kind) {
                String::new()
            } else {
                "default".to_string()
            };
            renames.push(Rename {
                kind: meta.kind.clone(),
                namespace,
                old: meta.name.clone(),
                new: new.clone(),
            });
            moved.push((before, new));
        }
        for spec in &config.additional {
            if spec.selects(&meta.api_version, &meta.kind) {
                let parts: Vec<&str> = spec.path.split('/').filter(|p| !p.is_empty()).collect();
                edit_at(rnode::y_node_mut(item), &parts, config);
            }
        }
    }
    for item in items.iter_mut().filter(|i| renamed(i)) {
        nameref::update(item, &renames);
        depends_on::rewrite(item, |r| {
            let (_, new) = moved.iter().find(|(old, _)| r.names(old))?;
            Some(ObjectRef {
                name: new.clone(),
                ..r.clone()
            })
        });
    }
    for item in items.iter_mut() {
        remove_build_annotations(item);
    }
}

/// kustomize's `RemoveBuildAnnotations`: the annotations without the
/// dropped ones, set again with kyaml's `SetAnnotations`, which clears the
/// map and appends a new one in key order with plain string values (kpt
/// puts the keys back in their order afterwards; the values keep the new
/// style).
fn remove_build_annotations(item: &mut Node) {
    let mut annotations = rnode::get_annotations(item);
    if annotations.is_empty() {
        return;
    }
    for key in DROPPED_ANNOTATIONS {
        annotations.remove(*key);
    }
    let Ok(Some(meta)) = rnode::lookup_mut(item, &["metadata"]) else {
        return;
    };
    if rnode::clear_field(meta, "annotations").is_err() || annotations.is_empty() {
        return;
    }
    let mut map = Node::mapping();
    for (key, value) in &annotations {
        let _ = rnode::set_field(&mut map, key, rnode::new_string(value.as_str()));
    }
    let _ = rnode::set_field(meta, "annotations", map);
}

/// Adds the substring to the scalars at `parts` (through lists).
fn edit_at(node: &mut Node, parts: &[&str], config: &Config) {
    if node.kind == Kind::Sequence {
        for item in &mut node.content {
            edit_at(item, parts, config);
        }
        return;
    }
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    if node.kind != Kind::Mapping {
        return;
    }
    if rest.is_empty() {
        let new = scope::string_at(node, &[first]).and_then(|v| config.edit(v));
        if let Some(new) = new {
            scope::set_string_at(node, &[first], &new, false);
        }
        return;
    }
    if let Some(child) = rnode::field_value_mut(node, first) {
        edit_at(child, rest, config);
    }
}

#[cfg(test)]
mod tests;
