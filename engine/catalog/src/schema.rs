//! A step's functionConfig as the catalog sees it (its `apiVersion`/`kind`
//! and node), and its validation against the catalog version's
//! `openAPIV3Schema`: the subset of OpenAPI v3 that CRD schemas use for
//! structure — `type`, `properties`, `required`, `additionalProperties:
//! false`, `items`, `enum`. Errors name the config field's `file:line:col`.

use std::path::{Path, PathBuf};

use krmgraph_yaml::{Kind, Node};

use crate::node::{entries, get, root, scalar};
use crate::{CatalogError, Entry};

/// A functionConfig read from its file.
pub struct Config {
    /// The file.
    pub file: PathBuf,
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// The document's root.
    pub node: Node,
}

/// Reads the first document of `file`.
pub fn read_config(file: &Path) -> Result<Config, CatalogError> {
    let err = |message: String| CatalogError::File {
        file: file.to_path_buf(),
        message,
    };
    let bytes = std::fs::read(file).map_err(|e| err(e.to_string()))?;
    let docs = krmgraph_yaml::parse_documents(&bytes).map_err(|e| err(format!("not YAML: {e}")))?;
    let node = docs
        .first()
        .map(|d| root(d).clone())
        .ok_or_else(|| err("empty functionConfig".into()))?;
    let field = |key: &str| get(&node, key).and_then(scalar).unwrap_or("").to_string();
    let (api_version, kind) = (field("apiVersion"), field("kind"));
    if api_version.is_empty() || kind.is_empty() {
        return Err(err("the functionConfig has no apiVersion or kind".into()));
    }
    Ok(Config {
        file: file.to_path_buf(),
        api_version,
        kind,
        node,
    })
}

/// Checks `config` against `schema` (of `entry`).
pub fn validate(config: &Config, schema: &Node, entry: &Entry) -> Result<(), CatalogError> {
    check(&config.node, schema, "").map_err(|(node, path, message)| CatalogError::At {
        file: config.file.clone(),
        line: node.line,
        column: node.column,
        message: format!(
            "{}: {message} (schema of {} {} at {})",
            if path.is_empty() { "." } else { &path },
            entry.api_version(),
            entry.kind,
            entry.origin()
        ),
    })
}

type Failure<'n> = (&'n Node, String, String);

fn check<'n>(value: &'n Node, schema: &Node, path: &str) -> Result<(), Failure<'n>> {
    let fail = |message: String| Err((value, path.to_string(), message));
    if let Some(ty) = get(schema, "type").and_then(scalar) {
        if !has_type(value, ty) {
            return fail(format!("must be of type {ty}"));
        }
    }
    if let Some(allowed) = get(schema, "enum") {
        if !allowed
            .content
            .iter()
            .any(|a| a.value == value.value && a.kind == value.kind)
        {
            let list: Vec<&str> = allowed.content.iter().map(|a| a.value.as_str()).collect();
            return fail(format!("must be one of {}", list.join(", ")));
        }
    }
    if value.kind == Kind::Mapping {
        check_object(value, schema, path)?;
    }
    if let (Kind::Sequence, Some(items)) = (value.kind, get(schema, "items")) {
        for (i, item) in value.content.iter().enumerate() {
            check(item, items, &format!("{path}[{i}]"))?;
        }
    }
    Ok(())
}

fn check_object<'n>(value: &'n Node, schema: &Node, path: &str) -> Result<(), Failure<'n>> {
    if let Some(required) = get(schema, "required") {
        for name in &required.content {
            if get(value, &name.value).is_none() {
                let message = format!("missing required field {:?}", name.value.as_str());
                return Err((value, path.to_string(), message));
            }
        }
    }
    let properties = get(schema, "properties");
    let closed = get(schema, "additionalProperties").and_then(scalar) == Some("false");
    for (key, field) in entries(value) {
        let field_path = format!("{path}.{}", key.value);
        match properties.and_then(|p| get(p, &key.value)) {
            Some(sub) => check(field, sub, &field_path)?,
            None if closed => {
                return Err((key, field_path, "unknown field".to_string()));
            }
            None => {}
        }
    }
    Ok(())
}

fn has_type(value: &Node, ty: &str) -> bool {
    let scalar = value.kind == Kind::Scalar;
    let tag = krmgraph_yaml::node::short_tag(&value.tag);
    match ty {
        "object" => value.kind == Kind::Mapping,
        "array" => value.kind == Kind::Sequence,
        "string" => scalar && tag == "!!str",
        "integer" => scalar && tag == "!!int",
        "number" => scalar && (tag == "!!int" || tag == "!!float"),
        "boolean" => scalar && tag == "!!bool",
        _ => true,
    }
}
