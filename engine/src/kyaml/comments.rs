//! kyaml's `comments.CopyComments`: after a function ran, fill the
//! comments the function dropped from the input resource with the same id.
//!
//! Every node the walker pairs up (fields by name, list items by position
//! when their scalar values are equal, and items of merge-keyed lists by
//! key) gets the input's head, line and foot comment wherever its own is
//! empty. Pairing a `from` that is a document reads the document node's
//! comments. Every folded (`>`) scalar the walk reaches on the output side
//! is switched to double-quoted style (kyaml's workaround for kpt#766).

use super::walk::{Visitor, Walker};
use super::Result;
use crate::yaml::{Node, Style};

/// `CopyComments(from, to)`: copies comments of `from` into `to` where `to`
/// has none. `from` is not modified.
pub fn copy_comments(from: &Node, to: &mut Node) -> Result<()> {
    let mut from_copy = from.clone();
    copy_field_comments(Some(&from_copy), Some(to));
    Walker::new(&Copier, true).walk(Some(&mut from_copy), Some(to), None)?;
    Ok(())
}

/// kyaml's `copier` visitor: the destination is the input's copy, the
/// origin the function's output.
struct Copier;

impl Visitor for Copier {
    fn visit_map(&self, dest: Option<&mut Node>, origin: Option<&mut Node>) -> Result<()> {
        copy_field_comments(dest.as_deref(), origin);
        Ok(())
    }

    fn visit_scalar(&self, dest: Option<&mut Node>, mut origin: Option<&mut Node>) -> Result<()> {
        if let Some(to) = origin.as_deref_mut() {
            if to.style == Style::FOLDED {
                to.style = Style::DOUBLE_QUOTED;
            }
        }
        copy_field_comments(dest.as_deref(), origin);
        Ok(())
    }

    fn visit_list(&self, dest: Option<&mut Node>, mut origin: Option<&mut Node>) -> Result<()> {
        copy_field_comments(dest.as_deref(), origin.as_deref_mut());
        let (Some(dest), Some(origin)) = (dest, origin) else {
            return Ok(());
        };
        let dest_items = &super::rnode::y_node(dest).content;
        let origin_items = &mut super::rnode::y_node_mut(origin).content;
        for (d, o) in dest_items.iter().zip(origin_items.iter_mut()) {
            if d.value == o.value {
                copy_comments(d, o)?;
            }
        }
        Ok(())
    }
}

/// `copyFieldComments`: fills `to`'s empty line, head and foot comments.
fn copy_field_comments(from: Option<&Node>, to: Option<&mut Node>) {
    let (Some(from), Some(to)) = (from, to) else {
        return;
    };
    for (t, f) in [
        (&mut to.line_comment, &from.line_comment),
        (&mut to.head_comment, &from.head_comment),
        (&mut to.foot_comment, &from.foot_comment),
    ] {
        if t.is_empty() {
            t.clone_from(f);
        }
    }
}
