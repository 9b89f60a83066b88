//! kyaml's `RNode` operations (`yaml/rnode.go`, `fns.go`, `kfns.go`,
//! `types.go`, `mapnode.go`) over owned nodes.
//!
//! Every function that takes a resource first unwraps a document node, as
//! `RNode.Pipe` and `RNode.YNode` do, so a resource read from a file
//! (a `Document`) and one read from a ResourceList (a `Mapping`) behave the
//! same. Nodes kyaml creates carry an empty tag, like Go's `&yaml.Node{}`.
//!
//! Deviation: kyaml's `IsYNodeZero` (a node whose Go `Kind` is 0) has no
//! counterpart, since every [`Node`] has a kind.

use compact_str::CompactString;
use std::collections::BTreeMap;

use super::yamlio::node_to_string;
use super::{KyamlError, Result};
use krmgraph_yaml::node::tag;
use krmgraph_yaml::{Kind, Node, Style};

/// `metadata`.
pub const METADATA_FIELD: &str = "metadata";
/// `annotations`.
pub const ANNOTATIONS_FIELD: &str = "annotations";
/// `labels`.
pub const LABELS_FIELD: &str = "labels";
/// `apiVersion`.
pub const API_VERSION_FIELD: &str = "apiVersion";
/// `kind`.
pub const KIND_FIELD: &str = "kind";
/// `name`.
pub const NAME_FIELD: &str = "name";
/// `namespace`.
pub const NAMESPACE_FIELD: &str = "namespace";
/// The key kyaml wraps a bare sequence document in (`WrapBareSeqNode`).
pub const BARE_SEQ_NODE_WRAPPING_KEY: &str = "bareSeqNodeWrappingKey";

/// The root value of a resource: the content of a document, else the node.
pub fn y_node(node: &Node) -> &Node {
    match (node.kind, node.content.first()) {
        (Kind::Document, Some(root)) => root,
        _ => node,
    }
}

/// Mutable [`y_node`].
pub fn y_node_mut(node: &mut Node) -> &mut Node {
    if node.kind == Kind::Document && !node.content.is_empty() {
        return &mut node.content[0];
    }
    node
}

/// Go's name of a node kind, as kyaml prints it.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Document => "DocumentNode",
        Kind::Sequence => "SequenceNode",
        Kind::Mapping => "MappingNode",
        Kind::Scalar => "ScalarNode",
        Kind::Alias => "AliasNode",
    }
}

/// A plain scalar without a tag (`NewScalarRNode`).
pub fn new_scalar(value: impl Into<CompactString>) -> Node {
    Node {
        kind: Kind::Scalar,
        value: value.into(),
        ..Node::default()
    }
}

/// A `!!str` scalar (`NewStringRNode`, go-yaml's `SetString`): literal
/// style when the text has a newline.
pub fn new_string(value: impl Into<CompactString>) -> Node {
    let value: CompactString = value.into();
    let style = if value.contains('\n') {
        Style::LITERAL
    } else {
        Style::NONE
    };
    Node {
        kind: Kind::Scalar,
        tag: tag::STR.into(),
        value,
        style,
        ..Node::default()
    }
}

/// A node of `kind` with an empty tag (`&yaml.Node{Kind: kind}`).
pub fn new_node(kind: Kind) -> Node {
    Node::new(kind)
}

/// `IsMissingOrNull`: absent, or its root tagged `!!null`.
pub fn is_missing_or_null(node: Option<&Node>) -> bool {
    node.is_none_or(|n| y_node(n).tag == tag::NULL)
}

/// `IsYNodeEmptyMap`.
pub fn is_y_node_empty_map(node: &Node) -> bool {
    node.kind == Kind::Mapping && node.content.is_empty()
}

/// `IsYNodeEmptySeq`.
pub fn is_y_node_empty_seq(node: &Node) -> bool {
    node.kind == Kind::Sequence && node.content.is_empty()
}

/// `IsYNodeNilOrEmpty`: absent, `!!null`, `{}` or `[]`.
pub fn is_y_node_nil_or_empty(node: Option<&Node>) -> bool {
    node.is_none_or(|n| n.tag == tag::NULL || is_y_node_empty_map(n) || is_y_node_empty_seq(n))
}

/// `RNode.IsNilOrEmpty`: [`is_y_node_nil_or_empty`] of the root value.
pub fn is_nil_or_empty(node: Option<&Node>) -> bool {
    is_y_node_nil_or_empty(node.map(y_node))
}

/// `IsEmptyMap`: missing, null, or an empty mapping.
pub fn is_empty_map(node: Option<&Node>) -> bool {
    is_missing_or_null(node) || node.is_some_and(|n| is_y_node_empty_map(y_node(n)))
}

/// `IsYNodeEmptyDoc`: a document whose root is tagged `!!null`
/// (`---\n---`).
pub fn is_y_node_empty_doc(node: &Node) -> bool {
    node.kind == Kind::Document && node.content.first().is_some_and(|c| c.tag == tag::NULL)
}

/// `IsYNodeString`: a scalar tagged `!!str` or not tagged.
pub fn is_y_node_string(node: &Node) -> bool {
    node.kind == Kind::Scalar && (node.tag == tag::STR || node.tag.is_empty())
}

/// `GetValue`: the scalar text of the root, `""` when missing or null.
pub fn get_value(node: Option<&Node>) -> &str {
    match node {
        Some(n) if !is_missing_or_null(Some(n)) => &y_node(n).value,
        _ => "",
    }
}

/// `ErrorIfInvalid`: missing and null nodes pass; otherwise the root must
/// have `kind`.
pub fn error_if_invalid(node: &Node, kind: Kind) -> Result<()> {
    if is_missing_or_null(Some(node)) {
        return Ok(());
    }
    let root = y_node(node);
    if root.kind != kind {
        return Err(wrong_kind(node, kind));
    }
    if kind == Kind::Mapping && !root.content.len().is_multiple_of(2) {
        return Err(KyamlError::OddMapping);
    }
    Ok(())
}

/// The `InvalidNodeKindError` for `node`.
pub fn wrong_kind(node: &Node, expected: Kind) -> KyamlError {
    KyamlError::WrongNodeKind {
        expected: kind_name(expected),
        actual: kind_name(y_node(node).kind),
        contents: node_to_string(node).ok(),
    }
}

/// `RNode.Fields`: the key names of a mapping, in order (duplicates kept).
pub fn fields(node: &Node) -> Result<Vec<String>> {
    error_if_invalid(node, Kind::Mapping)?;
    Ok(pairs(y_node(node))
        .map(|(k, _)| k.value.to_string())
        .collect())
}

/// Key/value pairs of a mapping's content.
pub fn pairs(node: &Node) -> impl Iterator<Item = (&Node, &Node)> {
    node.content.chunks_exact(2).map(|kv| (&kv[0], &kv[1]))
}

/// A field of a mapping: its key and value nodes (`MapNode`).
#[derive(Clone, Copy, Debug)]
pub struct MapEntry<'a> {
    /// The key.
    pub key: &'a Node,
    /// The value.
    pub value: &'a Node,
}

/// `RNode.Field`: the first field named `name`, if the root is a mapping.
pub fn field<'a>(node: &'a Node, name: &str) -> Option<MapEntry<'a>> {
    let root = y_node(node);
    let i = key_index(root, name)?;
    Some(MapEntry {
        key: &root.content[i],
        value: &root.content[i + 1],
    })
}

/// The value of [`field`].
pub fn field_value<'a>(node: &'a Node, name: &str) -> Option<&'a Node> {
    field(node, name).map(|f| f.value)
}

/// Mutable value of [`field`].
pub fn field_value_mut<'a>(node: &'a mut Node, name: &str) -> Option<&'a mut Node> {
    let root = y_node_mut(node);
    let i = key_index(root, name)?;
    Some(&mut root.content[i + 1])
}

/// Mutable key of [`field`].
pub fn field_key_mut<'a>(node: &'a mut Node, name: &str) -> Option<&'a mut Node> {
    let root = y_node_mut(node);
    let i = key_index(root, name)?;
    Some(&mut root.content[i])
}

/// Index of the first key named `name` in a mapping's content (`None` for
/// other kinds).
pub fn key_index(node: &Node, name: &str) -> Option<usize> {
    if node.kind != Kind::Mapping {
        return None;
    }
    (0..node.content.len() / 2)
        .map(|i| 2 * i)
        .find(|&i| same_key(&node.content[i].value, name))
}

/// `a == b`, testing the last bytes first: keys looked up by name (above
/// all annotations: `config.kubernetes.io/index`, `.../path`, ...) share
/// long prefixes and lengths, and this runs for every key passed.
fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().last() == b.as_bytes().last() && a == b
}

/// `RNode.Elements`: the items of a sequence (none for a null node).
pub fn elements(node: &Node) -> Result<&[Node]> {
    error_if_invalid(node, Kind::Sequence)?;
    Ok(&y_node(node).content)
}

/// Comments given to a field [`FieldSetter`] creates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comments {
    /// Head comment of the new key.
    pub head: String,
    /// Line comment of the new key.
    pub line: String,
    /// Foot comment of the new key.
    pub foot: String,
}

/// `FieldSetter`: sets a field of a mapping, or the scalar itself when
/// `name` is empty.
#[derive(Clone, Debug, Default)]
pub struct FieldSetter {
    /// Field name; empty to replace the scalar the setter is applied to.
    pub name: String,
    /// The value; `None` (or a `!!null` node) clears the field.
    pub value: Option<Node>,
    /// Comments of a newly created key.
    pub comments: Comments,
    /// Keep the value's own style even when the field exists.
    pub override_style: bool,
    /// Style of a newly created key.
    pub append_key_style: Style,
}

impl FieldSetter {
    /// Sets `name` to `value`, the common case.
    pub fn new(name: impl Into<String>, value: Node) -> FieldSetter {
        FieldSetter {
            name: name.into(),
            value: Some(value),
            ..FieldSetter::default()
        }
    }

    /// Applies the setter to `node`. Returns the index of the value in the
    /// root's content when a field was set (existing or appended).
    ///
    /// An existing field keeps its key (position, style, comments) and the
    /// style of its old value; the value node is replaced, so the old
    /// value's comments are lost, as in kyaml.
    pub fn filter(mut self, node: &mut Node) -> Result<Option<usize>> {
        let rn = y_node_mut(node);
        if let Some(v) = self.value.as_mut() {
            if is_y_node_string(v)
                && !self.override_style
                && v.style == Style::NONE
                && is_yaml_1_1_non_string(v)
            {
                v.style = Style::DOUBLE_QUOTED;
            }
        }
        if self.name.is_empty() {
            return self.set_scalar(rn).map(|()| None);
        }
        let value = match self.value.take() {
            Some(v) if v.tag != tag::NULL => v,
            _ => {
                clear_field(rn, &self.name)?;
                return Ok(None);
            }
        };
        self.set_field(rn, value).map(Some)
    }

    fn set_scalar(self, rn: &mut Node) -> Result<()> {
        error_if_invalid(rn, Kind::Scalar)?;
        let Some(mut value) = self.value else {
            return Ok(());
        };
        if value.tag == tag::NULL {
            return Ok(());
        }
        if !self.override_style || value.style == Style::NONE {
            value.style = rn.style;
        }
        *rn = value;
        Ok(())
    }

    fn set_field(self, rn: &mut Node, mut value: Node) -> Result<usize> {
        let existing = if is_missing_or_null(Some(rn)) {
            None
        } else {
            error_if_invalid(rn, Kind::Mapping)?;
            key_index(rn, &self.name)
        };
        if let Some(i) = existing {
            let field = &mut rn.content[i + 1];
            if !self.override_style || field.style == Style::NONE {
                value.style = field.style;
            }
            *field = value;
            return Ok(i + 1);
        }
        // Every step adds an annotation or two to every resource, whose
        // mappings are exactly sized when parsed or decoded: grow by the
        // pair, not by doubling, or a step's input holds twice its
        // annotations in spare room (~35 MB at the root of a 7,000-resource
        // tree). A mapping built field by field still grows by doubling.
        if rn.content.len() < 32 {
            rn.content.reserve_exact(2);
        }
        let mut key = Node {
            kind: Kind::Scalar,
            value: self.name.into(),
            style: self.append_key_style,
            ..Node::default()
        };
        key.set_head_comment(self.comments.head);
        key.set_line_comment(self.comments.line);
        key.set_foot_comment(self.comments.foot);
        rn.content.push(key);
        rn.content.push(value);
        Ok(rn.content.len() - 1)
    }
}

/// `SetField(name, value)`.
pub fn set_field(node: &mut Node, name: &str, value: Node) -> Result<()> {
    FieldSetter::new(name, value).filter(node).map(|_| ())
}

/// `FieldClearer{Name}`: removes the first field `name`; returns its value.
pub fn clear_field(node: &mut Node, name: &str) -> Result<Option<Node>> {
    field_clearer(node, name, false)
}

/// `FieldClearer{Name, IfEmpty}`: with `if_empty`, only a value without
/// content (a scalar, `{}`, `[]`) is removed; a non-empty one is skipped and
/// later fields of the same name are considered.
pub fn field_clearer(node: &mut Node, name: &str, if_empty: bool) -> Result<Option<Node>> {
    error_if_invalid(node, Kind::Mapping)?;
    let rn = y_node_mut(node);
    let mut i = 0;
    while i + 1 < rn.content.len() {
        let removable = !if_empty || rn.content[i + 1].content.is_empty();
        if rn.content[i].value == name && removable {
            let removed = rn.content.remove(i + 1);
            rn.content.remove(i);
            return Ok(Some(removed));
        }
        i += 2;
    }
    Ok(None)
}

/// `RNode.GetMeta`'s result: the identifying fields of a resource.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceMeta {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.namespace`.
    pub namespace: String,
    /// `metadata.labels` (empty when absent).
    pub labels: BTreeMap<String, String>,
    /// `metadata.annotations` (empty when absent).
    pub annotations: BTreeMap<String, String>,
}

/// `apiVersion` and `kind` as [`get_meta`] reads them, without copying
/// the rest of the metadata (the walker asks for every node's type).
pub fn type_meta(node: &Node) -> (&str, &str) {
    if is_missing_or_null(Some(node)) {
        return ("", "");
    }
    let value = |name: &str| {
        field(node, name)
            .filter(|f| !is_nil_or_empty(Some(f.value)))
            .map_or("", |f| get_value(Some(f.value)))
    };
    (value(API_VERSION_FIELD), value(KIND_FIELD))
}

/// `RNode.GetMeta`. A null document has empty metadata; a node with none of
/// `apiVersion`, `kind`, `metadata` (including any non-mapping) is
/// [`KyamlError::MissingMetadata`]. Duplicate keys: the first wins.
pub fn get_meta(node: &Node) -> Result<ResourceMeta> {
    meta_view(node).map(|view| view.to_owned())
}

/// [`get_meta`] without copying: the render asks for single annotations
/// of every resource at every step, where building the maps costs more
/// than the rest of the bookkeeping.
#[derive(Clone, Copy, Debug, Default)]
pub struct MetaView<'a> {
    /// `apiVersion`.
    pub api_version: &'a str,
    /// `kind`.
    pub kind: &'a str,
    /// `metadata.name`.
    pub name: &'a str,
    /// `metadata.namespace`.
    pub namespace: &'a str,
    labels: Option<&'a Node>,
    annotations: Option<&'a Node>,
}

impl<'a> MetaView<'a> {
    /// Annotation `key` as [`ResourceMeta::annotations`] has it.
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        // string_pairs, with each value read only for the key looked for,
        // and the keys' lengths compared first: this runs for several keys
        // of every resource at every step.
        pairs(y_node(self.annotations?))
            .find(|(k, _)| y_node(k).value.len() == key.len() && same_key(get_value(Some(k)), key))
            .map(|(_, v)| get_value(Some(v)))
    }

    /// Annotations `keys`, each as [`MetaView::annotation`] has it, found
    /// in one pass over the annotations: the passes over every resource
    /// read several (a twin and its legacy twin, path and index).
    pub fn annotations_of<const N: usize>(&self, keys: [&str; N]) -> [Option<&'a str>; N] {
        let mut found = [None; N];
        let Some(annotations) = self.annotations else {
            return found;
        };
        let mut left = N;
        for (k, v) in pairs(y_node(annotations)) {
            let len = y_node(k).value.len();
            for (slot, key) in found.iter_mut().zip(keys) {
                if slot.is_none() && len == key.len() && same_key(get_value(Some(k)), key) {
                    *slot = Some(get_value(Some(v)));
                    left -= 1;
                }
            }
            if left == 0 {
                break;
            }
        }
        found
    }

    /// The annotations as [`ResourceMeta::annotations`] has them (the
    /// first of duplicate keys wins), in document order.
    pub fn annotations(&self) -> impl Iterator<Item = (&'a str, &'a str)> {
        let mut seen = Vec::new();
        string_pairs(self.annotations).filter(move |(k, _)| {
            let first = !seen.contains(k);
            seen.push(*k);
            first
        })
    }

    /// The owned [`ResourceMeta`].
    pub fn to_owned(&self) -> ResourceMeta {
        let map = |node| {
            let mut out = BTreeMap::new();
            for (k, v) in string_pairs(node) {
                out.entry(k.to_string()).or_insert_with(|| v.to_string());
            }
            out
        };
        ResourceMeta {
            api_version: self.api_version.to_string(),
            kind: self.kind.to_string(),
            name: self.name.to_string(),
            namespace: self.namespace.to_string(),
            labels: map(self.labels),
            annotations: map(self.annotations),
        }
    }
}

/// The borrowed [`get_meta`].
pub fn meta_view(node: &Node) -> Result<MetaView<'_>> {
    let mut m = MetaView::default();
    if is_missing_or_null(Some(node)) {
        return Ok(m);
    }
    let mut missing = true;
    let non_empty = |name: &str| field(node, name).filter(|f| !is_nil_or_empty(Some(f.value)));
    if let Some(f) = non_empty(API_VERSION_FIELD) {
        m.api_version = get_value(Some(f.value));
        missing = false;
    }
    if let Some(f) = non_empty(KIND_FIELD) {
        m.kind = get_value(Some(f.value));
        missing = false;
    }
    let Some(meta) = non_empty(METADATA_FIELD).map(|f| f.value) else {
        return if missing {
            Err(KyamlError::MissingMetadata)
        } else {
            Ok(m)
        };
    };
    let meta_field = |name: &str| field(meta, name).filter(|f| !is_nil_or_empty(Some(f.value)));
    if let Some(f) = meta_field(NAME_FIELD) {
        m.name = &y_node(f.value).value;
        missing = false;
    }
    if let Some(f) = meta_field(NAMESPACE_FIELD) {
        m.namespace = get_value(Some(f.value));
        missing = false;
    }
    if let Some(f) = meta_field(LABELS_FIELD) {
        m.labels = Some(f.value);
        missing = false;
    }
    if let Some(f) = meta_field(ANNOTATIONS_FIELD) {
        m.annotations = Some(f.value).filter(|n| is_mapping_or_null(n));
        missing = false;
    }
    if missing {
        return Err(KyamlError::MissingMetadata);
    }
    Ok(m)
}

/// [`meta_view`] for reading annotations only: the same annotations (a
/// view `meta_view` refuses has none), without looking up the other fields.
pub fn annotations_view(node: &Node) -> MetaView<'_> {
    let mut m = MetaView::default();
    if is_missing_or_null(Some(node)) {
        return m;
    }
    m.annotations = non_empty_field(node, METADATA_FIELD)
        .and_then(|meta| non_empty_field(meta, ANNOTATIONS_FIELD))
        .filter(|n| is_mapping_or_null(n));
    m
}

/// Whether `node` reads as annotations (`ErrorIfInvalid(MappingNode)`
/// passes): every reader of a [`MetaView`]'s annotations skips them
/// otherwise, so the view keeps only those that do.
fn is_mapping_or_null(node: &Node) -> bool {
    error_if_invalid(node, Kind::Mapping).is_ok()
}

/// The value of field `name` unless it is nil or empty.
fn non_empty_field<'a>(node: &'a Node, name: &str) -> Option<&'a Node> {
    field(node, name)
        .filter(|f| !is_nil_or_empty(Some(f.value)))
        .map(|f| f.value)
}

/// A mapping's fields as strings (`VisitFields` + `GetValue`), duplicates
/// included; nothing for a non-mapping.
fn string_pairs(node: Option<&Node>) -> impl Iterator<Item = (&str, &str)> {
    let node = node.filter(|n| error_if_invalid(n, Kind::Mapping).is_ok());
    node.into_iter()
        .flat_map(|n| pairs(y_node(n)))
        .map(|(k, v)| (get_value(Some(k)), get_value(Some(v))))
}

/// `RNode.GetAnnotations()`: the annotations under the first non-empty
/// `metadata`, later duplicate keys winning (kyaml's `getMapFromMeta`).
pub fn get_annotations(node: &Node) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let root = y_node(node);
    if is_missing_or_null(Some(root)) || root.kind != Kind::Mapping {
        return out;
    }
    let Some(meta) = key_index(root, METADATA_FIELD)
        .map(|i| &root.content[i + 1])
        .filter(|m| !is_y_node_nil_or_empty(Some(m)))
    else {
        return out;
    };
    if meta.kind != Kind::Mapping {
        return out;
    }
    if let Some(i) = key_index(meta, ANNOTATIONS_FIELD) {
        for (k, v) in pairs(&meta.content[i + 1]) {
            out.insert(k.value.to_string(), v.value.to_string());
        }
    }
    out
}

/// `AnnotationGetter`: the value node of annotation `key`.
pub fn get_annotation<'a>(node: &'a Node, key: &str) -> Result<Option<&'a Node>> {
    lookup(node, &[METADATA_FIELD, ANNOTATIONS_FIELD, key])
}

/// `AnnotationSetter`: clears empty annotations/metadata, then sets the
/// annotation to a single-quoted string, creating `metadata` and
/// `annotations` (appended, block style) when missing. An existing key keeps
/// its position and its value's style.
pub fn set_annotation(node: &mut Node, key: &str, value: &str) -> Result<()> {
    let mut v = new_string(value);
    v.style = Style::SINGLE_QUOTED;
    // The usual case, on every resource at every step: the annotations are
    // there and not empty, so clearing empty ones changes nothing and the
    // path to them need not be looked up twice.
    if let Some(annotations) = filled_annotations(node) {
        // An existing key (the ids, the paths again) takes the value with
        // its old value's style, as `FieldSetter` sets it.
        if let Some(i) = key_index(annotations, key) {
            let field = &mut annotations.content[i + 1];
            v.style = field.style;
            *field = v;
            return Ok(());
        }
        return FieldSetter::new(key, v).filter(annotations).map(|_| ());
    }
    clear_empty_annotations(node)?;
    add_metadata_node(node, ANNOTATIONS_FIELD, key, v)
}

/// `metadata.annotations` when the node, its `metadata` and that are all
/// mappings.
fn mapping_annotations(node: &mut Node) -> Option<&mut Node> {
    let root = y_node_mut(node);
    let meta = key_index(root, METADATA_FIELD)?;
    let meta = &mut root.content[meta + 1];
    let annotations = key_index(meta, ANNOTATIONS_FIELD)?;
    let annotations = &mut meta.content[annotations + 1];
    (annotations.kind == Kind::Mapping).then_some(annotations)
}

/// `metadata.annotations` when it is a mapping with at least one entry
/// under a mapping `metadata`.
fn filled_annotations(node: &mut Node) -> Option<&mut Node> {
    mapping_annotations(node).filter(|annotations| !annotations.content.is_empty())
}

/// `LabelSetter`: sets a label to a single-quoted string.
pub fn set_label(node: &mut Node, key: &str, value: &str) -> Result<()> {
    let mut v = new_string(value);
    v.style = Style::SINGLE_QUOTED;
    add_metadata_node(node, LABELS_FIELD, key, v)
}

fn add_metadata_node(node: &mut Node, field: &str, key: &str, value: Node) -> Result<()> {
    match lookup_create(node, Kind::Mapping, &[METADATA_FIELD, field])? {
        Some(map) => FieldSetter::new(key, value).filter(map).map(|_| ()),
        None => Ok(()),
    }
}

/// `AnnotationClearer`: removes annotation `key`; returns its value.
pub fn clear_annotation(node: &mut Node, key: &str) -> Result<Option<Node>> {
    // The usual case, on every resource at every step: block mappings all
    // the way, found without parsing a path. Anything else goes the
    // general way, which reports what is wrong with it.
    if let Some(annotations) = mapping_annotations(node) {
        return clear_field(annotations, key);
    }
    match lookup_mut(node, &[METADATA_FIELD, ANNOTATIONS_FIELD])? {
        Some(annotations) => clear_field(annotations, key),
        None => Ok(None),
    }
}

/// `ClearEmptyAnnotations`: removes `metadata.annotations` and then
/// `metadata` when they have no content.
pub fn clear_empty_annotations(node: &mut Node) -> Result<()> {
    if let Some(meta) = lookup_mut(node, &[METADATA_FIELD])? {
        field_clearer(meta, ANNOTATIONS_FIELD, true)?;
    }
    field_clearer(node, METADATA_FIELD, true)?;
    Ok(())
}

/// `Lookup(path...)` (`PathGetter` without create). Parts are field names,
/// element indexes (`0`, `-` for the last), or `[name=value]` matchers.
pub fn lookup<'a>(node: &'a Node, path: &[&str]) -> Result<Option<&'a Node>> {
    let mut current = y_node(node);
    for part in clean_path(path) {
        match path_part(part)? {
            PathPart::Index(i) => match elements(current)?.get(i) {
                Some(e) => current = e,
                None => return Ok(None),
            },
            PathPart::Last => match elements(current)?.last() {
                Some(e) => current = e,
                None => return Ok(None),
            },
            PathPart::Element(name, value) => match element_matching(current, &name, &value)? {
                Some(i) => current = &y_node(current).content[i],
                None => return Ok(None),
            },
            PathPart::Field(name) => {
                if is_missing_or_null(Some(current)) {
                    return Ok(None);
                }
                error_if_invalid(current, Kind::Mapping)?;
                match field_value(current, name) {
                    Some(v) => current = y_node(v),
                    None => return Ok(None),
                }
            }
        }
    }
    Ok(Some(current))
}

/// Mutable [`lookup`].
pub fn lookup_mut<'a>(node: &'a mut Node, path: &[&str]) -> Result<Option<&'a mut Node>> {
    let parts = clean_path(path);
    walk_path(y_node_mut(node), &parts, None)
}

/// `LookupCreate(kind, path...)`: [`lookup`] creating missing fields as it
/// goes (the last one of `kind`, intermediate ones as mappings or, before an
/// index part, sequences) and missing `[name=value]` elements. A null node
/// on the way stops the lookup (`None`), as in kyaml.
pub fn lookup_create<'a>(
    node: &'a mut Node,
    kind: Kind,
    path: &[&str],
) -> Result<Option<&'a mut Node>> {
    let parts = clean_path(path);
    walk_path(y_node_mut(node), &parts, Some(kind))
}

fn walk_path<'a>(
    node: &'a mut Node,
    parts: &[&str],
    create: Option<Kind>,
) -> Result<Option<&'a mut Node>> {
    let Some((&part, rest)) = parts.split_first() else {
        return Ok(Some(node));
    };
    let next = rest.first().copied().unwrap_or("");
    let child = match path_part(part)? {
        PathPart::Index(i) => {
            elements(node)?;
            y_node_mut(node).content.get_mut(i)
        }
        PathPart::Last => {
            elements(node)?;
            y_node_mut(node).content.last_mut()
        }
        PathPart::Element(name, value) => element_create(node, &name, &value, create)?,
        PathPart::Field(name) => field_create(node, name, create.map(|k| path_part_kind(next, k)))?,
    };
    match child {
        Some(c) => walk_path(y_node_mut(c), rest, create),
        None => Ok(None),
    }
}

fn field_create<'a>(
    node: &'a mut Node,
    name: &str,
    create: Option<Kind>,
) -> Result<Option<&'a mut Node>> {
    if is_missing_or_null(Some(node)) {
        return Ok(None);
    }
    error_if_invalid(node, Kind::Mapping)?;
    let root = y_node_mut(node);
    if let Some(i) = key_index(root, name) {
        return Ok(Some(&mut root.content[i + 1]));
    }
    let Some(kind) = create else {
        return Ok(None);
    };
    let i = FieldSetter::new(name, new_node(kind)).filter(root)?;
    Ok(i.map(move |i| &mut root.content[i]))
}

fn element_create<'a>(
    node: &'a mut Node,
    name: &str,
    value: &str,
    create: Option<Kind>,
) -> Result<Option<&'a mut Node>> {
    if let Some(i) = element_matching(node, name, value)? {
        return Ok(Some(&mut y_node_mut(node).content[i]));
    }
    if create.is_none() {
        return Ok(None);
    }
    let element = if name.is_empty() {
        new_scalar(value)
    } else {
        let mut map = new_node(Kind::Mapping);
        map.content = vec![new_scalar(name), new_scalar(value)];
        map
    };
    let seq = y_node_mut(node);
    seq.content.push(element);
    Ok(seq.content.last_mut())
}

/// `MatchElement(name, value)`: the index of the first item whose scalar
/// value (`name` empty) or field `name` equals `value`.
fn element_matching(node: &Node, name: &str, value: &str) -> Result<Option<usize>> {
    error_if_invalid(node, Kind::Sequence)?;
    let items = &y_node(node).content;
    if name.is_empty() {
        return Ok(items.iter().position(|i| i.value == value));
    }
    Ok(items.iter().position(|item| {
        item.kind == Kind::Mapping
            && !is_missing_or_null(Some(item))
            && field_value(item, name).is_some_and(|v| v.value == value)
    }))
}

enum PathPart<'a> {
    Index(usize),
    Last,
    Element(String, String),
    Field(&'a str),
}

fn path_part(part: &str) -> Result<PathPart<'_>> {
    if let Some(idx) = go_atoi(part) {
        return usize::try_from(idx)
            .map(PathPart::Index)
            .map_err(|_| KyamlError::InvalidPath(format!("array index {idx} cannot be negative")));
    }
    match part {
        "-" => Ok(PathPart::Last),
        "*" => Err(KyamlError::InvalidPath(
            "wildcard is not supported in PathGetter".into(),
        )),
        _ if is_list_index(part) => {
            let (name, value) = split_index_name_value(part)?;
            Ok(PathPart::Element(name.to_string(), value.to_string()))
        }
        _ => Ok(PathPart::Field(part)),
    }
}

/// `cleanPath`: trims parts and drops empty ones.
fn clean_path<'a>(path: &[&'a str]) -> Vec<&'a str> {
    path.iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect()
}

/// `getPathPartKind`.
fn path_part_kind(next: &str, default: Kind) -> Kind {
    if is_list_index(next) || go_atoi(next).is_some_and(|i| i >= 0) {
        Kind::Sequence
    } else if next.is_empty() {
        default
    } else {
        Kind::Mapping
    }
}

/// `IsListIndex`: `[...]`.
pub fn is_list_index(part: &str) -> bool {
    part.starts_with('[') && part.ends_with(']')
}

/// `SplitIndexNameValue`: `[name=value]` into its halves.
pub fn split_index_name_value(part: &str) -> Result<(&str, &str)> {
    let inner = part.strip_suffix(']').unwrap_or(part);
    let inner = inner.strip_prefix('[').unwrap_or(inner);
    inner.split_once('=').ok_or_else(|| {
        KyamlError::InvalidPath(
            "list path element must contain fieldName=fieldValue for element to match".into(),
        )
    })
}

/// Go's `strconv.Atoi` for a 64-bit `int`.
pub fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `SyncMapNodesOrder`: reorders the fields of `to` to follow `from`; fields
/// only in `to` follow in their order. Nothing happens unless both are
/// mappings (or null). As in kyaml, a document `to` is replaced by its
/// reordered root, and the first of duplicate keys is taken for each name.
pub fn sync_map_nodes_order(from: &Node, to: &mut Node) {
    if already_in_order(from, to) {
        return;
    }
    if error_if_invalid(from, Kind::Mapping).is_err()
        || error_if_invalid(to, Kind::Mapping).is_err()
    {
        return;
    }
    let root = y_node_mut(to);
    let content = match moved_in_order(y_node(from), root) {
        Some(content) => content,
        None => match reordered_by_names(from, root) {
            Some(content) => content,
            None => return,
        },
    };
    let mut reordered = std::mem::take(root);
    reordered.content = content;
    if reordered.kind != Kind::Alias {
        reordered.value = CompactString::default();
    }
    *to = reordered;
}

/// Whether [`sync_map_nodes_order`] would give `to` back as it is: two
/// mappings, `to` not a document, without duplicate keys, its fields in
/// `from`'s order with the ones `from` lacks last. Functions mostly keep
/// the order of their input, and rebuilding every mapping of every
/// resource at every step is a large part of a render.
fn already_in_order(from: &Node, to: &Node) -> bool {
    let (from, root) = (y_node(from), to);
    // The checks below are quadratic; large mappings take the slow path.
    const SMALL: usize = 128;
    if from.kind != Kind::Mapping
        || root.kind != Kind::Mapping
        || !root.value.is_empty()
        || root.content.len() > SMALL
        || from.content.len() > SMALL
    {
        return false;
    }
    let position = |name: &str| pairs(from).position(|(k, _)| k.value == name);
    let mut last = None;
    let mut unknown_seen = false;
    for (i, (key, _)) in pairs(root).enumerate() {
        if pairs(root).take(i).any(|(k, _)| k.value == key.value) {
            return false;
        }
        match position(&key.value) {
            Some(p) if !unknown_seen && last.is_none_or(|l| l < p) => last = Some(p),
            Some(_) => return false,
            None => unknown_seen = true,
        }
    }
    true
}

/// [`sync_map_nodes_order`]'s reordering in general, as kyaml does it:
/// `from`'s field names, each taking the first field of `root` of that
/// name, then the rest of `root`'s names.
fn reordered_by_names(from: &Node, root: &mut Node) -> Option<Vec<Node>> {
    let (Ok(from_fields), Ok(mut to_fields)) = (fields(from), fields(root)) else {
        return None;
    };
    let mut order = Vec::with_capacity(to_fields.len());
    for name in &from_fields {
        if let Some(pos) = to_fields.iter().position(|n| n == name) {
            order.push(to_fields.remove(pos));
        }
    }
    order.append(&mut to_fields);
    Some(reorder_fields(root, &order))
}

/// [`sync_map_nodes_order`]'s reordering of `root`'s fields (moved out of
/// it) by `from`'s, the fields `from` lacks last, where neither mapping
/// has a duplicate key and both are small: then no name needs copying or
/// indexing. A function that sorts keys (the kustomize-era built-ins' JSON
/// round trip) sends every mapping of every output here. `None` (and
/// `root` untouched) otherwise.
fn moved_in_order(from: &Node, root: &mut Node) -> Option<Vec<Node>> {
    const SMALL: usize = 128;
    let has_duplicates = |map: &Node| {
        pairs(map)
            .enumerate()
            .any(|(i, (k, _))| pairs(map).take(i).any(|(p, _)| p.value == k.value))
    };
    if from.content.len() > SMALL
        || root.content.len() > SMALL
        || has_duplicates(from)
        || has_duplicates(root)
    {
        return None;
    }
    let mut slots: Vec<Option<(Node, Node)>> = Vec::with_capacity(root.content.len() / 2);
    let mut old = std::mem::take(&mut root.content).into_iter();
    while let (Some(k), Some(v)) = (old.next(), old.next()) {
        slots.push(Some((k, v)));
    }
    let mut content = Vec::with_capacity(slots.len() * 2);
    for (name, _) in pairs(from) {
        let slot = slots
            .iter_mut()
            .find(|slot| slot.as_ref().is_some_and(|(k, _)| k.value == name.value));
        if let Some((k, v)) = slot.and_then(Option::take) {
            content.push(k);
            content.push(v);
        }
    }
    for (k, v) in slots.into_iter().flatten() {
        content.push(k);
        content.push(v);
    }
    Some(content)
}

/// A mapping's key/value nodes with the fields in `order` (each name the
/// first field of that name, as kyaml's `Field` finds it). The nodes are
/// moved, not copied, unless a name repeats: then kyaml's result holds the
/// first field twice, which takes a copy.
fn reorder_fields(root: &mut Node, order: &[String]) -> Vec<Node> {
    let mut seen = std::collections::HashSet::new();
    if !order.iter().all(|n| seen.insert(n.as_str())) {
        let mut content = Vec::with_capacity(root.content.len());
        for name in order {
            if let Some(f) = field(root, name) {
                content.push(f.key.clone());
                content.push(f.value.clone());
            }
        }
        return content;
    }
    let mut slots: Vec<Option<(Node, Node)>> = Vec::with_capacity(root.content.len() / 2);
    let mut old = std::mem::take(&mut root.content).into_iter();
    while let (Some(k), Some(v)) = (old.next(), old.next()) {
        slots.push(Some((k, v)));
    }
    let mut index = std::collections::HashMap::with_capacity(slots.len());
    for (i, slot) in slots.iter().enumerate() {
        if let Some((k, _)) = slot {
            index.entry(k.value.clone()).or_insert(i);
        }
    }
    let mut content = Vec::with_capacity(slots.len() * 2);
    for name in order {
        if let Some((k, v)) = index.get(name.as_str()).and_then(|&i| slots[i].take()) {
            content.push(k);
            content.push(v);
        }
    }
    content
}

/// kyaml's `IsYaml1_1NonString`: whether a plain scalar would read as
/// something else than a string under YAML 1.1 (`on`, `yes`, `0x1F`, `~`,
/// `a: b`, `[x]`). kyaml asks go-yaml v2; this approximates v2's resolver
/// and recognises flow collections, block sequences, mappings and
/// comment-only text by their indicators.
pub fn is_yaml_1_1_non_string(node: &Node) -> bool {
    node.kind == Kind::Scalar && is_value_non_string(&node.value)
}

fn is_value_non_string(value: &str) -> bool {
    if value.is_empty() || value.contains('\n') {
        return false;
    }
    let v = value.trim_matches([' ', '\t']);
    if v.is_empty() || v.starts_with('#') {
        return true;
    }
    const KEYWORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
        ".NaN", ".NAN",
    ];
    if KEYWORDS.contains(&v) || is_yaml_1_1_number(v) {
        return true;
    }
    let first = v.as_bytes()[0];
    if matches!(
        first,
        b'\'' | b'"' | b'|' | b'>' | b'!' | b'&' | b'*' | b'%' | b'@' | b'`'
    ) {
        return false;
    }
    matches!(first, b'[' | b'{')
        || v == "-"
        || v.starts_with("- ")
        || v.ends_with(':')
        || v.contains(": ")
}

fn is_yaml_1_1_number(v: &str) -> bool {
    let plain: String = v.chars().filter(|&c| c != '_').collect();
    let unsigned = plain.strip_prefix(['+', '-']).unwrap_or(&plain);
    if unsigned.is_empty() {
        return false;
    }
    if let Some(bin) = unsigned.strip_prefix("0b") {
        return !bin.is_empty() && bin.bytes().all(|b| b == b'0' || b == b'1');
    }
    if let Some(hex) = unsigned.strip_prefix("0x") {
        return !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit());
    }
    if unsigned.bytes().all(|b| b.is_ascii_digit()) {
        return true;
    }
    krmgraph_yaml::resolve::is_yaml_style_float(&plain)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The first document of `yaml`.
    pub(crate) fn parse(yaml: &str) -> Node {
        krmgraph_yaml::decode::unmarshal(yaml.as_bytes())
            .unwrap()
            .unwrap()
    }

    /// `node` as kyaml's encoder writes it.
    pub(crate) fn emit(node: &Node) -> String {
        node_to_string(node).unwrap()
    }

    #[test]
    fn set_annotation_cases() {
        let cases: &[(&str, &str, &str, &str)] = &[
            (
                "kind: A\n",
                "a",
                "b",
                "kind: A\nmetadata:\n  annotations:\n    a: 'b'\n",
            ),
            (
                "kind: A\nmetadata:\n  name: x\n  annotations: {}\n  labels: {}\n",
                "a",
                "b",
                "kind: A\nmetadata:\n  name: x\n  labels: {}\n  annotations:\n    a: 'b'\n",
            ),
            (
                "metadata: {}\nkind: A\n",
                "a",
                "b",
                "kind: A\nmetadata:\n  annotations:\n    a: 'b'\n",
            ),
            (
                "metadata:\n  annotations:\n    # head\n    a: old # gone\n    z: \"1\"\n",
                "a",
                "new",
                "metadata:\n  annotations:\n    # head\n    a: new\n    z: \"1\"\n",
            ),
            (
                "metadata:\n  annotations:\n    z: \"1\"\n",
                "z",
                "2",
                "metadata:\n  annotations:\n    z: \"2\"\n",
            ),
            (
                "metadata:\n  annotations: {a: \"1\"}\n",
                "b",
                "x\ny",
                "metadata:\n  annotations: {a: \"1\", b: 'x\n\n      y'}\n",
            ),
        ];
        for (input, key, value, want) in cases {
            let mut node = parse(input);
            set_annotation(&mut node, key, value).unwrap();
            assert_eq!(emit(&node), *want, "{input:?}");
        }
    }

    #[test]
    fn set_annotation_on_a_scalar_fails_like_kyaml() {
        let mut node = parse("hello\n");
        let err = set_annotation(&mut node, "a", "b").unwrap_err();
        assert_eq!(
            err.to_string(),
            "wrong node kind: expected MappingNode but got ScalarNode: node contents:\nhello\n"
        );
    }

    #[test]
    fn clear_annotations() {
        let mut node = parse("metadata:\n  name: x\n  annotations:\n    a: b\n");
        let removed = clear_annotation(&mut node, "a").unwrap();
        assert_eq!(removed.map(|n| n.value).as_deref(), Some("b"));
        assert_eq!(emit(&node), "metadata:\n  name: x\n  annotations: {}\n");
        clear_empty_annotations(&mut node).unwrap();
        assert_eq!(emit(&node), "metadata:\n  name: x\n");
        let mut node = parse("metadata:\n  annotations: {}\nkind: A\n");
        clear_empty_annotations(&mut node).unwrap();
        assert_eq!(emit(&node), "kind: A\n");
        let mut node = parse("metadata:\nkind: A\n");
        clear_empty_annotations(&mut node).unwrap();
        assert_eq!(emit(&node), "kind: A\n");
    }

    #[test]
    fn field_clearer_if_empty_skips_non_empty_values() {
        let mut node = parse("a: {k: v}\nb: 1\na: []\n");
        let removed = field_clearer(&mut node, "a", true).unwrap();
        assert!(removed.is_some());
        assert_eq!(emit(&node), "a: {k: v}\nb: 1\n");
        assert!(field_clearer(&mut node, "a", true).unwrap().is_none());
        assert!(field_clearer(&mut node, "b", true).unwrap().is_some());
    }

    #[test]
    fn get_meta_cases() {
        let meta = get_meta(&parse(
            "apiVersion: v1\nkind: A\nmetadata:\n  name: n\n  namespace: ns\n  labels: {a: b}\n  annotations:\n    x: \"1\"\n    x: \"2\"\n",
        ))
        .unwrap();
        assert_eq!((meta.api_version.as_str(), meta.kind.as_str()), ("v1", "A"));
        assert_eq!((meta.name.as_str(), meta.namespace.as_str()), ("n", "ns"));
        assert_eq!(meta.labels.get("a").map(String::as_str), Some("b"));
        assert_eq!(meta.annotations.get("x").map(String::as_str), Some("1"));
        assert!(matches!(
            get_meta(&parse("hello\n")),
            Err(KyamlError::MissingMetadata)
        ));
        assert!(matches!(
            get_meta(&parse("- a\n")),
            Err(KyamlError::MissingMetadata)
        ));
        assert!(matches!(
            get_meta(&parse("a: b\n")),
            Err(KyamlError::MissingMetadata)
        ));
        assert_eq!(get_meta(&parse("~\n")).unwrap(), ResourceMeta::default());
        let meta = get_meta(&parse("metadata:\n  labels: x\n  annotations: {}\n")).unwrap();
        assert!(meta.labels.is_empty() && meta.annotations.is_empty());
    }

    #[test]
    fn lookup_paths() {
        let node = parse(
            "spec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n    args: [--v, -jar]\n",
        );
        let get = |path: &[&str]| lookup(&node, path).unwrap().map(|n| n.value.clone());
        assert_eq!(
            get(&["spec", "containers", "[name=b]", "args", "1"]).as_deref(),
            Some("-jar")
        );
        assert_eq!(
            get(&["spec", "containers", "0", "image"]).as_deref(),
            Some("x")
        );
        assert_eq!(
            get(&["spec", "containers", "-", "name"]).as_deref(),
            Some("b")
        );
        assert_eq!(
            get(&["spec", "containers", "[name=b]", "args", "[=--v]"]).as_deref(),
            Some("--v")
        );
        assert_eq!(get(&["spec", "missing", "x"]), None);
        assert_eq!(get(&["spec", "containers", "5"]), None);
        let err = |path: &[&str]| lookup(&node, path).unwrap_err().to_string();
        assert_eq!(
            err(&["spec", "*"]),
            "wildcard is not supported in PathGetter"
        );
        assert_eq!(
            err(&["spec", "containers", "-1"]),
            "array index -1 cannot be negative"
        );
        assert_eq!(
            err(&["spec", "containers", "[name]"]),
            "list path element must contain fieldName=fieldValue for element to match"
        );
        assert!(err(&["spec", "containers", "name"])
            .starts_with("wrong node kind: expected MappingNode but got SequenceNode"));
    }

    #[test]
    fn lookup_create_builds_missing_parts() {
        let mut node = parse("kind: A\n");
        lookup_create(
            &mut node,
            Kind::Mapping,
            &["spec", "list", "[name=x]", "env"],
        )
        .unwrap();
        assert_eq!(
            emit(&node),
            "kind: A\nspec:\n  list:\n  - name: x\n    env: {}\n"
        );
        let mut node = parse("metadata:\n");
        assert!(
            lookup_create(&mut node, Kind::Mapping, &["metadata", "labels"])
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn field_setter_styles() {
        let mut node = parse("a: 'x'\n");
        set_field(&mut node, "a", new_scalar("y")).unwrap();
        set_field(&mut node, "b", new_scalar("on")).unwrap();
        set_field(&mut node, "c", new_scalar("plain")).unwrap();
        assert_eq!(emit(&node), "a: 'y'\nb: \"on\"\nc: plain\n");
        let mut v = new_scalar("z");
        v.style = Style::DOUBLE_QUOTED;
        FieldSetter {
            override_style: true,
            ..FieldSetter::new("a", v)
        }
        .filter(&mut node)
        .unwrap();
        set_field(
            &mut node,
            "c",
            Node {
                tag: tag::NULL.into(),
                ..new_scalar("~")
            },
        )
        .unwrap();
        assert_eq!(emit(&node), "a: \"z\"\nb: \"on\"\n");
    }

    #[test]
    fn sync_map_nodes_order_follows_from() {
        let from = parse("b: 1\na: 2\nc: 3\n");
        let mut to = parse("# doc\n\n# head of z\nz: 0\na: 2\nb: 1\n");
        sync_map_nodes_order(&from, &mut to);
        assert_eq!(emit(&to), "b: 1\na: 2\n# head of z\nz: 0\n");
        assert_eq!(to.kind, Kind::Mapping, "a document is replaced by its root");
    }

    #[test]
    fn moving_fields_in_order_is_reordering_by_names() {
        let map = |keys: &str| {
            let mut m = Node::mapping();
            for k in keys.chars() {
                m.content.push(Node::string(k.to_string()));
                m.content.push(Node::string(format!("v{k}")));
            }
            m
        };
        let cases = [
            ("abc", "cba"),
            ("abc", "xcbya"),
            ("abc", "xyz"),
            ("", "ba"),
            ("ab", ""),
            ("dcba", "abcd"),
            ("ace", "edcba"),
        ];
        for (from, to) in cases {
            let (from, to) = (map(from), map(to));
            let moved = moved_in_order(&from, &mut to.clone()).expect("no duplicates");
            let named = reordered_by_names(&from, &mut to.clone()).unwrap();
            assert_eq!(moved, named, "{from:?} {to:?}");
        }
        // Duplicate keys take the general path.
        assert!(moved_in_order(&map("aa"), &mut map("a")).is_none());
        assert!(moved_in_order(&map("a"), &mut map("aba")).is_none());
    }

    #[test]
    fn yaml_1_1_non_strings() {
        for v in [
            "on", "Off", "y", "1", "0x1F", "1_000", "1.5", ".5", "~", "null", "[a]", "{a: b}",
            "a: b", "- x", "# c",
        ] {
            assert!(is_value_non_string(v), "{v}");
        }
        for v in [
            "",
            "abc",
            "2021-01-01",
            "'q'",
            "\"q\"",
            "a#b",
            "1.2.3",
            "a\nb",
            "-x",
        ] {
            assert!(!is_value_non_string(v), "{v}");
        }
    }
}
