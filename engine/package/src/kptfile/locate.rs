//! Finding a pipeline function in a Kptfile's text, for messages that
//! point at it (an `exec:` refused without `--allow-exec`, an image that
//! is not there). The decoded [`super::Function`] keeps no positions: this
//! reads the file again, which only a failure does.

use std::path::Path;

use krmgraph_yaml::decode::Decoder;
use krmgraph_yaml::{Kind, Node};

use super::decode::source_width;
use super::KPTFILE_NAME;
use crate::SourcePosition;

/// A field of a pipeline function in a Kptfile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// Where its value starts.
    pub position: SourcePosition,
    /// How many characters the value spans (0: unknown).
    pub width: usize,
    /// The field's path, e.g. `pipeline.mutators[0].exec`.
    pub field: String,
    /// Its value as written.
    pub value: String,
}

/// The `key` field (`image`, `exec`) of the first function, mutators
/// first, of the Kptfile in `dir` whose value `matches`; `None` when the
/// file cannot be read or parsed, or has no such function.
pub fn function_field(dir: &Path, key: &str, matches: impl Fn(&str) -> bool) -> Option<Located> {
    let path = dir.join(KPTFILE_NAME);
    let bytes = std::fs::read(&path).ok()?;
    let doc = Decoder::new(&bytes).next_document().ok()??;
    let pipeline = value_of(doc.content.first()?, "pipeline")?;
    for list in ["mutators", "validators"] {
        let Some(functions) = value_of(pipeline, list) else {
            continue;
        };
        if functions.kind != Kind::Sequence {
            continue;
        }
        for (i, function) in functions.content.iter().enumerate() {
            let Some(value) = value_of(function, key) else {
                continue;
            };
            if value.kind == Kind::Scalar && matches(&value.value) && value.line > 0 {
                return Some(Located {
                    position: SourcePosition {
                        path,
                        line: value.line as usize - 1,
                        column: (value.column as usize).saturating_sub(1),
                    },
                    width: source_width(value),
                    field: format!("pipeline.{list}[{i}].{key}"),
                    value: value.value.to_string(),
                });
            }
        }
    }
    None
}

/// The value of `key` in the mapping `node`.
fn value_of<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    if node.kind != Kind::Mapping {
        return None;
    }
    node.content
        .chunks(2)
        .find(|pair| pair.len() == 2 && pair[0].value == key)
        .map(|pair| &pair[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_first_matching_function() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(KPTFILE_NAME),
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: x\npipeline:\n  mutators:\n  - image: a\n  validators:\n  - name: v\n    exec: \"./check.sh\"\n",
        )
        .unwrap();
        let found = function_field(dir.path(), "exec", |v| v == "./check.sh").unwrap();
        assert_eq!((found.position.line, found.position.column), (9, 10));
        assert_eq!(found.width, 12, "with the quotes");
        assert_eq!(found.field, "pipeline.validators[0].exec");
        assert!(function_field(dir.path(), "exec", |v| v == "other").is_none());
        assert!(function_field(&dir.path().join("none"), "image", |_| true).is_none());
    }
}
