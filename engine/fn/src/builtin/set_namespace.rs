//! `gcr.io/kpt-fn/set-namespace` after the kustomize era: v0.2.0 (kyaml
//! based, still kustomize's namespace rules) and v0.3+ / `unstable` /
//! `latest` (kpt functions SDK, `transformer/namespace.go`), plus the demo
//! build `gcr.io/kpt-fn-demo/set-namespace:v0.5.0`.
//!
//! Config (both): `ConfigMap` `data.namespace` (SDK: and
//! `data.namespaceMatcher`; a `ConfigMap` named `kptfile.kpt.dev`, kpt's
//! package context, gives the namespace in `data.name`), or
//! `fn.kpt.dev/v1alpha1 SetNamespace` `{namespace, namespaceMatcher}`.
//!
//! SDK versions skip local configuration and visit, per resource:
//! `Namespace` `metadata.name`; a CRD's
//! `spec.conversion.webhook.clientConfig.service.namespace` and an
//! `APIService`'s `spec.service.namespace`, when set; `subjects[].namespace`
//! of (Cluster)RoleBindings where present; `metadata.namespace` (created)
//! of namespace-scoped resources ([`scope::is_namespace_scoped`]). An empty
//! value counts as `default`. With `namespaceMatcher` only values equal to
//! it change, otherwise all do. `depends-on` references to resources of the
//! package follow. Result (info): `namespace [old] updated to "new", N
//! value(s) changed`, or, when nothing changed, ``all `depends-on`
//! annotations are up-to-date. no `namespace` changed``. Not reproduced:
//! the original's refusal of packages whose upstream-origin namespaces
//! differ (the catalog examples never hit it).
//!
//! v0.2.0 visits every resource (local configuration and unknown types
//! included, as the e2e case `all-resource-deletion` shows): the namespace
//! is set (created) on every resource that is not of a cluster-scoped
//! built-in type, on `Namespace` names, on `APIService`
//! `spec.service.namespace` (created), and on (Cluster)RoleBinding subjects
//! named `default`; `depends-on` references follow. It returns no results
//! and fails as kyaml's framework does.

pub mod depends_on;
pub mod scope;

use std::collections::BTreeSet;

use super::apply_setters::report::{self, Item};
use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use depends_on::ObjectRef;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// The set-namespace images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "set-namespace",
        registry: "gcr.io/kpt-fn/",
        tags: &["v0.2", "v0.2.0"],
        version: "1",
        config_kinds: &["ConfigMap", "SetNamespace"],
        run: run_v0_2,
        direct: Some(run_direct_v0_2),
        per_item: None,
    },
    Builtin {
        name: "set-namespace",
        registry: "gcr.io/kpt-fn/",
        tags: &[
            "unstable", "latest", "v0.3", "v0.3.0", "v0.3.1", "v0.3.2", "v0.3.3", "v0.3.4", "v0.4",
            "v0.4.0", "v0.4.1",
        ],
        version: "1",
        config_kinds: &["ConfigMap", "SetNamespace"],
        run,
        direct: Some(run_direct),
        per_item: None,
    },
    Builtin {
        name: "set-namespace",
        registry: "gcr.io/kpt-fn-demo/",
        tags: &["v0.5.0"],
        version: "1",
        config_kinds: &["ConfigMap", "SetNamespace"],
        run,
        direct: Some(run_direct),
        per_item: None,
    },
];

/// The name of kpt's package-context ConfigMap.
const PACKAGE_CONTEXT_NAME: &str = "kptfile.kpt.dev";

/// The function's configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Config {
    /// The new namespace.
    pub namespace: String,
    /// Only values equal to this change; empty for all.
    pub matcher: String,
}

impl Config {
    /// Reads the SDK versions' config.
    pub fn decode(config: Option<&Node>) -> Result<Config, String> {
        let config = config.map(rnode::y_node).filter(|c| !c.content.is_empty());
        let Some(config) = config else {
            return Err(
                "FunctionConfig is missing. Expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"
                    .into(),
            );
        };
        let meta = rnode::get_meta(config).unwrap_or_default();
        let text = |path: &[&str]| scope::string_at(config, path).unwrap_or("").to_string();
        let cfg = match (meta.api_version.as_str(), meta.kind.as_str()) {
            ("v1", "ConfigMap") if meta.name == PACKAGE_CONTEXT_NAME => Config {
                namespace: text(&["data", "name"]),
                matcher: String::new(),
            },
            ("v1", "ConfigMap") => Config {
                namespace: text(&["data", "namespace"]),
                matcher: text(&["data", "namespaceMatcher"]),
            },
            ("fn.kpt.dev/v1alpha1", "SetNamespace") => Config {
                namespace: text(&["namespace"]),
                matcher: text(&["namespaceMatcher"]),
            },
            (api_version, kind) => {
                return Err(format!(
                    "unknown functionConfig Kind={kind} ApiVersion={api_version}, expect `ConfigMap.v1` or `SetNamespace.v1alpha1.fn.kpt.dev`"
                ))
            }
        };
        if cfg.namespace.is_empty() {
            return Err("`namespace` should not be empty".into());
        }
        Ok(cfg)
    }
}

/// Runs the SDK versions.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, report::sdk_error, run_list)
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list)
}

fn run_list(mut list: ResourceList) -> Outcome {
    let config = match Config::decode(list.function_config.as_ref()) {
        Ok(c) => c,
        Err(e) => return report::sdk_output(list, &[Item::with_severity(e, "error")], true),
    };
    let message = transform(&mut list.items, &config);
    report::sdk_output(list, &[Item::with_severity(message, "info")], false)
}

/// Applies the SDK versions to `items`; returns the result message.
pub fn transform(items: &mut [Node], config: &Config) -> String {
    let mut targets: Vec<&mut Node> = items
        .iter_mut()
        .filter(|item| !scope::is_local_config(item))
        .collect();
    let before: Vec<ObjectRef> = targets.iter().map(|t| ObjectRef::of(t)).collect();
    let mut old = BTreeSet::new();
    let mut count = 0;
    for item in targets.iter_mut() {
        visit_sdk(item, &mut |value: &str| {
            let shown = if value.is_empty() { "default" } else { value };
            if (!config.matcher.is_empty() && shown != config.matcher) || value == config.namespace
            {
                return None;
            }
            old.insert(shown.to_string());
            count += 1;
            Some(config.namespace.clone())
        });
    }
    let moved = |r: &ObjectRef| {
        let ns = r.namespace.as_deref()?;
        let target = before.iter().any(|b| r.names(b));
        (target && old.contains(ns)).then(|| ObjectRef {
            namespace: Some(config.namespace.clone()),
            ..r.clone()
        })
    };
    let refs: usize = targets
        .iter_mut()
        .map(|item| depends_on::rewrite(item, moved))
        .sum();
    if count == 0 && refs == 0 {
        return "all `depends-on` annotations are up-to-date. no `namespace` changed".into();
    }
    let old: Vec<String> = old.into_iter().collect();
    format!(
        "namespace [{}] updated to {:?}, {count} value(s) changed",
        old.join(" "),
        config.namespace
    )
}

/// Calls `visit` with each namespace field of `item` the SDK versions
/// consider; sets the field to what it returns, if anything.
fn visit_sdk(item: &mut Node, visit: &mut impl FnMut(&str) -> Option<String>) {
    let meta = rnode::get_meta(item).unwrap_or_default();
    match (meta.api_version.as_str(), meta.kind.as_str()) {
        ("v1", "Namespace") => visit_field(item, &["metadata", "name"], true, visit),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => {
            let path = [
                "spec",
                "conversion",
                "webhook",
                "clientConfig",
                "service",
                "namespace",
            ];
            visit_field(item, &path, false, visit);
        }
        ("apiregistration.k8s.io/v1", "APIService") => {
            visit_field(item, &["spec", "service", "namespace"], false, visit)
        }
        (_, "RoleBinding" | "ClusterRoleBinding") => {
            for subject in subjects(item) {
                visit_field(subject, &["namespace"], false, visit);
            }
            if scope::is_namespace_scoped(item) {
                visit_field(item, &["metadata", "namespace"], true, visit);
            }
        }
        _ => {
            if scope::is_namespace_scoped(item) {
                visit_field(item, &["metadata", "namespace"], true, visit);
            }
        }
    }
}

/// One field: its value (empty when absent; skipped when absent and not
/// `always`) goes to `visit`, and its answer is written back.
fn visit_field(
    node: &mut Node,
    path: &[&str],
    always: bool,
    visit: &mut impl FnMut(&str) -> Option<String>,
) {
    let value = scope::string_at(node, path).map(str::to_string);
    if value.as_deref().unwrap_or("").is_empty() && !always {
        return;
    }
    if let Some(new) = visit(value.as_deref().unwrap_or("")) {
        scope::set_string_at(node, path, &new, true);
    }
}

/// The mapping items of `subjects`.
fn subjects(item: &mut Node) -> impl Iterator<Item = &mut Node> {
    let seq = match rnode::lookup_mut(item, &["subjects"]) {
        Ok(Some(s)) if s.kind == Kind::Sequence => Some(s),
        _ => None,
    };
    seq.into_iter()
        .flat_map(|s| s.content.iter_mut())
        .filter(|s| s.kind == Kind::Mapping)
}

/// Runs v0.2.0.
pub fn run_v0_2(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, run_list_v0_2)
}

/// [`run_v0_2`] on nodes ([`super::direct`]).
pub fn run_direct_v0_2(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list_v0_2)
}

fn run_list_v0_2(mut list: ResourceList) -> Outcome {
    let namespace = match decode_v0_2(list.function_config.as_ref()) {
        Ok(ns) => ns,
        Err(e) => return report::kyaml_failure(list, &e),
    };
    transform_v0_2(&mut list.items, &namespace);
    Outcome::success(list)
}

/// Reads v0.2.0's config: the namespace.
fn decode_v0_2(config: Option<&Node>) -> Result<String, String> {
    let config = config.map(rnode::y_node);
    let meta = config
        .and_then(|c| rnode::get_meta(c).ok())
        .unwrap_or_default();
    let path: &[&str] = match (meta.api_version.as_str(), meta.kind.as_str()) {
        (_, "ConfigMap") => &["data", "namespace"],
        ("fn.kpt.dev/v1alpha1", "SetNamespace" | "SetNamespaceConfig") => &["namespace"],
        _ => {
            return Err(
                "failed to configure function: function config must be a ConfigMap or SetNamespaceConfig"
                    .into(),
            )
        }
    };
    let namespace = config.and_then(|c| scope::string_at(c, path)).unwrap_or("");
    if namespace.is_empty() {
        return Err("input namespace cannot be empty".into());
    }
    Ok(namespace.to_string())
}

/// Applies v0.2.0 to `items`.
pub fn transform_v0_2(items: &mut [Node], namespace: &str) {
    let before: Vec<ObjectRef> = items.iter().map(ObjectRef::of).collect();
    for item in items.iter_mut() {
        let meta = rnode::get_meta(item).unwrap_or_default();
        let group = scope::group(&meta.api_version);
        if !scope::is_cluster_scoped_kind(&meta.api_version, &meta.kind) {
            scope::set_string_at(item, &["metadata", "namespace"], namespace, true);
        }
        if meta.kind == "RoleBinding" || meta.kind == "ClusterRoleBinding" {
            for subject in subjects(item) {
                if scope::string_at(subject, &["name"]) == Some("default") {
                    scope::set_string_at(subject, &["namespace"], namespace, true);
                }
            }
        }
        if meta.kind == "Namespace" {
            scope::set_string_at(item, &["metadata", "name"], namespace, true);
        }
        if group == "apiregistration.k8s.io" && meta.kind == "APIService" {
            scope::set_string_at(item, &["spec", "service", "namespace"], namespace, true);
        }
    }
    for item in items.iter_mut() {
        depends_on::rewrite(item, |r| {
            let in_package = before.iter().any(|b| r.names(b));
            (in_package && r.namespace.as_deref().is_some_and(|ns| ns != namespace)).then(|| {
                ObjectRef {
                    namespace: Some(namespace.to_string()),
                    ..r.clone()
                }
            })
        });
    }
}

#[cfg(test)]
mod tests;
