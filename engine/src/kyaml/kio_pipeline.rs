//! The annotation bookkeeping kyaml does around one function call, as plain
//! functions the render loop calls before and after running a function.
//!
//! Around the call, `kio.Pipeline` (`kio/kio.go`):
//! [`preprocess_for_internal_annotation_migration`] numbers the inputs
//! (`annotations-migration-resource-id`), snapshots their internal
//! annotations and syncs legacy and internal path/index/id;
//! [`finish_filter`] short-circuits an empty output and otherwise
//! [`reconcile_internal_annotations`].
//!
//! Inside, `runtimeutil.FunctionFilter`: [`set_ids`] numbers the inputs
//! `'1'..'n'`, [`function_input`] is the ResourceList sent to the function,
//! [`read_function_output`] parses its stdout, and
//! [`copy_comments_and_sync_order`] restores comments and field order from
//! the input with the same id, then drops the ids. [`function_scope`] is the
//! directory generated resources default to (with
//! [`kioutil::default_path_annotation`]).

use std::collections::BTreeMap;

use super::byteio::{ByteReader, ByteWriter, ReadOutput};
use super::kioutil::{
    self, ID_ANNOTATION, INDEX_ANNOTATION,
    INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION as MIGRATION_ID, LEGACY_ID_ANNOTATION,
    LEGACY_INDEX_ANNOTATION, LEGACY_PATH_ANNOTATION, PATH_ANNOTATION,
};
use super::{comments, gopath, order, rnode, KyamlError, Result};
use crate::yaml::Node;

/// Internal annotations of each input, by its migration id.
pub type AnnotationSnapshot = BTreeMap<String, BTreeMap<String, String>>;

/// `PreprocessResourcesForInternalAnnotationMigration`: sets
/// `annotations-migration-resource-id` to each node's position, snapshots
/// its internal annotations, copies legacy/internal twins, and fails if
/// they disagree.
pub fn preprocess_for_internal_annotation_migration(
    nodes: &mut [Node],
) -> Result<AnnotationSnapshot> {
    let mut snapshot = BTreeMap::new();
    for (i, node) in nodes.iter_mut().enumerate() {
        let id = i.to_string();
        rnode::set_annotation(node, MIGRATION_ID, &id)?;
        snapshot.insert(id, kioutil::get_internal_annotations(node));
        kioutil::copy_legacy_annotations(node)?;
        check_mismatched_annotations(&rnode::get_meta(node).unwrap_or_default().annotations)?;
    }
    Ok(snapshot)
}

/// What the pipeline does with a filter's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FilterOutcome {
    /// The output was empty: kio.Pipeline returns at once (no
    /// reconciliation, nothing written to its outputs).
    Empty,
    /// The output was reconciled and continues down the pipeline.
    Reconciled,
}

/// The step of `kio.Pipeline` after a filter returned `output` without
/// error.
pub fn finish_filter(output: &mut [Node], snapshot: &AnnotationSnapshot) -> Result<FilterOutcome> {
    if output.is_empty() {
        return Ok(FilterOutcome::Empty);
    }
    reconcile_internal_annotations(output, snapshot)?;
    Ok(FilterOutcome::Reconciled)
}

fn check_mismatched_annotations(annotations: &BTreeMap<String, String>) -> Result<()> {
    let get = |k: &str| annotations.get(k).map(String::as_str).unwrap_or("");
    for (name, new, legacy) in [
        ("path", PATH_ANNOTATION, LEGACY_PATH_ANNOTATION),
        ("index", INDEX_ANNOTATION, LEGACY_INDEX_ANNOTATION),
        ("id", ID_ANNOTATION, LEGACY_ID_ANNOTATION),
    ] {
        let (a, b) = (get(new), get(legacy));
        if !a.is_empty() && !b.is_empty() && a != b {
            return Err(KyamlError::MismatchedAnnotations(name));
        }
    }
    Ok(())
}

/// `ReconcileInternalAnnotations`: fills the missing twin of each
/// legacy/internal pair, propagates a change the function made to either
/// twin, keeps only the annotation formats the inputs used, and drops the
/// migration id.
pub fn reconcile_internal_annotations(
    nodes: &mut [Node],
    snapshot: &AnnotationSnapshot,
) -> Result<()> {
    let (use_internal, use_legacy) = determine_annotations_format(snapshot)?;
    for node in nodes.iter_mut() {
        missing_internal_or_legacy_annotations(node)?;
        check_annotations_altered(node, snapshot)?;
        format_internal_annotations(node, use_internal, use_legacy)?;
        check_mismatched_annotations(&rnode::get_meta(node).unwrap_or_default().annotations)?;
        rnode::clear_annotation(node, MIGRATION_ID)?;
    }
    Ok(())
}

/// `determineAnnotationsFormat`: whether the inputs carried internal and/or
/// legacy path/index/id annotations (all inputs must agree).
fn determine_annotations_format(snapshot: &AnnotationSnapshot) -> Result<(bool, bool)> {
    if snapshot.is_empty() {
        return Ok((true, true));
    }
    let (mut internal, mut legacy) = (None, None);
    for annotations in snapshot.values() {
        let has = |k: &str| annotations.contains_key(k);
        let found_internal = has(PATH_ANNOTATION) || has(INDEX_ANNOTATION) || has(ID_ANNOTATION);
        let found_legacy = has(LEGACY_PATH_ANNOTATION)
            || has(LEGACY_INDEX_ANNOTATION)
            || has(LEGACY_ID_ANNOTATION);
        if !found_internal && !found_legacy {
            continue;
        }
        for (seen, found) in [(&mut internal, found_internal), (&mut legacy, found_legacy)] {
            if *seen.get_or_insert(found) != found {
                return Err(KyamlError::InconsistentAnnotationFormat);
            }
        }
    }
    Ok((internal.unwrap_or(false), legacy.unwrap_or(false)))
}

/// `missingInternalOrLegacyAnnotations`.
fn missing_internal_or_legacy_annotations(node: &mut Node) -> Result<()> {
    for (new, legacy) in [
        (PATH_ANNOTATION, LEGACY_PATH_ANNOTATION),
        (INDEX_ANNOTATION, LEGACY_INDEX_ANNOTATION),
        (ID_ANNOTATION, LEGACY_ID_ANNOTATION),
    ] {
        let annotations = rnode::get_meta(node).unwrap_or_default().annotations;
        let get = |k: &str| annotations.get(k).cloned().unwrap_or_default();
        let (value, legacy_value) = (get(new), get(legacy));
        if value.is_empty() && !legacy_value.is_empty() {
            rnode::set_annotation(node, new, &legacy_value)?;
        } else if !value.is_empty() && legacy_value.is_empty() {
            rnode::set_annotation(node, legacy, &value)?;
        }
    }
    Ok(())
}

/// `checkAnnotationsAltered`: if the function changed one twin of path or
/// index (relative to the snapshot), the other follows.
fn check_annotations_altered(node: &mut Node, snapshot: &AnnotationSnapshot) -> Result<()> {
    let annotations = rnode::get_meta(node).unwrap_or_default().annotations;
    let get = |k: &str| annotations.get(k).cloned().unwrap_or_default();
    let Some(original) = snapshot.get(&get(MIGRATION_ID)) else {
        return Ok(());
    };
    for (name, new, legacy) in [
        ("path", PATH_ANNOTATION, LEGACY_PATH_ANNOTATION),
        ("index", INDEX_ANNOTATION, LEGACY_INDEX_ANNOTATION),
    ] {
        let before = original
            .get(new)
            .or_else(|| original.get(legacy))
            .cloned()
            .unwrap_or_default();
        if before.is_empty() {
            continue;
        }
        let (internal, legacy_value) = (get(new), get(legacy));
        if before != internal && before != legacy_value && internal != legacy_value {
            return Err(KyamlError::MismatchedAnnotations(name));
        } else if before != internal {
            rnode::set_annotation(node, legacy, &internal)?;
        } else if before != legacy_value {
            rnode::set_annotation(node, new, &legacy_value)?;
        }
    }
    Ok(())
}

/// `formatInternalAnnotations`: drops the format the inputs did not use.
fn format_internal_annotations(
    node: &mut Node,
    use_internal: bool,
    use_legacy: bool,
) -> Result<()> {
    if !use_internal {
        for key in [ID_ANNOTATION, PATH_ANNOTATION, INDEX_ANNOTATION] {
            rnode::clear_annotation(node, key)?;
        }
    }
    if !use_legacy {
        for key in [
            LEGACY_ID_ANNOTATION,
            LEGACY_PATH_ANNOTATION,
            LEGACY_INDEX_ANNOTATION,
        ] {
            rnode::clear_annotation(node, key)?;
        }
    }
    Ok(())
}

/// `FunctionFilter.setIds`: `internal.config.kubernetes.io/id` and
/// `config.k8s.io/id` set to `'1'..'n'`.
pub fn set_ids(nodes: &mut [Node]) -> Result<()> {
    for (i, node) in nodes.iter_mut().enumerate() {
        let id = (i + 1).to_string();
        rnode::set_annotation(node, ID_ANNOTATION, &id)?;
        rnode::set_annotation(node, LEGACY_ID_ANNOTATION, &id)?;
    }
    Ok(())
}

/// The bytes `FunctionFilter` writes to the function's stdin: a
/// `ResourceList` with the reader annotations kept and compact sequences,
/// `functionConfig` only when there is one.
pub fn function_input(nodes: &[Node], function_config: Option<&Node>) -> Result<Vec<u8>> {
    ByteWriter::resource_list(function_config.cloned()).write(nodes)
}

/// How `FunctionFilter` reads a function's stdout: a default `ByteReader`
/// (index annotations on, a single `ResourceList`/`List` unwrapped).
pub fn read_function_output(stdout: &[u8]) -> Result<ReadOutput> {
    ByteReader::default().read(stdout)
}

/// `FunctionFilter.copyCommentsAndSyncOrder`: for every output with an id
/// annotation naming one of `inputs` (which carry the ids [`set_ids`]
/// gave), copies comments and syncs field order from that input, then
/// removes both id annotations.
pub fn copy_comments_and_sync_order(inputs: &[Node], outputs: &mut [Node]) -> Result<()> {
    let mut ids: BTreeMap<String, &Node> = BTreeMap::new();
    for (i, input) in inputs.iter().enumerate() {
        ids.insert((i + 1).to_string(), input);
    }
    for node in outputs.iter_mut() {
        let id = match rnode::get_annotation(node, ID_ANNOTATION)? {
            Some(v) => v.value.clone(),
            None => match rnode::get_annotation(node, LEGACY_ID_ANNOTATION)? {
                Some(v) => v.value.clone(),
                None => continue,
            },
        };
        let Some(input) = ids.get(&id) else {
            continue;
        };
        comments::copy_comments(input, node)?;
        order::sync_order(input, node)?;
        rnode::clear_annotation(node, ID_ANNOTATION)?;
        rnode::clear_annotation(node, LEGACY_ID_ANNOTATION)?;
    }
    Ok(())
}

/// `FunctionFilter.getFunctionScope`: the directory of the function
/// config's path annotation (one level up from a `functions` directory);
/// empty when there is no config or no path.
pub fn function_scope(function_config: Option<&Node>) -> Result<String> {
    let Some(config) = function_config else {
        return Ok(String::new());
    };
    let annotations = rnode::get_meta(config)?.annotations;
    let Some(path) = annotations
        .get(PATH_ANNOTATION)
        .or_else(|| annotations.get(LEGACY_PATH_ANNOTATION))
    else {
        return Ok(String::new());
    };
    let dir = gopath::clean(&gopath::dir(path));
    if gopath::base(&dir) == "functions" {
        return Ok(gopath::dir(&dir));
    }
    Ok(dir)
}
