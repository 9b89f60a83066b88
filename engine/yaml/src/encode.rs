// Copyright (c) 2011-2019 Canonical Ltd
//
// Licensed under the Apache License, Version 2.0 (the "License");
// you may not use this file except in compliance with the License.
// You may obtain a copy of the License at
//
//     http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing, software
// distributed under the License is distributed on an "AS IS" BASIS,
// WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
// See the License for the specific language governing permissions and
// limitations under the License.

//! [`Node`] trees to events: a port of the `*Node` half of go-yaml v3's
//! `encode.go` (`encoder.init`/`finish`/`emit`, `marshalDoc`, `node()` with
//! its tag, quoting, style and comment logic) and of the `Encoder` of
//! `yaml.go` (`NewEncoder`, `SetIndent`, `Encode`, `Close`), with kyaml's
//! `CompactSeqIndent()`/`DefaultSeqIndent()`.
//!
//! Only `Node` trees are encoded (no reflection over arbitrary values).
//! Alias nodes carry the anchor name in `value` and encode as `*value`.
//!
//! The events borrow their text, comments and anchors from the tree
//! ([`EventRef`]); the event waiting for the emitter's look-ahead lives in
//! a `Walk` of one document, which the tree outlives.

use std::borrow::Cow;

use super::emitter::{EmitError, EmitResult, Emitter};
use super::event::{collection_style, scalar_style, EventRef, EventType};
use super::node::{long_tag, short_tag, tag, Kind, Node, Style};
use super::resolve::resolve_tag;

/// Writes YAML documents from [`Node`] trees, as go-yaml v3's `Encoder`
/// does for `*yaml.Node` values: the second and later documents are
/// preceded by `---`.
pub struct Encoder {
    emitter: Emitter,
    indent: usize,
    done_init: bool,
    /// The first error: go-yaml's emitter is stuck after one.
    error: Option<EmitError>,
}

impl Default for Encoder {
    fn default() -> Self {
        Encoder::new()
    }
}

impl Encoder {
    /// `NewEncoder` (`newEncoder`): unicode output, indentation 4 unless
    /// [`set_indent`](Encoder::set_indent) says otherwise, wide sequences.
    pub fn new() -> Encoder {
        let mut emitter = Emitter::new();
        emitter.set_unicode(true);
        Encoder {
            emitter,
            indent: 0,
            done_init: false,
            error: None,
        }
    }

    /// `SetIndent`: the indentation used. As in go-yaml it takes effect at
    /// the first [`encode`](Encoder::encode) only; 0 means 4, and values
    /// outside 2..=9 become 2.
    pub fn set_indent(&mut self, spaces: usize) {
        self.indent = spaces;
    }

    /// kyaml's `CompactSeqIndent()` (true: a block sequence that is a
    /// mapping value is not indented, `a:\n- x`) or `DefaultSeqIndent()`
    /// (false: `a:\n  - x`). Can change between documents.
    pub fn set_compact_seq_indent(&mut self, compact: bool) {
        self.emitter.set_compact_sequence_indent(compact);
    }

    /// `yaml_emitter_set_width`: the column past which plain and quoted
    /// scalars are folded (go-yaml v2 folds at 80; v3, and so kyaml,
    /// never: -1, the default here).
    pub fn set_width(&mut self, width: isize) {
        self.emitter.set_width(width);
    }

    /// Reserve room for `additional` more output bytes (not in go-yaml):
    /// a caller that knows roughly how much it will write (the size of the
    /// file it read) saves the buffer's regrowth.
    pub fn reserve(&mut self, additional: usize) {
        self.emitter.out.reserve(additional);
    }

    /// `Encode`: write one document. `node` is a [`Kind::Document`] node or
    /// a bare root node, which is wrapped in an implicit document.
    pub fn encode(&mut self, node: &Node) -> Result<(), EmitError> {
        self.guard(|e| e.marshal_doc(node))
    }

    /// `Close`, then the bytes written. As go-yaml's `Close`, this fails
    /// with `expected STREAM-START` when nothing was encoded (kyaml's
    /// writers ignore that error and write nothing).
    pub fn finish(mut self) -> Result<Vec<u8>, EmitError> {
        self.guard(|e| e.finish_stream())?;
        Ok(self.emitter.into_output())
    }

    /// Run `f` unless an earlier call failed; remember its error.
    fn guard(&mut self, f: impl FnOnce(&mut Encoder) -> EmitResult) -> Result<(), EmitError> {
        if let Some(err) = &self.error {
            return Err(err.clone());
        }
        f(self).map_err(|err| {
            self.error = Some((*err).clone());
            *err
        })
    }

    /// `encoder.init`.
    fn init(&mut self) -> EmitResult {
        if self.done_init {
            return Ok(());
        }
        if self.indent == 0 {
            self.indent = 4;
        }
        self.emitter.best_indent = self.indent.min(isize::MAX as usize) as isize;
        self.walk().emit(event(EventType::StreamStart))?;
        self.done_init = true;
        Ok(())
    }

    /// `encoder.finish`.
    fn finish_stream(&mut self) -> EmitResult {
        self.emitter.open_ended = false;
        self.walk().emit(event(EventType::StreamEnd))
    }

    /// A walk with no event pending.
    fn walk<'a>(&mut self) -> Walk<'_, 'a> {
        Walk {
            emitter: &mut self.emitter,
            pending: None,
        }
    }

    /// `encoder.marshalDoc` for a `*Node`.
    fn marshal_doc(&mut self, node: &Node) -> EmitResult {
        self.init()?;
        let mut walk = self.walk();
        if node.kind == Kind::Document && !is_zero(node) {
            walk.node(node, "")?;
        } else {
            walk.emit(document_start())?;
            walk.node(node, "")?;
            walk.emit(document_end())?;
        }
        // DOCUMENT-END is never pending: the emitter has taken every event.
        debug_assert!(walk.pending.is_none());
        Ok(())
    }
}

/// The encoding of one document: the emitter, and the collection start
/// waiting for the emitter's look-ahead, borrowing from the document's
/// tree (`'a`).
struct Walk<'e, 'a> {
    emitter: &'e mut Emitter,
    pending: Option<EventRef<'a>>,
}

impl<'a> Walk<'_, 'a> {
    /// `encoder.emit`.
    #[inline]
    fn emit(&mut self, event: EventRef<'a>) -> EmitResult {
        self.emitter.emit_ref(&mut self.pending, event)
    }

    /// `encoder.nilv`.
    fn nilv(&mut self) -> EmitResult {
        self.emit_scalar("null", "", "", scalar_style::PLAIN, "", "", "", "")
    }

    /// `encoder.emitScalar`.
    #[allow(clippy::too_many_arguments)]
    fn emit_scalar(
        &mut self,
        value: &'a str,
        anchor: &'a str,
        tag: &'a str,
        style: u8,
        head: &'a str,
        line: &'a str,
        foot: &'a str,
        tail: &'a str,
    ) -> EmitResult {
        let implicit = tag.is_empty();
        self.emit(EventRef {
            typ: EventType::Scalar,
            anchor: anchor.as_bytes(),
            tag: long_tag_bytes(tag),
            value: value.as_bytes(),
            implicit,
            quoted_implicit: implicit,
            style,
            head_comment: head.as_bytes(),
            line_comment: line.as_bytes(),
            foot_comment: foot.as_bytes(),
            tail_comment: tail.as_bytes(),
            ..EventRef::default()
        })
    }

    /// `encoder.node`: one node and its children. `tail` is the foot
    /// comment of the previous mapping key, written before this node.
    ///
    /// Go recurses; this walks the tree with an explicit stack so that
    /// trees as deep as go-yaml parses (10000 levels) cannot overflow the
    /// thread's stack. Each Go step is marked where it happens: the start
    /// events in [`node_start`](Walk::node_start), the loops over
    /// `node.Content` and the end events here.
    fn node(&mut self, node: &'a Node, tail: &'a str) -> EmitResult {
        // Deep enough for KRM documents without regrowing.
        let mut stack: Vec<Frame<'a>> = Vec::with_capacity(32);
        self.node_start(node, tail, node.foot_comment(), &mut stack)?;
        while let Some(frame) = stack.pop() {
            match frame {
                Frame::Document { node, next } => {
                    // for _, node := range node.Content { e.node(node, "") }
                    if let Some(child) = node.content.get(next) {
                        stack.push(Frame::Document {
                            node,
                            next: next + 1,
                        });
                        self.node_start(child, "", child.foot_comment(), &mut stack)?;
                    } else {
                        let mut end = document_end();
                        end.foot_comment = node.foot_comment().as_bytes();
                        self.emit(end)?;
                    }
                }
                Frame::Sequence { node, next, foot } => {
                    if let Some(child) = node.content.get(next) {
                        stack.push(Frame::Sequence {
                            node,
                            next: next + 1,
                            foot,
                        });
                        self.node_start(child, "", child.foot_comment(), &mut stack)?;
                    } else {
                        self.emit(EventRef {
                            typ: EventType::SequenceEnd,
                            line_comment: node.line_comment().as_bytes(),
                            foot_comment: foot.as_bytes(),
                            ..EventRef::default()
                        })?;
                    }
                }
                Frame::MappingKey {
                    node,
                    next,
                    tail,
                    foot,
                } => {
                    // The tail logic below moves the foot comment of prior keys to the following key,
                    // since the value for each key may be a nested structure and the foot needs to be
                    // processed only the entirety of the value is streamed. The last tail is processed
                    // with the mapping end event.
                    if next + 1 < node.content.len() {
                        let k = &node.content[next];
                        // Go encodes a copy of the key without its foot
                        // comment, which becomes the next tail.
                        stack.push(Frame::MappingValue {
                            node,
                            next,
                            tail: k.foot_comment(),
                            foot,
                        });
                        self.node_start(k, tail, "", &mut stack)?;
                    } else {
                        self.emit(EventRef {
                            typ: EventType::MappingEnd,
                            tail_comment: tail.as_bytes(),
                            line_comment: node.line_comment().as_bytes(),
                            foot_comment: foot.as_bytes(),
                            ..EventRef::default()
                        })?;
                    }
                }
                Frame::MappingValue {
                    node,
                    next,
                    tail,
                    foot,
                } => {
                    stack.push(Frame::MappingKey {
                        node,
                        next: next + 2,
                        tail,
                        foot,
                    });
                    let v = &node.content[next + 1];
                    self.node_start(v, "", v.foot_comment(), &mut stack)?;
                }
            }
        }
        Ok(())
    }

    /// The part of `encoder.node` before the children: the tag and style
    /// decisions and the start event (or the whole node for scalars and
    /// aliases). Collections push the frame that walks their children.
    /// `foot` is the node's foot comment, empty for a key whose foot
    /// comment moved to the next key.
    fn node_start(
        &mut self,
        node: &'a Node,
        tail: &'a str,
        foot: &'a str,
        stack: &mut Vec<Frame<'a>>,
    ) -> EmitResult {
        // Zero nodes behave as nil.
        if is_zero(node) {
            return self.nilv();
        }

        let (tag, force_quoting) = presented_tag(node);

        match node.kind {
            Kind::Document => {
                let mut start = document_start();
                start.head_comment = node.head_comment().as_bytes();
                self.emit(start)?;
                stack.push(Frame::Document { node, next: 0 });
                Ok(())
            }

            Kind::Sequence => {
                let style = if node.style.has(Style::FLOW) {
                    collection_style::FLOW
                } else {
                    collection_style::BLOCK
                };
                self.emit(EventRef {
                    typ: EventType::SequenceStart,
                    anchor: node.anchor().as_bytes(),
                    tag: long_tag_bytes(tag),
                    implicit: tag.is_empty(),
                    style,
                    head_comment: node.head_comment().as_bytes(),
                    ..EventRef::default()
                })?;
                stack.push(Frame::Sequence {
                    node,
                    next: 0,
                    foot,
                });
                Ok(())
            }

            Kind::Mapping => {
                let style = if node.style.has(Style::FLOW) {
                    collection_style::FLOW
                } else {
                    collection_style::BLOCK
                };
                self.emit(EventRef {
                    typ: EventType::MappingStart,
                    anchor: node.anchor().as_bytes(),
                    tag: long_tag_bytes(tag),
                    implicit: tag.is_empty(),
                    style,
                    tail_comment: tail.as_bytes(),
                    head_comment: node.head_comment().as_bytes(),
                    ..EventRef::default()
                })?;
                stack.push(Frame::MappingKey {
                    node,
                    next: 0,
                    tail: "",
                    foot,
                });
                Ok(())
            }

            Kind::Alias => self.emit(EventRef {
                typ: EventType::Alias,
                anchor: node.value.as_bytes(),
                head_comment: node.head_comment().as_bytes(),
                line_comment: node.line_comment().as_bytes(),
                foot_comment: foot.as_bytes(),
                ..EventRef::default()
            }),

            Kind::Scalar => {
                // `value` is a Rust `String`, always valid UTF-8: go-yaml's
                // `!!binary` fallback for invalid UTF-8 cannot arise.
                let value = &node.value;

                let style = requested_scalar_style(node, force_quoting);

                self.emit_scalar(
                    value,
                    node.anchor(),
                    tag,
                    style,
                    node.head_comment(),
                    node.line_comment(),
                    foot,
                    tail,
                )
            }
        }
    }
}

/// Where the walk of [`Walk::node`] is inside a collection: what Go
/// keeps on its call stack while it loops over `node.Content`.
enum Frame<'a> {
    /// Next child of a document.
    Document { node: &'a Node, next: usize },
    /// Next item of a sequence; `foot` goes on SEQUENCE-END.
    Sequence {
        node: &'a Node,
        next: usize,
        foot: &'a str,
    },
    /// Next key of a mapping (`content[next]`), with the tail to write
    /// before it; `foot` goes on MAPPING-END.
    MappingKey {
        node: &'a Node,
        next: usize,
        tail: &'a str,
        foot: &'a str,
    },
    /// The value `content[next + 1]` of the key just written; `tail` is
    /// that key's foot comment.
    MappingValue {
        node: &'a Node,
        next: usize,
        tail: &'a str,
        foot: &'a str,
    },
}

/// `encoder.node`'s tag decision: the tag to write (empty when the value
/// implies it), and whether a `!!str` that would read as another type must
/// be quoted instead. If the tag was not explicitly requested, and dropping
/// it won't change the implicit tag of the value, it is not written.
pub(crate) fn presented_tag(node: &Node) -> (&str, bool) {
    let tag: &str = &node.tag;
    if tag.is_empty() || node.style.has(Style::TAGGED) {
        return (tag, false);
    }
    let stag = short_tag(tag);
    if node.kind != Kind::Scalar {
        let rtag = match node.kind {
            Kind::Mapping => tag::MAP,
            Kind::Sequence => tag::SEQ,
            _ => "",
        };
        return if rtag == stag {
            ("", false)
        } else {
            (tag, false)
        };
    }
    if stag == tag::STR && node.style.is_non_plain_scalar() {
        return ("", false);
    }
    let rtag = resolve_tag(&node.value);
    if rtag == stag {
        ("", false)
    } else if stag == tag::STR {
        ("", true)
    } else {
        (tag, false)
    }
}

/// The style `encoder.node` asks the emitter for a scalar in.
pub(crate) fn requested_scalar_style(node: &Node, force_quoting: bool) -> u8 {
    if node.style.has(Style::DOUBLE_QUOTED) {
        scalar_style::DOUBLE_QUOTED
    } else if node.style.has(Style::SINGLE_QUOTED) {
        scalar_style::SINGLE_QUOTED
    } else if node.style.has(Style::LITERAL) {
        scalar_style::LITERAL
    } else if node.style.has(Style::FOLDED) {
        scalar_style::FOLDED
    } else if node.value.bytes().any(|b| b == b'\n') {
        scalar_style::LITERAL
    } else if force_quoting {
        scalar_style::DOUBLE_QUOTED
    } else {
        scalar_style::PLAIN
    }
}

/// Encode one node (a document or a bare root) with the given indentation
/// and sequence style, as kyaml writes a resource: `compact` is
/// `CompactSeqIndent()`.
pub fn to_string(node: &Node, indent: usize, compact: bool) -> Result<String, EmitError> {
    let mut encoder = Encoder::new();
    encoder.set_indent(indent);
    encoder.set_compact_seq_indent(compact);
    encoder.encode(node)?;
    let out = encoder.finish()?;
    String::from_utf8(out).map_err(|_| EmitError {
        problem: "emitted invalid UTF-8".to_string(),
    })
}

/// go-yaml's zero `Node{}` (`Kind == 0 && IsZero()`), which encodes as
/// `null`. Rust has no kind 0: a node equal to `Node::default()` (a
/// document with nothing in it) plays that part.
fn is_zero(node: &Node) -> bool {
    node.kind == Kind::Document
        && node.content.is_empty()
        && node.style == Style::NONE
        && node.tag.is_empty()
        && node.value.is_empty()
        && node.anchor().is_empty()
        && node.head_comment().is_empty()
        && node.line_comment().is_empty()
        && node.foot_comment().is_empty()
        && node.line == 0
        && node.column == 0
}

/// An event of type `typ` with nothing else set.
fn event<'a>(typ: EventType) -> EventRef<'a> {
    EventRef {
        typ,
        ..EventRef::default()
    }
}

/// An implicit DOCUMENT-START.
fn document_start<'a>() -> EventRef<'a> {
    EventRef {
        implicit: true,
        ..event(EventType::DocumentStart)
    }
}

/// An implicit DOCUMENT-END.
fn document_end<'a>() -> EventRef<'a> {
    EventRef {
        implicit: true,
        ..event(EventType::DocumentEnd)
    }
}

/// `[]byte(longTag(tag))`: borrowed unless the tag is a `!!` short form.
fn long_tag_bytes(tag: &str) -> Cow<'_, [u8]> {
    match long_tag(tag) {
        Cow::Borrowed(tag) => Cow::Borrowed(tag.as_bytes()),
        Cow::Owned(tag) => Cow::Owned(tag.into_bytes()),
    }
}
