//! Strict typed decoding of a Kptfile document, with go-yaml v3's error
//! messages. kpt decodes the Kptfile with `yaml.v3`'s `KnownFields(true)`
//! into Go structs, and users (and kpt's e2e cases) see those messages:
//! `line 13: field targetResources not found in type v1.Function`,
//! `line 14: cannot unmarshal !!seq into string`. This module walks a parsed
//! [`Node`] against a small schema of the Kptfile's Go types and collects the
//! same errors, in the same order, into a [`Value`] tree. Each error also
//! carries krmgraph's account of it ([`SchemaError`]): the field's path,
//! where it is, and the nearest known field of a misspelt one.

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

/// One of go-yaml's `unmarshal errors`, with what krmgraph says about it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// go-yaml's line, as kpt prints it:
    /// `line 6: field mutator not found in type v1.Pipeline`.
    pub text: String,
    /// The offending node's 1-based line.
    pub line: usize,
    /// Its 1-based column.
    pub column: usize,
    /// How many characters of the line it spans (0 for a collection).
    pub width: usize,
    /// What is wrong, by the field's path:
    /// ``unknown field `mutator` in `pipeline` ``.
    pub message: String,
    /// The label at the node.
    pub label: String,
    /// What to do: the nearest known field, or the known fields.
    pub help: Option<String>,
}

/// Decodes `root` (a document's root node) as `ty`. Returns the value and
/// go-yaml's `unmarshal errors` (empty when decoding succeeded).
pub fn decode(root: &Node, ty: &'static StructTy) -> (Value, Vec<SchemaError>) {
    let mut decoder = Decoder::default();
    decoder.collect_anchors(root);
    let value = decoder.decode(root, &Ty::Struct(ty));
    (value, decoder.errors)
}

#[derive(Default)]
struct Decoder<'a> {
    anchors: HashMap<&'a str, &'a Node>,
    errors: Vec<SchemaError>,
    depth: usize,
    /// The path of the value being decoded (`pipeline.mutators[0]`).
    path: String,
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
        self.type_error(node, go_name, "a string");
        Value::Null
    }

    fn list(&mut self, node: &'a Node, item: &Ty, ty: &Ty) -> Value {
        if node.kind != Kind::Sequence {
            self.type_error(node, &go_type_name(ty), "a list");
            return Value::Null;
        }
        let items = node.content.iter().enumerate();
        Value::List(
            items
                .map(|(i, n)| self.nested(n, item, &format!("[{i}]")))
                .collect(),
        )
    }

    /// Decodes `node`, the part `step` (`.name`, `[0]`) of the current
    /// path.
    fn nested(&mut self, node: &'a Node, ty: &Ty, step: &str) -> Value {
        self.depth += 1;
        let parent = self.path.len();
        self.path.push_str(step);
        let value = if self.depth > 10_000 {
            Value::Null
        } else {
            self.decode(node, ty)
        };
        self.path.truncate(parent);
        self.depth -= 1;
        value
    }

    /// The path of a field of the current value.
    fn field_step(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!(".{key}")
        }
    }

    fn str_map(&mut self, node: &'a Node) -> Value {
        if node.kind != Kind::Mapping {
            self.type_error(node, "map[string]string", "a mapping of strings to strings");
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
            let step = format!(".{key_text}");
            let v = match self.nested(value, &Ty::Str("string"), &step) {
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
            self.type_error(node, st.go_name, "a mapping");
            return Value::Null;
        }
        let mut fields = HashMap::new();
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for pair in node.content.chunks(2) {
            let [key, value] = pair else { continue };
            self.check_duplicate(&mut seen, key);
            match st.fields.iter().find(|(name, _)| *name == key.value) {
                Some((name, ty)) => {
                    let v = self.nested(value, ty, &self.field_step(name));
                    fields.insert(*name, v);
                }
                None => self.unknown_field(key, st),
            }
        }
        Value::Struct(fields)
    }

    /// go-yaml's `field X not found in type T`, with the nearest field of
    /// `st` (or all of them) as help.
    fn unknown_field(&mut self, key: &Node, st: &StructTy) {
        let known = st.fields.iter().map(|(name, _)| *name);
        let help = match crate::hint::closest(&key.value, known.clone()) {
            Some(near) => format!("did you mean {}?", go_quote(near)),
            None => {
                let names: Vec<String> = known.map(go_quote).collect();
                format!("the fields here are {}", names.join(", "))
            }
        };
        let (message, label) = if self.path.is_empty() {
            (
                format!("unknown field `{}` at the top of the Kptfile", key.value),
                "not a Kptfile field".to_string(),
            )
        } else {
            (
                format!("unknown field `{}` in `{}`", key.value, self.path),
                format!("not a field of `{}`", self.path),
            )
        };
        self.push(
            key,
            format!(
                "line {}: field {} not found in type {}",
                key.line, key.value, st.go_name
            ),
            message,
            label,
            Some(help),
        );
    }

    fn check_duplicate(&mut self, seen: &mut HashMap<&'a str, usize>, key: &'a Node) {
        if key.kind != Kind::Scalar {
            return;
        }
        if let Some(&line) = seen.get(key.value.as_str()) {
            let place = if self.path.is_empty() {
                "the Kptfile's top level".to_string()
            } else {
                format!("`{}`", self.path)
            };
            self.push(
                key,
                format!(
                    "line {}: mapping key {} already defined at line {}",
                    key.line,
                    go_quote(&key.value),
                    line
                ),
                format!("`{}` appears twice in {place}", key.value),
                "again here".to_string(),
                Some(format!("the first is on line {line}; keep one of them")),
            );
        } else {
            seen.insert(&key.value, key.line as usize);
        }
    }

    fn push(
        &mut self,
        node: &Node,
        text: String,
        message: String,
        label: String,
        help: Option<String>,
    ) {
        self.errors.push(SchemaError {
            text,
            line: node.line as usize,
            column: node.column as usize,
            width: source_width(node),
            message,
            label,
            help,
        });
    }

    /// go-yaml's `terror`: `line N: cannot unmarshal !!tag `value` into T`.
    /// `expected` is the Go type in words (`a list`).
    fn type_error(&mut self, node: &Node, go_type: &str, expected: &str) {
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
        let text = format!(
            "line {}: cannot unmarshal {}{} into {}",
            node.line, node_tag, shown, go_type
        );
        let found = describe_node(node);
        let message = if self.path.is_empty() {
            format!("the Kptfile must be {expected}, not {found}")
        } else {
            format!("`{}` must be {expected}, not {found}", self.path)
        };
        let help = (expected == "a list" && node.kind == Kind::Mapping)
            .then(|| "write each entry as a list item, starting with `- `".to_string());
        self.push(
            node,
            text,
            message,
            format!("{found}, not {expected}"),
            help,
        );
    }
}

/// What `node` is, in words.
fn describe_node(node: &Node) -> String {
    match node.kind {
        Kind::Sequence => "a list".to_string(),
        Kind::Mapping => "a mapping".to_string(),
        _ => {
            let shown: String = node.value.chars().take(20).collect();
            let cut = if shown.len() < node.value.len() {
                "…"
            } else {
                ""
            };
            format!("`{shown}{cut}`")
        }
    }
}

/// How many characters `node` spans on its first line: a scalar's text
/// (with its quotes), 0 for a collection, a block scalar or a scalar that
/// spans lines (the label is then a caret at its start).
pub(crate) fn source_width(node: &Node) -> usize {
    if node.kind != Kind::Scalar
        || node.value.contains('\n')
        || node.style.has(krmgraph_yaml::node::Style::LITERAL)
        || node.style.has(krmgraph_yaml::node::Style::FOLDED)
    {
        return 0;
    }
    let quotes = if node.style.has(krmgraph_yaml::node::Style::DOUBLE_QUOTED)
        || node.style.has(krmgraph_yaml::node::Style::SINGLE_QUOTED)
    {
        2
    } else {
        0
    };
    node.value.chars().count() + quotes
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kptfile::schema::KPTFILE;

    fn errors(text: &str) -> Vec<SchemaError> {
        let doc = krmgraph_yaml::decode::Decoder::new(text.as_bytes())
            .next_document()
            .unwrap()
            .unwrap();
        decode(&doc.content[0], &KPTFILE).1
    }

    #[test]
    fn unknown_fields_suggest_the_nearest() {
        let e = errors(
            "pipeline:\n  mutators:\n  - image: a\n    configmap: {}\n  validatorz: []\nbogus: 1\n",
        );
        let texts: Vec<&str> = e.iter().map(|e| e.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "line 4: field configmap not found in type v1.Function",
                "line 5: field validatorz not found in type v1.Pipeline",
                "line 6: field bogus not found in type v1.KptFile",
            ]
        );
        assert_eq!(
            e[0].message,
            "unknown field `configmap` in `pipeline.mutators[0]`"
        );
        assert_eq!(e[0].help.as_deref(), Some("did you mean \"configMap\"?"));
        assert_eq!((e[0].line, e[0].column, e[0].width), (4, 5, 9));
        assert_eq!(e[1].help.as_deref(), Some("did you mean \"validators\"?"));
        assert_eq!(
            e[2].message,
            "unknown field `bogus` at the top of the Kptfile"
        );
        assert!(e[2]
            .help
            .as_deref()
            .unwrap()
            .starts_with("the fields here are \"apiVersion\", \"kind\", \"metadata\""));
    }

    #[test]
    fn type_errors_and_duplicates_name_the_path() {
        let e = errors("metadata:\n  name: a\n  name: b\n  annotations:\n    x: [1]\npipeline:\n  mutators:\n    image: a\n");
        assert_eq!(e.len(), 3);
        assert_eq!(
            e[0].text,
            "line 3: mapping key \"name\" already defined at line 2"
        );
        assert_eq!(e[0].message, "`name` appears twice in `metadata`");
        assert_eq!(e[1].text, "line 5: cannot unmarshal !!seq into string");
        assert_eq!(
            e[1].message,
            "`metadata.annotations.x` must be a string, not a list"
        );
        assert_eq!(
            e[2].text,
            "line 8: cannot unmarshal !!map into []v1.Function"
        );
        assert_eq!(
            e[2].message,
            "`pipeline.mutators` must be a list, not a mapping"
        );
        assert_eq!(
            e[2].help.as_deref(),
            Some("write each entry as a list item, starting with `- `")
        );
    }
}
