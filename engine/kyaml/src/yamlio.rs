//! The one place kyaml calls the go-yaml port: decoding the first document
//! of a byte chunk (`yaml.NewDecoder(r).Decode(&node)`), `yaml.Unmarshal`,
//! and encoding nodes with kyaml's encoder settings (`yaml.NewEncoder`:
//! indent 2, compact sequences unless a document asks for wide ones).

use super::{KyamlError, Result};
use krmgraph_yaml::decode::{unmarshal, Decoder};
use krmgraph_yaml::{Encoder, Node};

/// Decodes the first document of `input`; `None` at end of stream.
pub(crate) fn decode_first_document(input: &[u8]) -> Result<Option<Node>> {
    Decoder::new(input)
        .next_document()
        .map_err(|e| KyamlError::MalformedYaml {
            message: e.to_string(),
            mark: e.position_in(input),
        })
}

/// `yaml.Unmarshal(input, &node)`: the first document, `None` if there is
/// none; the error is go-yaml's message.
pub(crate) fn unmarshal_first(input: &[u8]) -> Result<Option<Node>, String> {
    unmarshal(input).map_err(|e| e.to_string())
}

/// Encodes `docs` with one encoder, so they are separated by `---`; the
/// flag of each document selects compact (`true`) or wide sequences. No
/// documents give no bytes (kyaml ignores the encoder's `Close` error then).
pub(crate) fn encode_documents<'a>(
    docs: impl IntoIterator<Item = (&'a Node, bool)>,
) -> Result<Vec<u8>> {
    let mut encoder = Encoder::new();
    encoder.set_indent(2);
    let mut any = false;
    for (doc, compact) in docs {
        encoder.set_compact_seq_indent(compact);
        encoder
            .encode(doc)
            .map_err(|e| KyamlError::Encode(e.to_string()))?;
        any = true;
    }
    if !any {
        return Ok(Vec::new());
    }
    encoder
        .finish()
        .map_err(|e| KyamlError::Encode(e.to_string()))
}

/// `RNode.String()`: the node as kyaml's encoder writes it.
pub fn node_to_string(node: &Node) -> Result<String> {
    let bytes = encode_documents([(node, true)])?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}
