// Copyright (c) 2011-2019 Canonical Ltd
// Copyright (c) 2006-2010 Kirill Simonov
//
// Permission is hereby granted, free of charge, to any person obtaining a copy of
// this software and associated documentation files (the "Software"), to deal in
// the Software without restriction, including without limitation the rights to
// use, copy, modify, merge, publish, distribute, sublicense, and/or sell copies
// of the Software, and to permit persons to whom the Software is furnished to do
// so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.

//! The node states of go-yaml v3's `emitterc.go`: flow and block
//! sequence items and mapping keys and values (with kyaml's compact
//! sequence indent), `yaml_emitter_emit_node` and the alias, scalar,
//! sequence-start and mapping-start emitters, and the look-ahead checks
//! (`check_empty_sequence`, `check_empty_mapping`, `check_simple_key`).

use super::{yaml_emitter_set_emitter_error, EmitResult, Emitter, State};
use crate::event::{collection_style, EventRef, EventType};

impl Emitter {
    /// Whether a line, foot or tail comment is pending.
    #[inline]
    pub(super) fn has_trailing_comments(&self) -> bool {
        self.line_comment.len() + self.foot_comment.len() + self.tail_comment.len() > 0
    }

    /// Expect a flow item node.
    pub(super) fn emit_flow_sequence_item(
        &mut self,
        event: &EventRef<'_>,
        first: bool,
        trail: bool,
    ) -> EmitResult {
        if first {
            self.write_indicator(b"[", true, true, false);
            self.increase_indent(true, false)?;
            self.flow_level += 1;
        }

        if event.typ == EventType::SequenceEnd {
            if self.canonical && !first && !trail {
                self.write_indicator(b",", false, false, false);
            }
            self.flow_level -= 1;
            self.pop_indent();
            if self.column == 0 || self.canonical && !first {
                self.write_indent();
            }
            self.write_indicator(b"]", false, false, false);
            self.process_line_comment();
            self.process_foot_comment();
            self.pop_state();
            return Ok(());
        }

        if !first && !trail {
            self.write_indicator(b",", false, false, false);
        }

        self.process_head_comment();
        if self.column == 0 {
            self.write_indent();
        }

        if self.canonical || self.column > self.best_width {
            self.write_indent();
        }
        if self.has_trailing_comments() {
            self.states.push(State::FlowSequenceTrailItem);
        } else {
            self.states.push(State::FlowSequenceItem);
        }
        self.emit_node(event, false, true, false, false)?;
        if self.has_trailing_comments() {
            self.write_indicator(b",", false, false, false);
        }
        self.process_line_comment();
        self.process_foot_comment();
        Ok(())
    }

    /// Expect a flow key node.
    pub(super) fn emit_flow_mapping_key(
        &mut self,
        event: &EventRef<'_>,
        first: bool,
        trail: bool,
    ) -> EmitResult {
        if first {
            self.write_indicator(b"{", true, true, false);
            self.increase_indent(true, false)?;
            self.flow_level += 1;
        }

        if event.typ == EventType::MappingEnd {
            if (self.canonical
                || self.head_comment.len() + self.foot_comment.len() + self.tail_comment.len() > 0)
                && !first
                && !trail
            {
                self.write_indicator(b",", false, false, false);
            }
            self.process_head_comment();
            self.flow_level -= 1;
            self.pop_indent();
            if self.canonical && !first {
                self.write_indent();
            }
            self.write_indicator(b"}", false, false, false);
            self.process_line_comment();
            self.process_foot_comment();
            self.pop_state();
            return Ok(());
        }

        if !first && !trail {
            self.write_indicator(b",", false, false, false);
        }

        self.process_head_comment();

        if self.column == 0 {
            self.write_indent();
        }

        if self.canonical || self.column > self.best_width {
            self.write_indent();
        }

        if !self.canonical && self.check_simple_key() {
            self.states.push(State::FlowMappingSimpleValue);
            return self.emit_node(event, false, false, true, true);
        }
        self.write_indicator(b"?", true, false, false);
        self.states.push(State::FlowMappingValue);
        self.emit_node(event, false, false, true, false)
    }

    /// Expect a flow value node.
    pub(super) fn emit_flow_mapping_value(
        &mut self,
        event: &EventRef<'_>,
        simple: bool,
    ) -> EmitResult {
        if simple {
            self.write_indicator(b":", false, false, false);
        } else {
            if self.canonical || self.column > self.best_width {
                self.write_indent();
            }
            self.write_indicator(b":", true, false, false);
        }
        if self.has_trailing_comments() {
            self.states.push(State::FlowMappingTrailKey);
        } else {
            self.states.push(State::FlowMappingKey);
        }
        self.emit_node(event, false, false, true, false)?;
        if self.has_trailing_comments() {
            self.write_indicator(b",", false, false, false);
        }
        self.process_line_comment();
        self.process_foot_comment();
        Ok(())
    }

    /// Expect a block item node.
    pub(super) fn emit_block_sequence_item(
        &mut self,
        event: &EventRef<'_>,
        first: bool,
    ) -> EmitResult {
        if first {
            let seq = self.mapping_context
                && (self.column == 0 || !self.indention)
                && self.compact_sequence_indent;
            self.increase_indent_compact(false, false, seq)?;
        }
        if event.typ == EventType::SequenceEnd {
            self.pop_indent();
            self.pop_state();
            return Ok(());
        }
        self.process_head_comment();
        self.write_indent();
        self.write_indicator(b"-", true, false, true);
        self.states.push(State::BlockSequenceItem);
        self.emit_node(event, false, true, false, false)?;
        self.process_line_comment();
        self.process_foot_comment();
        Ok(())
    }

    /// Expect a block key node.
    pub(super) fn emit_block_mapping_key(
        &mut self,
        event: &EventRef<'_>,
        first: bool,
    ) -> EmitResult {
        if first {
            self.increase_indent(false, false)?;
        }
        self.process_head_comment();
        if event.typ == EventType::MappingEnd {
            self.pop_indent();
            self.pop_state();
            return Ok(());
        }
        self.write_indent();
        if !self.line_comment.is_empty() {
            // [Go] A line comment was provided for the key. That's unusual as the
            //      scanner associates line comments with the value. Either way,
            //      save the line comment and render it appropriately later.
            self.key_line_comment = std::mem::take(&mut self.line_comment);
        }
        if self.check_simple_key() {
            self.states.push(State::BlockMappingSimpleValue);
            return self.emit_node(event, false, false, true, true);
        }
        self.write_indicator(b"?", true, false, true);
        self.states.push(State::BlockMappingValue);
        self.emit_node(event, false, false, true, false)
    }

    /// Expect a block value node.
    pub(super) fn emit_block_mapping_value(
        &mut self,
        event: &EventRef<'_>,
        simple: bool,
    ) -> EmitResult {
        if simple {
            self.write_indicator(b":", false, false, false);
        } else {
            self.write_indent();
            self.write_indicator(b":", true, false, true);
        }
        if !self.key_line_comment.is_empty() {
            // [Go] Line comments are generally associated with the value, but when there's
            //      no value on the same line as a mapping key they end up attached to the
            //      key itself.
            if event.typ == EventType::Scalar {
                if self.line_comment.is_empty() {
                    // A scalar is coming and it has no line comments by itself yet,
                    // so just let it handle the line comment as usual. If it has a
                    // line comment, we can't have both so the one from the key is lost.
                    self.line_comment = std::mem::take(&mut self.key_line_comment);
                }
            } else if event.style != collection_style::FLOW
                && (event.typ == EventType::MappingStart || event.typ == EventType::SequenceStart)
            {
                // An indented block follows, so write the comment right now.
                std::mem::swap(&mut self.line_comment, &mut self.key_line_comment);
                self.process_line_comment();
                std::mem::swap(&mut self.line_comment, &mut self.key_line_comment);
            }
        }
        self.states.push(State::BlockMappingKey);
        self.emit_node(event, false, false, true, false)?;
        self.process_line_comment();
        self.process_foot_comment();
        Ok(())
    }

    /// Expect a node.
    pub(super) fn emit_node(
        &mut self,
        event: &EventRef<'_>,
        root: bool,
        sequence: bool,
        mapping: bool,
        simple_key: bool,
    ) -> EmitResult {
        self.root_context = root;
        self.sequence_context = sequence;
        self.mapping_context = mapping;
        self.simple_key_context = simple_key;

        match event.typ {
            EventType::Alias => self.emit_alias(event),
            EventType::Scalar => self.emit_scalar(event),
            EventType::SequenceStart => self.emit_sequence_start(event),
            EventType::MappingStart => self.emit_mapping_start(event),
            other => yaml_emitter_set_emitter_error(format!(
                "expected SCALAR, SEQUENCE-START, MAPPING-START, or ALIAS, but got {}",
                other.name()
            )),
        }
    }

    /// Expect ALIAS.
    pub(super) fn emit_alias(&mut self, _event: &EventRef<'_>) -> EmitResult {
        self.process_anchor();
        self.pop_state();
        Ok(())
    }

    /// Expect SCALAR.
    pub(super) fn emit_scalar(&mut self, event: &EventRef<'_>) -> EmitResult {
        self.select_scalar_style(event)?;
        self.process_anchor();
        self.process_tag();
        self.increase_indent(true, false)?;
        self.process_scalar(event.value)?;
        self.pop_indent();
        self.pop_state();
        Ok(())
    }

    /// Expect SEQUENCE-START.
    pub(super) fn emit_sequence_start(&mut self, event: &EventRef<'_>) -> EmitResult {
        self.process_anchor();
        self.process_tag();
        if self.flow_level > 0
            || self.canonical
            || event.style == collection_style::FLOW
            || self.check_empty_sequence()
        {
            self.state = State::FlowSequenceFirstItem;
        } else {
            self.state = State::BlockSequenceFirstItem;
        }
        Ok(())
    }

    /// Expect MAPPING-START.
    pub(super) fn emit_mapping_start(&mut self, event: &EventRef<'_>) -> EmitResult {
        self.process_anchor();
        self.process_tag();
        if self.flow_level > 0
            || self.canonical
            || event.style == collection_style::FLOW
            || self.check_empty_mapping()
        {
            self.state = State::FlowMappingFirstKey;
        } else {
            self.state = State::BlockMappingFirstKey;
        }
        Ok(())
    }

    /// Check if the document content is an empty scalar.
    pub(super) fn check_empty_document(&self) -> bool {
        false // [Go] Huh?
    }

    /// Check if the next events represent an empty sequence.
    pub(super) fn check_empty_sequence(&self) -> bool {
        self.head == EventType::SequenceStart && self.next == EventType::SequenceEnd
    }

    /// Check if the next events represent an empty mapping.
    pub(super) fn check_empty_mapping(&self) -> bool {
        self.head == EventType::MappingStart && self.next == EventType::MappingEnd
    }

    /// Check if the next node can be expressed as a simple key.
    pub(super) fn check_simple_key(&self) -> bool {
        let mut length = 0;
        match self.head {
            EventType::Alias => {
                length += self.anchor_data.anchor.len();
            }
            EventType::Scalar => {
                if self.scalar_data.multiline {
                    return false;
                }
                length += self.anchor_data.anchor.len()
                    + self.tag_data.handle.len()
                    + self.tag_data.suffix.len()
                    + self.scalar_data.length;
            }
            EventType::SequenceStart => {
                if !self.check_empty_sequence() {
                    return false;
                }
                length += self.anchor_data.anchor.len()
                    + self.tag_data.handle.len()
                    + self.tag_data.suffix.len();
            }
            EventType::MappingStart => {
                if !self.check_empty_mapping() {
                    return false;
                }
                length += self.anchor_data.anchor.len()
                    + self.tag_data.handle.len()
                    + self.tag_data.suffix.len();
            }
            _ => return false,
        }
        length <= 128
    }
}
