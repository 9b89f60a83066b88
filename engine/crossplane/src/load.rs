//! Reading the command's YAML inputs: a file, or every `.yaml`/`.yml` in a
//! directory (in name order), as a stream of documents converted to JSON
//! values the way `sigs.k8s.io/yaml` converts them (go-yaml v2's types:
//! `yes`/`on` are booleans), each with the file and line it came from.
//! Malformed YAML is an error naming `file:line:col`.

use std::path::{Path, PathBuf};

use krmgraph_yaml::node::tag;
use krmgraph_yaml::resolve::{resolve_plain, Resolved};
use krmgraph_yaml::{Kind, Node, Style};
use serde_json::{Map, Value};

use crate::Error;

/// One YAML document of an input file.
#[derive(Clone, Debug)]
pub struct Doc {
    /// The document as JSON.
    pub value: Value,
    /// Where it starts: `file:line`.
    pub origin: String,
}

impl Doc {
    /// A string field at `path` (`""` when absent or not a string).
    pub fn str_at(&self, path: &[&str]) -> &str {
        str_at(&self.value, path)
    }
}

/// A string field of `value` at `path`, `""` when absent.
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    at(value, path).and_then(Value::as_str).unwrap_or("")
}

/// The value at `path`, if any.
pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

/// The files `path` names: itself, or the YAML files of a directory.
pub fn files(path: &Path) -> Result<Vec<PathBuf>, Error> {
    files_with(path, &["yaml", "yml"])
}

/// The files `path` names: itself, or the files of a directory with one of
/// `extensions`, in name order.
pub fn files_with(path: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>, Error> {
    let io = |e: std::io::Error| Error::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    };
    if !path.is_dir() {
        std::fs::metadata(path).map_err(io)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut out = Vec::new();
    for entry in std::fs::read_dir(path).map_err(io)? {
        let p = entry.map_err(io)?.path();
        let listed = p
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e));
        if listed && p.is_file() {
            out.push(p);
        }
    }
    out.sort();
    Ok(out)
}

/// Every non-empty document of `path` (a file or a directory).
pub fn documents(path: &Path) -> Result<Vec<Doc>, Error> {
    let mut docs = Vec::new();
    for file in files(path)? {
        docs.extend(file_documents(&file)?);
    }
    Ok(docs)
}

/// Every non-empty document of one file.
pub fn file_documents(file: &Path) -> Result<Vec<Doc>, Error> {
    let bytes = std::fs::read(file).map_err(|e| Error::Read {
        path: file.to_path_buf(),
        message: e.to_string(),
    })?;
    parse(file, &bytes)
}

/// The documents of `bytes`, read from `file`.
pub fn parse(file: &Path, bytes: &[u8]) -> Result<Vec<Doc>, Error> {
    let nodes = krmgraph_yaml::parse_documents(bytes).map_err(|e| {
        let (line, column) = e.position_in(bytes);
        Error::Yaml {
            location: format!("{}:{}:{}", file.display(), line + 1, column + 1),
            message: e.message().to_string(),
        }
    })?;
    let mut docs = Vec::new();
    for node in &nodes {
        let root = match node.kind {
            Kind::Document => node.content.first(),
            _ => Some(node),
        };
        let Some(root) = root else { continue };
        let mut anchors = Vec::new();
        let value = to_json(root, &mut anchors).map_err(|message| Error::Yaml {
            location: format!("{}:{}:{}", file.display(), root.line, root.column),
            message,
        })?;
        if value.is_null() {
            continue;
        }
        docs.push(Doc {
            value,
            origin: format!("{}:{}", file.display(), root.line),
        });
    }
    Ok(docs)
}

/// A node as `sigs.k8s.io/yaml` converts it to JSON; `anchors` holds the
/// values of the anchors defined so far, for aliases.
fn to_json(node: &Node, anchors: &mut Vec<(String, Value)>) -> Result<Value, String> {
    let value = match node.kind {
        Kind::Document => match node.content.first() {
            Some(root) => to_json(root, anchors)?,
            None => Value::Null,
        },
        Kind::Alias => anchors
            .iter()
            .rev()
            .find(|(name, _)| name.as_str() == node.value.as_str())
            .map(|(_, v)| v.clone())
            .ok_or_else(|| format!("unknown anchor '{}' referenced", node.value))?,
        Kind::Scalar => scalar(node),
        Kind::Sequence => Value::Array(
            node.content
                .iter()
                .map(|n| to_json(n, anchors))
                .collect::<Result<_, _>>()?,
        ),
        Kind::Mapping => {
            let mut map = Map::new();
            for pair in node.content.chunks(2) {
                let [key, value] = pair else { break };
                let key_text = match to_json(key, anchors)? {
                    Value::String(s) => s,
                    other => other.to_string(),
                };
                map.insert(key_text, to_json(value, anchors)?);
            }
            Value::Object(map)
        }
    };
    if !node.anchor().is_empty() {
        anchors.push((node.anchor().to_string(), value.clone()));
    }
    Ok(value)
}

/// A scalar's JSON value: its resolved tag decides, plus go-yaml v2's
/// YAML 1.1 booleans for plain scalars.
fn scalar(node: &Node) -> Value {
    let text = node.value.as_str();
    let plain = !node.style.has(Style::DOUBLE_QUOTED)
        && !node.style.has(Style::SINGLE_QUOTED)
        && !node.style.has(Style::LITERAL)
        && !node.style.has(Style::FOLDED);
    match node.tag.as_str() {
        tag::NULL => Value::Null,
        tag::BOOL | tag::INT | tag::FLOAT => match resolve_plain(text) {
            Resolved::Bool(b) => Value::Bool(b),
            Resolved::Int(i) => Value::Number(i.into()),
            Resolved::Uint(u) => Value::Number(u.into()),
            Resolved::Float(f) => serde_json::Number::from_f64(f)
                .map(Value::Number)
                .unwrap_or(Value::Null),
            _ => Value::String(text.to_string()),
        },
        _ if plain && node.tag == tag::STR => match text {
            "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => Value::Bool(true),
            "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => Value::Bool(false),
            _ => Value::String(text.to_string()),
        },
        _ => Value::String(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_as_sigs_yaml_does() {
        let docs = parse(
            Path::new("x.yaml"),
            b"a: 1\nb: yes\nc: '1'\nd: 1.5\ne: ~\nf: &x [1, two]\ng: *x\n---\n---\nh: 2\n",
        )
        .unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(
            docs[0].value,
            serde_json::json!({"a": 1, "b": true, "c": "1", "d": 1.5, "e": null, "f": [1, "two"], "g": [1, "two"]})
        );
        assert_eq!(docs[1].origin, "x.yaml:10");
    }

    #[test]
    fn malformed_yaml_names_file_line_and_column() {
        let err = parse(Path::new("bad.yaml"), b"a: 1\nb: [1, 2\n").unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("bad.yaml:"), "{text}");
    }
}
