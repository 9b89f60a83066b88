//! The command's inputs, read from their YAML: Compositions and their
//! pipeline steps, Functions with their runtime annotations, and the
//! checks `crossplane render` makes before rendering (§2.2).

use std::collections::BTreeMap;

use serde_json::Value;

use crate::load::{at, str_at, Doc};
use crate::Error;

/// The annotation naming a composed resource's pipeline key.
pub const RESOURCE_NAME: &str = "crossplane.io/composition-resource-name";

/// A Composition.
#[derive(Clone, Debug)]
pub struct Composition {
    /// `metadata.name`.
    pub name: String,
    /// `spec.compositeTypeRef.apiVersion`.
    pub type_api_version: String,
    /// `spec.compositeTypeRef.kind`.
    pub type_kind: String,
    /// `spec.mode`.
    pub mode: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// `spec.pipeline`.
    pub pipeline: Vec<Step>,
}

/// One pipeline step.
#[derive(Clone, Debug)]
pub struct Step {
    /// `step`.
    pub name: String,
    /// `functionRef.name`.
    pub function: String,
    /// `input`.
    pub input: Option<Value>,
    /// `credentials` from Secrets: (name, secret name, secret namespace).
    pub credentials: Vec<(String, String, String)>,
    /// `requirements.requiredResources`: (requirement name, selector).
    pub required: Vec<(String, Value)>,
}

impl Composition {
    /// The Composition in `doc`.
    pub fn from_doc(doc: &Doc) -> Result<Composition, Error> {
        let v = &doc.value;
        if str_at(v, &["kind"]) != "Composition" {
            return Err(Error::Input(format!(
                "{}: not a Composition (kind {:?})",
                doc.origin,
                str_at(v, &["kind"])
            )));
        }
        let mut pipeline = Vec::new();
        let steps = at(v, &["spec", "pipeline"]).and_then(Value::as_array);
        for s in steps.into_iter().flatten() {
            pipeline.push(Step {
                name: str_at(s, &["step"]).to_string(),
                function: str_at(s, &["functionRef", "name"]).to_string(),
                input: s.get("input").filter(|i| !i.is_null()).cloned(),
                credentials: credentials(s),
                required: required(s),
            });
        }
        Ok(Composition {
            name: str_at(v, &["metadata", "name"]).to_string(),
            type_api_version: str_at(v, &["spec", "compositeTypeRef", "apiVersion"]).to_string(),
            type_kind: str_at(v, &["spec", "compositeTypeRef", "kind"]).to_string(),
            mode: str_at(v, &["spec", "mode"]).to_string(),
            labels: string_map(at(v, &["metadata", "labels"])),
            pipeline,
        })
    }

    /// The checks made before rendering `xr` with this Composition.
    pub fn check(&self, xr: &Value) -> Result<(), String> {
        let (api_version, kind) = (str_at(xr, &["apiVersion"]), str_at(xr, &["kind"]));
        if self.type_kind != kind {
            return Err(format!(
                "composition's compositeTypeRef.kind ({}) does not match XR's kind ({kind})",
                self.type_kind
            ));
        }
        if self.type_api_version != api_version {
            return Err(format!(
                "composition's compositeTypeRef.apiVersion ({}) does not match XR's apiVersion ({api_version})",
                self.type_api_version
            ));
        }
        for (key, want) in composition_selector(xr) {
            match self.labels.get(&key) {
                None => {
                    return Err(format!(
                        "composition {:?} is missing required label {key:?}",
                        self.name
                    ))
                }
                Some(got) if *got != want => {
                    return Err(format!(
                        "composition {:?} has incorrect value for label {key:?}: want {want:?}, got {got:?}",
                        self.name
                    ))
                }
                Some(_) => {}
            }
        }
        if self.mode != "Pipeline" {
            return Err(format!(
                "render only supports Composition Function pipelines: Composition {:?} must use spec.mode: Pipeline",
                self.name
            ));
        }
        Ok(())
    }

    /// Whether this Composition is the one `xr` selects among several:
    /// named by its `compositionRef`, else of its type and matching its
    /// `compositionSelector`.
    pub fn selected_by(&self, xr: &Value) -> bool {
        let named = [
            &["spec", "compositionRef", "name"][..],
            &["spec", "crossplane", "compositionRef", "name"][..],
        ]
        .iter()
        .map(|p| str_at(xr, p))
        .find(|n| !n.is_empty());
        if let Some(name) = named {
            return name == self.name;
        }
        self.type_kind == str_at(xr, &["kind"])
            && self.type_api_version == str_at(xr, &["apiVersion"])
            && composition_selector(xr)
                .iter()
                .all(|(k, v)| self.labels.get(k) == Some(v))
    }
}

/// The XR's `compositionSelector.matchLabels` (v1 or v2 layout).
fn composition_selector(xr: &Value) -> BTreeMap<String, String> {
    let v1 = at(xr, &["spec", "compositionSelector", "matchLabels"]);
    let v2 = at(
        xr,
        &["spec", "crossplane", "compositionSelector", "matchLabels"],
    );
    string_map(v1.or(v2))
}

/// A JSON object of strings as a map (other values are skipped).
pub fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

fn credentials(step: &Value) -> Vec<(String, String, String)> {
    let list = step.get("credentials").and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter(|c| str_at(c, &["source"]) == "Secret" && c.get("secretRef").is_some())
        .map(|c| {
            (
                str_at(c, &["name"]).to_string(),
                str_at(c, &["secretRef", "name"]).to_string(),
                str_at(c, &["secretRef", "namespace"]).to_string(),
            )
        })
        .collect()
}

fn required(step: &Value) -> Vec<(String, Value)> {
    let list = at(step, &["requirements", "requiredResources"]).and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .map(|r| (str_at(r, &["requirementName"]).to_string(), r.clone()))
        .collect()
}

/// A Function of the functions file.
#[derive(Clone, Debug)]
pub struct Function {
    /// `metadata.name`.
    pub name: String,
    /// `spec.package`.
    pub package: String,
    /// `metadata.annotations`, with `-a` applied.
    pub annotations: BTreeMap<String, String>,
}

impl Function {
    /// The Function in `doc`, with the `overrides` annotations.
    pub fn from_doc(doc: &Doc, overrides: &[(String, String)]) -> Result<Function, Error> {
        let v = &doc.value;
        let api = str_at(v, &["apiVersion"]);
        if str_at(v, &["kind"]) != "Function"
            || !matches!(api, "pkg.crossplane.io/v1" | "pkg.crossplane.io/v1beta1")
        {
            return Err(Error::Input(format!(
                "{}: not a pkg.crossplane.io/v1 or v1beta1 Function: {api}, kind {:?}",
                doc.origin,
                str_at(v, &["kind"])
            )));
        }
        let mut annotations = string_map(at(v, &["metadata", "annotations"]));
        annotations.extend(overrides.iter().cloned());
        Ok(Function {
            name: str_at(v, &["metadata", "name"]).to_string(),
            package: str_at(v, &["spec", "package"]).to_string(),
            annotations,
        })
    }

    /// An annotation, or `default`.
    pub fn annotation<'a>(&'a self, key: &str, default: &'a str) -> &'a str {
        self.annotations
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
            .unwrap_or(default)
    }
}
