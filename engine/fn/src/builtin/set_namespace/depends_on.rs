//! `config.kubernetes.io/depends-on` references, which the SDK-era
//! set-namespace and ensure-name-substring keep pointing at resources of
//! the package after renaming them.
//!
//! The value is a comma-separated list of object references:
//! `<group>/namespaces/<namespace>/<kind>/<name>` for a namespaced object,
//! `<group>/<kind>/<name>` for a cluster-scoped one (the group is empty for
//! the core group, so such a reference starts with `/`).

use super::scope;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::Node;

/// The annotation.
pub const DEPENDS_ON_ANNOTATION: &str = "config.kubernetes.io/depends-on";

/// One object reference.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct ObjectRef {
    /// API group, empty for the core group.
    pub group: String,
    /// Namespace; `None` for a cluster-scoped reference.
    pub namespace: Option<String>,
    /// Kind.
    pub kind: String,
    /// Name.
    pub name: String,
}

impl ObjectRef {
    /// Parses one reference; `None` when it has neither form.
    pub fn parse(text: &str) -> Option<ObjectRef> {
        let parts: Vec<&str> = text.split('/').collect();
        match parts.as_slice() {
            [group, "namespaces", namespace, kind, name] => Some(ObjectRef {
                group: group.to_string(),
                namespace: Some(namespace.to_string()),
                kind: kind.to_string(),
                name: name.to_string(),
            }),
            [group, kind, name] => Some(ObjectRef {
                group: group.to_string(),
                namespace: None,
                kind: kind.to_string(),
                name: name.to_string(),
            }),
            _ => None,
        }
    }

    /// The reference as the annotation spells it.
    pub fn format(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{}/namespaces/{ns}/{}/{}", self.group, self.kind, self.name),
            None => format!("{}/{}/{}", self.group, self.kind, self.name),
        }
    }

    /// The reference to `node` as it is now.
    pub fn of(node: &Node) -> ObjectRef {
        let meta = rnode::get_meta(node).unwrap_or_default();
        ObjectRef {
            group: scope::group(&meta.api_version).to_string(),
            namespace: (!meta.namespace.is_empty()).then_some(meta.namespace),
            kind: meta.kind,
            name: meta.name,
        }
    }

    /// Whether the reference names `target` (a namespaced reference also
    /// matches a namespaced object without a namespace).
    pub fn names(&self, target: &ObjectRef) -> bool {
        self.group == target.group
            && self.kind == target.kind
            && self.name == target.name
            && self.namespace == target.namespace
    }
}

/// Rewrites the depends-on references of `node` with `rewrite` (which
/// returns the new reference, or `None` to keep one). Unparsable entries
/// are kept as they are. Returns how many references changed.
pub fn rewrite(node: &mut Node, rewrite: impl Fn(&ObjectRef) -> Option<ObjectRef>) -> usize {
    let Some(value) = rnode::get_annotations(node)
        .get(DEPENDS_ON_ANNOTATION)
        .cloned()
    else {
        return 0;
    };
    let mut changed = 0;
    let entries: Vec<String> = value
        .split(',')
        .map(
            |entry| match ObjectRef::parse(entry).and_then(|r| rewrite(&r)) {
                Some(new) => {
                    changed += 1;
                    new.format()
                }
                None => entry.to_string(),
            },
        )
        .collect();
    if changed > 0 {
        scope::set_string_at(
            node,
            &["metadata", "annotations", DEPENDS_ON_ANNOTATION],
            &entries.join(","),
            false,
        );
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_formats_both_forms() {
        for text in [
            "/namespaces/default/StatefulSet/db",
            "rbac.authorization.k8s.io/ClusterRole/reader",
            "apps/namespaces/ns/Deployment/web",
        ] {
            assert_eq!(ObjectRef::parse(text).unwrap().format(), text);
        }
        assert_eq!(ObjectRef::parse("a/b").map(|r| r.format()), None);
    }
}
