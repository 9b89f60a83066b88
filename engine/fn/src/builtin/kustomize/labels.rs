//! `gcr.io/kpt-fn/set-labels` v0.1.x: kustomize's label transformer
//! (`api/filters/labels`) with the `commonLabels` field specs, over every
//! resource.
//!
//! Config: a `v1` `ConfigMap` whose `data` are the labels, or
//! `fn.kpt.dev/v1alpha1` `SetLabelConfig` with `labels` and extra
//! `fieldSpecs`. Each label is set at `metadata/labels` of everything and
//! at the selector and template paths of the workload kinds
//! ([`common_labels`]).

use std::collections::BTreeMap;

use super::error::{ConfigError, RunError};
use super::fieldspec::{self, Create, FieldSpec};
use super::{config, Function};
use krmgraph_kyaml::rnode;
use krmgraph_yaml::Node;

/// The function's configuration.
#[derive(Clone, Debug, Default)]
pub struct SetLabels {
    /// The labels, applied in key order.
    pub labels: BTreeMap<String, String>,
    /// The config's field specs, then the defaults.
    pub field_specs: Vec<FieldSpec>,
}

impl Function for SetLabels {
    const CONFIG_KIND: &'static str = "SetLabelConfig";

    fn configure(fn_config: Option<&Node>) -> Result<SetLabels, ConfigError> {
        let mut f = SetLabels::default();
        match config::kind(fn_config, Self::CONFIG_KIND)? {
            config::Kind::ConfigMap(data) => f.labels.extend(data),
            config::Kind::Typed(node) => {
                f.labels
                    .extend(config::string_map(rnode::field_value(node, "labels")));
                f.field_specs = fieldspec::decode_list(rnode::field_value(node, "fieldSpecs"));
            }
        }
        if f.labels.is_empty() {
            return Err(ConfigError::EmptyLabels);
        }
        f.field_specs.extend(common_labels());
        Ok(f)
    }

    fn transform(&self, item: &mut Node) -> Result<(), RunError> {
        for (key, value) in &self.labels {
            let set = fieldspec::set_entry(key, value);
            fieldspec::apply(&self.field_specs, item, Create::Mapping, &set)?;
        }
        Ok(())
    }
}

/// kustomize's `commonLabels` field specs.
pub fn common_labels() -> Vec<FieldSpec> {
    let fs = FieldSpec::new;
    let mut specs = vec![
        fs("", "", "", "metadata/labels", true),
        fs("", "v1", "Service", "spec/selector", true),
        fs("", "v1", "ReplicationController", "spec/selector", true),
        fs(
            "",
            "v1",
            "ReplicationController",
            "spec/template/metadata/labels",
            true,
        ),
        fs("", "", "Deployment", "spec/selector/matchLabels", true),
        fs("", "", "Deployment", "spec/template/metadata/labels", true),
    ];
    specs.extend(pod_selectors("Deployment"));
    specs.extend([
        fs("", "", "ReplicaSet", "spec/selector/matchLabels", true),
        fs("", "", "ReplicaSet", "spec/template/metadata/labels", true),
        fs("", "", "DaemonSet", "spec/selector/matchLabels", true),
        fs("", "", "DaemonSet", "spec/template/metadata/labels", true),
        fs("apps", "", "StatefulSet", "spec/selector/matchLabels", true),
        fs(
            "apps",
            "",
            "StatefulSet",
            "spec/template/metadata/labels",
            true,
        ),
    ]);
    specs.extend(pod_selectors("StatefulSet"));
    specs.extend([
        fs(
            "apps",
            "",
            "StatefulSet",
            "spec/volumeClaimTemplates[]/metadata/labels",
            true,
        ),
        fs("batch", "", "Job", "spec/selector/matchLabels", false),
        fs("batch", "", "Job", "spec/template/metadata/labels", true),
        fs(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/selector/matchLabels",
            false,
        ),
        fs(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/metadata/labels",
            true,
        ),
        fs(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/template/metadata/labels",
            true,
        ),
        fs(
            "policy",
            "",
            "PodDisruptionBudget",
            "spec/selector/matchLabels",
            false,
        ),
        fs(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/podSelector/matchLabels",
            false,
        ),
        fs(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/ingress/from/podSelector/matchLabels",
            false,
        ),
        fs(
            "networking.k8s.io",
            "",
            "NetworkPolicy",
            "spec/egress/to/podSelector/matchLabels",
            false,
        ),
    ]);
    specs
}

/// The affinity and topology-spread selectors of an `apps` workload's pod
/// template, updated only where they exist.
fn pod_selectors(kind: &str) -> Vec<FieldSpec> {
    const AFFINITY: &str = "spec/template/spec/affinity";
    [
        format!("{AFFINITY}/podAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels"),
        format!("{AFFINITY}/podAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels"),
        format!("{AFFINITY}/podAntiAffinity/preferredDuringSchedulingIgnoredDuringExecution/podAffinityTerm/labelSelector/matchLabels"),
        format!("{AFFINITY}/podAntiAffinity/requiredDuringSchedulingIgnoredDuringExecution/labelSelector/matchLabels"),
        "spec/template/spec/topologySpreadConstraints/labelSelector/matchLabels".to_string(),
    ]
    .into_iter()
    .map(|path| FieldSpec::new("apps", "", kind, &path, false))
    .collect()
}
