//! What a node tree becomes when go-yaml v3 emits it (as kyaml's encoder
//! does) and parses the text again — computed on the tree, without the
//! text, for the trees where that is simple.
//!
//! Every crossing of kpt's function boundary is such a round trip: kpt
//! writes the ResourceList, the function parses it; the function writes its
//! output, kpt parses it. The round trip keeps every scalar's value but not
//! its presentation: the emitter picks a style the value allows (a plain
//! `a: b` comes back single-quoted, an empty collection as flow `{}`), and
//! the parser gives plain scalars their resolved tag. [`restyle`] applies
//! exactly those changes, so a built-in that runs on nodes
//! (`fnruntime::builtin::direct`) sees what it would have parsed, and kpt's
//! side gets the nodes it would have read back.
//!
//! The model follows the encoder's tag and style decisions
//! (`encode::node_start`), the emitter's scalar analysis and style
//! selection (`emitter::analyze`) and the parser's tags. It declines (the
//! caller then goes through the bytes) for whatever it does not model:
//! anchors and aliases, explicit tags, folded scalars of several lines (the
//! emitter re-folds them), line breaks other than `\n`, keys that are not simple keys, and
//! the zero node, and comments where the emitter may write text its
//! parser cannot read (inside flow collections, foot comments, a key's
//! comment before a flow or scalar value, a collection's line comment,
//! line comments of several lines). It does not move comments: the parser attributes comments
//! by position, so a tree with comments keeps its values and styles here
//! but may not keep its comments where they were.

use super::emitter::{analyze_scalar, ScalarData};
use super::encode::{presented_tag, requested_scalar_style};
use super::event::scalar_style;
use super::node::{short_tag, tag, Style};
use super::resolve::resolve_tag;
use super::{Kind, Node};

mod scalar_memo;

/// Where a scalar sits, which decides the styles the emitter allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// A key of a block mapping (written as a simple key).
    BlockKey,
    /// A value of a block mapping, an item of a block sequence, or a root.
    BlockValue,
    /// A key of a flow mapping.
    FlowKey,
    /// A value or item inside a flow collection.
    FlowValue,
}

impl Place {
    fn is_key(self) -> bool {
        matches!(self, Place::BlockKey | Place::FlowKey)
    }

    fn is_flow(self) -> bool {
        matches!(self, Place::FlowKey | Place::FlowValue)
    }
}

/// The style and tag the scalar `node` has after the round trip (its value
/// is unchanged), or `None` where the model declines.
pub fn scalar(node: &Node, place: Place) -> Option<(Style, &'static str)> {
    if !node.anchor().is_empty() || node.style.has(Style::TAGGED) {
        return None;
    }
    if node.kind != Kind::Scalar {
        return analyze(node, place);
    }
    scalar_memo::answer(&node.value, &node.tag, node.style, place, || {
        analyze(node, place)
    })
}

/// [`scalar`] of a scalar without anchor or explicit tag: a function of
/// its value, tag, style and place alone.
fn analyze(node: &Node, place: Place) -> Option<(Style, &'static str)> {
    if has_other_breaks(&node.value) {
        return None;
    }
    let (written_tag, force_quoting) = presented_tag(node);
    if !written_tag.is_empty() {
        // Written as `!!int abc`: parsed back with the tagged style.
        return None;
    }
    let requested = requested_scalar_style(node, force_quoting);
    let data = analyze_scalar(node.value.as_bytes(), true);
    if place.is_key() && (data.multiline || data.length > 128) {
        // Not a simple key: written as `? key`, which is not modelled.
        return None;
    }
    match select_style(requested, &data, place) {
        scalar_style::PLAIN if node.value == "<<" => None,
        scalar_style::PLAIN => Some((Style::NONE, resolve_tag(&node.value))),
        scalar_style::SINGLE_QUOTED => Some((Style::SINGLE_QUOTED, tag::STR)),
        scalar_style::DOUBLE_QUOTED => Some((Style::DOUBLE_QUOTED, tag::STR)),
        // A block scalar that starts with a space or a break gets an
        // indentation indicator, which go-yaml gets wrong in nested compact
        // sequences (`- - |2`): the leading break is lost. A line that
        // starts with a tab cannot be read back at all.
        scalar_style::LITERAL
            if node.value.starts_with([' ', '\n']) || node.value.contains('\t') =>
        {
            None
        }
        scalar_style::LITERAL => Some((Style::LITERAL, tag::STR)),
        // The emitter re-folds the lines of a folded scalar, which changes
        // some values; a single line (the width is unlimited) comes back
        // as it was.
        scalar_style::FOLDED
            if node.value.contains(['\n', '\t']) || node.value.starts_with(' ') =>
        {
            None
        }
        scalar_style::FOLDED => Some((Style::FOLDED, tag::STR)),
        _ => None,
    }
}

/// Gives every node of `root` (a document or a root value in block
/// context) the style and tag the round trip gives it; `false`, with
/// `root` unchanged, when the tree holds something the model declines.
/// Comments are left where they are, which the round trip may not do.
pub fn restyle(root: &mut Node) -> bool {
    restyle_with(root, Walk::default())
}

/// [`restyle`] for trees whose comments the round trip also keeps where
/// they are: head comments only on mapping keys and sequence items, with
/// no blank lines; line comments on scalars that are written as something
/// and on keys whose value is a block collection; no foot comments. `false`
/// for a tree with any other comment.
pub fn restyle_keeping_comments(root: &mut Node) -> bool {
    restyle_with(
        root,
        Walk {
            comments: true,
            ..Walk::default()
        },
    )
}

fn restyle_with(root: &mut Node, walk: Walk) -> bool {
    match Restyle::plan(root, walk) {
        Some(restyle) => {
            restyle.apply(root);
            true
        }
        None => false,
    }
}

/// What [`restyle_keeping_comments`] does to a tree, decided without
/// changing it, so that a caller with many trees can apply it to all of
/// them or to none.
pub struct Restyle {
    scalars: Vec<(Style, &'static str)>,
}

impl Restyle {
    /// [`restyle_keeping_comments`]'s decision for `root`: `None` where it
    /// declines.
    pub fn keeping_comments(root: &Node) -> Option<Restyle> {
        let walk = Walk {
            comments: true,
            ..Walk::default()
        };
        Restyle::plan(root, walk)
    }

    fn plan(root: &Node, mut walk: Walk) -> Option<Restyle> {
        walk.root(root).then_some(Restyle {
            scalars: walk.scalars,
        })
    }

    /// Whether [`Restyle::apply`] would leave `root`, the tree this was
    /// planned on, as it is, but for the scalars in `except` (by address).
    pub fn changes_nothing_except(&self, root: &Node, except: &[*const Node]) -> bool {
        let mut scalars = self.scalars.iter().copied();
        let root = match root.kind {
            Kind::Document => &root.content[0],
            _ => root,
        };
        unchanged(root, Place::BlockValue, &mut scalars, except)
    }

    /// Restyles `root`, the tree this was planned on.
    pub fn apply(self, root: &mut Node) {
        let mut scalars = self.scalars.into_iter();
        match root.kind {
            Kind::Document => apply(&mut root.content[0], Place::BlockValue, &mut scalars),
            _ => apply(root, Place::BlockValue, &mut scalars),
        }
    }
}

/// Whether [`restyle`] accepts `root`.
pub fn accepts(root: &Node) -> bool {
    Walk::default().root(root)
}

/// The checking walk: what it found for each scalar, in the order
/// [`apply`] visits them.
#[derive(Default)]
struct Walk {
    /// The style and tag of each scalar.
    scalars: Vec<(Style, &'static str)>,
    /// Whether comments must keep their places (head comments only where
    /// the parser puts them back).
    comments: bool,
    /// Inside a flow collection already found to hold no comment: its
    /// nodes need not be searched again (a search at every level of a
    /// deep flow collection would take time quadratic in its depth).
    in_clean_flow: bool,
    /// Collections open around the node being checked.
    depth: usize,
}

/// The deepest nesting the walk models. go-yaml's scanner refuses more
/// than 10,000 block indents or flow levels, and where a tree lands in a
/// document (a ResourceList's items, how its collections are written)
/// decides how close it comes: a deeper tree is declined, so the real
/// round trip gives its exact result or error.
const MAX_DEPTH: usize = 9_000;

impl Walk {
    fn root(&mut self, root: &Node) -> bool {
        match root.kind {
            Kind::Document => match root.content.as_slice() {
                [child] => self.at(child, Place::BlockValue, false),
                _ => false,
            },
            _ => self.at(root, Place::BlockValue, false),
        }
    }

    /// `head_ok`: whether a head comment stays on this node (a mapping key
    /// or a sequence item); elsewhere the emitter writes it before the
    /// key, where the parser gives it to the key.
    fn at(&mut self, node: &Node, place: Place, head_ok: bool) -> bool {
        // A node without anchor or comments, outside a flow collection (the
        // common case, checked for every node) has nothing to decline here.
        let plain = node.extras.is_none() && !place.is_flow();
        if !plain && self.declines_comments(node, place, head_ok) {
            return false;
        }
        match node.kind {
            Kind::Scalar => match scalar(node, place) {
                Some(decision) => {
                    self.scalars.push(decision);
                    true
                }
                None => false,
            },
            Kind::Mapping | Kind::Sequence => self.collection(node, place),
            Kind::Alias | Kind::Document => false,
        }
    }

    /// Whether the round trip would not keep `node`'s comments readable
    /// (or, keeping comments, where they are).
    fn declines_comments(&self, node: &Node, place: Place, head_ok: bool) -> bool {
        // go-yaml writes comments inside flow collections, and foot
        // comments before whatever comes next, where its own parser cannot
        // always read them back; a comment on a value written as nothing
        // (`- # c`) is read as the next node's.
        place.is_flow() && !self.in_clean_flow && has_comments(node)
            || !node.foot_comment().is_empty()
            || node.line_comment().contains('\n')
            || ![&node.head_comment(), &node.line_comment()]
                .into_iter()
                .all(|c| reads_back(c))
            || self.comments && !node.head_comment().is_empty() && !(head_ok && clean_head(node))
            || self.comments
                && node.kind == Kind::Scalar
                && node.value.is_empty()
                && has_comments(node)
    }

    fn collection(&mut self, node: &Node, place: Place) -> bool {
        let tag_is_implicit = node.tag.is_empty() || short_tag(&node.tag) == default_tag(node);
        let plain_style = node.style == Style::NONE || node.style == Style::FLOW;
        if !node.anchor().is_empty() || !tag_is_implicit || !plain_style || place.is_key() {
            return false;
        }
        let flow = place.is_flow() || written_in_flow(node);
        if !node.line_comment().is_empty() {
            // A collection's own line comment is written after its last
            // entry, before whatever follows.
            return false;
        }
        if self.depth >= MAX_DEPTH {
            return false;
        }
        let enters_clean_flow = flow && !self.in_clean_flow;
        if enters_clean_flow {
            if has_comments(node) {
                return false;
            }
            self.in_clean_flow = true;
        }
        self.depth += 1;
        let kept = self.children(node, flow);
        self.depth -= 1;
        if enters_clean_flow {
            self.in_clean_flow = false;
        }
        kept
    }

    /// [`collection`](Walk::collection)'s entries.
    fn children(&mut self, node: &Node, flow: bool) -> bool {
        let (key, value) = child_places(flow);
        if node.kind == Kind::Sequence {
            return node.content.iter().all(|item| self.at(item, value, true));
        }
        node.content.chunks_exact(2).all(|kv| {
            kv[0].kind == Kind::Scalar
                && !key_comment_breaks_value(&kv[0], &kv[1])
                && self.at(&kv[0], key, true)
                && self.at(&kv[1], value, false)
        })
    }
}

/// Whether go-yaml writes comment `text` as it is and its reader takes it
/// back: every line empty or starting with `#` (the emitter adds `# `
/// otherwise), no line break but `\n` (the emitter writes others raw and
/// starts a new comment line after them), and nothing the reader refuses
/// as a control character.
fn reads_back(text: &str) -> bool {
    text.split('\n').all(|line| {
        (line.is_empty() || line.starts_with('#'))
            && line.chars().all(|c| {
                c == '\t'
                    || (' '..='~').contains(&c)
                    || ('\u{a0}'..='\u{d7ff}').contains(&c) && !matches!(c, '\u{2028}' | '\u{2029}')
                    || ('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}'
                    || c >= '\u{10000}'
            })
    })
}

/// A head comment the parser reads back whole: no blank line inside,
/// before or after it.
fn clean_head(node: &Node) -> bool {
    let head = &node.head_comment();
    !head.contains("\n\n") && !head.starts_with('\n') && !head.ends_with('\n')
}

/// Sets the styles and tags of a tree [`Walk`] accepted, taking the
/// scalars' decisions in the order it made them.
fn apply(node: &mut Node, place: Place, scalars: &mut impl Iterator<Item = (Style, &'static str)>) {
    match node.kind {
        Kind::Scalar => {
            if let Some((style, tag)) = scalars.next() {
                node.style = style;
                if node.tag != tag {
                    node.tag = tag.into();
                }
            }
        }
        Kind::Mapping | Kind::Sequence => {
            let flow = place.is_flow() || written_in_flow(node);
            node.style = if flow { Style::FLOW } else { Style::NONE };
            let tag = default_tag(node);
            if node.tag != tag {
                node.tag = tag.into();
            }
            let (key, value) = child_places(flow);
            if node.kind == Kind::Sequence {
                node.content
                    .iter_mut()
                    .for_each(|item| apply(item, value, scalars));
            } else {
                for kv in node.content.chunks_exact_mut(2) {
                    apply(&mut kv[0], key, scalars);
                    apply(&mut kv[1], value, scalars);
                }
            }
        }
        Kind::Alias | Kind::Document => {}
    }
}

/// Whether [`apply`] leaves `node` as it is (scalars in `except` aside).
fn unchanged(
    node: &Node,
    place: Place,
    scalars: &mut impl Iterator<Item = (Style, &'static str)>,
    except: &[*const Node],
) -> bool {
    match node.kind {
        Kind::Scalar => scalars.next().is_none_or(|(style, tag)| {
            node.style == style && node.tag == tag || except.contains(&(node as *const Node))
        }),
        Kind::Mapping | Kind::Sequence => {
            let flow = place.is_flow() || written_in_flow(node);
            let style = if flow { Style::FLOW } else { Style::NONE };
            if node.style != style || node.tag != default_tag(node) {
                return false;
            }
            let (key, value) = child_places(flow);
            if node.kind == Kind::Sequence {
                return node
                    .content
                    .iter()
                    .all(|item| unchanged(item, value, scalars, except));
            }
            node.content.chunks_exact(2).all(|kv| {
                unchanged(&kv[0], key, scalars, except) && unchanged(&kv[1], value, scalars, except)
            })
        }
        Kind::Alias | Kind::Document => true,
    }
}

fn default_tag(node: &Node) -> &'static str {
    if node.kind == Kind::Mapping {
        tag::MAP
    } else {
        tag::SEQ
    }
}

fn child_places(flow: bool) -> (Place, Place) {
    if flow {
        (Place::FlowKey, Place::FlowValue)
    } else {
        (Place::BlockKey, Place::BlockValue)
    }
}

/// Whether the emitter writes `node` (a collection in block context) in
/// flow style: when asked to, and when it is empty.
fn written_in_flow(node: &Node) -> bool {
    node.style == Style::FLOW || node.content.is_empty()
}

/// A key's line or foot comment is written after `key:`, which leaves a
/// flow collection or a scalar value where go-yaml cannot read it back
/// (`key: # c` then `{}` on the next line, at column 0).
fn key_comment_breaks_value(key: &Node, value: &Node) -> bool {
    let commented = !key.line_comment().is_empty() || !key.foot_comment().is_empty();
    let block_value =
        matches!(value.kind, Kind::Mapping | Kind::Sequence) && !written_in_flow(value);
    commented && !block_value
}

fn has_comments(node: &Node) -> bool {
    !node.head_comment().is_empty()
        || !node.line_comment().is_empty()
        || !node.foot_comment().is_empty()
        || node.content.iter().any(has_comments)
}

/// Line breaks other than `\n`: the emitter writes them raw in some
/// styles, and kpt's reader turns `\r\n` into `\n`.
fn has_other_breaks(value: &str) -> bool {
    // Almost every value is ASCII, which only `\r` can break; checking
    // that is much cheaper than decoding every character.
    if value.is_ascii() {
        return value.as_bytes().contains(&b'\r');
    }
    value
        .chars()
        .any(|c| matches!(c, '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'))
}

/// `yaml_emitter_select_scalar_style` for an untagged (implicit) scalar.
fn select_style(requested: u8, data: &ScalarData, place: Place) -> u8 {
    let (flow, simple_key) = (place.is_flow(), place.is_key());
    let mut style = requested;
    if simple_key && data.multiline {
        style = scalar_style::DOUBLE_QUOTED;
    }
    if style == scalar_style::PLAIN {
        let plain_allowed = if flow {
            data.flow_plain_allowed
        } else {
            data.block_plain_allowed
        };
        if !plain_allowed || data.length == 0 && (flow || simple_key) {
            style = scalar_style::SINGLE_QUOTED;
        }
    }
    if style == scalar_style::SINGLE_QUOTED && !data.single_quoted_allowed {
        style = scalar_style::DOUBLE_QUOTED;
    }
    let block = style == scalar_style::LITERAL || style == scalar_style::FOLDED;
    if block && (!data.block_allowed || flow || simple_key) {
        style = scalar_style::DOUBLE_QUOTED;
    }
    style
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::parse_documents;

    fn tree(text: &str) -> Node {
        parse_documents(text.as_bytes()).unwrap().remove(0)
    }

    #[test]
    fn declines_trees_nested_near_the_scanners_limit() {
        let nested = |depth: usize| {
            let text = format!("x: {}1{}\n", "[".repeat(depth), "]".repeat(depth));
            // Trees this deep need the stack the CLI's threads have.
            krmgraph_util::par::with_stack(|| restyle(&mut tree(&text))).unwrap()
        };
        assert!(nested(100));
        assert!(nested(MAX_DEPTH - 2), "the mapping and its value's lists");
        assert!(
            !nested(MAX_DEPTH),
            "written in block style, deeper than go-yaml reads"
        );
    }

    #[test]
    fn changes_nothing_is_what_apply_does() {
        // As parsed: restyling changes nothing.
        let parsed = tree("a: '1'\nb: [x, y]\nc: |\n  t\n");
        let plan = Restyle::keeping_comments(&parsed).unwrap();
        assert!(plan.changes_nothing_except(&parsed, &[]));
        // A key set by kio.Pipeline's setter has no tag until read back.
        let mut set = parsed.clone();
        set.content[0].content[0].tag = Default::default();
        let plan = Restyle::keeping_comments(&set).unwrap();
        assert!(!plan.changes_nothing_except(&set, &[]));
        let key: *const Node = &set.content[0].content[0];
        assert!(plan.changes_nothing_except(&set, &[key]));
        plan.apply(&mut set);
        assert_eq!(
            set.content[0].content[0].tag,
            parsed.content[0].content[0].tag
        );
    }
}
