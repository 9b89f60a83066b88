//! `--xrd`: a CompositeResourceDefinition's schema defaults applied to an
//! XR before it is rendered, as classic `crossplane render --xrd` does
//! (`xcrd.ForCompositeResource`, then `DefaultValues`: the API server's
//! structural defaulting with the schema of the XRD version the XR's
//! apiVersion names). A real cluster defaults an XR when it is created, so
//! the defaults are in place before the Composition is selected, and both
//! the functions (the observed composite) and `-x` see them.
//!
//! The defaulting follows `structuraldefaulting.Default` of
//! k8s.io/apiextensions-apiserver: in an object, each property with a
//! `default` that is absent (or `null` where the property is not
//! `nullable`) gets a copy of it; then every property of the object is
//! visited with its schema (or `additionalProperties`' schema), defaulted
//! values included, and every item of an array with `items`. An absent
//! object is not created to hold its properties' defaults, and a value
//! that is set is never replaced. `allOf`/`anyOf`/`oneOf` are value
//! validation, not structure, and give no defaults.
//!
//! Stricter than classic, which checks only the XRD's group and version
//! names: the XRD must also define the XR's kind, and the version must be
//! served, as a cluster would insist.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::load::{self, at, str_at};
use crate::Error;

/// The XRDs of `--xrd`.
pub struct Xrds {
    path: PathBuf,
    list: Vec<Xrd>,
}

/// One CompositeResourceDefinition.
struct Xrd {
    name: String,
    origin: String,
    group: String,
    kind: String,
    /// `spec.versions`.
    versions: Vec<Value>,
    /// The defaults crossplane adds to every version's schema.
    machinery: Value,
}

impl Xrds {
    /// The XRDs of a file or directory; anything else in it is an error.
    pub fn load(path: &Path) -> Result<Xrds, Error> {
        let mut list = Vec::new();
        for doc in load::documents(path)? {
            let (api, kind) = (doc.str_at(&["apiVersion"]), doc.str_at(&["kind"]));
            let xrd_api = matches!(
                api,
                "apiextensions.crossplane.io/v1" | "apiextensions.crossplane.io/v2"
            );
            if kind != "CompositeResourceDefinition" || !xrd_api {
                return Err(Error::Input(format!(
                    "{}: not an apiextensions.crossplane.io/v1 or v2 CompositeResourceDefinition: {api}, kind {kind:?}",
                    doc.origin
                )));
            }
            list.push(Xrd::from_doc(&doc.value, doc.origin));
        }
        if list.is_empty() {
            return Err(Error::Input(format!(
                "{}: no CompositeResourceDefinition",
                path.display()
            )));
        }
        Ok(Xrds {
            path: path.to_path_buf(),
            list,
        })
    }

    /// Applies the defaults of the XRD of `xr`'s group and kind, from the
    /// version its apiVersion names.
    pub fn default_xr(&self, xr: &mut Value) -> Result<(), String> {
        let api_version = str_at(xr, &["apiVersion"]).to_string();
        let (group, version) = api_version
            .rsplit_once('/')
            .unwrap_or(("", api_version.as_str()));
        let kind = str_at(xr, &["kind"]);
        let fail = |what: String| {
            format!(
                "cannot default values for XR {:?} with --xrd {}: {what}",
                str_at(xr, &["metadata", "name"]),
                self.path.display()
            )
        };
        let Some(xrd) = self
            .list
            .iter()
            .find(|x| x.group == group && x.kind == kind)
        else {
            let defined: Vec<String> = self
                .list
                .iter()
                .map(|x| {
                    format!(
                        "{} ({}, kind {} in group {})",
                        x.name, x.origin, x.kind, x.group
                    )
                })
                .collect();
            return Err(fail(format!(
                "no CompositeResourceDefinition for kind {kind} in group {group}; it defines {}",
                defined.join(", ")
            )));
        };
        let schema = xrd.schema(version, &api_version).map_err(fail)?;
        default(xr, &schema);
        Ok(())
    }
}

impl Xrd {
    fn from_doc(v: &Value, origin: String) -> Xrd {
        let versions = at(v, &["spec", "versions"])
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        Xrd {
            name: str_at(v, &["metadata", "name"]).to_string(),
            origin,
            group: str_at(v, &["spec", "group"]).to_string(),
            kind: str_at(v, &["spec", "names", "kind"]).to_string(),
            versions,
            machinery: machinery(v),
        }
    }

    /// The schema of `version`: the XRD's, with crossplane's defaults.
    fn schema(&self, version: &str, api_version: &str) -> Result<Value, String> {
        let Some(v) = self
            .versions
            .iter()
            .find(|v| str_at(v, &["name"]) == version)
        else {
            return Err(format!(
                "the specified API version '{api_version}' does not exist in the XRD {:?} ({})",
                self.name, self.origin
            ));
        };
        if v.get("served").and_then(Value::as_bool) != Some(true) {
            return Err(format!(
                "version {version} of the XRD {:?} ({}) is not served",
                self.name, self.origin
            ));
        }
        let mut schema = at(v, &["schema", "openAPIV3Schema"])
            .cloned()
            .unwrap_or_else(|| Value::Object(Default::default()));
        merge(&mut schema, &self.machinery);
        Ok(schema)
    }
}

/// The defaults crossplane's own fields get from the XRD:
/// `compositionUpdatePolicy` from `spec.defaultCompositionUpdatePolicy`
/// when the XRD sets it (read from a file, nothing else sets it), under
/// `spec.crossplane` for v2 XRs and `spec` for legacy ones.
fn machinery(xrd: &Value) -> Value {
    let policy = at(xrd, &["spec", "defaultCompositionUpdatePolicy"]);
    let Some(policy) = policy.filter(|p| !p.is_null()) else {
        return Value::Object(Default::default());
    };
    let legacy = str_at(xrd, &["apiVersion"]) == "apiextensions.crossplane.io/v1"
        || str_at(xrd, &["spec", "scope"]) == "LegacyCluster";
    let field = serde_json::json!({
        "properties": {"compositionUpdatePolicy": {"type": "string", "default": policy}}
    });
    let spec = if legacy {
        field
    } else {
        serde_json::json!({"properties": {"crossplane": field}})
    };
    serde_json::json!({"properties": {"spec": spec}})
}

/// Adds `extra`'s properties to `schema`'s, recursively.
fn merge(schema: &mut Value, extra: &Value) {
    let Some(extra_props) = extra.get("properties").and_then(Value::as_object) else {
        return;
    };
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    let props = obj
        .entry("properties")
        .or_insert_with(|| Value::Object(Default::default()));
    let Some(props) = props.as_object_mut() else {
        return;
    };
    for (name, prop) in extra_props {
        match props.get_mut(name) {
            Some(existing) if prop.get("properties").is_some() => merge(existing, prop),
            _ => {
                props.insert(name.clone(), prop.clone());
            }
        }
    }
}

/// `structuraldefaulting.Default(x, s)`.
pub fn default(x: &mut Value, s: &Value) {
    match x {
        Value::Object(map) => {
            let props = s.get("properties").and_then(Value::as_object);
            for (name, prop) in props.into_iter().flatten() {
                let Some(value) = prop.get("default").filter(|d| !d.is_null()) else {
                    continue;
                };
                let missing = match map.get(name) {
                    None => true,
                    Some(Value::Null) => !nullable(prop),
                    Some(_) => false,
                };
                if missing {
                    map.insert(name.clone(), value.clone());
                }
            }
            let additional = s.get("additionalProperties").filter(|a| a.is_object());
            for (name, value) in map.iter_mut() {
                if let Some(schema) = props.and_then(|p| p.get(name)).or(additional) {
                    default(value, schema);
                }
            }
        }
        Value::Array(items) => {
            if let Some(schema) = s.get("items").filter(|i| i.is_object()) {
                for item in items {
                    default(item, schema);
                }
            }
        }
        _ => {}
    }
}

fn nullable(prop: &Value) -> bool {
    prop.get("nullable").and_then(Value::as_bool) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defaulted(x: Value, s: Value) -> Value {
        let mut x = x;
        default(&mut x, &s);
        x
    }

    #[test]
    fn absent_and_non_nullable_null_fields_are_defaulted_set_ones_kept() {
        let s = json!({"properties": {
            "a": {"default": 1}, "b": {"default": 2}, "c": {"default": 3},
            "d": {"default": 4, "nullable": true}, "e": {"default": null}
        }});
        assert_eq!(
            defaulted(json!({"b": 0, "c": null, "d": null}), s),
            json!({"a": 1, "b": 0, "c": 3, "d": null})
        );
    }

    #[test]
    fn defaults_reach_into_defaulted_objects_but_do_not_create_absent_ones() {
        let inner = json!({"properties": {"x": {"default": "x"}}});
        let s = json!({"properties": {
            "made": {"default": {}, "properties": {"x": {"default": "x"}}},
            "absent": inner,
            "map": {"additionalProperties": inner},
            "list": {"items": inner}
        }});
        assert_eq!(
            defaulted(json!({"map": {"k": {}}, "list": [{}, {"x": "set"}, 5]}), s),
            json!({"made": {"x": "x"}, "map": {"k": {"x": "x"}}, "list": [{"x": "x"}, {"x": "set"}, 5]})
        );
    }

    #[test]
    fn the_xrd_must_be_of_the_xr_kind_and_its_version_served() {
        let doc = json!({"apiVersion": "apiextensions.crossplane.io/v2",
        "metadata": {"name": "xs.example.org"},
        "spec": {"group": "example.org", "names": {"kind": "X"}, "versions": [
            {"name": "v1", "served": true, "schema": {"openAPIV3Schema":
                {"properties": {"spec": {"properties": {"size": {"default": 1}}}}}}},
            {"name": "v2", "served": false}
        ]}});
        let xrds = Xrds {
            path: PathBuf::from("xrd.yaml"),
            list: vec![Xrd::from_doc(&doc, "xrd.yaml:1".into())],
        };
        let mut xr = json!({"apiVersion": "example.org/v1", "kind": "X", "spec": {}});
        xrds.default_xr(&mut xr).unwrap();
        assert_eq!(xr["spec"], json!({"size": 1}));
        xr["apiVersion"] = json!("example.org/v2");
        let err = xrds.default_xr(&mut xr).unwrap_err();
        assert!(
            err.contains("version v2 of the XRD \"xs.example.org\" (xrd.yaml:1) is not served"),
            "{err}"
        );
        let mut other = json!({"apiVersion": "other.org/v1", "kind": "X"});
        let err = xrds.default_xr(&mut other).unwrap_err();
        assert!(
            err.contains(
                "--xrd xrd.yaml: no CompositeResourceDefinition for kind X in group other.org"
            ),
            "{err}"
        );
    }

    #[test]
    fn crossplane_policy_default_goes_where_the_xrd_scope_puts_it() {
        let v2 = json!({"apiVersion": "apiextensions.crossplane.io/v2",
            "spec": {"defaultCompositionUpdatePolicy": "Manual"}});
        let mut schema = json!({"properties": {"spec": {"properties": {"size": {"default": 1}}}}});
        merge(&mut schema, &machinery(&v2));
        assert_eq!(
            defaulted(json!({"spec": {"crossplane": {}}}), schema),
            json!({"spec": {"size": 1, "crossplane": {"compositionUpdatePolicy": "Manual"}}})
        );
    }
}
