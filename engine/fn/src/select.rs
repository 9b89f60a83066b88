//! Selectors and exclusions (kpt's `SelectInput`, `MergeWithInput`): which
//! resources a function sees, and how its output is merged back into the
//! full resource list. Quirks kept on purpose: a resource matching two
//! selectors is passed twice (the function then fails with a duplicate path
//! error, as in kpt), and matching is exact string equality.

use krmgraph_kyaml::krm;
use krmgraph_kyaml::rnode;
use krmgraph_package::kptfile::Selector;
use krmgraph_yaml::Node;

/// The annotation kpt numbers every input with while selectors apply.
pub const RESOURCE_ID_ANNOTATION: &str = "internal.config.k8s.io/kpt-resource-id";

/// Whether `resource` matches every non-empty field of `selector`.
pub fn is_match(resource: &Node, selector: &Selector) -> bool {
    let Ok(meta) = rnode::get_meta(resource) else {
        return false;
    };
    let eq = |want: &str, got: &str| want.is_empty() || want == got;
    let has_all = |want: &[(String, String)], got: &std::collections::BTreeMap<String, String>| {
        want.iter().all(|(k, v)| got.get(k) == Some(v))
    };
    eq(&selector.name, &meta.name)
        && eq(&selector.namespace, &meta.namespace)
        && eq(&selector.kind, &meta.kind)
        && eq(&selector.api_version, &meta.api_version)
        && has_all(&selector.labels, &meta.labels)
        && has_all(&selector.annotations, &meta.annotations)
}

/// Indices of the resources a function sees, in order (with duplicates when
/// a resource matches several selectors).
pub fn select(input: &[Node], selectors: &[Selector], exclusions: &[Selector]) -> Vec<usize> {
    let mut selected: Vec<usize> = if selectors.is_empty() {
        (0..input.len()).collect()
    } else {
        let mut out = Vec::new();
        for (i, resource) in input.iter().enumerate() {
            for s in selectors {
                if is_match(resource, s) {
                    out.push(i);
                }
            }
        }
        out
    };
    selected.retain(|&i| {
        !exclusions
            .iter()
            .any(|e| !e.is_empty() && is_match(&input[i], e))
    });
    selected
}

/// Numbers every resource `'0'..` with [`RESOURCE_ID_ANNOTATION`].
pub fn set_resource_ids(input: &mut [Node]) {
    for (i, resource) in input.iter_mut().enumerate() {
        krm::set_annotation(resource, RESOURCE_ID_ANNOTATION, &i.to_string());
    }
}

/// Merges a function's `output` back into the full `input`: unselected
/// resources stay, selected ones are replaced by their output (matched by
/// resource id) or dropped if the function deleted them, and new resources
/// go at the end. Removes the resource ids.
pub fn merge_with_input(output: Vec<Node>, selected: &[usize], input: Vec<Node>) -> Vec<Node> {
    let id_of = |n: &Node| krm::annotation(n, RESOURCE_ID_ANNOTATION);
    let mut by_id: Vec<(Option<String>, Option<Node>)> =
        output.into_iter().map(|n| (id_of(&n), Some(n))).collect();
    let mut merged = Vec::new();
    for (i, resource) in input.into_iter().enumerate() {
        if !selected.contains(&i) {
            merged.push(resource);
            continue;
        }
        let id = id_of(&resource);
        if let Some(slot) = by_id
            .iter_mut()
            .find(|(oid, n)| n.is_some() && oid.is_some() && *oid == id)
        {
            merged.push(slot.1.take().expect("checked"));
        }
    }
    merged.extend(
        by_id
            .into_iter()
            .filter(|(id, _)| id.is_none())
            .filter_map(|(_, n)| n),
    );
    for resource in &mut merged {
        krm::clear_annotation(resource, RESOURCE_ID_ANNOTATION);
    }
    merged
}
