//! `gcr.io/kpt-fn/set-annotations` v0.1.x: kustomize's annotation
//! transformer (`api/filters/annotations`) with the `commonAnnotations`
//! field specs, over every resource.
//!
//! Config: a `v1` `ConfigMap` whose `data` are the annotations, or
//! `fn.kpt.dev/v1alpha1` `SetAnnotationConfig` with `annotations` and
//! extra `fieldSpecs`. Each annotation is set at `metadata/annotations` of
//! everything and on the pod templates of the workload kinds.

use std::collections::BTreeMap;

use super::error::{ConfigError, RunError};
use super::fieldspec::{self, Create, FieldSpec};
use super::{config, Function};
use krmgraph_kyaml::rnode;
use krmgraph_yaml::Node;

/// The function's configuration.
#[derive(Clone, Debug, Default)]
pub struct SetAnnotations {
    /// The annotations, applied in key order.
    pub annotations: BTreeMap<String, String>,
    /// The config's field specs, then the defaults.
    pub field_specs: Vec<FieldSpec>,
}

impl Function for SetAnnotations {
    const CONFIG_KIND: &'static str = "SetAnnotationConfig";

    fn configure(fn_config: Option<&Node>) -> Result<SetAnnotations, ConfigError> {
        let mut f = SetAnnotations::default();
        match config::kind(fn_config, Self::CONFIG_KIND)? {
            config::Kind::ConfigMap(data) => f.annotations.extend(data),
            config::Kind::Typed(node) => {
                f.annotations
                    .extend(config::string_map(rnode::field_value(node, "annotations")));
                f.field_specs = fieldspec::decode_list(rnode::field_value(node, "fieldSpecs"));
            }
        }
        if f.annotations.is_empty() {
            return Err(ConfigError::EmptyAnnotations);
        }
        f.field_specs.extend(common_annotations());
        Ok(f)
    }

    fn transform(&self, item: &mut Node) -> Result<(), RunError> {
        for (key, value) in &self.annotations {
            let set = fieldspec::set_entry(key, value);
            fieldspec::apply(&self.field_specs, item, Create::Mapping, &set)?;
        }
        Ok(())
    }
}

/// kustomize's `commonAnnotations` field specs.
pub fn common_annotations() -> Vec<FieldSpec> {
    const TEMPLATE: &str = "spec/template/metadata/annotations";
    let fs = FieldSpec::new;
    vec![
        fs("", "", "", "metadata/annotations", true),
        fs("", "v1", "ReplicationController", TEMPLATE, true),
        fs("", "", "Deployment", TEMPLATE, true),
        fs("", "", "ReplicaSet", TEMPLATE, true),
        fs("", "", "DaemonSet", TEMPLATE, true),
        fs("apps", "", "StatefulSet", TEMPLATE, true),
        fs("batch", "", "Job", TEMPLATE, true),
        fs(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/metadata/annotations",
            true,
        ),
        fs(
            "batch",
            "",
            "CronJob",
            "spec/jobTemplate/spec/template/metadata/annotations",
            true,
        ),
    ]
}
