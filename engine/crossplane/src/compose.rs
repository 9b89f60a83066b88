//! What classic render makes of the pipeline's final desired state (§2.3,
//! §2.5): the composed resources with their metadata, sorted by
//! composition-resource-name; the XR with the input's identity, its Ready
//! condition and the functions' conditions; the Result and Context
//! documents.

use serde_json::{json, Map, Value};

use crate::load::{at, str_at};
use crate::model::RESOURCE_NAME;
use crate::proto::v1::{self, Ready, Severity};
use crate::value::{from_struct, object_of};

/// Every condition's `lastTransitionTime` in render output.
pub const TRANSITION_TIME: &str = "2024-01-01T00:00:00Z";

/// The API version of the Result and Context documents.
const RENDER_API: &str = "render.crossplane.io/v1beta1";

/// Condition types the system owns; functions' conditions of these types
/// are not applied.
const SYSTEM_TYPES: [&str; 3] = ["Ready", "Synced", "Healthy"];

/// The composed resources of `desired`, with metadata, sorted; and the
/// names of those not ready.
pub fn composed(
    desired: &v1::State,
    observed: &Map<String, Value>,
    xr: &Value,
) -> Result<(Vec<Value>, Vec<String>), String> {
    let mut out = Vec::new();
    let mut unready = Vec::new();
    for (name, dr) in &desired.resources {
        if dr.ready != Ready::True as i32 {
            unready.push(name.clone());
        }
        let mut cd = dr.resource.as_ref().map_or_else(|| json!({}), from_struct);
        if let Some(o) = observed.get(name) {
            for field in ["namespace", "name", "generateName"] {
                set_meta(&mut cd, field, str_at(o, &["metadata", field]));
            }
        }
        set_composed_metadata(&mut cd, xr, name)
            .map_err(|e| format!("cannot render composed resource {name:?}: {e}"))?;
        out.push(cd);
    }
    out.sort_by(|a, b| {
        let key = |v: &Value| str_at(v, &["metadata", "annotations", RESOURCE_NAME]).to_string();
        key(a).cmp(&key(b))
    });
    Ok((out, unready))
}

/// `metadata.<field> = value`, removed when `value` is empty (as
/// Unstructured's setters do).
fn set_meta(obj: &mut Value, field: &str, value: &str) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    if value.is_empty() {
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove(field);
        }
        return;
    }
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta[field] = Value::String(value.to_string());
}

/// A map under `metadata` (labels, annotations), created when missing.
fn meta_map<'a>(obj: &'a mut Value, field: &str) -> &'a mut Map<String, Value> {
    if !obj.is_object() {
        *obj = json!({});
    }
    let meta = obj
        .as_object_mut()
        .expect("an object")
        .entry("metadata")
        .or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    let map = meta
        .as_object_mut()
        .expect("an object")
        .entry(field)
        .or_insert_with(|| json!({}));
    if !map.is_object() {
        *map = json!({});
    }
    map.as_object_mut().expect("an object")
}

/// `SetComposedResourceMetadata(cd, xr, name)`.
fn set_composed_metadata(cd: &mut Value, xr: &Value, name: &str) -> Result<(), String> {
    let xr_name = str_at(xr, &["metadata", "name"]);
    let composite_label = str_at(xr, &["metadata", "labels", "crossplane.io/composite"]);
    let prefix = if composite_label.is_empty() {
        xr_name
    } else {
        composite_label
    };
    if str_at(cd, &["metadata", "name"]).is_empty()
        && str_at(cd, &["metadata", "generateName"]).is_empty()
    {
        set_meta(cd, "generateName", &format!("{prefix}-"));
    }
    let namespace = str_at(xr, &["metadata", "namespace"]);
    if !namespace.is_empty() {
        set_meta(cd, "namespace", namespace);
    }
    meta_map(cd, "annotations").insert(RESOURCE_NAME.into(), name.into());
    let labels = meta_map(cd, "labels");
    labels.insert("crossplane.io/composite".into(), prefix.into());
    let claim = (
        str_at(xr, &["metadata", "labels", "crossplane.io/claim-name"]),
        str_at(xr, &["metadata", "labels", "crossplane.io/claim-namespace"]),
    );
    let claim = match claim {
        (n, ns) if !n.is_empty() && !ns.is_empty() => Some((n, ns)),
        _ => {
            at(xr, &["spec", "claimRef"]).map(|r| (str_at(r, &["name"]), str_at(r, &["namespace"])))
        }
    };
    if let Some((n, ns)) = claim {
        labels.insert("crossplane.io/claim-name".into(), n.into());
        labels.insert("crossplane.io/claim-namespace".into(), ns.into());
    }
    add_controller_reference(cd, xr)
}

/// `meta.AddControllerReference(cd, AsController(TypedReferenceTo(xr)))`:
/// refused when another controller (another uid) owns `cd`; a reference
/// with the same uid is replaced, else appended.
fn add_controller_reference(cd: &mut Value, xr: &Value) -> Result<(), String> {
    let uid = str_at(xr, &["metadata", "uid"]);
    let reference = json!({
        "apiVersion": str_at(xr, &["apiVersion"]),
        "kind": str_at(xr, &["kind"]),
        "name": str_at(xr, &["metadata", "name"]),
        "uid": uid,
        "controller": true,
        "blockOwnerDeletion": true,
    });
    let cd_name = str_at(cd, &["metadata", "name"]).to_string();
    meta_map(cd, "annotations");
    let metadata = cd["metadata"].as_object_mut().expect("made above");
    let refs = metadata
        .entry("ownerReferences")
        .or_insert_with(|| json!([]));
    if !refs.is_array() {
        *refs = json!([]);
    }
    let refs = refs.as_array_mut().expect("an array");
    let other_controller = refs
        .iter()
        .find(|r| r.get("controller") == Some(&Value::Bool(true)) && str_at(r, &["uid"]) != uid);
    if let Some(c) = other_controller {
        return Err(format!(
            "cannot set composite resource {:?} as controller ref of composed resource: {cd_name} is already controlled by {} {} (UID {})",
            str_at(xr, &["metadata", "name"]),
            str_at(c, &["kind"]),
            str_at(c, &["name"]),
            str_at(c, &["uid"]),
        ));
    }
    match refs.iter_mut().find(|r| str_at(r, &["uid"]) == uid) {
        Some(existing) => *existing = reference,
        None => refs.push(reference),
    }
    Ok(())
}

/// The output XR: the desired composite with the input's apiVersion,
/// kind, name and namespace, and its conditions.
pub fn composite(
    desired: &v1::State,
    input: &Value,
    unready: &[String],
    conditions: &[v1::Condition],
) -> Value {
    let mut xr = desired
        .composite
        .as_ref()
        .and_then(|c| c.resource.as_ref())
        .map_or_else(|| json!({}), from_struct);
    if !xr.is_object() {
        xr = json!({});
    }
    xr["apiVersion"] = Value::String(str_at(input, &["apiVersion"]).to_string());
    xr["kind"] = Value::String(str_at(input, &["kind"]).to_string());
    set_meta(&mut xr, "name", str_at(input, &["metadata", "name"]));
    set_meta(
        &mut xr,
        "namespace",
        str_at(input, &["metadata", "namespace"]),
    );
    let ready = desired.composite.as_ref().map_or(0, |c| c.ready);
    let ready_condition = if ready == Ready::False as i32 {
        condition("False", "Creating", None)
    } else if ready == Ready::Unspecified as i32 && !unready.is_empty() {
        let message = format!("Unready resources: {}", stable_n_and_some_more(3, unready));
        condition("False", "Creating", Some(message))
    } else {
        condition("True", "Available", None)
    };
    let mut all = vec![ready_condition];
    for c in conditions {
        if SYSTEM_TYPES.contains(&c.r#type.as_str()) {
            continue;
        }
        let status = match v1::Status::try_from(c.status) {
            Ok(v1::Status::ConditionTrue) => "True",
            Ok(v1::Status::ConditionFalse) => "False",
            _ => "Unknown",
        };
        let mut cond = condition(status, &c.reason, c.message.clone());
        cond["type"] = Value::String(c.r#type.clone());
        all.push(cond);
    }
    set_conditions(&mut xr, all);
    xr
}

/// An xpv1 `Condition` of type Ready (callers change the type).
fn condition(status: &str, reason: &str, message: Option<String>) -> Value {
    let mut c = json!({
        "type": "Ready",
        "status": status,
        "reason": reason,
        "lastTransitionTime": TRANSITION_TIME,
    });
    if let Some(m) = message.filter(|m| !m.is_empty()) {
        c["message"] = Value::String(m);
    }
    c
}

/// `ConditionedStatus.SetConditions`: a condition replaces the one of its
/// type unless equal to it (apart from the time); new types are appended.
fn set_conditions(xr: &mut Value, conditions: Vec<Value>) {
    let status = xr
        .as_object_mut()
        .expect("an object")
        .entry("status")
        .or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let list = status
        .as_object_mut()
        .expect("an object")
        .entry("conditions")
        .or_insert_with(|| json!([]));
    if !list.is_array() {
        *list = json!([]);
    }
    let list = list.as_array_mut().expect("an array");
    let same = |a: &Value, b: &Value| {
        ["type", "status", "reason", "message", "observedGeneration"]
            .iter()
            .all(|k| a.get(k) == b.get(k))
    };
    for new in conditions {
        let mut exists = false;
        for existing in list.iter_mut() {
            if existing.get("type") != new.get("type") {
                continue;
            }
            exists = true;
            if !same(existing, &new) {
                *existing = new.clone();
            }
        }
        if !exists {
            list.push(new);
        }
    }
}

/// `resource.StableNAndSomeMore(n, names)`.
pub fn stable_n_and_some_more(n: usize, names: &[String]) -> String {
    let mut sorted = names.to_vec();
    sorted.sort();
    if sorted.len() <= n {
        return match sorted.as_slice() {
            [] => String::new(),
            [one] => one.clone(),
            [a, b] => format!("{a}, {b}"),
            [init @ .., last] => format!("{}, and {last}", init.join(", ")),
        };
    }
    format!("{}, and {} more", sorted[..n].join(", "), sorted.len() - n)
}

/// A `render.crossplane.io/v1beta1` Result document of step `step`.
pub fn result(step: &str, r: &v1::Result) -> Value {
    let severity = Severity::try_from(r.severity)
        .unwrap_or(Severity::Unspecified)
        .as_str_name();
    json!({
        "apiVersion": RENDER_API,
        "kind": "Result",
        "step": step,
        "severity": severity,
        "message": r.message,
    })
}

/// The `-c` Context document.
pub fn context(ctx: Option<&prost_types::Struct>) -> Value {
    json!({
        "apiVersion": RENDER_API,
        "kind": "Context",
        "fields": Value::Object(ctx.map(object_of).unwrap_or_default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_some_and_counts_the_rest() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(stable_n_and_some_more(3, &names(&["b", "a"])), "a, b");
        assert_eq!(
            stable_n_and_some_more(3, &names(&["c", "b", "a"])),
            "a, b, and c"
        );
        assert_eq!(
            stable_n_and_some_more(3, &names(&["e", "d", "c", "b", "a"])),
            "a, b, c, and 2 more"
        );
    }
}
