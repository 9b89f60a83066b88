//! kyaml's `order.SyncOrder`: after a function ran, put the fields of its
//! output back in the input's order, at every depth (list items paired by
//! position); fields the input lacks follow in the function's order. Then
//! the head comment of a mapping item's first key is lifted onto the item
//! (`rearrangeHeadCommentOfSeqNode`).
//!
//! Deviation: kyaml's reordering shares nodes when `to` has duplicate keys
//! (both entries point at the first); here the first entry is cloned.

use super::rnode::{
    elements, field_value, field_value_mut, fields, is_nil_or_empty, sync_map_nodes_order, y_node,
    y_node_mut,
};
use super::{KyamlError, Result};
use crate::yaml::{Kind, Node};

/// `SyncOrder(from, to)`.
pub fn sync_order(from: &Node, to: &mut Node) -> Result<()> {
    let from_copy = from.clone();
    sync(&from_copy, to).map_err(|e| KyamlError::SyncOrder(e.to_string()))?;
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
    let Ok(names) = fields(from) else {
        return Ok(());
    };
    sync_map_nodes_order(from, to);
    for name in names {
        if let (Some(f), Some(t)) = (field_value(from, &name), field_value_mut(to, &name)) {
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
/// appended to the item's and cleared.
fn rearrange_head_comment_of_seq_node(node: &mut Node) {
    match node.kind {
        Kind::Document | Kind::Mapping => node
            .content
            .iter_mut()
            .for_each(rearrange_head_comment_of_seq_node),
        Kind::Sequence => {
            for item in &mut node.content {
                let Some(first) = item.content.first().filter(|c| c.kind == Kind::Scalar) else {
                    continue;
                };
                if item.head_comment.is_empty() {
                    item.head_comment = first.head_comment.clone();
                    continue;
                }
                if !first.head_comment.is_empty() {
                    let head = std::mem::take(&mut item.content[0].head_comment);
                    item.head_comment = format!("{}\n{head}", item.head_comment);
                }
            }
        }
        _ => {}
    }
}
