//! `gcr.io/kpt-fn/set-labels` v0.2+ / `unstable` / `latest` (kpt functions
//! SDK, `setlabels/transformer.go`), and the demo build
//! `gcr.io/kpt-fn-demo/set-labels:v0.2.0`.
//!
//! Config: a `ConfigMap` whose `data` are the labels, or
//! `fn.kpt.dev/v1alpha1 SetLabels` with `labels`.
//!
//! Local configuration is skipped. On every other resource each label, in
//! key order, is set where it is missing (if the field may be created) or
//! different: `metadata.labels` (created) everywhere; `spec.selector`
//! (created) of core `Service` and `ReplicationController`;
//! `spec.selector.matchLabels` of `Deployment`, `ReplicaSet`, `DaemonSet`
//! (any group) and apps `StatefulSet` (created), of batch `Job` and policy
//! `PodDisruptionBudget` (existing labels only); the pod template's
//! `spec.template.metadata.labels` (created, but only when `spec.template`
//! exists) and its `topologySpreadConstraints[].labelSelector.matchLabels`
//! (existing labels only); CronJob `spec.jobTemplate.metadata.labels`
//! (created), `spec.jobTemplate.spec.selector.matchLabels` (existing) and
//! the job's pod template; StatefulSet
//! `spec.volumeClaimTemplates[].metadata.labels` (created); NetworkPolicy
//! `spec.podSelector.matchLabels` and `spec.ingress[].from[]` /
//! `spec.egress[].to[]` `podSelector.matchLabels` (existing). Affinity
//! selectors are never updated (the original reads the wrong map).
//!
//! Results: info `set N labels in total` (N counts every label written),
//! info `no input resources` when nothing but local configuration came in,
//! warning ``no `labels` arguments are given in FunctionConfig`` for an
//! empty `labels`.

use std::collections::BTreeMap;

use super::apply_setters::report::{self, Item};
use super::framework::{self, Outcome, ResourceList};
use super::set_namespace::scope;
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// The set-labels images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "set-labels",
        registry: "gcr.io/kpt-fn/",
        tags: &["unstable", "latest"],
        version: "1",
        config_kinds: &["ConfigMap", "SetLabels"],
        run,
        direct: Some(run_direct),
        per_item: None,
    },
    Builtin {
        name: "set-labels",
        registry: "gcr.io/kpt-fn/",
        tags: &["v0.2", "v0.2.0", "v0.2.1", "v0.2.2"],
        version: "1",
        config_kinds: &["ConfigMap", "SetLabels"],
        run: run_v0_2,
        direct: Some(run_direct_v0_2),
        per_item: None,
    },
    Builtin {
        name: "set-labels",
        registry: "gcr.io/kpt-fn-demo/",
        tags: &["v0.2.0"],
        version: "1",
        config_kinds: &["ConfigMap", "SetLabels"],
        run: run_v0_2,
        direct: Some(run_direct_v0_2),
        per_item: None,
    },
];

/// Whether pod template labels are created on a workload without
/// `spec.template`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Templates {
    /// Only an existing template is labelled (`unstable`, `latest`).
    Existing,
    /// The template's labels are created (v0.2, as the e2e case
    /// `basicpipeline-wasm` shows for the demo build).
    Create,
}

/// Reads the labels from the config.
pub fn decode(config: Option<&Node>) -> Result<BTreeMap<String, String>, String> {
    let config = config.map(rnode::y_node).filter(|c| !c.content.is_empty());
    let Some(config) = config else {
        return Err(
            "FunctionConfig is missing. Expect `ConfigMap.v1` or `SetLabels.v1alpha1.fn.kpt.dev`"
                .into(),
        );
    };
    let meta = rnode::get_meta(config).unwrap_or_default();
    let field = match (meta.api_version.as_str(), meta.kind.as_str()) {
        ("v1", "ConfigMap") => "data",
        ("fn.kpt.dev/v1alpha1", "SetLabels") => "labels",
        (api_version, kind) => {
            return Err(format!(
                "unknown functionConfig Kind={kind} ApiVersion={api_version}, expect `ConfigMap.v1` or `SetLabels.v1alpha1.fn.kpt.dev`"
            ))
        }
    };
    let map = rnode::field_value(config, field).map(rnode::y_node);
    if field == "data" && map.is_none_or(|m| m.content.is_empty()) {
        return Err("`data` of the ConfigMap is empty: no labels to set".into());
    }
    let mut labels = BTreeMap::new();
    for (k, v) in map.into_iter().flat_map(rnode::pairs) {
        labels.insert(k.value.to_string(), rnode::get_value(Some(v)).to_string());
    }
    Ok(labels)
}

/// Runs `unstable` and `latest`.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, report::sdk_error, |list| {
        run_list(list, Templates::Existing)
    })
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, |list| run_list(list, Templates::Existing))
}

/// Runs v0.2.
pub fn run_v0_2(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, report::sdk_error, |list| {
        run_list(list, Templates::Create)
    })
}

/// [`run_v0_2`] on nodes ([`super::direct`]).
pub fn run_direct_v0_2(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, |list| run_list(list, Templates::Create))
}

fn run_list(mut list: ResourceList, templates: Templates) -> Outcome {
    let labels = match decode(list.function_config.as_ref()) {
        Ok(l) => l,
        Err(e) => return report::sdk_output(list, &[Item::with_severity(e, "error")], true),
    };
    if labels.is_empty() {
        let warning = "no `labels` arguments are given in FunctionConfig";
        return report::sdk_output(list, &[Item::with_severity(warning, "warning")], false);
    }
    let mut targets = list
        .items
        .iter_mut()
        .filter(|item| !scope::is_local_config(item))
        .peekable();
    if targets.peek().is_none() {
        return report::sdk_output(
            list,
            &[Item::with_severity("no input resources", "info")],
            false,
        );
    }
    let count: usize = targets
        .map(|item| set_labels(item, &labels, templates))
        .sum();
    let summary = format!("set {count} labels in total");
    report::sdk_output(list, &[Item::with_severity(summary, "info")], false)
}

/// Whether a label field may be created when missing.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Create {
    Yes,
    No,
}

/// Sets `labels` on one resource; returns how many it wrote.
pub fn set_labels(
    item: &mut Node,
    labels: &BTreeMap<String, String>,
    templates: Templates,
) -> usize {
    let meta = rnode::get_meta(item).unwrap_or_default();
    let group = scope::group(&meta.api_version);
    let mut count = set_map(item, &["metadata", "labels"], labels, Create::Yes);
    let selector = ["spec", "selector"];
    let match_labels = ["spec", "selector", "matchLabels"];
    match (group, meta.kind.as_str()) {
        ("", "Service") => count += set_map(item, &selector, labels, Create::Yes),
        ("", "ReplicationController") => {
            count += set_map(item, &selector, labels, Create::Yes);
            count += pod_template(item, &["spec", "template"], labels, templates);
        }
        (_, "Deployment" | "ReplicaSet" | "DaemonSet") | ("apps", "StatefulSet") => {
            count += set_map(item, &match_labels, labels, Create::Yes);
            count += pod_template(item, &["spec", "template"], labels, templates);
            if meta.kind == "StatefulSet" {
                count += each(item, &["spec", "volumeClaimTemplates"], |claim| {
                    set_map(claim, &["metadata", "labels"], labels, Create::Yes)
                });
            }
        }
        ("batch", "Job") => {
            count += set_map(item, &match_labels, labels, Create::No);
            count += pod_template(item, &["spec", "template"], labels, templates);
        }
        ("policy", "PodDisruptionBudget") => {
            count += set_map(item, &match_labels, labels, Create::No)
        }
        ("batch", "CronJob") => {
            let job = ["spec", "jobTemplate"];
            count += set_map(
                item,
                &["spec", "jobTemplate", "metadata", "labels"],
                labels,
                Create::Yes,
            );
            let job_selector = ["spec", "jobTemplate", "spec", "selector", "matchLabels"];
            count += set_map(item, &job_selector, labels, Create::No);
            count += pod_template(
                item,
                &[&job[..], &["spec", "template"]].concat(),
                labels,
                templates,
            );
        }
        ("networking.k8s.io", "NetworkPolicy") => {
            let pod_selector = ["podSelector", "matchLabels"];
            count += set_map(
                item,
                &["spec", "podSelector", "matchLabels"],
                labels,
                Create::No,
            );
            for (rules, peers) in [("ingress", "from"), ("egress", "to")] {
                count += each(item, &["spec", rules], |rule| {
                    each(rule, &[peers], |peer| {
                        set_map(peer, &pod_selector, labels, Create::No)
                    })
                });
            }
        }
        _ => {}
    }
    count
}

/// The pod template at `path` (if it exists, or always with
/// [`Templates::Create`]): its labels (created) and its topology spread
/// constraints' selectors (existing labels only).
fn pod_template(
    item: &mut Node,
    path: &[&str],
    labels: &BTreeMap<String, String>,
    templates: Templates,
) -> usize {
    let mut count = 0;
    if templates == Templates::Create {
        let labels_path = [path, &["metadata", "labels"]].concat();
        count += set_map(item, &labels_path, labels, Create::Yes);
    }
    let template = match rnode::lookup_mut(item, path) {
        Ok(Some(t)) if t.kind == Kind::Mapping => t,
        _ => return count,
    };
    count += set_map(template, &["metadata", "labels"], labels, Create::Yes);
    count += each(template, &["spec", "topologySpreadConstraints"], |c| {
        set_map(c, &["labelSelector", "matchLabels"], labels, Create::No)
    });
    count
}

/// Calls `f` on every mapping item of the sequence at `path`; sums.
fn each(node: &mut Node, path: &[&str], mut f: impl FnMut(&mut Node) -> usize) -> usize {
    match rnode::lookup_mut(node, path) {
        Ok(Some(seq)) if seq.kind == Kind::Sequence => seq
            .content
            .iter_mut()
            .filter(|n| n.kind == Kind::Mapping)
            .map(&mut f)
            .sum(),
        _ => 0,
    }
}

/// Sets each label in the map at `path`: a different value is replaced, a
/// missing one added when `create` allows (creating the map too). Returns
/// how many it wrote.
fn set_map(
    node: &mut Node,
    path: &[&str],
    labels: &BTreeMap<String, String>,
    create: Create,
) -> usize {
    let mut count = 0;
    for (key, value) in labels {
        let current = rnode::lookup(node, &[path, &[key.as_str()]].concat())
            .ok()
            .flatten()
            .map(|n| n.value.clone());
        let write = match current {
            Some(current) => current != *value,
            None => create == Create::Yes,
        };
        if write {
            let full: Vec<&str> = path.iter().copied().chain([key.as_str()]).collect();
            if scope::set_string_at(node, &full, value, true) {
                count += 1;
            }
        }
    }
    count
}

#[cfg(test)]
mod tests;
