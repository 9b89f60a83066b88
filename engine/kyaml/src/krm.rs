//! KRM checks kpt applies to every resource a pipeline sees: a resource must
//! have `apiVersion`, `kind` and `metadata.name` (kustomization files are
//! exempt), with kpt's messages.

use crate::kioutil;
use crate::rnode;
use krmgraph_yaml::Node;

/// kpt's `IsKRM`: the first missing identity field, as kpt words it.
pub fn check_krm(resource: &Node) -> Result<(), String> {
    let meta = rnode::meta_view(resource).map_err(|e| e.to_string())?;
    check_identity(&meta)
}

fn check_identity(meta: &rnode::MetaView) -> Result<(), String> {
    if meta.api_version.is_empty() {
        return Err("resource must have `apiVersion`".into());
    }
    if meta.kind.is_empty() {
        return Err("resource must have `kind`".into());
    }
    if meta.name.is_empty() {
        return Err("resource must have `metadata.name`".into());
    }
    Ok(())
}

/// [`check_krm`], kustomizations exempt (kpt's `AreKRM` on one resource).
fn check_krm_unless_kustomization(resource: &Node) -> Result<(), String> {
    let (path, _) = kioutil::file_annotations(resource);
    let base = path.rsplit('/').next().unwrap_or_default();
    if matches!(
        base,
        "kustomization.yaml" | "kustomization.yml" | "Kustomization"
    ) {
        return Ok(());
    }
    let meta = rnode::meta_view(resource).map_err(|e| e.to_string())?;
    if meta.api_version.starts_with("kustomize.config.k8s.io")
        || (meta.api_version.is_empty() && meta.kind == "Kustomization")
    {
        return Ok(());
    }
    check_identity(&meta)
}

/// kpt's `AreKRM`: the first resource that is not KRM, as
/// `<path>: <reason>`.
pub fn check_all_krm(resources: &[Node]) -> Result<(), String> {
    krmgraph_util::par::first_failure(resources, |resource| {
        check_krm_unless_kustomization(resource)
            .map_err(|reason| format!("{}: {reason}", path_of(resource)))
    })
}

/// The value of annotation `key`, if set.
pub fn annotation(resource: &Node, key: &str) -> Option<String> {
    rnode::get_annotation(resource, key)
        .ok()
        .flatten()
        .map(|n| n.value.to_string())
}

/// The resource's file path (internal annotation first, then legacy).
pub fn path_of(resource: &Node) -> String {
    kioutil::get_file_annotations(resource).0
}

/// The resource's index in its file (internal annotation first).
pub fn index_of(resource: &Node) -> String {
    kioutil::get_file_annotations(resource).1
}

/// Sets annotation `key`; resources are mappings or documents, so this
/// cannot fail on anything krmgraph passes it.
pub fn set_annotation(resource: &mut Node, key: &str, value: &str) {
    let _ = rnode::set_annotation(resource, key, value);
}

/// Removes annotation `key` (and an `annotations: {}` left behind).
pub fn clear_annotation(resource: &mut Node, key: &str) {
    let _ = rnode::clear_annotation(resource, key);
}
