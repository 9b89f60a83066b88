//! `gcr.io/kpt-fn/gatekeeper`: evaluates the package's OPA Gatekeeper
//! policies — `ConstraintTemplate`s (Rego, `admission.k8s.gatekeeper.sh`
//! target, with their `libs`) and the Constraints that instantiate them —
//! against its other resources, as the catalog's function (Gatekeeper's
//! constraint framework with OPA) reports them. Rego runs on `regorus`, in
//! Rego v0 syntax as templates are written.
//!
//! For each resource (in input order, templates and constraints excluded)
//! and each constraint (in input order) whose `spec.match` selects it
//! (`kinds`, `namespaces`, `excludedNamespaces`, `labelSelector`,
//! `namespaceSelector` against the package's Namespaces, `name`,
//! `scope`), the template's `violation` rule is evaluated with `input`
//! `{review: {object, kind, name, namespace, operation: CREATE},
//! parameters}`. Each violation is a result `<msg>\nviolatedConstraint:
//! <constraint>` with the resource and its file; its severity follows the
//! constraint's `enforcementAction`: `deny` (default) → error, `warn` →
//! warning, `dryrun` → info. An error fails the function (exit 1) and, as
//! kyaml's framework does, the results are printed on stderr
//! (`[error] v1/ConfigMap/ns/name : <message>`, joined by blank lines).
//!
//! A template whose Rego does not parse, or a constraint with no template,
//! is an error result naming it (the function's exact wording for these
//! is not in the catalog's examples: krmgraph's own).

use super::apply_setters::report::{self, Item, ResourceRef};
use super::framework::{self, Outcome, ResourceList};
use super::json_value::to_json;
use super::Builtin;
use crate::exec::ProcessOutput;
use serde_json::{json, Value};

/// The gatekeeper images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "gatekeeper",
    registry: "gcr.io/kpt-fn/",
    tags: &[
        "unstable", "latest", "v0.1", "v0.1.0", "v0.1.1", "v0.1.2", "v0.1.3", "v0.2", "v0.2.0",
        "v0.2.1",
    ],
    version: "1",
    config_kinds: &[],
    run,
    direct: None,
    per_item: None,
}];

const TEMPLATE_GROUP: &str = "templates.gatekeeper.sh/";
const CONSTRAINT_GROUP: &str = "constraints.gatekeeper.sh/";
const TARGET: &str = "admission.k8s.gatekeeper.sh";

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, run_list)
}

/// A compiled template: its engine and the rule to query.
struct Template {
    name: String,
    kind: String,
    engine: Result<(regorus::Engine, String), String>,
}

struct Constraint {
    name: String,
    kind: String,
    value: Value,
    severity: &'static str,
}

fn run_list(mut list: ResourceList) -> Outcome {
    let values: Vec<Value> = list.items.iter().map(to_json).collect();
    let (mut templates, constraints) = policies(&values);
    let mut results = policy_errors(&templates, &constraints);
    let namespaces: Vec<&Value> = values
        .iter()
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some("Namespace"))
        .collect();
    for (item, value) in list.items.iter().zip(&values) {
        if !is_policy(value) {
            review(
                item,
                value,
                &mut templates,
                &constraints,
                &namespaces,
                &mut results,
            );
        }
    }
    let failed = results.iter().any(|r| r.severity == "error");
    let stderr = if failed {
        let lines: Vec<String> = results.iter().map(framework_line).collect();
        lines.join("\n\n").into_bytes()
    } else {
        Vec::new()
    };
    list.results = report::results_node(&results);
    Outcome::Wrote {
        list,
        stderr,
        exit_code: i32::from(failed),
        unwritable: Some(framework::failure),
    }
}

fn is_policy(value: &Value) -> bool {
    let api_version = text(value, "/apiVersion");
    api_version.starts_with(TEMPLATE_GROUP) || api_version.starts_with(CONSTRAINT_GROUP)
}

/// The templates (compiled) and constraints among the resources.
fn policies(values: &[Value]) -> (Vec<Template>, Vec<Constraint>) {
    let mut templates = Vec::new();
    let mut constraints = Vec::new();
    for value in values {
        let api_version = text(value, "/apiVersion");
        let kind = text(value, "/kind");
        if api_version.starts_with(TEMPLATE_GROUP) && kind == "ConstraintTemplate" {
            templates.push(compile(value));
        } else if api_version.starts_with(CONSTRAINT_GROUP) {
            let action = value
                .pointer("/spec/enforcementAction")
                .and_then(Value::as_str)
                .unwrap_or("deny");
            constraints.push(Constraint {
                name: text(value, "/metadata/name"),
                kind,
                value: value.clone(),
                severity: match action {
                    "warn" => "warning",
                    "dryrun" => "info",
                    _ => "error",
                },
            });
        }
    }
    (templates, constraints)
}

/// Templates that do not compile, constraints without a template.
fn policy_errors(templates: &[Template], constraints: &[Constraint]) -> Vec<Item> {
    let mut errors = Vec::new();
    for t in templates {
        if let Err(e) = &t.engine {
            let message = format!(
                "invalid ConstraintTemplate {:?} (kind {}): {e}",
                t.name, t.kind
            );
            errors.push(Item::with_severity(message, "error"));
        }
    }
    for c in constraints {
        if !templates.iter().any(|t| t.kind == c.kind) {
            let message = format!(
                "Constraint {}/{}: no ConstraintTemplate in the package defines kind {}",
                c.kind, c.name, c.kind
            );
            errors.push(Item::with_severity(message, "error"));
        }
    }
    errors
}

/// Every constraint that selects one resource, evaluated against it.
fn review(
    item: &krmgraph_yaml::Node,
    value: &Value,
    templates: &mut [Template],
    constraints: &[Constraint],
    namespaces: &[&Value],
    results: &mut Vec<Item>,
) {
    for c in constraints {
        if !matches(&c.value, value, namespaces) {
            continue;
        }
        let template = templates.iter_mut().find(|t| t.kind == c.kind);
        let Some(Ok((engine, rule))) = template.map(|t| t.engine.as_mut()) else {
            continue;
        };
        for message in violations(engine, rule, value, &c.value) {
            results.push(result(item, value, message, c));
        }
    }
}

fn text(value: &Value, pointer: &str) -> String {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// Parses a template's Rego (and libs) into an engine.
fn compile(template: &Value) -> Template {
    let kind = text(template, "/spec/crd/spec/names/kind");
    let targets = template
        .pointer("/spec/targets")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let engine = targets
        .iter()
        .find(|t| t.get("target").and_then(Value::as_str) == Some(TARGET))
        .ok_or_else(|| format!("no target {TARGET}"))
        .and_then(|target| {
            let mut engine = regorus::Engine::new();
            engine.set_rego_v0(true);
            let rego = target.get("rego").and_then(Value::as_str).unwrap_or("");
            let package = engine
                .add_policy(format!("{kind}.rego"), rego.to_string())
                .map_err(|e| format!("{e:#}"))?;
            let libs = target.get("libs").and_then(Value::as_array);
            for (i, lib) in libs.into_iter().flatten().enumerate() {
                let lib = lib.as_str().unwrap_or("");
                engine
                    .add_policy(format!("{kind}-lib{i}.rego"), lib.to_string())
                    .map_err(|e| format!("{e:#}"))?;
            }
            Ok((engine, format!("{package}.violation")))
        });
    Template {
        name: text(template, "/metadata/name"),
        kind,
        engine: engine.map_err(|e| rego_error(&e)),
    }
}

/// regorus' parse error on one line: `<file>:<line>:<col>: <message>`
/// (the Rego's own line and column), from its `--> <file>:<line>:<col>`
/// and `error: <message>` lines.
fn rego_error(e: &str) -> String {
    let location = e
        .lines()
        .find_map(|l| l.trim().strip_prefix("--> "))
        .map(str::trim);
    let message = e
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix("error: "));
    match (location, message) {
        (Some(at), Some(message)) => format!("{at}: {message}"),
        _ => e.trim().replace('\n', " "),
    }
}

/// The messages of the template's `violation` rule for `object` under
/// `constraint`.
fn violations(
    engine: &mut regorus::Engine,
    rule: &str,
    object: &Value,
    constraint: &Value,
) -> Vec<String> {
    let (group, version) = match text(object, "/apiVersion").split_once('/') {
        Some((g, v)) => (g.to_string(), v.to_string()),
        None => (String::new(), text(object, "/apiVersion")),
    };
    let input = json!({
        "review": {
            "object": object,
            "kind": {"group": group, "version": version, "kind": text(object, "/kind")},
            "name": text(object, "/metadata/name"),
            "namespace": text(object, "/metadata/namespace"),
            "operation": "CREATE",
        },
        "parameters": constraint.pointer("/spec/parameters").cloned().unwrap_or(json!({})),
    });
    let Ok(input) = regorus::Value::from_json_str(&input.to_string()) else {
        return Vec::new();
    };
    engine.set_input(input);
    let Ok(found) = engine.eval_rule(rule.to_string()) else {
        return Vec::new();
    };
    let Ok(found) = found.to_json_str() else {
        return Vec::new();
    };
    let Ok(Value::Array(found)) = serde_json::from_str::<Value>(&found) else {
        return Vec::new();
    };
    found
        .iter()
        .map(|v| match v.get("msg") {
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => String::new(),
        })
        .collect()
}

fn result(item: &krmgraph_yaml::Node, value: &Value, message: String, c: &Constraint) -> Item {
    Item {
        message: format!("{message}\nviolatedConstraint: {}", c.name),
        severity: c.severity,
        resource_ref: Some(ResourceRef {
            api_version: text(value, "/apiVersion"),
            kind: text(value, "/kind"),
            name: text(value, "/metadata/name"),
            namespace: text(value, "/metadata/namespace"),
        }),
        field_path: String::new(),
        file_path: report::file_path(item),
        file_index: report::file_index(item),
    }
}

/// kyaml's `Result.String()` for a gatekeeper result, whose field is
/// present with an empty path: `[error] v1/ConfigMap/ns/name : <msg>`.
fn framework_line(r: &Item) -> String {
    let mut line = format!("[{}]", r.severity);
    if let Some(id) = &r.resource_ref {
        let parts: Vec<&str> = [&id.api_version, &id.kind, &id.namespace, &id.name]
            .into_iter()
            .map(String::as_str)
            .filter(|s| !s.is_empty())
            .collect();
        line.push(' ');
        line.push_str(&parts.join("/"));
    }
    // The empty field path, between spaces.
    line.push_str(" : ");
    line.push_str(&r.message);
    line
}

/// Whether the constraint's `spec.match` selects `object`.
fn matches(constraint: &Value, object: &Value, namespaces: &[&Value]) -> bool {
    let Some(m) = constraint.pointer("/spec/match") else {
        return true;
    };
    let namespace = text(object, "/metadata/namespace");
    let kind = text(object, "/kind");
    let group = text(object, "/apiVersion")
        .split_once('/')
        .map(|(g, _)| g.to_string())
        .unwrap_or_default();
    let strings = |v: Option<&Value>| -> Option<Vec<String>> {
        v?.as_array().map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
    };
    if let Some(Value::Array(kinds)) = m.get("kinds") {
        let any = kinds.iter().any(|k| {
            let groups = strings(k.get("apiGroups")).unwrap_or_default();
            let names = strings(k.get("kinds")).unwrap_or_default();
            (groups.is_empty() || groups.iter().any(|g| g == "*" || *g == group))
                && (names.is_empty() || names.iter().any(|n| n == "*" || *n == kind))
        });
        if !kinds.is_empty() && !any {
            return false;
        }
    }
    if let Some(list) = strings(m.get("namespaces")) {
        if !namespace.is_empty() && !list.iter().any(|p| glob(p, &namespace)) {
            return false;
        }
    }
    if let Some(list) = strings(m.get("excludedNamespaces")) {
        if !namespace.is_empty() && list.iter().any(|p| glob(p, &namespace)) {
            return false;
        }
    }
    if let Some(Value::String(name)) = m.get("name") {
        if !glob(name, &text(object, "/metadata/name")) {
            return false;
        }
    }
    match m.get("scope").and_then(Value::as_str) {
        Some("Cluster") if !namespace.is_empty() => return false,
        Some("Namespaced") if namespace.is_empty() => return false,
        _ => {}
    }
    if let Some(selector) = m.get("labelSelector") {
        if !selects(selector, object.pointer("/metadata/labels")) {
            return false;
        }
    }
    if let Some(selector) = m.get("namespaceSelector") {
        let labels = namespaces
            .iter()
            .find(|ns| text(ns, "/metadata/name") == namespace)
            .and_then(|ns| ns.pointer("/metadata/labels"));
        if namespace.is_empty() || !selects(selector, labels) {
            return false;
        }
    }
    true
}

/// Gatekeeper's namespace and name patterns: a `*` at the start or end.
fn glob(pattern: &str, value: &str) -> bool {
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        _ if pattern == "*" => true,
        (Some(suffix), _) => value.ends_with(suffix),
        (_, Some(prefix)) => value.starts_with(prefix),
        _ => pattern == value,
    }
}

/// A Kubernetes label selector (`matchLabels`, `matchExpressions`).
fn selects(selector: &Value, labels: Option<&Value>) -> bool {
    let label = |k: &str| labels.and_then(|l| l.get(k)).and_then(Value::as_str);
    if let Some(Value::Object(want)) = selector.get("matchLabels") {
        if want.iter().any(|(k, v)| label(k) != v.as_str()) {
            return false;
        }
    }
    let exprs = selector.get("matchExpressions").and_then(Value::as_array);
    exprs.into_iter().flatten().all(|e| {
        let key = e.get("key").and_then(Value::as_str).unwrap_or("");
        let values: Vec<&str> = e
            .get("values")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let have = label(key);
        match e.get("operator").and_then(Value::as_str).unwrap_or("") {
            "In" => have.is_some_and(|h| values.contains(&h)),
            "NotIn" => have.is_none_or(|h| !values.contains(&h)),
            "Exists" => have.is_some(),
            "DoesNotExist" => have.is_none(),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests;
