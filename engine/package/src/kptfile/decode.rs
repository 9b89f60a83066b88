//! Strict typed decoding of a Kptfile document, with go-yaml v3's error
//! messages. kpt decodes the Kptfile with `yaml.v3`'s `KnownFields(true)`
//! into Go structs, and users (and kpt's e2e cases) see those messages:
//! `line 13: field targetResources not found in type v1.Function`,
//! `line 14: cannot unmarshal !!seq into string`. This module walks a parsed
//! [`Node`] against a small schema of the Kptfile's Go types and collects the
//! same errors, in the same order, into a [`Value`] tree.

use std::collections::HashMap;

use krmgraph_yaml::node::{short_tag, tag};
use krmgraph_yaml::{Kind, Node};

/// A Go type of the Kptfile schema.
#[derive(Debug)]
pub enum Ty {
    /// A string, or a named string type (`v1.OriginType`).
    Str(&'static str),
    /// A slice `[]T`.
    List(&'static Ty),
    /// `map[string]string`.
    StrMap,
    /// A struct, reached through a pointer or by value.
    Struct(&'static StructTy),
}

/// A Go struct: its printed type name and its fields by YAML key. Inlined
/// structs are flattened into the outer field list, as go-yaml does.
#[derive(Debug)]
pub struct StructTy {
    /// The name go-yaml prints, e.g. `v1.Function`.
    pub go_name: &'static str,
    /// Fields by YAML key.
    pub fields: &'static [(&'static str, Ty)],
}

/// A decoded value.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Value {
    /// Absent or null.
    #[default]
    Null,
    /// A string.
    Str(String),
    /// A slice.
    List(Vec<Value>),
    /// A `map[string]string`, in document order (duplicates keep the last).
    StrMap(Vec<(String, String)>),
    /// A struct's fields by key.
    Struct(HashMap<&'static str, Value>),
}

impl Value {
    /// The field `key` of a struct value, `Null` if absent.
    pub fn field(&self, key: &str) -> &Value {
        static NULL: Value = Value::Null;
        match self {
            Value::Struct(fields) => fields.get(key).unwrap_or(&NULL),
            _ => &NULL,
        }
    }

    /// The string, empty for null.
    pub fn str(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            _ => String::new(),
        }
    }

    /// The items of a slice, empty for null.
    pub fn items(&self) -> &[Value] {
        match self {
            Value::List(items) => items,
            _ => &[],
        }
    }
}

/// Decodes `root` (a document's root node) as `ty`. Returns the value and
/// go-yaml's `unmarshal errors` lines (empty when decoding succeeded).
pub fn decode(root: &Node, ty: &'static StructTy) -> (Value, Vec<String>) {
    let mut decoder = Decoder::default();
    decoder.collect_anchors(root);
    let value = decoder.decode(root, &Ty::Struct(ty));
    (value, decoder.errors)
}

#[derive(Default)]
struct Decoder<'a> {
    anchors: HashMap<&'a str, &'a Node>,
    errors: Vec<String>,
    depth: usize,
}

impl<'a> Decoder<'a> {
    fn collect_anchors(&mut self, node: &'a Node) {
        if !node.anchor().is_empty() {
            self.anchors.insert(node.anchor(), node);
        }
        for child in &node.content {
            self.collect_anchors(child);
        }
    }

    fn decode(&mut self, node: &'a Node, ty: &Ty) -> Value {
        // Aliases decode as the node they point to; a cycle or an unknown
        // anchor decodes as null (the parser already rejected unknown ones).
        let node = match self.follow_alias(node) {
            Some(n) => n,
            None => return Value::Null,
        };
        if is_null(node) {
            return Value::Null;
        }
        match ty {
            Ty::Str(go_name) => self.string(node, go_name),
            Ty::List(item) => self.list(node, item, ty),
            Ty::StrMap => self.str_map(node),
            Ty::Struct(st) => self.structure(node, st),
        }
    }

    fn follow_alias(&mut self, node: &'a Node) -> Option<&'a Node> {
        let mut node = node;
        let mut hops = 0;
        while node.kind == Kind::Alias {
            node = self.anchors.get(node.value.as_str())?;
            hops += 1;
            if hops > 1000 {
                return None;
            }
        }
        Some(node)
    }

    fn string(&mut self, node: &Node, go_name: &str) -> Value {
        if node.kind == Kind::Scalar {
            return Value::Str(node.value.to_string());
        }
        self.type_error(node, go_name);
        Value::Null
    }

    fn list(&mut self, node: &'a Node, item: &Ty, ty: &Ty) -> Value {
        if node.kind != Kind::Sequence {
            self.type_error(node, &go_type_name(ty));
            return Value::Null;
        }
        Value::List(node.content.iter().map(|n| self.nested(n, item)).collect())
    }

    fn nested(&mut self, node: &'a Node, ty: &Ty) -> Value {
        self.depth += 1;
        let value = if self.depth > 10_000 {
            Value::Null
        } else {
            self.decode(node, ty)
        };
        self.depth -= 1;
        value
    }

    fn str_map(&mut self, node: &'a Node) -> Value {
        if node.kind != Kind::Mapping {
            self.type_error(node, "map[string]string");
            return Value::Null;
        }
        let mut entries: Vec<(String, String)> = Vec::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for pair in node.content.chunks(2) {
            let [key, value] = pair else { continue };
            self.check_duplicate(&mut seen, key);
            let key_text = match self.decode(key, &Ty::Str("string")) {
                Value::Str(s) => s,
                _ => String::new(),
            };
            // go-yaml stores a null value as the zero value, "".
            let v = match self.decode(value, &Ty::Str("string")) {
                Value::Str(v) => v,
                _ => String::new(),
            };
            entries.retain(|(k, _)| *k != key_text);
            entries.push((key_text, v));
        }
        Value::StrMap(entries)
    }

    fn structure(&mut self, node: &'a Node, st: &'static StructTy) -> Value {
        if node.kind != Kind::Mapping {
            self.type_error(node, st.go_name);
            return Value::Null;
        }
        let mut fields = HashMap::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for pair in node.content.chunks(2) {
            let [key, value] = pair else { continue };
            self.check_duplicate(&mut seen, key);
            match st.fields.iter().find(|(name, _)| *name == key.value) {
                Some((name, ty)) => {
                    let v = self.nested(value, ty);
                    fields.insert(*name, v);
                }
                None => self.errors.push(format!(
                    "line {}: field {} not found in type {}",
                    key.line, key.value, st.go_name
                )),
            }
        }
        Value::Struct(fields)
    }

    fn check_duplicate(&mut self, seen: &mut HashMap<&'a str, usize>, key: &'a Node) {
        if key.kind != Kind::Scalar {
            return;
        }
        if let Some(line) = seen.get(key.value.as_str()) {
            self.errors.push(format!(
                "line {}: mapping key {} already defined at line {}",
                key.line,
                go_quote(&key.value),
                line
            ));
        } else {
            seen.insert(&key.value, key.line as usize);
        }
    }

    /// go-yaml's `terror`: `line N: cannot unmarshal !!tag `value` into T`.
    fn type_error(&mut self, node: &Node, go_type: &str) {
        let node_tag = short_tag(&node.tag).into_owned();
        let shown = match node.kind {
            Kind::Sequence | Kind::Mapping => String::new(),
            _ if node_tag == tag::SEQ || node_tag == tag::MAP => String::new(),
            _ => {
                let v = &node.value;
                if v.len() > 10 {
                    format!(" `{}...`", truncate_bytes(v, 7))
                } else {
                    format!(" `{v}`")
                }
            }
        };
        self.errors.push(format!(
            "line {}: cannot unmarshal {}{} into {}",
            node.line, node_tag, shown, go_type
        ));
    }
}

fn is_null(node: &Node) -> bool {
    node.kind == Kind::Scalar && short_tag(&node.tag) == tag::NULL
}

fn go_type_name(ty: &Ty) -> String {
    match ty {
        Ty::Str(name) => (*name).to_string(),
        Ty::List(item) => format!("[]{}", go_type_name(item)),
        Ty::StrMap => "map[string]string".to_string(),
        Ty::Struct(st) => st.go_name.to_string(),
    }
}

/// Go slices strings by bytes; do the same without splitting a character.
fn truncate_bytes(s: &str, n: usize) -> &str {
    let mut end = n.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Go's `%#v` of a string (the same as `%q`).
pub fn go_quote(s: &str) -> String {
    krmgraph_util::gostr::quote(s)
}
