//! Small readers over YAML nodes that keep the position of what they read,
//! so every catalog error can name `file:line:col`.

use krmgraph_yaml::{Kind, Node};

/// The value of `key` in the mapping `node`, if it is a mapping and has it.
pub(crate) fn get<'n>(node: &'n Node, key: &str) -> Option<&'n Node> {
    if node.kind != Kind::Mapping {
        return None;
    }
    node.content
        .chunks(2)
        .find(|kv| kv[0].value == key)
        .and_then(|kv| kv.get(1))
}

/// The keys of the mapping `node` with their key nodes.
pub(crate) fn entries(node: &Node) -> impl Iterator<Item = (&Node, &Node)> {
    node.content
        .chunks(2)
        .filter(|_| node.kind == Kind::Mapping)
        .filter_map(|kv| Some((&kv[0], kv.get(1)?)))
}

/// A scalar's text, `None` for anything else.
pub(crate) fn scalar(node: &Node) -> Option<&str> {
    (node.kind == Kind::Scalar).then_some(node.value.as_str())
}

/// The root of a document node.
pub(crate) fn root(doc: &Node) -> &Node {
    match doc.kind {
        Kind::Document => doc.content.first().unwrap_or(doc),
        _ => doc,
    }
}
