//! kyaml's `yaml/walk.Walker` with two sources, as `comments.CopyComments`
//! uses it: a destination (the function's input resource, which kyaml
//! walks as a throw-away copy) and an origin (the function's output
//! resource).
//!
//! The walker visits the union of both sides' fields (sorted), map keys as
//! scalars (`VisitKeysAsScalars`), and lists either as a whole
//! (`VisitList`) or, when the OpenAPI schema says the list merges by key,
//! also element by element matched on the merge keys (the associative walk).
//! kyaml edits its copy of the destination as it goes (drops null fields,
//! and in the associative walk drops unmatched and empty elements and
//! re-appends matched ones). Only the associative walk's edits change what
//! later steps of the walk see (which elements later lookups find), so the
//! destination is borrowed, and each merge-keyed list the walk reaches is
//! copied and edited as kyaml edits it, with everything below it; copying
//! the whole input, as kyaml does, costs more than the rest of the walk.
//! Visitors here always return the destination, as kyaml's comment copier
//! does, so a walk "returns" whether a destination exists.

use super::openapi::{self, SchemaRef};
use super::rnode::{
    self, error_if_invalid, field, field_value_mut, is_empty_map, is_missing_or_null,
    is_nil_or_empty, key_index, y_node, y_node_mut,
};
use super::Result;
use krmgraph_yaml::{Kind, Node};

/// What a walk does at each node: `dest` is the destination side, `origin`
/// the origin side, either may be absent. Nodes are as kyaml's
/// `RNode.Document()` gives them (a top-level document stays a document).
pub trait Visitor {
    /// Called for mappings (and for nodes that are null on both sides).
    fn visit_map(&self, dest: Option<&Node>, origin: Option<&mut Node>) -> Result<()>;
    /// Called for scalars, and for map keys.
    fn visit_scalar(&self, dest: Option<&Node>, origin: Option<&mut Node>) -> Result<()>;
    /// Called for sequences.
    fn visit_list(&self, dest: Option<&Node>, origin: Option<&mut Node>) -> Result<()>;
}

/// The destination side of a walk: borrowed, or (below a merge-keyed list)
/// a copy the walk edits as kyaml edits its copy.
pub enum Dest<'a> {
    /// A node of the caller's, never modified.
    Shared(&'a Node),
    /// A node of the walk's own copy.
    Owned(&'a mut Node),
}

impl Dest<'_> {
    fn node(&self) -> &Node {
        match self {
            Dest::Shared(n) => n,
            Dest::Owned(n) => n,
        }
    }

    /// The value of field `name`, on the same side.
    fn field_value(&mut self, name: &str) -> Option<Dest<'_>> {
        match self {
            Dest::Shared(n) => rnode::field_value(n, name).map(Dest::Shared),
            Dest::Owned(n) => field_value_mut(n, name).map(Dest::Owned),
        }
    }
}

fn node_of<'a>(dest: &'a Option<Dest<'_>>) -> Option<&'a Node> {
    dest.as_ref().map(Dest::node)
}

/// `walk.Walker` over a destination and an origin.
pub struct Walker<'v, V: Visitor> {
    visitor: &'v V,
    visit_keys_as_scalars: bool,
}

impl<'v, V: Visitor> Walker<'v, V> {
    /// A walker calling `visitor`; with `visit_keys_as_scalars`, map keys
    /// are visited with [`Visitor::visit_scalar`].
    pub fn new(visitor: &'v V, visit_keys_as_scalars: bool) -> Walker<'v, V> {
        Walker {
            visitor,
            visit_keys_as_scalars,
        }
    }

    /// `Walker.Walk`: `Ok(true)` when it returns the destination.
    pub fn walk(
        &self,
        dest: Option<Dest<'_>>,
        mut origin: Option<&mut Node>,
        schema: Option<SchemaRef>,
    ) -> Result<bool> {
        let schema = get_schema(node_of(&dest), origin.as_deref(), schema);
        let kind = [node_of(&dest), origin.as_deref()]
            .into_iter()
            .flatten()
            .find(|n| !is_missing_or_null(Some(n)))
            .map(|n| y_node(n).kind);
        match kind {
            None => self.walk_map(dest, origin, schema),
            Some(Kind::Mapping) => {
                check_sources(node_of(&dest), origin.as_deref(), Kind::Mapping)?;
                self.walk_map(dest, origin, schema)
            }
            Some(Kind::Sequence) => {
                check_sources(node_of(&dest), origin.as_deref(), Kind::Sequence)?;
                match schema {
                    Some(s) if s.has_merge_strategy() => {
                        self.walk_associative_sequence(dest, origin, s)
                    }
                    _ => {
                        self.visitor
                            .visit_list(node_of(&dest), origin.as_deref_mut())?;
                        Ok(dest.is_some())
                    }
                }
            }
            Some(Kind::Scalar) => {
                check_sources(node_of(&dest), origin.as_deref(), Kind::Scalar)?;
                self.visitor.visit_scalar(node_of(&dest), origin)?;
                Ok(dest.is_some())
            }
            Some(Kind::Alias | Kind::Document) => Ok(false),
        }
    }

    /// `walkMap`. kyaml then clears fields whose walk returned nothing or
    /// whose value is null from its copy; only a copy below a merge-keyed
    /// list is read again afterwards, so only there are they cleared.
    fn walk_map(
        &self,
        dest: Option<Dest<'_>>,
        mut origin: Option<&mut Node>,
        schema: Option<SchemaRef>,
    ) -> Result<bool> {
        self.visitor
            .visit_map(node_of(&dest), origin.as_deref_mut())?;
        let Some(mut dest) = dest else {
            return Ok(false);
        };
        if let Dest::Shared(dest) = dest {
            return self.walk_shared_map(dest, origin, schema);
        }
        for key in field_names(dest.node(), origin.as_deref()) {
            if self.visit_keys_as_scalars {
                self.visitor.visit_scalar(
                    map_key(dest.node(), &key),
                    origin.as_deref_mut().and_then(|o| map_key_mut(o, &key)),
                )?;
            }
            let mut child = schema.as_ref().and_then(|s| openapi::field_of(s, &key));
            if let Some(s) = field_comment_schema(dest.node(), origin.as_deref(), &key) {
                child = Some(s);
            }
            let returned = self.walk(
                dest.field_value(&key),
                origin.as_deref_mut().and_then(|o| field_value_mut(o, &key)),
                child,
            )?;
            if let Dest::Owned(dest) = &mut dest {
                let null_value = rnode::field_value(dest, &key)
                    .is_some_and(|v| v.tag == krmgraph_yaml::node::tag::NULL);
                if !returned || null_value {
                    rnode::clear_field(dest, &key)?;
                }
            }
        }
        Ok(true)
    }

    /// [`walk_map`](Walker::walk_map) of a borrowed destination, which the
    /// walk never edits: the fields are paired once by position instead of
    /// being looked up by name on each side for every step.
    fn walk_shared_map(
        &self,
        dest: &Node,
        mut origin: Option<&mut Node>,
        schema: Option<SchemaRef>,
    ) -> Result<bool> {
        for field in paired_fields(dest, origin.as_deref()) {
            let dest_kv = field.dest.map(|i| &y_node(dest).content[i..i + 2]);
            if self.visit_keys_as_scalars {
                let origin_key = match (field.origin, origin.as_deref_mut()) {
                    (Some(i), Some(o)) => Some(&mut y_node_mut(o).content[i]),
                    _ => None,
                };
                self.visitor.visit_scalar(
                    dest_kv
                        .map(|kv| &kv[0])
                        .filter(|k| !is_missing_or_null(Some(k))),
                    origin_key.filter(|k| !is_missing_or_null(Some(k))),
                )?;
            }
            let origin_kv = match (field.origin, origin.as_deref()) {
                (Some(i), Some(o)) => Some(&y_node(o).content[i..i + 2]),
                _ => None,
            };
            let mut child = schema
                .as_ref()
                .and_then(|s| openapi::field_of(s, &field.name));
            if let Some(s) = [dest_kv, origin_kv].into_iter().flatten().find_map(|kv| {
                openapi::comment_schema(&kv[1]).or_else(|| openapi::comment_schema(&kv[0]))
            }) {
                child = Some(s);
            }
            let origin_value = match (field.origin, origin.as_deref_mut()) {
                (Some(i), Some(o)) => Some(&mut y_node_mut(o).content[i + 1]),
                _ => None,
            };
            self.walk(dest_kv.map(|kv| Dest::Shared(&kv[1])), origin_value, child)?;
        }
        Ok(true)
    }

    /// `walkAssociativeSequence`.
    fn walk_associative_sequence(
        &self,
        dest: Option<Dest<'_>>,
        mut origin: Option<&mut Node>,
        schema: SchemaRef,
    ) -> Result<bool> {
        self.visitor
            .visit_list(node_of(&dest), origin.as_deref_mut())?;
        let Some(dest) = dest else {
            return Ok(false);
        };
        let (_, keys) = schema.patch_strategy_and_key_list();
        let mut copy;
        let dest = match dest {
            Dest::Shared(n) if keyed_and_distinct(n, &keys) => {
                let values = element_values(n, origin.as_deref(), &keys);
                return self.walk_keyed_elements(values, &keys, n, origin, &schema);
            }
            Dest::Shared(n) => {
                copy = n.clone();
                &mut copy
            }
            Dest::Owned(n) => n,
        };
        let values = element_values(dest, origin.as_deref(), &keys);
        if !values.is_empty() || !keys.is_empty() {
            return self.set_associative_sequence_elements(values, &keys, dest, origin, &schema);
        }
        let primitives = element_primitive_values(dest, origin.as_deref());
        self.set_associative_sequence_elements(primitives, &[String::new()], dest, origin, &schema)
    }

    /// [`Walker::set_associative_sequence_elements`] for a destination list
    /// that [`keyed_and_distinct`] accepts, without copying it. There the
    /// edits kyaml makes to its copy change nothing the walk reads again:
    /// a walked element keeps its key fields (they are not null), so it is
    /// neither empty afterwards nor missing a key; a value row matches at
    /// most the element that has it, and a row no element has (only the
    /// origin's) removes nothing; and the list is not read after its
    /// elements are merged back. The pairs visited are the same.
    fn walk_keyed_elements(
        &self,
        mut values_list: Vec<Vec<String>>,
        keys: &[String],
        dest: &Node,
        mut origin: Option<&mut Node>,
        schema: &SchemaRef,
    ) -> Result<bool> {
        let element_schema = openapi::elements_of(schema);
        if keys.len() > 1 {
            merge_values(&mut values_list);
        }
        for values in values_list.iter().filter(|v| !v.is_empty()) {
            let (valid_keys, valid_values) = validate_keys(&values_list, values, keys);
            let (lookup_keys, lookup_values) = validate_keys(
                std::slice::from_ref(&valid_values),
                &valid_values,
                &valid_keys,
            );
            let dest_index = element_list(dest, &lookup_keys, &lookup_values);
            let origin_index = origin
                .as_deref()
                .and_then(|o| element_list(o, &lookup_keys, &lookup_values));
            self.walk(
                dest_index.map(|i| Dest::Shared(&y_node(dest).content[i])),
                match (origin.as_deref_mut(), origin_index) {
                    (Some(o), Some(i)) => Some(&mut y_node_mut(o).content[i]),
                    _ => None,
                },
                element_schema.clone(),
            )?;
        }
        Ok(!is_missing_or_null(Some(dest)))
    }

    /// `setAssociativeSequenceElements`: walks the elements matched by
    /// their key values, then merges the walked elements back into `dest`.
    fn set_associative_sequence_elements(
        &self,
        mut values_list: Vec<Vec<String>>,
        keys: &[String],
        dest: &mut Node,
        mut origin: Option<&mut Node>,
        schema: &SchemaRef,
    ) -> Result<bool> {
        let element_schema = openapi::elements_of(schema);
        if keys.len() > 1 {
            merge_values(&mut values_list);
        }
        let mut items = rnode::new_node(Kind::Sequence);
        let mut valid_keys = Vec::new();
        for values in &values_list {
            if values.is_empty() {
                continue;
            }
            let (keys_now, valid_values) = validate_keys(&values_list, values, keys);
            valid_keys = keys_now;
            let (lookup_keys, lookup_values) = validate_keys(
                std::slice::from_ref(&valid_values),
                &valid_values,
                &valid_keys,
            );
            let dest_index = element_list(dest, &lookup_keys, &lookup_values);
            let origin_index = origin
                .as_deref()
                .and_then(|o| element_list(o, &lookup_keys, &lookup_values));
            let returned = self.walk(
                dest_index.map(|i| Dest::Owned(&mut y_node_mut(dest).content[i])),
                match (origin.as_deref_mut(), origin_index) {
                    (Some(o), Some(i)) => Some(&mut y_node_mut(o).content[i]),
                    _ => None,
                },
                element_schema.clone(),
            )?;
            let val = if returned { dest_index } else { None };
            let val_node = val.map(|i| &y_node(dest).content[i]);
            if is_missing_or_null(val_node) || is_empty_map(val_node) {
                element_setter(dest, None, &valid_keys, &valid_values)?;
                continue;
            }
            let Some(val) = val else {
                continue;
            };
            for (key, value) in valid_keys.iter().zip(&valid_values) {
                let element = &mut y_node_mut(dest).content[val];
                if field(element, key).is_none() && !value.is_empty() {
                    rnode::set_field(element, key, rnode::new_scalar(value.clone()))?;
                }
            }
            let element = y_node(dest).content[val].clone();
            element_setter(&mut items, Some(element), &valid_keys, &valid_values)?;
        }
        if !values_list.is_empty() {
            append_list_node(dest, &items, &valid_keys)?;
        }
        Ok(!is_missing_or_null(Some(dest)))
    }
}

/// Whether every element of the sequence `list` is a mapping holding each
/// of `keys` (at least one) with a non-null, non-empty scalar value, and no
/// two elements have the same values: the shape of almost every merge-keyed
/// list (containers by name, ports by port and protocol, ...).
fn keyed_and_distinct(list: &Node, keys: &[String]) -> bool {
    let list = y_node(list);
    if keys.is_empty() || list.kind != Kind::Sequence {
        return false;
    }
    fn row<'a>(item: &'a Node, keys: &[String]) -> Option<Vec<&'a str>> {
        if item.kind != Kind::Mapping {
            return None;
        }
        keys.iter()
            .map(|k| {
                let v = field(item, k)?.value;
                let usable = v.kind == Kind::Scalar && !v.value.is_empty();
                (usable && !is_missing_or_null(Some(v))).then_some(v.value.as_str())
            })
            .collect()
    }
    let mut rows = Vec::with_capacity(list.content.len());
    for item in &list.content {
        match row(item, keys) {
            Some(r) if !rows.contains(&r) => rows.push(r),
            _ => return false,
        }
    }
    true
}

/// `Walker.GetSchema`: a schema written in a source's comment, else the
/// schema handed down, else the built-in schema of a source's type.
fn get_schema(
    dest: Option<&Node>,
    origin: Option<&Node>,
    schema: Option<SchemaRef>,
) -> Option<SchemaRef> {
    let sources = || {
        [dest, origin]
            .into_iter()
            .flatten()
            .filter(|n| !is_missing_or_null(Some(n)))
    };
    if let Some(s) = sources().find_map(|n| openapi::comment_schema(y_node(n))) {
        return Some(s);
    }
    if schema.is_some() {
        return schema;
    }
    sources().find_map(|n| {
        let (api_version, kind) = rnode::type_meta(n);
        if kind.is_empty() || api_version.is_empty() {
            return None;
        }
        openapi::schema_for_resource_type(api_version, kind)
    })
}

/// `ErrorIfAnyInvalidAndNonNull`.
fn check_sources(dest: Option<&Node>, origin: Option<&Node>, kind: Kind) -> Result<()> {
    for n in [dest, origin].into_iter().flatten() {
        if !is_missing_or_null(Some(n)) {
            error_if_invalid(n, kind)?;
        }
    }
    Ok(())
}

/// A field of [`walk_shared_map`](Walker::walk_shared_map): its name and
/// the index of its key in each side's mapping (the first key of that name,
/// as lookups by name find it).
struct PairedField<'a> {
    name: std::borrow::Cow<'a, str>,
    dest: Option<usize>,
    origin: Option<usize>,
}

/// [`field_names`] with each name's key index on each side.
fn paired_fields<'a>(dest: &'a Node, origin: Option<&Node>) -> Vec<PairedField<'a>> {
    let dest_keys = first_keys(dest);
    let origin_keys = origin.map(first_keys).unwrap_or_default();
    let mut fields = Vec::with_capacity(dest_keys.len().max(origin_keys.len()));
    let (mut d, mut o) = (
        dest_keys.into_iter().peekable(),
        origin_keys.into_iter().peekable(),
    );
    loop {
        use std::cmp::Ordering;
        let order = match (d.peek(), o.peek()) {
            (None, None) => break,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some(dk), Some(ok)) => dk.0.cmp(ok.0),
        };
        let dest = (order != Ordering::Greater).then(|| d.next()).flatten();
        let origin = (order != Ordering::Less).then(|| o.next()).flatten();
        // The name is borrowed from the destination when it has the field.
        let name = match (dest, origin) {
            (Some((name, _)), _) => name.into(),
            (None, Some((name, _))) => name.to_string().into(),
            (None, None) => break,
        };
        fields.push(PairedField {
            name,
            dest: dest.map(|(_, i)| i),
            origin: origin.map(|(_, i)| i),
        });
    }
    fields
}

/// Each distinct key name of a mapping with the index of its first key,
/// sorted by name; none for anything else (where `rnode::fields` fails or
/// finds nothing).
fn first_keys(node: &Node) -> Vec<(&str, usize)> {
    let root = y_node(node);
    if root.kind != Kind::Mapping || !root.content.len().is_multiple_of(2) {
        return Vec::new();
    }
    let mut keys: Vec<(&str, usize)> = (0..root.content.len() / 2)
        .map(|i| (root.content[2 * i].value.as_str(), 2 * i))
        .collect();
    // Sorted by name, then index, so the first of equal names is the
    // first key.
    keys.sort_unstable();
    keys.dedup_by(|later, first| later.0 == first.0);
    keys
}

/// `Walker.fieldNames`: the sorted union of both sides' field names.
fn field_names(dest: &Node, origin: Option<&Node>) -> Vec<String> {
    let mut names: Vec<String> = [Some(dest), origin]
        .into_iter()
        .flatten()
        .flat_map(|n| rnode::fields(n).unwrap_or_default())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The key node of field `name`, unless it is null.
fn map_key<'a>(node: &'a Node, name: &str) -> Option<&'a Node> {
    field(node, name)
        .map(|f| f.key)
        .filter(|k| !is_missing_or_null(Some(k)))
}

/// Mutable [`map_key`].
fn map_key_mut<'a>(node: &'a mut Node, name: &str) -> Option<&'a mut Node> {
    rnode::field_key_mut(node, name).filter(|k| !is_missing_or_null(Some(k)))
}

/// `Walker.fieldValue`'s schema: the first non-empty schema written in a
/// comment of a side's field value, else of its key.
fn field_comment_schema(dest: &Node, origin: Option<&Node>, name: &str) -> Option<SchemaRef> {
    [Some(dest), origin].into_iter().flatten().find_map(|n| {
        let f = field(n, name)?;
        openapi::comment_schema(f.value).or_else(|| openapi::comment_schema(f.key))
    })
}

/// `ElementValuesList` of both sides: each element's values of `keys`
/// (`""` where missing), first occurrences only.
fn element_values(dest: &Node, origin: Option<&Node>, keys: &[String]) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for src in [Some(dest), origin].into_iter().flatten() {
        let Ok(items) = rnode::elements(src) else {
            continue;
        };
        for item in items {
            let row: Vec<String> = keys
                .iter()
                .map(|k| match field(item, k) {
                    Some(f) if !is_nil_or_empty(Some(f.value)) => y_node(f.value).value.to_string(),
                    _ => String::new(),
                })
                .collect();
            if !row.is_empty() && !out.contains(&row) {
                out.push(row);
            }
        }
    }
    out
}

/// `elementPrimitiveValues`: every item's scalar value, first occurrences.
fn element_primitive_values(dest: &Node, origin: Option<&Node>) -> Vec<Vec<String>> {
    let mut seen: Vec<String> = Vec::new();
    for src in [Some(dest), origin].into_iter().flatten() {
        for item in &y_node(src).content {
            if !seen.iter().any(|s| *s == item.value) {
                seen.push(item.value.to_string());
            }
        }
    }
    seen.into_iter().map(|v| vec![v]).collect()
}

/// `validateKeys`: keep the keys that have a value in some element (all of
/// them if none has), and the values that are set or belong to such keys.
fn validate_keys(
    values_list: &[Vec<String>],
    values: &[String],
    keys: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut valid: Vec<&String> = Vec::new();
    for row in values_list {
        for (i, v) in row.iter().enumerate() {
            if let Some(k) = keys.get(i).filter(|_| !v.is_empty()) {
                if !valid.contains(&k) {
                    valid.push(k);
                }
            }
        }
    }
    if valid.is_empty() {
        return (keys.to_vec(), values.to_vec());
    }
    let valid_keys = keys.iter().filter(|k| valid.contains(k)).cloned().collect();
    let valid_values = values
        .iter()
        .enumerate()
        .filter(|(i, v)| !v.is_empty() || keys.get(*i).is_some_and(|k| valid.contains(&k)))
        .map(|(_, v)| v.clone())
        .collect();
    (valid_keys, valid_values)
}

/// `mergeValues`: value rows that agree where both are set are unified.
fn merge_values(values_list: &mut [Vec<String>]) {
    for i in 0..values_list.len() {
        let values1 = values_list[i].clone();
        for j in 0..values_list.len() {
            if let Some(merged) = match_values(&values1, &values_list[j]) {
                values_list[i] = merged.clone();
                values_list[j] = merged;
            }
        }
    }
}

/// `match`: rows of equal length with a common value and no conflicting
/// set values; the union of their values.
fn match_values(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut out = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b) {
        if x == y {
            common = true;
            out.push(x.clone());
        } else if !x.is_empty() && !y.is_empty() {
            return None;
        } else {
            out.push(if x.is_empty() { y.clone() } else { x.clone() });
        }
    }
    common.then_some(out)
}

/// `RNode.ElementList(keys, values)` (`ElementMatcher`): the index of the
/// first element matching every key, or with `keys[0]` empty the first item
/// whose scalar value is `values[0]`.
fn element_list(node: &Node, keys: &[String], values: &[String]) -> Option<usize> {
    let root = y_node(node);
    if root.kind != Kind::Sequence {
        return None;
    }
    let first_key = keys.first().map_or("", String::as_str);
    let first_value = values.first().map_or("", String::as_str);
    if first_key.is_empty() {
        return root.content.iter().position(|i| i.value == first_value);
    }
    for (idx, item) in root.content.iter().enumerate() {
        if error_if_invalid(item, Kind::Mapping).is_err() {
            continue;
        }
        if keys.len() != values.len() {
            return None;
        }
        let matches = keys.iter().zip(values).all(|(k, v)| {
            !is_missing_or_null(Some(item))
                && rnode::field_value(item, k).is_some_and(|f| f.value == *v)
        });
        if matches {
            return Some(idx);
        }
    }
    None
}

/// `ElementSetter`: replaces the elements matching `keys`/`values` with
/// `element` (deletes them when `None`), drops null and empty-map elements,
/// and appends `element` when nothing matched.
fn element_setter(
    seq: &mut Node,
    element: Option<Node>,
    keys: &[String],
    values: &[String],
) -> Result<()> {
    let empty_key = [String::new()];
    let keys = if keys.is_empty() {
        &empty_key[..]
    } else {
        keys
    };
    error_if_invalid(seq, Kind::Sequence)?;
    let is_mapping_setter = !keys[0].is_empty() && values.first().is_some_and(|v| !v.is_empty());
    let root = y_node_mut(seq);
    let mut content = Vec::with_capacity(root.content.len());
    let mut matched = false;
    for elem in std::mem::take(&mut root.content) {
        if is_missing_or_null(Some(&elem)) || is_empty_map(Some(&elem)) {
            continue;
        }
        if error_if_invalid(&elem, Kind::Mapping).is_err() && is_mapping_setter {
            content.push(elem);
            continue;
        }
        let mut found = true;
        let mut val = false;
        for (j, key) in keys.iter().enumerate() {
            if let Some(value) = values.get(j) {
                val = field_matches(&elem, key, value)?;
            }
            if !val {
                found = false;
                break;
            }
        }
        if !found {
            if !values.is_empty() {
                content.push(elem);
            }
            continue;
        }
        matched = true;
        if let Some(e) = &element {
            content.push(e.clone());
        }
    }
    let element = element.filter(|e| !is_missing_or_null(Some(e)));
    if let (Some(e), false) = (element, matched) {
        content.push(e);
    }
    root.content = content;
    Ok(())
}

/// `FieldMatcher{Name: name, StringValue: value}` on `elem`: with an empty
/// name, the scalar's own value; otherwise the first field `name`, whose
/// value must equal `value` unless `value` is empty.
fn field_matches(elem: &Node, name: &str, value: &str) -> Result<bool> {
    if is_missing_or_null(Some(elem)) {
        return Ok(false);
    }
    if name.is_empty() {
        error_if_invalid(elem, Kind::Scalar)?;
        return Ok(rnode::get_value(Some(elem)) == value);
    }
    error_if_invalid(elem, Kind::Mapping)?;
    Ok(rnode::field_value(elem, name).is_some_and(|f| value.is_empty() || f.value == value))
}

/// `appendListNode`: merges each element of `items` into `dest` by its key
/// values (appending elements that lack a key).
fn append_list_node(dest: &mut Node, items: &Node, keys: &[String]) -> Result<()> {
    let Some(first) = keys.first() else {
        return Ok(());
    };
    for elem in &items.content {
        if first.is_empty() {
            element_setter(
                dest,
                Some(elem.clone()),
                &[String::new()],
                &[elem.value.to_string()],
            )?;
            continue;
        }
        let mut values = Vec::new();
        for key in keys {
            let found = if is_missing_or_null(Some(elem)) {
                None
            } else {
                error_if_invalid(elem, Kind::Mapping)?;
                key_index(y_node(elem), key).map(|i| y_node(elem).content[i + 1].value.to_string())
            };
            match found {
                Some(v) => values.push(v),
                None => {
                    error_if_invalid(dest, Kind::Sequence)?;
                    y_node_mut(dest).content.push(elem.clone());
                }
            }
        }
        if keys.len() > 1 {
            element_setter(dest, None, keys, &values)?;
        }
        element_setter(dest, Some(elem.clone()), keys, &values)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn validate_and_merge_values() {
        let keys = v(&["containerPort", "protocol"]);
        let list = vec![v(&["80", ""]), v(&["80", "TCP"])];
        assert_eq!(
            validate_keys(&list, &list[0], &keys),
            (keys.clone(), v(&["80", ""]))
        );
        let only_port = vec![v(&["80", ""])];
        assert_eq!(
            validate_keys(&only_port, &only_port[0], &keys),
            (v(&["containerPort"]), v(&["80"]))
        );
        let mut merged = list.clone();
        merge_values(&mut merged);
        assert_eq!(merged, vec![v(&["80", "TCP"]), v(&["80", "TCP"])]);
        assert_eq!(match_values(&v(&["a", "x"]), &v(&["a", "y"])), None);
        assert_eq!(match_values(&v(&["", ""]), &v(&["a", "y"])), None);
    }
}
