//! kyaml's `order.SyncOrder`: after a function ran, put the fields of its
//! output back in the input's order, at every depth (list items paired by
//! position); fields the input lacks follow in the function's order. Then
//! the head comment of a mapping item's first key is lifted onto the item
//! (`rearrangeHeadCommentOfSeqNode`).
//!
//! Deviation: kyaml's reordering shares nodes when `to` has duplicate keys
//! (both entries point at the first); here the first entry is cloned.

use super::rnode::{
    elements, error_if_invalid, field_value, field_value_mut, is_nil_or_empty, pairs,
    sync_map_nodes_order, y_node, y_node_mut,
};
use super::{KyamlError, Result};
use krmgraph_yaml::{Kind, Node};

/// `SyncOrder(from, to)`.
pub fn sync_order(from: &Node, to: &mut Node) -> Result<()> {
    sync(from, to).map_err(|e| KyamlError::SyncOrder(e.to_string()))?;
    rearrange_head_comment_of_seq_node(y_node_mut(to));
    Ok(())
}

fn sync(from: &Node, to: &mut Node) -> Result<()> {
    if is_nil_or_empty(Some(from)) || is_nil_or_empty(Some(to)) {
        return Ok(());
    }
    match y_node(from).kind {
        Kind::Mapping => visit_fields(from, to),
        Kind::Sequence => visit_elements(from, to),
        _ => Ok(()),
    }
}

/// `VisitFields`: reorders `to`, then recurses into fields both have.
fn visit_fields(from: &Node, to: &mut Node) -> Result<()> {
    if error_if_invalid(from, Kind::Mapping).is_err() {
        return Ok(());
    }
    sync_map_nodes_order(from, to);
    for (name, _) in pairs(y_node(from)) {
        let name = name.value.as_str();
        if let (Some(f), Some(t)) = (field_value(from, name), field_value_mut(to, name)) {
            sync(f, t)?;
        }
    }
    Ok(())
}

/// `VisitElements`: recurses into items paired by position; `to` must be a
/// sequence too.
fn visit_elements(from: &Node, to: &mut Node) -> Result<()> {
    let from_items = elements(from)?;
    elements(to)?;
    let to_items = &mut y_node_mut(to).content;
    for (f, t) in from_items.iter().zip(to_items.iter_mut()) {
        sync(f, t)?;
    }
    Ok(())
}

/// `rearrangeHeadCommentOfSeqNode`: for each mapping item of a sequence
/// reached through documents and mappings (not through sequences), an item
/// without a head comment takes its first key's; otherwise the key's is
/// appended to the item's and cleared. Returns whether anything moved.
pub(crate) fn rearrange_head_comment_of_seq_node(node: &mut Node) -> bool {
    match node.kind {
        Kind::Document | Kind::Mapping => node.content.iter_mut().fold(false, |changed, child| {
            rearrange_head_comment_of_seq_node(child) | changed
        }),
        Kind::Sequence => {
            let mut changed = false;
            for item in &mut node.content {
                let Some(first) = item.content.first().filter(|c| c.kind == Kind::Scalar) else {
                    continue;
                };
                if first.head_comment().is_empty() {
                    continue;
                }
                changed = true;
                if item.head_comment().is_empty() {
                    item.set_head_comment(first.head_comment().clone());
                    continue;
                }
                let head = item.content[0].take_head_comment();
                item.set_head_comment(format!("{}\n{head}", item.head_comment()));
            }
            changed
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rnode::tests::{emit, parse};

    /// (from, to, to after `sync_order`).
    const CASES: &[(&str, &str, &str)] = &[
        (
            "b: 1\na: 2\n",
            "a: 2\nnew: 0\nb: 1\n",
            "b: 1\na: 2\nnew: 0\n",
        ),
        (
            "m:\n  z: 1\n  y: 2\nl:\n- q: 1\n  p: 2\n- s\n",
            "l:\n- p: 2\n  q: 1\n- s\n- {b: 1, a: 2}\nm: {y: 2, z: 1}\n",
            "m: {z: 1, y: 2}\nl:\n- q: 1\n  p: 2\n- s\n- {b: 1, a: 2}\n",
        ),
        ("a: {}\nb: 1\n", "b: 1\na: {x: 1}\n", "a: {x: 1}\nb: 1\n"),
        (
            "l:\n- a: 1\n  b: 2\n",
            "l:\n# item head\n- b: 2\n  # key head\n  a: 1\n",
            "l:\n# item head\n# key head\n- a: 1\n  b: 2\n",
        ),
        (
            "l:\n- b: 1\n  a: 2\n",
            "l:\n- # key head\n  a: 2\n  b: 1\n",
            "l:\n- b: 1\n  # key head\n  a: 2\n",
        ),
    ];

    #[test]
    fn syncs_like_kyaml() {
        for (from, to, want) in CASES {
            let mut to = y_node(&parse(to)).clone();
            sync_order(&parse(from), &mut to).unwrap();
            assert_eq!(emit(&to), *want, "from {from:?}");
        }
    }

    #[test]
    fn a_document_target_becomes_its_root() {
        let mut to = parse("# doc\n\nb: 1\na: 2\n");
        sync_order(&parse("a: 2\nb: 1\n"), &mut to).unwrap();
        assert_eq!(to.kind, Kind::Mapping);
        assert_eq!(emit(&to), "a: 2\nb: 1\n");
    }

    #[test]
    fn a_list_turned_map_fails() {
        let mut to = y_node(&parse("l: {a: 1}\n")).clone();
        let err = sync_order(&parse("l: [a]\n"), &mut to)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with(
            "failed to sync field order: \"wrong node kind: expected SequenceNode but got MappingNode: node contents:\\n"
        ), "{err}");
    }
}
