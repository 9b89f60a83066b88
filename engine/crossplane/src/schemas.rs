//! `-s/--required-schemas DIR`: OpenAPI v3 documents, as
//! `kubectl get --raw /openapi/v3/<group>/<version>` prints them,
//! answering the schemas a function requires (`requirements.schemas`).
//! A selector's schema is the entry of a document's `components.schemas`
//! whose `x-kubernetes-group-version-kind` names the selector's group,
//! version and kind — for a CRD, its version's `openAPIV3Schema` — sent
//! as it is (`$ref`s are not resolved). A kind no document has, or no
//! `--required-schemas` at all, is answered with an empty `Schema`, which
//! says "asked for, not found".

use std::path::Path;

use serde_json::Value;

use crate::proto::v1::{Schema, SchemaSelector};
use crate::value::to_struct;
use crate::Error;

/// The schemas of the OpenAPI documents, by group, version and kind.
#[derive(Clone, Debug, Default)]
pub struct Schemas {
    /// ((group, version, kind), schema), in file order.
    entries: Vec<((String, String, String), Value)>,
}

impl Schemas {
    /// The schemas of the `.json` files of `path` (a file or directory).
    pub fn load(path: &Path) -> Result<Schemas, Error> {
        let mut entries = Vec::new();
        for file in crate::load::files_with(path, &["json"])? {
            let text = std::fs::read(&file).map_err(|e| Error::Read {
                path: file.clone(),
                message: e.to_string(),
            })?;
            let doc: Value = serde_json::from_slice(&text).map_err(|e| Error::Yaml {
                location: format!("{}:{}:{}", file.display(), e.line(), e.column()),
                message: format!("not an OpenAPI v3 JSON document: {e}"),
            })?;
            entries.extend(kinds_of(&doc));
        }
        Ok(Schemas { entries })
    }

    /// The schema `selector` asks for; empty when there is none.
    pub fn fetch(&self, selector: &SchemaSelector) -> Schema {
        let (group, version) = match selector.api_version.rsplit_once('/') {
            Some((g, v)) => (g, v),
            None => ("", selector.api_version.as_str()),
        };
        let found = self
            .entries
            .iter()
            .find(|((g, v, k), _)| g == group && v == version && *k == selector.kind);
        Schema {
            openapi_v3: found.map(|(_, schema)| to_struct(schema)),
        }
    }
}

/// Every (group, version, kind) a document's schemas are for.
fn kinds_of(doc: &Value) -> Vec<((String, String, String), Value)> {
    let schemas = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object);
    let mut out = Vec::new();
    for schema in schemas.into_iter().flat_map(|m| m.values()) {
        let gvks = schema
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array);
        for gvk in gvks.into_iter().flatten() {
            let field = |k: &str| gvk.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            out.push((
                (field("group"), field("version"), field("kind")),
                schema.clone(),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_selector_gets_the_schema_of_its_group_version_and_kind() {
        let doc = serde_json::json!({"components": {"schemas": {
            "io.k8s.api.core.v1.ConfigMap": {"type": "object",
                "x-kubernetes-group-version-kind": [{"group": "", "version": "v1", "kind": "ConfigMap"}]},
            "org.example.v1.XBucket": {"type": "object", "description": "bucket",
                "x-kubernetes-group-version-kind": [{"group": "example.org", "version": "v1", "kind": "XBucket"}]}
        }}});
        let schemas = Schemas {
            entries: kinds_of(&doc),
        };
        let ask = |api_version: &str, kind: &str| {
            schemas.fetch(&SchemaSelector {
                api_version: api_version.into(),
                kind: kind.into(),
            })
        };
        let bucket = ask("example.org/v1", "XBucket").openapi_v3.unwrap();
        assert!(bucket.fields.contains_key("description"));
        assert!(ask("v1", "ConfigMap").openapi_v3.is_some());
        assert_eq!(ask("example.org/v2", "XBucket"), Schema::default());
    }
}
