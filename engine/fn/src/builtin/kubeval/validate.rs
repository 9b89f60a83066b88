//! JSON-schema validation with the errors kubeval reports: kubeval runs
//! `gojsonschema` (v1.1, the version it vendors), so each error has
//! gojsonschema's English message and its `Field()` — the dotted path from
//! the root (`spec.template.spec.containers.0.image`), or, for errors about
//! a property (`required`, an additional property), the property's own
//! name. Errors come in gojsonschema's order: at each node the type, then
//! `oneOf`/`anyOf`/`allOf`/`not`, then the object's `required` and
//! additional properties, then `enum` and the scalar constraints, then the
//! children (in document order; gojsonschema's own order there is Go map
//! order).
//!
//! The schemas use a small subset of JSON schema, which is all this reads:
//! `type`, `$ref`, `properties`, `additionalProperties`, `required`,
//! `items`, `enum`, `oneOf`, `anyOf`, `allOf`, `not`, `pattern`,
//! `minimum`/`maximum`, `minLength`/`maxLength`, `minItems`/`maxItems`.
//! `format` is not checked (gojsonschema checks none of Kubernetes'
//! `int32`/`int64`/`byte` formats; `date-time` is the exception, not
//! followed here).

use serde_json::Value;

/// One validation error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaError {
    /// gojsonschema's `Field()`.
    pub field: String,
    /// gojsonschema's description.
    pub message: String,
}

/// Where `$ref`s point.
pub trait Resolve {
    /// The schema `reference` names (a `#/...` pointer into `root`, or a
    /// definition's name).
    fn resolve<'a>(&'a self, root: &'a Value, reference: &str) -> Option<&'a Value>;
}

/// A validation of one document against one schema.
pub struct Validator<'a> {
    /// Resolves `$ref`s.
    pub resolver: &'a dyn Resolve,
    /// The document holding the schema (for `#/...` references).
    pub root: &'a Value,
    /// Whether `additionalProperties: false` counts (kubeval's `strict`).
    pub strict: bool,
}

/// How deep `$ref`s may nest before the schema counts as recursive.
const MAX_DEPTH: usize = 200;

impl Validator<'_> {
    /// The errors of `value` against `schema`.
    pub fn validate(&self, schema: &Value, value: &Value) -> Vec<SchemaError> {
        let mut errors = Vec::new();
        self.node(schema, value, &mut Vec::new(), &mut errors, 0);
        errors
    }

    fn node(
        &self,
        schema: &Value,
        value: &Value,
        path: &mut Vec<String>,
        errors: &mut Vec<SchemaError>,
        depth: usize,
    ) {
        let Some(schema) = schema.as_object() else {
            return;
        };
        if depth > MAX_DEPTH {
            return;
        }
        if let Some(Value::String(r)) = schema.get("$ref") {
            if let Some(target) = self.resolver.resolve(self.root, r) {
                self.node(target, value, path, errors, depth + 1);
            }
            return;
        }
        let context = context(path);
        if let Some(types) = schema.get("type") {
            if !type_matches(types, value) {
                errors.push(SchemaError {
                    field: context,
                    message: format!(
                        "Invalid type. Expected: {}, given: {}",
                        expected(types),
                        type_name(value)
                    ),
                });
                return;
            }
        }
        self.combinators(schema, value, path, errors, depth);
        if let Value::Object(map) = value {
            self.object(schema, map, path, errors, depth);
        }
        scalar_constraints(schema, value, &context, errors);
        match value {
            Value::Object(map) => {
                if let Some(Value::Object(props)) = schema.get("properties") {
                    for (key, child) in map {
                        if let Some(s) = props.get(key) {
                            path.push(key.clone());
                            self.node(s, child, path, errors, depth + 1);
                            path.pop();
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(s) = schema.get("items").filter(|s| s.is_object()) {
                    for (i, child) in items.iter().enumerate() {
                        path.push(i.to_string());
                        self.node(s, child, path, errors, depth + 1);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
    }

    fn combinators(
        &self,
        schema: &serde_json::Map<String, Value>,
        value: &Value,
        path: &mut Vec<String>,
        errors: &mut Vec<SchemaError>,
        depth: usize,
    ) {
        let context = context(path);
        let sub = |s: &Value, path: &mut Vec<String>| {
            let mut e = Vec::new();
            self.node(s, value, path, &mut e, depth + 1);
            e
        };
        if let Some(Value::Array(all)) = schema.get("allOf") {
            let mut failed = Vec::new();
            for s in all {
                failed.extend(sub(s, path));
            }
            if !failed.is_empty() {
                errors.push(at(&context, "Must validate all the schemas (allOf)"));
                errors.extend(failed);
            }
        }
        if let Some(Value::Array(any)) = schema.get("anyOf") {
            let results: Vec<_> = any.iter().map(|s| sub(s, path)).collect();
            if !results.iter().any(Vec::is_empty) {
                errors.push(at(&context, "Must validate at least one schema (anyOf)"));
                errors.extend(results.into_iter().next().unwrap_or_default());
            }
        }
        if let Some(Value::Array(one)) = schema.get("oneOf") {
            let results: Vec<_> = one.iter().map(|s| sub(s, path)).collect();
            let valid = results.iter().filter(|e| e.is_empty()).count();
            if valid != 1 {
                errors.push(at(
                    &context,
                    "Must validate one and only one schema (oneOf)",
                ));
                if valid == 0 {
                    errors.extend(results.into_iter().next().unwrap_or_default());
                }
            }
        }
        if let Some(not) = schema.get("not") {
            if sub(not, path).is_empty() {
                errors.push(at(&context, "Must not validate the schema (not)"));
            }
        }
    }

    fn object(
        &self,
        schema: &serde_json::Map<String, Value>,
        map: &serde_json::Map<String, Value>,
        path: &mut Vec<String>,
        errors: &mut Vec<SchemaError>,
        depth: usize,
    ) {
        if let Some(Value::Array(required)) = schema.get("required") {
            for name in required.iter().filter_map(Value::as_str) {
                if !map.contains_key(name) {
                    errors.push(at(name, &format!("{name} is required")));
                }
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        match schema.get("additionalProperties") {
            Some(Value::Bool(false)) if self.strict => {
                for key in map.keys() {
                    if !props.is_some_and(|p| p.contains_key(key)) {
                        errors.push(at(
                            key,
                            &format!("Additional property {key} is not allowed"),
                        ));
                    }
                }
            }
            Some(extra @ Value::Object(_)) => {
                for (key, child) in map {
                    if !props.is_some_and(|p| p.contains_key(key)) {
                        path.push(key.clone());
                        self.node(extra, child, path, errors, depth + 1);
                        path.pop();
                    }
                }
            }
            _ => {}
        }
    }
}

fn at(field: &str, message: &str) -> SchemaError {
    SchemaError {
        field: field.to_string(),
        message: message.to_string(),
    }
}

/// gojsonschema's `Field()` for a context: the path without `(root).`.
fn context(path: &[String]) -> String {
    if path.is_empty() {
        "(root)".to_string()
    } else {
        path.join(".")
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if is_integer(n) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn is_integer(n: &serde_json::Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

fn type_matches(types: &Value, value: &Value) -> bool {
    let given = type_name(value);
    let ok = |t: &str| t == given || (t == "number" && given == "integer");
    match types {
        Value::String(t) => ok(t),
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(ok),
        _ => true,
    }
}

/// gojsonschema's `jsonSchemaType.String()`: one type as it is, several
/// as `[a,b]`.
fn expected(types: &Value) -> String {
    match types {
        Value::Array(ts) if ts.len() == 1 => ts[0].as_str().unwrap_or("").to_string(),
        Value::Array(ts) => format!(
            "[{}]",
            ts.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(",")
        ),
        Value::String(t) => t.clone(),
        _ => String::new(),
    }
}

fn scalar_constraints(
    schema: &serde_json::Map<String, Value>,
    value: &Value,
    context: &str,
    errors: &mut Vec<SchemaError>,
) {
    if let Some(Value::Array(allowed)) = schema.get("enum") {
        if !allowed.contains(value) {
            let list: Vec<String> = allowed.iter().map(Value::to_string).collect();
            errors.push(at(
                context,
                &format!(
                    "{context} must be one of the following: {}",
                    list.join(", ")
                ),
            ));
        }
    }
    let num = |k: &str| schema.get(k).and_then(Value::as_f64);
    match value {
        Value::String(s) => {
            let len = s.chars().count() as f64;
            if let Some(min) = num("minLength").filter(|m| len < *m) {
                errors.push(at(
                    context,
                    &format!("String length must be greater than or equal to {min}"),
                ));
            }
            if let Some(max) = num("maxLength").filter(|m| len > *m) {
                errors.push(at(
                    context,
                    &format!("String length must be less than or equal to {max}"),
                ));
            }
            if let Some(Value::String(p)) = schema.get("pattern") {
                if regex::Regex::new(p).is_ok_and(|re| !re.is_match(s)) {
                    errors.push(at(context, &format!("Does not match pattern '{p}'")));
                }
            }
        }
        Value::Number(n) => {
            let v = n.as_f64().unwrap_or(0.0);
            if let Some(min) = num("minimum").filter(|m| v < *m) {
                errors.push(at(
                    context,
                    &format!("Must be greater than or equal to {min}"),
                ));
            }
            if let Some(max) = num("maximum").filter(|m| v > *m) {
                errors.push(at(context, &format!("Must be less than or equal to {max}")));
            }
        }
        Value::Array(items) => {
            let len = items.len() as f64;
            if let Some(min) = num("minItems").filter(|m| len < *m) {
                errors.push(at(
                    context,
                    &format!("Array must have at least {min} items"),
                ));
            }
            if let Some(max) = num("maxItems").filter(|m| len > *m) {
                errors.push(at(context, &format!("Array must have at most {max} items")));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct NoRefs;
    impl Resolve for NoRefs {
        fn resolve<'a>(&'a self, root: &'a Value, reference: &str) -> Option<&'a Value> {
            root.pointer(reference.strip_prefix('#')?)
        }
    }

    fn check(schema: Value, value: Value, strict: bool) -> Vec<String> {
        Validator {
            resolver: &NoRefs,
            root: &schema,
            strict,
        }
        .validate(&schema, &value)
        .into_iter()
        .map(|e| format!("{}: {}", e.field, e.message))
        .collect()
    }

    #[test]
    fn reports_as_gojsonschema() {
        let schema = json!({
            "definitions": {"spec": {
                "type": ["object", "null"],
                "required": ["selector", "template"],
                "additionalProperties": false,
                "properties": {
                    "replicas": {"type": ["integer", "null"]},
                    "ports": {"type": "array", "items": {"type": "integer"}},
                    "mode": {"enum": ["a", "b"]},
                    "port": {"oneOf": [{"type": "string"}, {"type": "integer"}]}
                }
            }},
            "type": "object",
            "properties": {"spec": {"$ref": "#/definitions/spec"}}
        });
        let value = json!({"spec": {
            "replicas": "x", "extra": 1, "ports": [1, "2"], "mode": "c", "port": true
        }});
        assert_eq!(
            check(schema.clone(), value.clone(), true),
            [
                "selector: selector is required",
                "template: template is required",
                "extra: Additional property extra is not allowed",
                "spec.replicas: Invalid type. Expected: [integer,null], given: string",
                "spec.ports.1: Invalid type. Expected: integer, given: string",
                "spec.mode: spec.mode must be one of the following: \"a\", \"b\"",
                "spec.port: Must validate one and only one schema (oneOf)",
                "spec.port: Invalid type. Expected: string, given: boolean",
            ]
        );
        assert_eq!(check(schema, value, false).len(), 7, "not strict");
    }

    #[test]
    fn integral_floats_are_integers() {
        assert!(check(json!({"type": "integer"}), json!(2.0), true).is_empty());
        assert_eq!(
            check(json!({"type": "integer"}), json!(2.5), true),
            ["(root): Invalid type. Expected: integer, given: number"]
        );
    }
}
