//! The slice of kyaml's `openapi` package that `comments.CopyComments`
//! depends on: its walker asks the built-in Kubernetes v1.21.2 schema (plus
//! kyaml's Kustomization schema) whether a list is merged by key
//! (`x-kubernetes-patch-strategy: merge` with `x-kubernetes-patch-merge-key`
//! or `x-kubernetes-list-map-keys`), and reads schemas that old kpt setters
//! wrote into comments (`# {"$kpt-set":"image"}`, `# {"$openapi":"x"}`).
//!
//! `openapi_v1_21_2.json` is kyaml's embedded swagger reduced to what the
//! walker reads (`tools/kyaml-openapi/build.sh` regenerates it).

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use krmgraph_yaml::Node;

const BUILTIN: &str = include_str!("openapi_v1_21_2.json");
const DEFINITIONS_PREFIX: &str = "#/definitions/";

/// A schema, or the parts of one the walker uses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// `type`.
    pub types: Vec<String>,
    /// `$ref`.
    pub reference: String,
    /// `items` in its single-schema form.
    pub items: Option<Box<Schema>>,
    /// `properties`.
    pub properties: HashMap<String, Schema>,
    /// `additionalProperties` in its schema form.
    pub additional_properties: Option<Box<Schema>>,
    /// `x-kubernetes-patch-strategy`.
    pub patch_strategy: Option<String>,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Option<Vec<String>>,
    /// Whether the schema equals Go's zero `spec.Schema{}`.
    pub empty: bool,
}

/// A built-in schema, or one read from a comment.
pub type SchemaRef = Cow<'static, Schema>;

struct Builtin {
    definitions: HashMap<String, Schema>,
    by_type: HashMap<(String, String), String>,
}

fn builtin() -> &'static Builtin {
    static BUILTIN_SCHEMA: OnceLock<Builtin> = OnceLock::new();
    BUILTIN_SCHEMA.get_or_init(|| {
        let root: Value = serde_json::from_str(BUILTIN).unwrap_or(Value::Null);
        let mut definitions = HashMap::new();
        let mut by_type = HashMap::new();
        if let Some(defs) = root.get("definitions").and_then(Value::as_object) {
            for (name, def) in defs {
                for gvk in def
                    .get("x-kubernetes-group-version-kind")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let get = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("");
                    let api_version = match get("group") {
                        "" => get("version").to_string(),
                        group => format!("{group}/{}", get("version")),
                    };
                    by_type.insert((api_version, get("kind").to_string()), name.clone());
                }
                definitions.insert(name.clone(), Schema::from_json(def));
            }
        }
        Builtin {
            definitions,
            by_type,
        }
    })
}

/// `SchemaForResourceType`: the built-in schema of a resource type.
pub fn schema_for_resource_type(api_version: &str, kind: &str) -> Option<SchemaRef> {
    let b = builtin();
    let name = b
        .by_type
        .get(&(api_version.to_string(), kind.to_string()))?;
    b.definitions.get(name).map(Cow::Borrowed)
}

/// `Resolve(ref, Schema())`: a `#/definitions/<name>` reference.
pub fn resolve(reference: &str) -> Option<&'static Schema> {
    let name = reference.strip_prefix(DEFINITIONS_PREFIX)?;
    builtin().definitions.get(name)
}

/// [`Schema::field`], without a copy when `schema` is part of the built-in
/// schema (the walker asks for a field of every field it walks).
pub fn field_of(schema: &SchemaRef, name: &str) -> Option<SchemaRef> {
    match schema {
        Cow::Borrowed(s) => dereference(Cow::Borrowed(s.field_schema(name)?)),
        Cow::Owned(s) => s.field(name),
    }
}

/// [`Schema::elements`], without a copy when `schema` is part of the
/// built-in schema.
pub fn elements_of(schema: &SchemaRef) -> Option<SchemaRef> {
    match schema {
        Cow::Borrowed(s) => dereference(Cow::Borrowed(s.items_schema()?)),
        Cow::Owned(s) => s.elements(),
    }
}

/// Follows `$ref`s until a schema without one; `None` if one does not
/// resolve (kyaml's `Field` and `Elements` then give no schema).
fn dereference(schema: SchemaRef) -> Option<SchemaRef> {
    let mut s = schema;
    while !s.reference.is_empty() {
        s = Cow::Borrowed(resolve(&s.reference)?);
    }
    Some(s)
}

impl Schema {
    /// Parses a JSON schema (kube-openapi's `spec.Schema.UnmarshalJSON`,
    /// keeping only what the walker reads).
    pub fn from_json(v: &Value) -> Schema {
        let Some(obj) = v.as_object() else {
            return Schema {
                empty: true,
                ..Schema::default()
            };
        };
        let string = |k: &str| obj.get(k).and_then(Value::as_str).map(str::to_string);
        let types = match obj.get("type") {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        let sub = |k: &str| {
            obj.get(k)
                .filter(|v| v.is_object())
                .map(|v| Box::new(Schema::from_json(v)))
        };
        let properties = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .map(|(k, v)| (k.clone(), Schema::from_json(v)))
                    .collect()
            })
            .unwrap_or_default();
        let list_map_keys = obj
            .get("x-kubernetes-list-map-keys")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|k| k.as_str().map(str::to_string))
                    .collect()
            });
        Schema {
            types,
            reference: string("$ref").unwrap_or_default(),
            items: sub("items"),
            properties,
            additional_properties: sub("additionalProperties"),
            patch_strategy: string("x-kubernetes-patch-strategy"),
            patch_merge_key: string("x-kubernetes-patch-merge-key"),
            list_map_keys,
            empty: obj.iter().all(|(k, v)| is_zero_schema_prop(k, v)),
        }
    }

    /// `ResourceSchema.Field`: the schema of a property, or of the values
    /// of a map (`additionalProperties`), references resolved.
    pub fn field(&self, name: &str) -> Option<SchemaRef> {
        dereference(Cow::Owned(self.field_schema(name)?.clone()))
    }

    fn field_schema(&self, name: &str) -> Option<&Schema> {
        match (self.properties.get(name), &self.additional_properties) {
            (Some(p), _) => Some(p),
            (None, Some(a)) => Some(a),
            (None, None) => None,
        }
    }

    /// `ResourceSchema.Elements`: the schema of an array's items.
    pub fn elements(&self) -> Option<SchemaRef> {
        dereference(Cow::Owned(self.items_schema()?.clone()))
    }

    fn items_schema(&self) -> Option<&Schema> {
        if self.types.len() != 1 || self.types[0] != "array" {
            return None;
        }
        self.items.as_deref()
    }

    /// `PatchStrategyAndKeyList`: the strategy and merge keys (list-map
    /// keys win over the single merge key).
    pub fn patch_strategy_and_key_list(&self) -> (String, Vec<String>) {
        let Some(strategy) = &self.patch_strategy else {
            return (String::new(), Vec::new());
        };
        let keys = match (&self.list_map_keys, &self.patch_merge_key) {
            (Some(list), _) => list.clone(),
            (None, Some(key)) => vec![key.clone()],
            (None, None) => Vec::new(),
        };
        (strategy.clone(), keys)
    }

    /// `schemaHasMergeStrategy`: `merge` among the comma-separated
    /// strategies.
    pub fn has_merge_strategy(&self) -> bool {
        self.patch_strategy
            .as_deref()
            .is_some_and(|s| s.split(',').any(|p| p == "merge"))
    }
}

/// Whether `key: value` leaves a kube-openapi schema at its zero value:
/// known properties with zero values do; any other key lands in
/// `Extensions` or `ExtraProps` and does not.
fn is_zero_schema_prop(key: &str, value: &Value) -> bool {
    const KNOWN: &[&str] = &[
        "id",
        "$ref",
        "$schema",
        "description",
        "type",
        "nullable",
        "format",
        "title",
        "default",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "multipleOf",
        "enum",
        "maxProperties",
        "minProperties",
        "required",
        "items",
        "allOf",
        "oneOf",
        "anyOf",
        "not",
        "properties",
        "additionalProperties",
        "patternProperties",
        "dependencies",
        "additionalItems",
        "definitions",
        "discriminator",
        "readOnly",
        "xml",
        "externalDocs",
        "example",
    ];
    if !KNOWN.contains(&key) {
        return false;
    }
    match value {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

/// kyaml's `FieldMeta.Read` of a node: the schema its first non-empty
/// comment (line comment first, else head comment) holds as JSON, if that
/// schema is not empty; a `$ref` is resolved when it can be.
pub fn comment_schema(node: &Node) -> Option<SchemaRef> {
    // The walker asks for every key and value; almost none has a comment.
    if !node.has_extras() {
        return None;
    }
    let comment = [node.line_comment(), node.head_comment()]
        .into_iter()
        .find(|c| !c.is_empty())?;
    let text = comment.trim_start_matches('#');
    // Only a JSON object can be a schema; most comments are prose, not
    // worth two JSON parses each.
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let schema = short_hand(text).or_else(|| {
        let v: Value = serde_json::from_str(text).ok()?;
        match v {
            Value::Object(_) => Some(Schema::from_json(&v)),
            _ => None,
        }
    })?;
    if schema.empty {
        return None;
    }
    if !schema.reference.is_empty() {
        if let Some(resolved) = resolve(&schema.reference) {
            return Some(Cow::Borrowed(resolved));
        }
    }
    Some(Cow::Owned(schema))
}

/// `processShortHand`: `{"$kpt-set": "name"}` is a reference to a setter
/// definition (which the built-in schema does not have).
fn short_hand(text: &str) -> Option<Schema> {
    let map: HashMap<String, String> = serde_json::from_str(text).ok()?;
    let name = map.get("$kpt-set").filter(|n| !n.is_empty())?;
    Some(Schema {
        reference: format!("{DEFINITIONS_PREFIX}io.k8s.cli.setters.{name}"),
        ..Schema::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_merge_by_name() {
        let deploy = schema_for_resource_type("apps/v1", "Deployment").unwrap();
        let containers = deploy
            .field("spec")
            .and_then(|s| s.field("template"))
            .and_then(|s| s.field("spec"))
            .and_then(|s| s.field("containers"))
            .unwrap();
        assert!(containers.has_merge_strategy());
        assert_eq!(
            containers.patch_strategy_and_key_list(),
            ("merge".to_string(), vec!["name".to_string()])
        );
        let ports = containers
            .elements()
            .and_then(|c| c.field("ports"))
            .unwrap();
        assert_eq!(
            ports.patch_strategy_and_key_list().1,
            vec!["containerPort".to_string(), "protocol".to_string()]
        );
        let finalizers = deploy
            .field("metadata")
            .and_then(|m| m.field("finalizers"))
            .unwrap();
        assert_eq!(
            finalizers.patch_strategy_and_key_list(),
            ("merge".to_string(), vec![])
        );
        let labels = deploy
            .field("metadata")
            .and_then(|m| m.field("labels"))
            .unwrap();
        assert_eq!(labels.types, vec!["object".to_string()]);
        assert_eq!(
            labels.field("app").unwrap().types,
            vec!["string".to_string()]
        );
    }

    #[test]
    fn unknown_types_have_no_schema() {
        assert!(schema_for_resource_type("kpt.dev/v1", "Kptfile").is_none());
        assert!(schema_for_resource_type("v1", "ConfigMap").is_some());
        assert!(
            schema_for_resource_type("kustomize.config.k8s.io/v1beta1", "Kustomization").is_some()
        );
    }

    #[test]
    fn comment_schemas() {
        let with = |c: &str| {
            let mut node = Node::default();
            node.set_line_comment(c);
            node
        };
        assert!(comment_schema(&with("# a comment")).is_none());
        assert!(comment_schema(&with("# {}")).is_none());
        assert!(comment_schema(&with("# {\"description\": \"\"}")).is_none());
        let s = comment_schema(&with("# {\"$openapi\":\"image\"}")).unwrap();
        assert!(s.field("x").is_none() && !s.has_merge_strategy());
        let s = comment_schema(&with("# {\"$kpt-set\":\"image\"}")).unwrap();
        assert_eq!(s.reference, "#/definitions/io.k8s.cli.setters.image");
        let s = comment_schema(&with(
            "# {\"$ref\":\"#/definitions/io.k8s.api.core.v1.Container\"}",
        ))
        .unwrap();
        assert!(s.field("env").unwrap().has_merge_strategy());
    }
}
