//! A resource as the Go functions that validate it see it: the YAML
//! decoded (go-yaml's rules for ints, floats, bools, nulls; timestamps as
//! their text, as `sigs.k8s.io/yaml` hands them on) into a JSON value, keys
//! in document order.

use krmgraph_kyaml::json::{go_scalar, GoValue};
use krmgraph_yaml::{Kind, Node};
use serde_json::{Map, Number, Value};

/// `node` (a document or its root) as a JSON value. Aliases are not
/// followed (they read as null); `<<` merge keys stay plain keys.
pub fn to_json(node: &Node) -> Value {
    match node.kind {
        Kind::Document => node.content.first().map(to_json).unwrap_or(Value::Null),
        Kind::Sequence => Value::Array(node.content.iter().map(to_json).collect()),
        Kind::Mapping => {
            let mut map = Map::new();
            for pair in node.content.chunks(2) {
                if let [k, v] = pair {
                    map.insert(k.value.to_string(), to_json(v));
                }
            }
            Value::Object(map)
        }
        Kind::Scalar => scalar(node),
        Kind::Alias => Value::Null,
    }
}

fn scalar(node: &Node) -> Value {
    match go_scalar(node) {
        Ok(None) => Value::Null,
        Ok(Some(GoValue::Bool(b))) => Value::Bool(b),
        Ok(Some(GoValue::Int(i))) => Value::Number(i.into()),
        Ok(Some(GoValue::Uint(u))) => Value::Number(u.into()),
        Ok(Some(GoValue::Float(f))) => Number::from_f64(f)
            .map(Value::Number)
            .unwrap_or_else(|| Value::String(node.value.to_string())),
        _ => Value::String(node.value.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_decode_as_go_yaml_does() {
        let docs = krmgraph_yaml::parse_documents(
            b"a: 1\nb: x\nc: true\nd: ~\ne: 1.5\nf: '2'\ng: [1, {h: i}]\n",
        )
        .unwrap();
        assert_eq!(
            to_json(&docs[0]).to_string(),
            r#"{"a":1,"b":"x","c":true,"d":null,"e":1.5,"f":"2","g":[1,{"h":"i"}]}"#
        );
    }
}
