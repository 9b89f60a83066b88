//! Annotation names and helpers of kyaml's `kio/kioutil`: where a resource
//! was read from (path, index), its sequence indentation, function-call ids,
//! the legacy `config.kubernetes.io/*` twins of the internal annotations,
//! default paths for generated resources, and sorting by path and index.

use std::collections::BTreeMap;

use super::rnode::{self, ResourceMeta};
use super::{gopath, KyamlError, Result};
use krmgraph_yaml::Node;

/// Prefix of kyaml's internal annotations.
pub const INTERNAL_PREFIX: &str = "internal.config.kubernetes.io/";
/// Index of a resource in its file.
pub const INDEX_ANNOTATION: &str = "internal.config.kubernetes.io/index";
/// Slash path of the file a resource was read from.
pub const PATH_ANNOTATION: &str = "internal.config.kubernetes.io/path";
/// `compact` or `wide`: how the resource's sequences were indented.
pub const SEQ_INDENT_ANNOTATION: &str = "internal.config.kubernetes.io/seqindent";
/// Id that maps a function's outputs to its inputs.
pub const ID_ANNOTATION: &str = "internal.config.kubernetes.io/id";
/// Legacy twin of [`INDEX_ANNOTATION`].
pub const LEGACY_INDEX_ANNOTATION: &str = "config.kubernetes.io/index";
/// Legacy twin of [`PATH_ANNOTATION`].
pub const LEGACY_PATH_ANNOTATION: &str = "config.kubernetes.io/path";
/// Legacy twin of [`ID_ANNOTATION`].
pub const LEGACY_ID_ANNOTATION: &str = "config.k8s.io/id";
/// Position of a resource in a `kio.Pipeline` filter's input.
pub const INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION: &str =
    "internal.config.kubernetes.io/annotations-migration-resource-id";
/// kpt (not kyaml): absolute directory of the package a resource belongs to.
pub const PACKAGE_PATH_ANNOTATION: &str = "internal.config.kubernetes.io/package-path";

/// `GetFileAnnotations`: (path, index), internal annotations first, legacy
/// ones as fallback; empty strings when absent.
pub fn get_file_annotations(node: &Node) -> (String, String) {
    let (path, index) = file_annotations(node);
    (path.to_string(), index.to_string())
}

/// [`get_file_annotations`], borrowed.
pub fn file_annotations(node: &Node) -> (&str, &str) {
    let [path, legacy_path, index, legacy_index] = rnode::annotations_view(node).annotations_of([
        PATH_ANNOTATION,
        LEGACY_PATH_ANNOTATION,
        INDEX_ANNOTATION,
        LEGACY_INDEX_ANNOTATION,
    ]);
    (
        path.or(legacy_path).unwrap_or_default(),
        index.or(legacy_index).unwrap_or_default(),
    )
}

/// `GetIdAnnotation`.
pub fn get_id_annotation(node: &Node) -> String {
    let meta = rnode::annotations_view(node);
    meta.annotation(ID_ANNOTATION)
        .or_else(|| meta.annotation(LEGACY_ID_ANNOTATION))
        .unwrap_or_default()
        .to_string()
}

/// `CopyLegacyAnnotations`: for path, index and id, fills whichever of the
/// legacy and internal twins is empty from the other. A resource without
/// metadata is left alone.
pub fn copy_legacy_annotations(node: &mut Node) -> Result<()> {
    // The values are read before any is set, as kyaml reads them from one
    // GetMeta.
    let [legacy_path, path, legacy_index, index, legacy_id, id] = rnode::annotations_view(node)
        .annotations_of([
            LEGACY_PATH_ANNOTATION,
            PATH_ANNOTATION,
            LEGACY_INDEX_ANNOTATION,
            INDEX_ANNOTATION,
            LEGACY_ID_ANNOTATION,
            ID_ANNOTATION,
        ]);
    let mut copies = Vec::new();
    for (legacy, new, legacy_value, new_value) in [
        (LEGACY_PATH_ANNOTATION, PATH_ANNOTATION, legacy_path, path),
        (
            LEGACY_INDEX_ANNOTATION,
            INDEX_ANNOTATION,
            legacy_index,
            index,
        ),
        (LEGACY_ID_ANNOTATION, ID_ANNOTATION, legacy_id, id),
    ] {
        let (new_value, legacy_value) = (new_value.unwrap_or(""), legacy_value.unwrap_or(""));
        if !new_value.is_empty() && legacy_value.is_empty() {
            copies.push((legacy, new_value.to_string()));
        } else if new_value.is_empty() && !legacy_value.is_empty() {
            copies.push((new, legacy_value.to_string()));
        }
    }
    for (key, value) in copies {
        rnode::set_annotation(node, key, &value)?;
    }
    Ok(())
}

/// `ErrorIfMissingAnnotation`: every node must have every key.
pub fn error_if_missing_annotation(nodes: &[Node], keys: &[&str]) -> Result<()> {
    for key in keys {
        for node in nodes {
            if rnode::get_annotation(node, key)?.is_none() {
                return Err(KyamlError::MissingAnnotation(key.to_string()));
            }
        }
    }
    Ok(())
}

/// `CreatePathAnnotationValue`: `dir/<namespace>/<kind>_<name>.yaml`.
pub fn create_path_annotation_value(dir: &str, meta: &ResourceMeta) -> String {
    let filename = format!("{}_{}.yaml", meta.kind.to_lowercase(), meta.name);
    gopath::join(&[dir, &meta.namespace, &filename])
}

/// `DefaultPathAndIndexAnnotation`: gives resources without a path the
/// default path under `dir`, and resources without an index the next index
/// in their file. The first new index equals the file's current maximum,
/// as in kyaml; order is still kept by the stable sort.
pub fn default_path_and_index_annotation(dir: &str, nodes: &mut [Node]) -> Result<()> {
    // Each node's own part — its legacy twins, its default path, reading
    // its path and index — runs on the pool, the first error in node order
    // as kyaml's loop meets it; only the counting across nodes is a loop.
    let indexed = krmgraph_util::par::each_mut::<_, _, KyamlError>(nodes, |_, node| {
        copy_legacy_annotations(node)?;
        let meta = rnode::meta_view(node)?;
        if let Some(path) = meta.annotation(PATH_ANNOTATION) {
            let index = meta.annotation(INDEX_ANNOTATION);
            return Ok(index.map(|i| (path.to_string(), rnode::go_atoi(i).unwrap_or(0))));
        }
        let path = create_path_annotation_value(dir, &meta.to_owned());
        set_path(node, &path)?;
        Ok(None)
    })?;
    // Rendered resources all have both: nothing left to number.
    if indexed.iter().all(Option::is_some) {
        return Ok(());
    }
    let mut counts: BTreeMap<String, i64> = BTreeMap::new();
    for (path, index) in indexed.into_iter().flatten() {
        let count = counts.entry(path).or_insert(0);
        *count = (*count).max(index);
    }
    let unindexed = krmgraph_util::par::each(nodes, |node| {
        let meta = rnode::meta_view(node)?;
        let path = meta.annotation(PATH_ANNOTATION).unwrap_or_default();
        Ok::<_, KyamlError>(
            meta.annotation(INDEX_ANNOTATION)
                .is_none()
                .then(|| path.to_string()),
        )
    })?;
    for (node, path) in nodes.iter_mut().zip(unindexed) {
        let Some(path) = path else { continue };
        let count = counts.entry(path).or_insert(0);
        let index = count.to_string();
        *count += 1;
        rnode::set_annotation(node, INDEX_ANNOTATION, &index)?;
        rnode::set_annotation(node, LEGACY_INDEX_ANNOTATION, &index)?;
    }
    Ok(())
}

/// `DefaultPathAnnotation`: gives resources without a path the default path
/// under `dir` (both twins).
pub fn default_path_annotation(dir: &str, nodes: &mut [Node]) -> Result<()> {
    krmgraph_util::par::each_mut::<_, _, KyamlError>(nodes, |_, node| {
        copy_legacy_annotations(node)?;
        let meta = rnode::meta_view(node)?;
        if meta.annotation(PATH_ANNOTATION).is_none() {
            let path = create_path_annotation_value(dir, &meta.to_owned());
            set_path(node, &path)?;
        }
        Ok(())
    })?;
    Ok(())
}

fn set_path(node: &mut Node, path: &str) -> Result<()> {
    rnode::set_annotation(node, PATH_ANNOTATION, path)?;
    rnode::set_annotation(node, LEGACY_PATH_ANNOTATION, path)
}

/// `SortNodes`: stable sort by path annotation, then numeric index (a
/// missing index first). Copies legacy annotations first, as kyaml's
/// comparator does.
pub fn sort_nodes(nodes: &mut [Node]) -> Result<()> {
    if nodes.len() < 2 {
        return Ok(());
    }
    for node in nodes.iter_mut() {
        let _ = copy_legacy_annotations(node);
    }
    let keys: Vec<(String, String)> = nodes
        .iter()
        .map(|n| {
            let [path, index] = rnode::annotations_view(n)
                .annotations_of([PATH_ANNOTATION, INDEX_ANNOTATION])
                .map(|v| v.unwrap_or_default().to_string());
            (path, index)
        })
        .collect();
    let mut error = None;
    let mut order: Vec<usize> = (0..nodes.len()).collect();
    order.sort_by(|&i, &j| compare(&keys[i], &keys[j], &mut error));
    if let Some(e) = error {
        return Err(e);
    }
    let mut taken: Vec<Option<Node>> = nodes.iter_mut().map(|n| Some(std::mem::take(n))).collect();
    for (slot, i) in nodes.iter_mut().zip(order) {
        *slot = taken[i].take().unwrap_or_default();
    }
    Ok(())
}

fn compare(
    a: &(String, String),
    b: &(String, String),
    error: &mut Option<KyamlError>,
) -> std::cmp::Ordering {
    use std::cmp::Ordering::{Equal, Greater, Less};
    if error.is_some() {
        return Equal;
    }
    if a.0 != b.0 {
        return a.0.cmp(&b.0);
    }
    match (a.1.as_str(), b.1.as_str()) {
        (x, y) if x == y => Equal,
        ("", _) => Less,
        (_, "") => Greater,
        (x, y) => match (parse_index(x), parse_index(y)) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            (Err(e), _) | (_, Err(e)) => {
                *error = Some(e);
                Equal
            }
        },
    }
}

fn parse_index(value: &str) -> Result<i64> {
    rnode::go_atoi(value).ok_or_else(|| KyamlError::InvalidIndex {
        value: value.to_string(),
    })
}

/// `GetInternalAnnotations`: annotations under `internal.config.kubernetes.io/`
/// plus the legacy path, index and id.
pub fn get_internal_annotations(node: &Node) -> BTreeMap<String, String> {
    internal_annotations(node).collect()
}

/// [`get_internal_annotations`] in document order (each key once).
pub fn internal_annotations(node: &Node) -> impl Iterator<Item = (String, String)> + '_ {
    rnode::annotations_view(node)
        .annotations()
        .filter(|(k, _)| {
            k.starts_with(INTERNAL_PREFIX)
                || *k == LEGACY_PATH_ANNOTATION
                || *k == LEGACY_INDEX_ANNOTATION
                || *k == LEGACY_ID_ANNOTATION
        })
        .map(|(k, v)| (k.to_string(), v.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rnode::tests::{emit, parse};

    fn annotated(pairs: &[(&str, &str)]) -> Node {
        let mut yaml =
            String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n  annotations:\n");
        for (k, v) in pairs {
            yaml.push_str(&format!("    {k}: \"{v}\"\n"));
        }
        parse(&yaml)
    }

    fn annotation(node: &Node, key: &str) -> Option<String> {
        rnode::get_meta(node).unwrap().annotations.get(key).cloned()
    }

    #[test]
    fn copy_legacy_annotations_fills_the_empty_twin() {
        let mut n = annotated(&[(LEGACY_PATH_ANNOTATION, "a.yaml"), (INDEX_ANNOTATION, "1")]);
        copy_legacy_annotations(&mut n).unwrap();
        assert_eq!(
            emit(&n),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n  annotations:\n    config.kubernetes.io/path: \"a.yaml\"\n    internal.config.kubernetes.io/index: \"1\"\n    internal.config.kubernetes.io/path: 'a.yaml'\n    config.kubernetes.io/index: '1'\n"
        );
        let mut n = annotated(&[(PATH_ANNOTATION, "x"), (LEGACY_PATH_ANNOTATION, "y")]);
        copy_legacy_annotations(&mut n).unwrap();
        assert_eq!(annotation(&n, PATH_ANNOTATION).as_deref(), Some("x"));
        for yaml in ["a: b\n", "hello\n"] {
            let mut n = parse(yaml);
            copy_legacy_annotations(&mut n).unwrap();
            assert_eq!(emit(&n), yaml);
        }
    }

    #[test]
    fn default_path_and_index() {
        let mut nodes = vec![
            annotated(&[(PATH_ANNOTATION, "a.yaml"), (INDEX_ANNOTATION, "2")]),
            parse("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  namespace: x\n"),
            annotated(&[(PATH_ANNOTATION, "a.yaml")]),
            annotated(&[(LEGACY_PATH_ANNOTATION, "a.yaml")]),
            parse("apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n"),
        ];
        default_path_and_index_annotation("fns", &mut nodes).unwrap();
        let got: Vec<(String, String)> = nodes.iter().map(get_file_annotations).collect();
        let want = [
            ("a.yaml", "2"),
            ("fns/x/configmap_b.yaml", "0"),
            ("a.yaml", "2"),
            ("a.yaml", "3"),
            ("fns/service_s.yaml", "0"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(p, i)| (p.to_string(), i.to_string()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            annotation(&nodes[3], LEGACY_INDEX_ANNOTATION).as_deref(),
            Some("3")
        );
    }

    #[test]
    fn default_path_annotation_only_sets_paths() {
        let mut nodes = vec![parse("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n")];
        default_path_annotation("", &mut nodes).unwrap();
        assert_eq!(
            get_file_annotations(&nodes[0]),
            ("pod_p.yaml".to_string(), String::new())
        );
        assert_eq!(
            annotation(&nodes[0], LEGACY_PATH_ANNOTATION).as_deref(),
            Some("pod_p.yaml")
        );
    }

    #[test]
    fn sort_by_path_then_index() {
        let mut nodes = vec![
            annotated(&[(PATH_ANNOTATION, "b.yaml"), (INDEX_ANNOTATION, "0")]),
            annotated(&[(PATH_ANNOTATION, "a.yaml"), (INDEX_ANNOTATION, "10")]),
            annotated(&[(PATH_ANNOTATION, "a.yaml"), (INDEX_ANNOTATION, "9")]),
            annotated(&[(PATH_ANNOTATION, "a.yaml")]),
            annotated(&[
                (LEGACY_PATH_ANNOTATION, "a.yaml"),
                (LEGACY_INDEX_ANNOTATION, "9"),
            ]),
        ];
        for (i, n) in nodes.iter_mut().enumerate() {
            rnode::set_label(n, "i", &i.to_string()).unwrap();
        }
        sort_nodes(&mut nodes).unwrap();
        let order: Vec<String> = nodes
            .iter()
            .map(|n| rnode::get_meta(n).unwrap().labels["i"].clone())
            .collect();
        assert_eq!(order, ["3", "2", "4", "1", "0"]);
        let mut bad = vec![
            annotated(&[(PATH_ANNOTATION, "a.yaml"), (INDEX_ANNOTATION, "x")]),
            annotated(&[(PATH_ANNOTATION, "a.yaml"), (INDEX_ANNOTATION, "1")]),
        ];
        assert_eq!(
            sort_nodes(&mut bad).unwrap_err().to_string(),
            "unable to parse config.kubernetes.io/index x :strconv.Atoi: parsing \"x\": invalid syntax"
        );
    }

    #[test]
    fn internal_annotations_and_missing_checks() {
        let n = annotated(&[
            (PATH_ANNOTATION, "p"),
            (LEGACY_ID_ANNOTATION, "1"),
            ("other/x", "y"),
        ]);
        let internal = get_internal_annotations(&n);
        assert_eq!(
            internal.keys().collect::<Vec<_>>(),
            [LEGACY_ID_ANNOTATION, PATH_ANNOTATION]
        );
        assert_eq!(get_id_annotation(&n), "1");
        let err = error_if_missing_annotation(
            std::slice::from_ref(&n),
            &[PATH_ANNOTATION, INDEX_ANNOTATION],
        );
        assert_eq!(
            err.unwrap_err().to_string(),
            format!("missing annotation {INDEX_ANNOTATION}")
        );
    }
}
