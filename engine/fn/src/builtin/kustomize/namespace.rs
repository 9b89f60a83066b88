//! `gcr.io/kpt-fn/set-namespace` v0.1.x: kustomize's namespace transformer
//! (`api/filters/namespace`) over every resource, the Kptfile and
//! function configs included.
//!
//! Config: a `v1` `ConfigMap` with `data.namespace`, or
//! `fn.kpt.dev/v1alpha1` `SetNamespaceConfig` with `namespace` and extra
//! `fieldSpecs`. For each resource:
//!
//! - `metadata.namespace` is set (created) unless the kind is cluster
//!   scoped ([`is_cluster_scoped`]; unknown kinds count as namespaced);
//! - `RoleBinding`/`ClusterRoleBinding` subjects whose `name` matches the
//!   regular expression `default` (unanchored, as kustomize wrote it) get
//!   `namespace`;
//! - the remaining field specs: `APIService` `spec/service/namespace`
//!   (created) and the config's own.
//!
//! `Namespace` objects keep their name: kustomize's namespace filter has no
//! step that renames them (the SDK-based versions do).

use super::error::{ConfigError, RunError};
use super::fieldspec::{self, Create, FieldSpec};
use super::{config, Function};
use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// The function's configuration.
#[derive(Clone, Debug, Default)]
pub struct SetNamespace {
    /// The namespace to set.
    pub namespace: String,
    /// Field specs beyond `metadata/namespace` and the binding subjects.
    pub field_specs: Vec<FieldSpec>,
    /// The `metadata/namespace` spec of namespaced kinds.
    metadata_namespace: [FieldSpec; 1],
}

impl Function for SetNamespace {
    const CONFIG_KIND: &'static str = "SetNamespaceConfig";

    fn configure(fn_config: Option<&Node>) -> Result<SetNamespace, ConfigError> {
        let mut f = SetNamespace {
            metadata_namespace: [FieldSpec::new("", "", "", "metadata/namespace", true)],
            ..SetNamespace::default()
        };
        match config::kind(fn_config, Self::CONFIG_KIND)? {
            config::Kind::ConfigMap(data) => {
                // `data` is a Go map: of repeated keys, the last wins.
                f.namespace = data
                    .into_iter()
                    .rev()
                    .find(|(k, _)| k == "namespace")
                    .map(|(_, v)| v)
                    .unwrap_or_default();
            }
            config::Kind::Typed(node) => {
                f.namespace = rnode::get_value(rnode::field_value(node, "namespace")).to_string();
                f.field_specs = fieldspec::decode_list(rnode::field_value(node, "fieldSpecs"));
            }
        }
        if f.namespace.is_empty() {
            return Err(ConfigError::EmptyNamespace);
        }
        // The default specs follow the config's; the ones the hard-coded
        // steps below implement are dropped (`removeFieldSpecsForHacks`).
        f.field_specs.extend(default_field_specs());
        f.field_specs.retain(|fs| {
            fs.path != "metadata/namespace"
                && !(fs.path == "subjects"
                    && matches!(fs.kind.as_str(), "RoleBinding" | "ClusterRoleBinding"))
        });
        Ok(f)
    }

    fn transform(&self, item: &mut Node) -> Result<(), RunError> {
        let (api_version, kind) = rnode::type_meta(rnode::y_node(item));
        let (api_version, kind) = (api_version.to_string(), kind.to_string());
        let set = fieldspec::set_scalar(&self.namespace);
        if !is_cluster_scoped(&api_version, &kind) {
            fieldspec::apply(&self.metadata_namespace, item, Create::Scalar, &set)?;
        }
        if kind == "RoleBinding" || kind == "ClusterRoleBinding" {
            self.set_subjects(rnode::y_node_mut(item))?;
        }
        fieldspec::apply(&self.field_specs, item, Create::Scalar, &set)
    }
}

impl SetNamespace {
    /// `roleBindingHack`: `namespace` on the subjects whose name matches
    /// `default`.
    fn set_subjects(&self, root: &mut Node) -> Result<(), RunError> {
        let Some(subjects) = rnode::field_value_mut(root, "subjects") else {
            return Ok(());
        };
        if rnode::is_missing_or_null(Some(subjects)) {
            return Ok(());
        }
        rnode::error_if_invalid(subjects, Kind::Sequence).map_err(RunError::Subjects)?;
        for subject in &mut subjects.content {
            rnode::error_if_invalid(subject, Kind::Mapping).map_err(RunError::Subjects)?;
            // `yaml.Match("default")` is an unanchored regular expression.
            let is_default = rnode::field_value(subject, "name")
                .is_some_and(|n| n.kind == Kind::Scalar && n.value.contains("default"));
            if is_default {
                rnode::set_field(subject, "namespace", rnode::new_scalar(&self.namespace))
                    .map_err(RunError::Subjects)?;
            }
        }
        Ok(())
    }
}

/// kustomize's default `namespace` field specs (api v0.8).
fn default_field_specs() -> Vec<FieldSpec> {
    vec![
        FieldSpec::new("", "", "", "metadata/namespace", true),
        FieldSpec::new(
            "rbac.authorization.k8s.io",
            "",
            "RoleBinding",
            "subjects",
            false,
        ),
        FieldSpec::new(
            "rbac.authorization.k8s.io",
            "",
            "ClusterRoleBinding",
            "subjects",
            false,
        ),
        FieldSpec::new(
            "apiregistration.k8s.io",
            "",
            "APIService",
            "spec/service/namespace",
            true,
        ),
    ]
}

/// Whether kyaml's built-in Kubernetes schema says the type is cluster
/// scoped. Types it does not know (custom resources, the Kptfile, a
/// Kustomization) are namespaced.
pub fn is_cluster_scoped(api_version: &str, kind: &str) -> bool {
    CLUSTER_SCOPED
        .iter()
        .any(|(versions, kinds)| versions.contains(&api_version) && kinds.contains(&kind))
}

/// The cluster-scoped types of the Kubernetes API kyaml embeds.
const CLUSTER_SCOPED: &[(&[&str], &[&str])] = &[
    (
        &["v1"],
        &["ComponentStatus", "Namespace", "Node", "PersistentVolume"],
    ),
    (
        &[
            "admissionregistration.k8s.io/v1",
            "admissionregistration.k8s.io/v1beta1",
        ],
        &[
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ],
    ),
    (
        &["apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1"],
        &["CustomResourceDefinition"],
    ),
    (
        &[
            "apiregistration.k8s.io/v1",
            "apiregistration.k8s.io/v1beta1",
        ],
        &["APIService"],
    ),
    (
        &["authentication.k8s.io/v1", "authentication.k8s.io/v1beta1"],
        &["TokenReview"],
    ),
    (
        &["authorization.k8s.io/v1", "authorization.k8s.io/v1beta1"],
        &[
            "SelfSubjectAccessReview",
            "SelfSubjectRulesReview",
            "SubjectAccessReview",
        ],
    ),
    (
        &["certificates.k8s.io/v1", "certificates.k8s.io/v1beta1"],
        &["CertificateSigningRequest"],
    ),
    (
        &[
            "flowcontrol.apiserver.k8s.io/v1alpha1",
            "flowcontrol.apiserver.k8s.io/v1beta1",
        ],
        &["FlowSchema", "PriorityLevelConfiguration"],
    ),
    (
        &["networking.k8s.io/v1", "networking.k8s.io/v1beta1"],
        &["IngressClass"],
    ),
    (
        &[
            "node.k8s.io/v1",
            "node.k8s.io/v1beta1",
            "node.k8s.io/v1alpha1",
        ],
        &["RuntimeClass"],
    ),
    (
        &["policy/v1beta1", "extensions/v1beta1"],
        &["PodSecurityPolicy"],
    ),
    (
        &[
            "rbac.authorization.k8s.io/v1",
            "rbac.authorization.k8s.io/v1beta1",
            "rbac.authorization.k8s.io/v1alpha1",
        ],
        &["ClusterRole", "ClusterRoleBinding"],
    ),
    (
        &[
            "scheduling.k8s.io/v1",
            "scheduling.k8s.io/v1beta1",
            "scheduling.k8s.io/v1alpha1",
        ],
        &["PriorityClass"],
    ),
    (
        &[
            "storage.k8s.io/v1",
            "storage.k8s.io/v1beta1",
            "storage.k8s.io/v1alpha1",
        ],
        &["CSIDriver", "CSINode", "StorageClass", "VolumeAttachment"],
    ),
];
