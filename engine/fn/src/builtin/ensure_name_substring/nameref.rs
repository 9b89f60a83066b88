//! The name references ensure-name-substring keeps pointing at renamed
//! resources: a subset of kustomize's `nameReference` configuration (the
//! references of pod specs to ConfigMaps, Secrets, ServiceAccounts and
//! PersistentVolumeClaims, RBAC role references and ServiceAccount
//! subjects, Services named by StatefulSets and Ingresses, and the scale
//! targets of HorizontalPodAutoscalers).
//!
//! A reference follows a rename when it names the old name of a resource of
//! the referenced kind and, for a namespaced one, sits in a resource of the
//! same namespace (an empty namespace counting as `default`).

use crate::builtin::set_namespace::scope;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// A renamed resource.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rename {
    /// Its kind.
    pub kind: String,
    /// Its namespace (`default` when it has none and is namespaced, empty
    /// when cluster scoped).
    pub namespace: String,
    /// The old name.
    pub old: String,
    /// The new name.
    pub new: String,
}

/// Paths inside a pod spec that name a resource of the kind.
fn pod_spec_paths(kind: &str) -> &'static [&'static str] {
    match kind {
        "ConfigMap" => &[
            "volumes/configMap/name",
            "containers/env/valueFrom/configMapKeyRef/name",
            "initContainers/env/valueFrom/configMapKeyRef/name",
            "containers/envFrom/configMapRef/name",
            "initContainers/envFrom/configMapRef/name",
            "volumes/projected/sources/configMap/name",
        ],
        "Secret" => &[
            "volumes/secret/secretName",
            "containers/env/valueFrom/secretKeyRef/name",
            "initContainers/env/valueFrom/secretKeyRef/name",
            "containers/envFrom/secretRef/name",
            "initContainers/envFrom/secretRef/name",
            "imagePullSecrets/name",
            "volumes/projected/sources/secret/name",
        ],
        "ServiceAccount" => &["serviceAccountName"],
        "PersistentVolumeClaim" => &["volumes/persistentVolumeClaim/claimName"],
        _ => &[],
    }
}

/// Where the pod spec of a resource of this kind is.
fn pod_spec_of(kind: &str) -> Option<&'static str> {
    match kind {
        "Pod" => Some("spec"),
        "Deployment"
        | "ReplicaSet"
        | "DaemonSet"
        | "StatefulSet"
        | "Job"
        | "ReplicationController" => Some("spec/template/spec"),
        "CronJob" => Some("spec/jobTemplate/spec/template/spec"),
        _ => None,
    }
}

/// The other references to resources of `kind` from a resource of
/// `referrer`, as paths.
fn other_paths(kind: &str, referrer: &str) -> Vec<&'static str> {
    match (kind, referrer) {
        ("Secret", "Ingress") => vec!["spec/tls/secretName"],
        ("Secret", "ServiceAccount") => vec!["secrets/name", "imagePullSecrets/name"],
        ("Service", "StatefulSet") => vec!["spec/serviceName"],
        ("Service", "Ingress") => vec![
            "spec/rules/http/paths/backend/serviceName",
            "spec/rules/http/paths/backend/service/name",
            "spec/backend/serviceName",
            "spec/defaultBackend/service/name",
        ],
        (
            "Deployment" | "ReplicaSet" | "StatefulSet" | "ReplicationController",
            "HorizontalPodAutoscaler",
        ) => vec!["spec/scaleTargetRef/name"],
        _ => Vec::new(),
    }
}

/// Updates the references in `item` to the renamed resources.
pub fn update(item: &mut Node, renames: &[Rename]) {
    let meta = rnode::get_meta(item).unwrap_or_default();
    let namespace = if meta.namespace.is_empty() {
        "default".to_string()
    } else {
        meta.namespace.clone()
    };
    for rename in renames {
        if !rename.namespace.is_empty() && rename.namespace != namespace {
            continue;
        }
        let mut paths: Vec<String> = other_paths(&rename.kind, &meta.kind)
            .into_iter()
            .map(str::to_string)
            .collect();
        if let Some(spec) = pod_spec_of(&meta.kind) {
            for p in pod_spec_paths(&rename.kind) {
                paths.push(format!("{spec}/{p}"));
            }
        }
        for path in &paths {
            let parts: Vec<&str> = path.split('/').collect();
            rename_at(rnode::y_node_mut(item), &parts, rename);
        }
        role_references(item, &meta.kind, rename);
    }
}

/// `roleRef` of (Cluster)RoleBindings and their ServiceAccount subjects.
fn role_references(item: &mut Node, kind: &str, rename: &Rename) {
    if kind != "RoleBinding" && kind != "ClusterRoleBinding" {
        return;
    }
    let role_kinds: &[&str] = if kind == "RoleBinding" {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if role_kinds.contains(&rename.kind.as_str())
        && scope::string_at(item, &["roleRef", "kind"]).is_none_or(|k| k == rename.kind)
        && scope::string_at(item, &["roleRef", "name"]) == Some(rename.old.as_str())
    {
        scope::set_string_at(item, &["roleRef", "name"], &rename.new, false);
    }
    if rename.kind != "ServiceAccount" {
        return;
    }
    if let Ok(Some(subjects)) = rnode::lookup_mut(item, &["subjects"]) {
        for s in subjects
            .content
            .iter_mut()
            .filter(|s| s.kind == Kind::Mapping)
        {
            let ns = scope::string_at(s, &["namespace"]).unwrap_or("default");
            if scope::string_at(s, &["kind"]) == Some("ServiceAccount")
                && scope::string_at(s, &["name"]) == Some(rename.old.as_str())
                && ns == rename.namespace
            {
                scope::set_string_at(s, &["name"], &rename.new, false);
            }
        }
    }
}

/// Renames the scalar at `parts` (through every item of lists on the way).
fn rename_at(node: &mut Node, parts: &[&str], rename: &Rename) {
    if node.kind == Kind::Sequence {
        for item in &mut node.content {
            rename_at(item, parts, rename);
        }
        return;
    }
    if node.kind != Kind::Mapping {
        return;
    }
    let Some((first, rest)) = parts.split_first() else {
        return;
    };
    if rest.is_empty() {
        if scope::string_at(node, &[first]) == Some(rename.old.as_str()) {
            scope::set_string_at(node, &[first], &rename.new, false);
        }
        return;
    }
    if let Some(child) = rnode::field_value_mut(node, first) {
        rename_at(child, rest, rename);
    }
}
