//! Which resources the SDK-era catalog functions treat as namespaced, and
//! which as local configuration.
//!
//! The kpt functions SDK asks kyaml's built-in Kubernetes v1.21.2 OpenAPI
//! (`openapi.IsNamespaceScoped`, keyed by the exact `apiVersion` and
//! `kind`); a type it does not know counts as namespaced exactly when its
//! `metadata.namespace` is set (`KubeObject.IsNamespaceScoped`). The
//! kustomize-era versions use the same list but count every unknown type as
//! namespaced. The scope itself is not in the schema krmgraph embeds
//! (which keeps only `definitions`), so the cluster-scoped types of
//! Kubernetes v1.21 are listed here.

use krmgraph_kyaml::{openapi, rnode};
use krmgraph_yaml::Node;

/// `config.kubernetes.io/local-config`.
pub const LOCAL_CONFIG_ANNOTATION: &str = "config.kubernetes.io/local-config";

/// The cluster-scoped built-in types, as `(group, kind)`.
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    ("", "ComponentStatus"),
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("apiregistration.k8s.io", "APIService"),
    ("authentication.k8s.io", "TokenReview"),
    ("authorization.k8s.io", "SelfSubjectAccessReview"),
    ("authorization.k8s.io", "SelfSubjectRulesReview"),
    ("authorization.k8s.io", "SubjectAccessReview"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
    ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
    ("networking.k8s.io", "IngressClass"),
    ("node.k8s.io", "RuntimeClass"),
    ("policy", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io", "ClusterRole"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "CSIDriver"),
    ("storage.k8s.io", "CSINode"),
    ("storage.k8s.io", "StorageClass"),
    ("storage.k8s.io", "VolumeAttachment"),
];

/// The group of an `apiVersion` (`""` for the core group).
pub fn group(api_version: &str) -> &str {
    api_version
        .split_once('/')
        .map_or("", |(group, _version)| group)
}

/// Whether a built-in type is cluster scoped.
pub fn is_cluster_scoped_kind(api_version: &str, kind: &str) -> bool {
    CLUSTER_SCOPED.contains(&(group(api_version), kind))
}

/// Whether kyaml's built-in schema knows the type.
pub fn is_known_kind(api_version: &str, kind: &str) -> bool {
    openapi::schema_for_resource_type(api_version, kind).is_some()
}

/// The SDK's `KubeObject.IsNamespaceScoped`.
pub fn is_namespace_scoped(node: &Node) -> bool {
    let meta = rnode::get_meta(node).unwrap_or_default();
    if is_known_kind(&meta.api_version, &meta.kind) {
        return !is_cluster_scoped_kind(&meta.api_version, &meta.kind);
    }
    !meta.namespace.is_empty()
}

/// The SDK's `KubeObject.IsLocalConfig`: the annotation is set to anything
/// but `false`.
pub fn is_local_config(node: &Node) -> bool {
    rnode::get_annotations(node)
        .get(LOCAL_CONFIG_ANNOTATION)
        .is_some_and(|v| !v.is_empty() && v != "false")
}

/// A scalar at `path`, `None` when absent or not a scalar.
pub fn string_at<'a>(node: &'a Node, path: &[&str]) -> Option<&'a str> {
    match rnode::lookup(node, path) {
        Ok(Some(n)) if n.kind == krmgraph_yaml::Kind::Scalar => Some(n.value.as_str()),
        _ => None,
    }
}

/// Sets the scalar at `path` to the string `value` (kyaml's `SetField`:
/// an existing value keeps its style). Missing parents are created when
/// `create` is set; otherwise nothing happens. Returns whether it set.
pub fn set_string_at(node: &mut Node, path: &[&str], value: &str, create: bool) -> bool {
    let Some((name, parent)) = path.split_last() else {
        return false;
    };
    let parent = if create {
        rnode::lookup_create(node, krmgraph_yaml::Kind::Mapping, parent)
    } else {
        rnode::lookup_mut(node, parent)
    };
    match parent {
        Ok(Some(p)) if create || rnode::field_value(p, name).is_some() => {
            rnode::set_field(p, name, rnode::new_string(value)).is_ok()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Node {
        let docs = krmgraph_yaml::parse_documents(text.as_bytes()).unwrap();
        rnode::y_node(&docs[0]).clone()
    }

    #[test]
    fn scope_of_known_and_unknown_types() {
        let cm = parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n");
        let ns = parse("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n");
        let cr = parse("apiVersion: x.dev/v1\nkind: Foo\nmetadata:\n  name: a\n");
        let cr_ns =
            parse("apiVersion: x.dev/v1\nkind: Foo\nmetadata:\n  name: a\n  namespace: b\n");
        assert!(is_namespace_scoped(&cm));
        assert!(!is_namespace_scoped(&ns));
        assert!(!is_namespace_scoped(&cr));
        assert!(is_namespace_scoped(&cr_ns));
    }

    #[test]
    fn local_config_is_anything_but_false() {
        let yes = parse(
            "kind: A\nmetadata:\n  annotations:\n    config.kubernetes.io/local-config: \"yes\"\n",
        );
        let no = parse("kind: A\nmetadata:\n  annotations:\n    config.kubernetes.io/local-config: \"false\"\n");
        assert!(is_local_config(&yes));
        assert!(!is_local_config(&no));
    }

    #[test]
    fn sets_strings_creating_only_when_asked() {
        let mut n = parse("spec:\n  a: 'x'\n");
        assert!(set_string_at(&mut n, &["spec", "a"], "y", false));
        assert!(!set_string_at(&mut n, &["spec", "b"], "y", false));
        assert!(set_string_at(&mut n, &["spec", "c", "d"], "z", true));
        assert_eq!(string_at(&n, &["spec", "a"]), Some("y"));
        assert_eq!(string_at(&n, &["spec", "b"]), None);
        assert_eq!(string_at(&n, &["spec", "c", "d"]), Some("z"));
    }
}
