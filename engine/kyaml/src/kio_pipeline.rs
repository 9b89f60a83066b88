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

use rayon::prelude::*;

use super::byteio::{self, ByteReader, ByteWriter, ReadOutput};
use super::kioutil::{
    self, ID_ANNOTATION, INDEX_ANNOTATION,
    INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION as MIGRATION_ID, LEGACY_ID_ANNOTATION,
    LEGACY_INDEX_ANNOTATION, LEGACY_PATH_ANNOTATION, PATH_ANNOTATION,
};
use super::{comments, gopath, item_memo, order, rnode, KyamlError, Result};
use krmgraph_util::par::each_mut;
use krmgraph_yaml::{Kind, Node, Style};

/// Internal annotations of each input, by its migration id (its position
/// in the input): kyaml's map from id to annotations, as a list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AnnotationSnapshot(Vec<SnapshotEntry>);

/// One input's internal annotations, as [`AnnotationSnapshot`] keeps them.
pub type SnapshotEntry = Vec<(String, String)>;

impl AnnotationSnapshot {
    /// The internal annotations of the input whose migration id is `id`
    /// (as preprocessing wrote it: decimal, no sign, no leading zero).
    fn get(&self, id: &str) -> Option<&[(String, String)]> {
        let position: usize = id.parse().ok().filter(|_| item_memo::is_id(id))?;
        self.0.get(position).map(Vec::as_slice)
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The value of `key` in a snapshot's annotations.
fn snapshot_value<'a>(annotations: &'a [(String, String)], key: &str) -> Option<&'a String> {
    annotations.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// `PreprocessResourcesForInternalAnnotationMigration`: sets
/// `annotations-migration-resource-id` to each node's position, snapshots
/// its internal annotations, copies legacy/internal twins, and fails if
/// they disagree.
pub fn preprocess_for_internal_annotation_migration(
    nodes: &mut [Node],
) -> Result<AnnotationSnapshot> {
    Ok(AnnotationSnapshot(preprocess_from(nodes, 0)?))
}

/// [`preprocess_for_internal_annotation_migration`] of the nodes at
/// `offset..` of a longer list: their snapshot entries.
pub fn preprocess_from(nodes: &mut [Node], offset: usize) -> Result<Vec<SnapshotEntry>> {
    each_mut::<_, _, KyamlError>(nodes, |i, node| {
        rnode::set_annotation(node, MIGRATION_ID, &(offset + i).to_string())?;
        let internal = twin_snapshot(node);
        kioutil::copy_legacy_annotations(node)?;
        check_mismatched_annotations(node)?;
        Ok(internal)
    })
}

impl AnnotationSnapshot {
    /// A snapshot of `len` inputs of which only some were preprocessed
    /// (`parts`: an offset and the entries [`preprocess_from`] gave); the
    /// others have no entry.
    pub fn of_parts(len: usize, parts: Vec<(usize, Vec<SnapshotEntry>)>) -> Self {
        let mut entries = vec![Vec::new(); len];
        for (offset, part) in parts {
            for (slot, entry) in entries[offset..].iter_mut().zip(part) {
                *slot = entry;
            }
        }
        AnnotationSnapshot(entries)
    }

    /// Which annotation formats the inputs with snapshot entries used, as
    /// [`annotations_format`] reads them.
    pub fn formats(&self) -> impl Iterator<Item = (bool, bool)> + '_ {
        self.0.iter().filter_map(|annotations| {
            let has = |k: &str| snapshot_value(annotations, k).is_some();
            let internal = has(PATH_ANNOTATION) || has(INDEX_ANNOTATION) || has(ID_ANNOTATION);
            let legacy = has(LEGACY_PATH_ANNOTATION)
                || has(LEGACY_INDEX_ANNOTATION)
                || has(LEGACY_ID_ANNOTATION);
            (internal || legacy).then_some((internal, legacy))
        })
    }
}

/// Whether `node` carries the internal and the legacy path/index/id
/// annotations (`None`: neither), as preprocessing would snapshot it.
pub fn annotation_format(node: &Node) -> Option<(bool, bool)> {
    let values = rnode::annotations_view(node).annotations_of(TWIN_KEYS);
    let internal = values[0].is_some() || values[2].is_some() || values[4].is_some();
    let legacy = values[1].is_some() || values[3].is_some() || values[5].is_some();
    (internal || legacy).then_some((internal, legacy))
}

/// `determineAnnotationsFormat` over the formats the inputs used (those
/// with neither left out); `(true, true)` for no inputs at all.
pub fn annotations_format(
    any_inputs: bool,
    formats: impl Iterator<Item = (bool, bool)>,
) -> Result<(bool, bool)> {
    if !any_inputs {
        return Ok((true, true));
    }
    let mut seen: Option<(bool, bool)> = None;
    for found in formats {
        let first = *seen.get_or_insert(found);
        if first.0 != found.0 || first.1 != found.1 {
            return Err(KyamlError::InconsistentAnnotationFormat);
        }
    }
    Ok(seen.unwrap_or((false, false)))
}

/// What the snapshot keeps of a node's internal annotations: the twins
/// present, the only ones reconciliation reads back (kyaml keeps them all,
/// to the same effect).
fn twin_snapshot(node: &Node) -> Vec<(String, String)> {
    let values = rnode::annotations_view(node).annotations_of(TWIN_KEYS);
    TWIN_KEYS
        .into_iter()
        .zip(values)
        .filter_map(|(name, value)| Some((name.to_string(), value?.to_string())))
        .collect()
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

/// The three twins, internal then legacy: path, index, id.
const TWIN_KEYS: [&str; 6] = [
    PATH_ANNOTATION,
    LEGACY_PATH_ANNOTATION,
    INDEX_ANNOTATION,
    LEGACY_INDEX_ANNOTATION,
    ID_ANNOTATION,
    LEGACY_ID_ANNOTATION,
];

/// The values of the twins on `node` (`""` where missing), read in one
/// pass.
fn twin_values(node: &Node) -> [(&str, &str); 3] {
    let [path, legacy_path, index, legacy_index, id, legacy_id] = rnode::annotations_view(node)
        .annotations_of(TWIN_KEYS)
        .map(Option::unwrap_or_default);
    [(path, legacy_path), (index, legacy_index), (id, legacy_id)]
}

fn check_mismatched_annotations(node: &Node) -> Result<()> {
    for (name, (a, b)) in ["path", "index", "id"].into_iter().zip(twin_values(node)) {
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
    let format = determine_annotations_format(snapshot)?;
    reconcile_in_format(nodes, snapshot, format)
}

/// [`reconcile_internal_annotations`] of some of the outputs, the format
/// being known (`(use_internal, use_legacy)`).
pub fn reconcile_in_format(
    nodes: &mut [Node],
    snapshot: &AnnotationSnapshot,
    (use_internal, use_legacy): (bool, bool),
) -> Result<()> {
    each_mut::<_, _, KyamlError>(nodes, |_, node| {
        missing_internal_or_legacy_annotations(node)?;
        check_annotations_altered(node, snapshot)?;
        format_internal_annotations(node, use_internal, use_legacy)?;
        check_mismatched_annotations(node)?;
        rnode::clear_annotation(node, MIGRATION_ID)?;
        Ok(())
    })?;
    Ok(())
}

/// `determineAnnotationsFormat`: whether the inputs carried internal and/or
/// legacy path/index/id annotations (all inputs must agree).
fn determine_annotations_format(snapshot: &AnnotationSnapshot) -> Result<(bool, bool)> {
    annotations_format(!snapshot.is_empty(), snapshot.formats())
}

/// `missingInternalOrLegacyAnnotations`.
fn missing_internal_or_legacy_annotations(node: &mut Node) -> Result<()> {
    // kyaml's twin of CopyLegacyAnnotations: it fills whichever twin of
    // path, index and id is empty from the other, the same way.
    kioutil::copy_legacy_annotations(node)
}

/// `checkAnnotationsAltered`: if the function changed one twin of path or
/// index (relative to the snapshot), the other follows.
fn check_annotations_altered(node: &mut Node, snapshot: &AnnotationSnapshot) -> Result<()> {
    let [migration_id, path, legacy_path, index, legacy_index] = rnode::annotations_view(node)
        .annotations_of([
            MIGRATION_ID,
            PATH_ANNOTATION,
            LEGACY_PATH_ANNOTATION,
            INDEX_ANNOTATION,
            LEGACY_INDEX_ANNOTATION,
        ])
        .map(Option::unwrap_or_default);
    let Some(original) = snapshot.get(migration_id) else {
        return Ok(());
    };
    // Both twins are read before either is set, as kyaml reads them from
    // one GetAnnotations; the sets are decided before any is made, and
    // values are copied only for a set (rarely: functions seldom move a
    // resource).
    let mut sets = Vec::new();
    for (name, new, legacy, internal, legacy_value) in [
        (
            "path",
            PATH_ANNOTATION,
            LEGACY_PATH_ANNOTATION,
            path,
            legacy_path,
        ),
        (
            "index",
            INDEX_ANNOTATION,
            LEGACY_INDEX_ANNOTATION,
            index,
            legacy_index,
        ),
    ] {
        let before = snapshot_value(original, new)
            .or_else(|| snapshot_value(original, legacy))
            .map_or("", String::as_str);
        if before.is_empty() {
            continue;
        }
        if before != internal && before != legacy_value && internal != legacy_value {
            return Err(KyamlError::MismatchedAnnotations(name));
        } else if before != internal {
            sets.push((legacy, internal.to_string()));
        } else if before != legacy_value {
            sets.push((new, legacy_value.to_string()));
        }
    }
    for (key, value) in sets {
        rnode::set_annotation(node, key, &value)?;
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
    set_ids_from(nodes, 0)
}

/// [`set_ids`] on the nodes at `offset..` of a longer list.
pub fn set_ids_from(nodes: &mut [Node], offset: usize) -> Result<()> {
    each_mut::<_, _, KyamlError>(nodes, |i, node| {
        let id = (offset + i + 1).to_string();
        rnode::set_annotation(node, ID_ANNOTATION, &id)?;
        rnode::set_annotation(node, LEGACY_ID_ANNOTATION, &id)?;
        Ok(())
    })?;
    Ok(())
}

/// The bytes `FunctionFilter` writes to the function's stdin: a
/// `ResourceList` with the reader annotations kept and compact sequences,
/// `functionConfig` only when there is one.
pub fn function_input(nodes: &mut [Node], function_config: Option<&Node>) -> Result<Vec<u8>> {
    ByteWriter::resource_list(function_config.cloned()).write_list_in_place(nodes)
}

/// [`function_input`] through `memo`, with each item's entry
/// ([`ByteWriter::write_list_remembering`]).
pub fn function_input_remembering(
    nodes: &mut [Node],
    function_config: Option<&Node>,
    memo: &item_memo::ItemMemo,
    check: bool,
) -> Result<(Vec<u8>, item_memo::Entries)> {
    ByteWriter::resource_list(function_config.cloned()).write_list_remembering(nodes, memo, check)
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
    copy_comments_and_sync_order_at(inputs, 0, outputs)
}

/// [`copy_comments_and_sync_order`] with `inputs` a run of a longer list
/// that starts at position `first` (the ids number the whole list).
pub fn copy_comments_and_sync_order_at(
    inputs: &[Node],
    first: usize,
    outputs: &mut [Node],
) -> Result<()> {
    // Each output is restored on its own, so they are done in parallel on
    // the render's pool; the first error in output order is the one kyaml
    // would have hit.
    outputs
        .par_iter_mut()
        .map(|node| restore_one(inputs, first, node))
        .collect::<Vec<_>>()
        .into_iter()
        .collect()
}

fn restore_one(inputs: &[Node], first: usize, node: &mut Node) -> Result<()> {
    let id = match rnode::get_annotation(node, ID_ANNOTATION)? {
        Some(v) => input_by_id(inputs, first, &v.value),
        None => match rnode::get_annotation(node, LEGACY_ID_ANNOTATION)? {
            Some(v) => input_by_id(inputs, first, &v.value),
            None => return Ok(()),
        },
    };
    let Some(input) = id.map(|i| &inputs[i]) else {
        return Ok(());
    };
    restore_from(input, node)
}

/// The position in `inputs` of the input whose id is `id`: the inputs
/// carry ids numbered from 1 in decimal, so only those strings name one
/// (no sign, no leading zero). Indexing by the number spares a map of
/// every input's id at every step, where most steps restore a few items.
fn input_by_id(inputs: &[Node], first: usize, id: &str) -> Option<usize> {
    let canonical = id.bytes().all(|b| b.is_ascii_digit()) && !id.starts_with('0');
    let n: usize = id.parse().ok().filter(|_| canonical)?;
    n.checked_sub(1 + first).filter(|&i| i < inputs.len())
}

/// What [`copy_comments_and_sync_order`] does to an output paired with
/// its input.
fn restore_from(input: &Node, output: &mut Node) -> Result<()> {
    comments::copy_comments(input, output)?;
    order::sync_order(input, output)?;
    clear_ids(output)
}

/// Turns an input item into the output item of a function that echoed
/// it: `read_back` makes the (document's root) node what kpt parses back,
/// comments in place; then what [`copy_comments_and_sync_order`] does to
/// it. With the output a copy of its input (same comments, same field
/// order), restoring comes down to what depends on the output alone —
/// lifting list items' first-key head comments — unless the walk would
/// switch a folded scalar to double quotes, copy a document's comments to
/// its root, or reorder duplicate keys; those items are restored from a
/// copy of the input, as any output is.
///
/// Returns whether restoring did nothing but remove the ids (which, when
/// `read_back` changed nothing else either, makes the echo the item less
/// its ids: [`super::item_memo::Entry::restore_echo`]).
pub fn restore_echo(item: &mut Node, read_back: impl FnOnce(&mut Node)) -> Result<bool> {
    let source = echo_needs_restoring(item).then(|| item.clone());
    let mut output = byteio::into_y_node(std::mem::take(item));
    read_back(&mut output);
    let (restored, plain) = match &source {
        Some(source) => (restore_from(source, &mut output), false),
        None => {
            let lifted = order::rearrange_head_comment_of_seq_node(&mut output);
            (clear_ids(&mut output), !lifted)
        }
    };
    *item = output;
    restored.map(|()| plain)
}

/// Whether the document `item` has comments of its own, which restoring an
/// echo moves to its root.
pub fn has_document_comments(item: &Node) -> bool {
    item.kind == Kind::Document
        && [
            &item.head_comment(),
            &item.line_comment(),
            &item.foot_comment(),
        ]
        .iter()
        .any(|c| !c.is_empty())
}

/// Whether restoring an echoed `item` does more than
/// [`restore_echo`]'s short form.
fn echo_needs_restoring(item: &Node) -> bool {
    fn walk(node: &Node) -> bool {
        match node.kind {
            Kind::Scalar => node.style.has(Style::FOLDED),
            Kind::Mapping => has_duplicate_keys(node) || node.content.iter().any(walk),
            _ => node.content.iter().any(walk),
        }
    }
    has_document_comments(item) || walk(rnode::y_node(item))
}

fn has_duplicate_keys(map: &Node) -> bool {
    let n = map.content.len() / 2;
    let key = |i: usize| map.content[2 * i].value.as_str();
    if n <= 16 {
        // Most mappings are small: comparing pairs beats hashing (and
        // collecting the keys first, which this runs too often for).
        return (1..n).any(|i| (0..i).any(|j| key(j) == key(i)));
    }
    let mut seen = std::collections::HashSet::with_capacity(n);
    (0..n).any(|i| !seen.insert(key(i)))
}

/// Removes the ids [`set_ids`] gave (what restoring an output ends with).
pub fn clear_ids(node: &mut Node) -> Result<()> {
    rnode::clear_annotation(node, ID_ANNOTATION)?;
    rnode::clear_annotation(node, LEGACY_ID_ANNOTATION)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rnode::tests::{emit, parse};

    fn resource(annotations: &str) -> Node {
        parse(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n  annotations:\n{annotations}"
        ))
    }

    fn annotations(node: &Node) -> Vec<(String, String)> {
        rnode::get_meta(node)
            .unwrap()
            .annotations
            .into_iter()
            .collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn preprocess_numbers_snapshots_and_copies() {
        let mut nodes = vec![
            resource("    config.kubernetes.io/path: a.yaml\n"),
            resource("    internal.config.kubernetes.io/index: '3'\n"),
        ];
        let snapshot = preprocess_for_internal_annotation_migration(&mut nodes).unwrap();
        assert_eq!(
            snapshot
                .get("0")
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Vec<_>>(),
            // The twins only: nothing reads the rest back.
            pairs(&[(LEGACY_PATH_ANNOTATION, "a.yaml")])
        );
        // Only the ids preprocessing writes name an input.
        assert!(snapshot.get("1").is_some());
        for id in ["2", "00", "01", "+1", "-0", "", "x"] {
            assert!(snapshot.get(id).is_none(), "{id:?}");
        }
        assert_eq!(
            annotations(&nodes[1]),
            pairs(&[
                (LEGACY_INDEX_ANNOTATION, "3"),
                (MIGRATION_ID, "1"),
                (INDEX_ANNOTATION, "3")
            ])
        );
        let mut bad = vec![resource(
            "    config.kubernetes.io/path: a.yaml\n    internal.config.kubernetes.io/path: b.yaml\n",
        )];
        assert_eq!(
            preprocess_for_internal_annotation_migration(&mut bad)
                .unwrap_err()
                .to_string(),
            "resource input to function has mismatched legacy and internal path annotations"
        );
    }

    #[test]
    fn reconcile_follows_the_edited_twin() {
        let both = "    config.kubernetes.io/path: a.yaml\n    internal.config.kubernetes.io/path: a.yaml\n";
        let mut nodes = vec![resource(both), resource(both)];
        let snapshot = preprocess_for_internal_annotation_migration(&mut nodes).unwrap();
        rnode::set_annotation(&mut nodes[0], LEGACY_PATH_ANNOTATION, "moved.yaml").unwrap();
        rnode::set_annotation(&mut nodes[1], PATH_ANNOTATION, "other.yaml").unwrap();
        nodes.push(resource("    config.kubernetes.io/path: gen.yaml\n"));
        assert_eq!(
            finish_filter(&mut nodes, &snapshot).unwrap(),
            FilterOutcome::Reconciled
        );
        for (node, path) in nodes.iter().zip(["moved.yaml", "other.yaml", "gen.yaml"]) {
            assert_eq!(
                annotations(node),
                pairs(&[(LEGACY_PATH_ANNOTATION, path), (PATH_ANNOTATION, path)])
            );
        }
        let mut conflict = vec![resource(both)];
        let snapshot = preprocess_for_internal_annotation_migration(&mut conflict).unwrap();
        rnode::set_annotation(&mut conflict[0], LEGACY_PATH_ANNOTATION, "x.yaml").unwrap();
        rnode::set_annotation(&mut conflict[0], PATH_ANNOTATION, "y.yaml").unwrap();
        assert_eq!(
            reconcile_internal_annotations(&mut conflict, &snapshot)
                .unwrap_err()
                .to_string(),
            "resource input to function has mismatched legacy and internal path annotations"
        );
    }

    #[test]
    fn reconcile_keeps_the_input_format_and_short_circuits_empty_output() {
        let mut nodes = vec![resource("    config.kubernetes.io/path: a.yaml\n")];
        let snapshot = AnnotationSnapshot(vec![vec![(
            LEGACY_PATH_ANNOTATION.to_string(),
            "a.yaml".to_string(),
        )]]);
        rnode::set_annotation(&mut nodes[0], MIGRATION_ID, "0").unwrap();
        reconcile_internal_annotations(&mut nodes, &snapshot).unwrap();
        assert_eq!(
            annotations(&nodes[0]),
            pairs(&[(LEGACY_PATH_ANNOTATION, "a.yaml")])
        );
        assert_eq!(
            finish_filter(&mut [], &snapshot).unwrap(),
            FilterOutcome::Empty
        );
        let mixed = AnnotationSnapshot(vec![
            vec![(PATH_ANNOTATION.to_string(), "a".to_string())],
            vec![(LEGACY_PATH_ANNOTATION.to_string(), "a".to_string())],
        ]);
        assert_eq!(
            reconcile_internal_annotations(&mut nodes, &mixed)
                .unwrap_err()
                .to_string(),
            "the annotation formatting in the input resources is not consistent"
        );
    }

    #[test]
    fn ids_comments_and_order() {
        let mut inputs = vec![
            parse("# head\napiVersion: v1 # api\nkind: A\nmetadata:\n  name: a # name\ndata:\n  x: 1\n  y: 2\n"),
            parse("apiVersion: v1\nkind: B\nmetadata:\n  name: b\n"),
        ];
        set_ids(&mut inputs).unwrap();
        let stdin = function_input(&mut inputs, None).unwrap();
        let text = String::from_utf8(stdin.clone()).unwrap();
        assert!(text.starts_with(
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- # head\n"
        ));
        assert!(text.contains(
            "      internal.config.kubernetes.io/id: '2'\n      config.k8s.io/id: '2'\n"
        ));
        let stdout = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n  apiVersion: v1\n  data: {y: 2, x: 1, z: 3}\n  metadata:\n    annotations: {config.k8s.io/id: '1'}\n    name: a\n- kind: B\n  metadata: {name: b, annotations: {internal.config.kubernetes.io/id: '9'}}\n";
        let mut out = read_function_output(stdout.as_bytes()).unwrap().nodes;
        copy_comments_and_sync_order(&inputs, &mut out).unwrap();
        assert_eq!(
            emit(&out[0]),
            "# head\napiVersion: v1 # api\nkind: A\nmetadata:\n  name: a # name\n  annotations: {}\ndata: {x: 1, y: 2, z: 3}\n"
        );
        assert!(emit(&out[1]).contains("internal.config.kubernetes.io/id: '9'"));
    }

    /// Inputs an identity function echoes, each a case for
    /// `restore_echo` (short form or restored from a copy).
    const ECHOED: &[&str] = &[
        "apiVersion: v1\nkind: A\nmetadata:\n  name: a # name\ndata:\n  x: '1'\n  y: 2\n",
        "# document head\n\napiVersion: v1\nkind: A\nmetadata:\n  name: a\n",
        "apiVersion: v1\nkind: A\nmetadata:\n  name: a\ndata:\n  folded: >-\n    one\n    line\n",
        "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  items:\n  # first key's head\n  - name: x\n    value: 1\n  - # item head\n    name: y\n",
        "apiVersion: v1\nkind: A\nmetadata:\n  name: a\nspec:\n  k: 1\n  j: 2\n  k: 3\n",
        "apiVersion: v1\nkind: A\nmetadata:\n  name: a\n  annotations: {x: y}\nspec: {list: [a, b], e: {}}\n",
    ];

    #[test]
    fn restore_echo_is_reading_the_echo_back() {
        for source in ECHOED {
            let mut inputs = vec![parse(source)];
            set_ids(&mut inputs).unwrap();
            let stdin = function_input(&mut inputs, None).unwrap();
            let mut parsed = read_function_output(&stdin).unwrap().nodes;
            copy_comments_and_sync_order(&inputs, &mut parsed).unwrap();
            let plan = krmgraph_yaml::reparse::Restyle::keeping_comments(rnode::y_node(&inputs[0]))
                .unwrap_or_else(|| panic!("the model declines {source:?}"));
            let mut echoed = inputs[0].clone();
            restore_echo(&mut echoed, |output| plan.apply(output)).unwrap();
            assert_eq!(emit(&echoed), emit(&parsed[0]), "{source}");
            assert_eq!(echoed.kind, parsed[0].kind, "{source}");
        }
    }

    #[test]
    fn function_scope_of_the_config_path() {
        let config = |path: &str| resource(&format!("    config.kubernetes.io/path: {path}\n"));
        assert_eq!(function_scope(None).unwrap(), "");
        assert_eq!(
            function_scope(Some(&config("fns/config.yaml"))).unwrap(),
            "fns"
        );
        assert_eq!(
            function_scope(Some(&config("fns/functions/c.yaml"))).unwrap(),
            "fns"
        );
        assert_eq!(function_scope(Some(&config("c.yaml"))).unwrap(), ".");
        assert_eq!(function_scope(Some(&resource("    a: b\n"))).unwrap(), "");
    }
}
