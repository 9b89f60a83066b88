//! JSON values (as files are read) to and from protobuf `Struct`s (as
//! functions see them), with Go's conversions: every number becomes a
//! `float64` in a `Struct` (`structpb.NewValue`), and comes back as one
//! (`Struct.AsMap()`).

use prost_types::value::Kind;
use prost_types::{ListValue, Struct, Value as PValue};
use serde_json::{Map, Number, Value};

/// `structpb.NewStruct(object)`; a non-object is an empty `Struct`.
pub fn to_struct(value: &Value) -> Struct {
    match value {
        Value::Object(map) => Struct {
            fields: map.iter().map(|(k, v)| (k.clone(), to_value(v))).collect(),
        },
        _ => Struct::default(),
    }
}

/// `structpb.NewValue(value)`.
pub fn to_value(value: &Value) -> PValue {
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or(0.0)),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(items) => Kind::ListValue(ListValue {
            values: items.iter().map(to_value).collect(),
        }),
        Value::Object(_) => Kind::StructValue(to_struct(value)),
    };
    PValue { kind: Some(kind) }
}

/// `Struct.AsMap()` as a JSON object.
pub fn from_struct(s: &Struct) -> Value {
    Value::Object(object_of(s))
}

/// The fields of `s` as a JSON map.
pub fn object_of(s: &Struct) -> Map<String, Value> {
    s.fields
        .iter()
        .map(|(k, v)| (k.clone(), from_value(v)))
        .collect()
}

/// `Value.AsInterface()`: numbers are `float64`s (kept as such, so the
/// writer formats them as Go's JSON encoder would).
pub fn from_value(v: &PValue) -> Value {
    match &v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        Some(Kind::NumberValue(f)) => float(*f),
        Some(Kind::StringValue(s)) => Value::String(s.clone()),
        Some(Kind::ListValue(l)) => Value::Array(l.values.iter().map(from_value).collect()),
        Some(Kind::StructValue(s)) => from_struct(s),
    }
}

/// A `float64` as a JSON number: integral values within Go's exact range
/// as integers (what `json.Marshal` writes for them, and go-yaml reads
/// back as an int), the rest as floats. NaN and infinities (which
/// `json.Marshal` refuses) become null.
pub fn float(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        let text = format!("{f}");
        if let Ok(i) = text.parse::<i64>() {
            return Value::Number(i.into());
        }
        if let Ok(u) = text.parse::<u64>() {
            return Value::Number(u.into());
        }
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}
