//! `gcr.io/kpt-fn/kubeval`: validates every resource against the
//! Kubernetes JSON schema of its kind, as the catalog's function (which
//! runs the `kubeval` binary, gojsonschema inside) reports it.
//!
//! Config (`ConfigMap` data): `strict` (unknown fields are errors),
//! `ignore_missing_schemas`, `skip_kinds` (comma-separated),
//! `kubernetes_version` (default `master`: the newest built in),
//! `schema_location` (a directory, or `file://` URL, in kubeval's layout;
//! it replaces the built-in schemas). Schemas: see [`schemas`]; custom
//! resources validate against the CRDs in the package, which kubeval
//! cannot do.
//!
//! Results: one error per schema violation, with gojsonschema's message
//! and field ([`validate`]), the resource and its file; a resource with no
//! schema gets kubeval's `Validating arbitrary CRDs is not supported yet.
//! ...` message quoting its `Failed initializing schema <url>: open
//! <path>: no such file or directory` (not with `ignore_missing_schemas`).
//! Any result fails the function (exit 1, nothing on stderr: kpt prints
//! the results).
//!
//! Tags: v0.1.x validates every resource it is given (the Kptfile too, as
//! the kpt corpus shows), sorted ([`sort_key`]); the later versions (`unstable`, `latest`, v0.2,
//! v0.3) skip `config.kubernetes.io/local-config` resources, so that the
//! catalog example's annotated Kptfile passes (a guess from that example:
//! the function's source is not at hand).

pub mod schemas;
pub mod validate;

use super::apply_setters::report::{self, Item, ResourceRef};
use super::framework::{self, Outcome, ResourceList};
use super::json_value::to_json;
use super::Builtin;
use crate::exec::ProcessOutput;
use krmgraph_kyaml::rnode;
use schemas::Schemas;
use serde_json::Value;
use validate::Validator;

/// The kubeval images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "kubeval",
        registry: "gcr.io/kpt-fn/",
        tags: &["v0.1", "v0.1.0", "v0.1.1"],
        version: "1",
        config_kinds: &["ConfigMap"],
        run: run_v0_1,
        direct: None,
        per_item: None,
    },
    Builtin {
        name: "kubeval",
        registry: "gcr.io/kpt-fn/",
        tags: &["unstable", "latest", "v0.2", "v0.2.0", "v0.3", "v0.3.0"],
        version: "1",
        config_kinds: &["ConfigMap"],
        run,
        direct: None,
        per_item: None,
    },
];

/// Runs the latest version.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, |list| run_list(list, true))
}

/// Runs v0.1 (local-config resources validated too).
pub fn run_v0_1(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, |list| run_list(list, false))
}

/// The function's configuration.
#[derive(Debug, PartialEq)]
pub struct Config {
    strict: bool,
    ignore_missing_schemas: bool,
    skip_kinds: Vec<String>,
    kubernetes_version: String,
    schema_location: Option<String>,
}

impl Config {
    /// Reads the ConfigMap's `data`.
    pub fn read(config: Option<&krmgraph_yaml::Node>) -> Result<Config, String> {
        let data = config
            .and_then(|c| rnode::lookup(c, &["data"]).ok().flatten())
            .map(to_json)
            .unwrap_or(Value::Null);
        let text = |k: &str| data.get(k).and_then(Value::as_str).map(str::to_string);
        let flag = |k: &str| -> Result<bool, String> {
            match text(k).as_deref() {
                None | Some("") => Ok(false),
                Some("1" | "t" | "T" | "true" | "TRUE" | "True") => Ok(true),
                Some("0" | "f" | "F" | "false" | "FALSE" | "False") => Ok(false),
                Some(other) => Err(format!(
                    "{k}: strconv.ParseBool: parsing {}: invalid syntax",
                    krmgraph_util::gostr::quote(other)
                )),
            }
        };
        Ok(Config {
            strict: flag("strict")?,
            ignore_missing_schemas: flag("ignore_missing_schemas")?,
            skip_kinds: text("skip_kinds")
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|k| !k.is_empty())
                .map(str::to_string)
                .collect(),
            kubernetes_version: text("kubernetes_version")
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "master".into()),
            schema_location: text("schema_location").filter(|v| !v.is_empty()),
        })
    }
}

fn run_list(list: ResourceList, latest: bool) -> Outcome {
    let config = match Config::read(list.function_config.as_ref()) {
        Ok(c) => c,
        Err(e) => return report::kyaml_failure(list, &e),
    };
    let values: Vec<Value> = list.items.iter().map(to_json).collect();
    let mut schemas = match Schemas::new(
        &config.kubernetes_version,
        config.strict,
        config.schema_location.as_deref(),
        &values,
    ) {
        Ok(s) => s,
        Err(e) => return report::kyaml_failure(list, &e.0),
    };
    let mut order: Vec<usize> = (0..list.items.len()).collect();
    if !latest {
        order.sort_by_cached_key(|&i| sort_key(&list.items[i]));
    }
    let mut results = Vec::new();
    for (item, value) in order.iter().map(|&i| (&list.items[i], &values[i])) {
        results.extend(check(item, value, &mut schemas, &config, latest));
    }
    let failed = !results.is_empty();
    let mut list = list;
    list.results = report::results_node(&results);
    Outcome::Wrote {
        list,
        stderr: Vec::new(),
        exit_code: i32::from(failed),
        unwritable: Some(framework::failure),
    }
}

/// The results of one resource: its schema errors, or that it has no
/// schema; none when its kind is skipped (or, for the later versions, it
/// is local configuration).
fn check(
    item: &krmgraph_yaml::Node,
    value: &Value,
    schemas: &mut Schemas,
    config: &Config,
    latest: bool,
) -> Vec<Item> {
    let meta = rnode::get_meta(item).unwrap_or_default();
    let local = meta
        .annotations
        .get(LOCAL_CONFIG)
        .is_some_and(|v| v != "false");
    if config.skip_kinds.contains(&meta.kind) || (latest && local) {
        return Vec::new();
    }
    let at = |message: String, field: String| Item {
        message,
        severity: "error",
        resource_ref: Some(ResourceRef {
            api_version: meta.api_version.clone(),
            kind: meta.kind.clone(),
            name: meta.name.clone(),
            namespace: meta.namespace.clone(),
        }),
        field_path: field,
        file_path: report::file_path(item),
        file_index: report::file_index(item),
    };
    schemas.load(&meta.api_version, &meta.kind);
    match schemas.find(&meta.api_version, &meta.kind) {
        Some(found) => {
            let validator = Validator {
                resolver: found.resolver,
                root: found.schema,
                strict: config.strict,
            };
            let errors = validator.validate(found.schema, value);
            errors.into_iter().map(|e| at(e.message, e.field)).collect()
        }
        None if config.ignore_missing_schemas => Vec::new(),
        None => {
            let url = schemas.url(&schemas::file_name(&meta.api_version, &meta.kind));
            let path = url.strip_prefix("file://").unwrap_or(&url);
            let message = format!("{MISSING}\nERR  - stdin: Failed initializing schema {url}: open {path}: no such file or directory\n");
            vec![at(message, String::new())]
        }
    }
}

/// v0.1 (TypeScript, the kpt functions SDK's `Configs`) visits the
/// resources sorted by apiVersion, kind, namespace and name, as the kpt
/// corpus' results show (the Kptfile, first in kpt's input, comes last).
fn sort_key(item: &krmgraph_yaml::Node) -> [String; 4] {
    let m = rnode::get_meta(item).unwrap_or_default();
    [m.api_version, m.kind, m.namespace, m.name]
}

const LOCAL_CONFIG: &str = "config.kubernetes.io/local-config";

const MISSING: &str = "Validating arbitrary CRDs is not supported yet. You can skip them by setting ignore_missing_schemas or skip_kinds in the function config:";

#[cfg(test)]
mod tests;
