//
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

//! The parser: tokens to events, with go-yaml's comment moves between
//! events (head comments split off the document, stem comments of nested
//! collections, line and foot comments). Also home of the parser state
//! (`yaml_parser_t`), which the reader and scanner share. A port of go-yaml
//! v3's `parserc.go` and the parse side of `yamlh.go` (MIT/Apache-2.0,
//! Canonical Ltd / Kirill Simonov), function by function.
//!
//! The grammar (from the Go source):
//!
//! ```text
//! stream               ::= STREAM-START implicit_document? explicit_document* STREAM-END
//! implicit_document    ::= block_node DOCUMENT-END*
//! explicit_document    ::= DIRECTIVE* DOCUMENT-START block_node? DOCUMENT-END*
//! block_node_or_indentless_sequence    ::=
//!                          ALIAS
//!                          | properties (block_content | indentless_block_sequence)?
//!                          | block_content
//!                          | indentless_block_sequence
//! block_node           ::= ALIAS
//!                          | properties block_content?
//!                          | block_content
//! flow_node            ::= ALIAS
//!                          | properties flow_content?
//!                          | flow_content
//! properties           ::= TAG ANCHOR? | ANCHOR TAG?
//! block_content        ::= block_collection | flow_collection | SCALAR
//! flow_content         ::= flow_collection | SCALAR
//! block_collection     ::= block_sequence | block_mapping
//! flow_collection      ::= flow_sequence | flow_mapping
//! block_sequence       ::= BLOCK-SEQUENCE-START (BLOCK-ENTRY block_node?)* BLOCK-END
//! indentless_sequence  ::= (BLOCK-ENTRY block_node?)+
//! block_mapping        ::= BLOCK-MAPPING_START
//!                          ((KEY block_node_or_indentless_sequence?)?
//!                          (VALUE block_node_or_indentless_sequence?)?)*
//!                          BLOCK-END
//! flow_sequence        ::= FLOW-SEQUENCE-START
//!                          (flow_sequence_entry FLOW-ENTRY)*
//!                          flow_sequence_entry?
//!                          FLOW-SEQUENCE-END
//! flow_sequence_entry  ::= flow_node | KEY flow_node? (VALUE flow_node?)?
//! flow_mapping         ::= FLOW-MAPPING-START
//!                          (flow_mapping_entry FLOW-ENTRY)*
//!                          flow_mapping_entry?
//!                          FLOW-MAPPING-END
//! flow_mapping_entry   ::= flow_node | KEY flow_node? (VALUE flow_node?)?
//! ```

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::event::{
    collection_style, scalar_style, Event, EventType, Mark, TagDirective, VersionDirective,
};
use super::reader::ReaderError;
use super::token::{Comment, Encoding, ErrorType, ParserState, SimpleKey, Token, TokenType};

/// A cheap hasher for the token-number keys of `simple_keys_by_tok`.
#[derive(Default)]
pub(crate) struct TokenNumberHasher(u64);

impl Hasher for TokenNumberHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | b as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_usize(&mut self, n: usize) {
        self.0 = (n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// The parser state (`yaml_parser_t`): reader, scanner and parser fields.
#[derive(Default)]
pub struct Parser {
    // Error handling
    /// Error type.
    pub(crate) error: ErrorType,
    /// Error description.
    pub(crate) problem: String,
    /// The byte about which the problem occurred.
    pub(crate) problem_offset: usize,
    pub(crate) problem_value: i64,
    pub(crate) problem_mark: Mark,
    /// The error context.
    pub(crate) context: String,
    pub(crate) context_mark: Mark,

    // Reader stuff
    /// The decoded input followed by zero padding.
    pub(crate) buffer: Vec<u8>,
    /// The current position of the buffer.
    pub(crate) buffer_pos: usize,
    /// go-yaml's decode frontier: characters decoded so far, including the
    /// NULs appended at EOF (`unread` is `frontier - mark.index`).
    pub(crate) frontier: usize,
    /// Cumulative character counts at the end of each raw input chunk.
    pub(crate) chunk_ends: Vec<usize>,
    /// The next chunk to decode.
    pub(crate) next_chunk: usize,
    /// Whether go-yaml saw EOF before decoding anything (input under 3 bytes).
    pub(crate) eof_early: bool,
    /// Where in `buffer` the last refill happened (go-yaml's buffer start).
    pub(crate) refill_pos: usize,
    /// The decoding error go-yaml hits after the last clean chunk, if any.
    pub(crate) reader_error: Option<ReaderError>,
    /// The number of line breaks since last non-break/non-blank character.
    pub(crate) newlines: usize,
    /// The input encoding.
    pub(crate) encoding: Encoding,
    /// The mark of the current position.
    pub(crate) mark: Mark,

    // Comments
    /// The current head comments.
    pub(crate) head_comment: Vec<u8>,
    /// The current line comments.
    pub(crate) line_comment: Vec<u8>,
    /// The current foot comments.
    pub(crate) foot_comment: Vec<u8>,
    /// Foot comment that happens at the end of a block.
    pub(crate) tail_comment: Vec<u8>,
    /// Comment in item preceding a nested structure (list inside list item, etc).
    pub(crate) stem_comment: Vec<u8>,
    /// The folded comments for all parsed tokens.
    pub(crate) comments: Vec<Comment>,
    pub(crate) comments_head: usize,

    // Scanner stuff
    /// Have we started to scan the input stream?
    pub(crate) stream_start_produced: bool,
    /// Have we reached the end of the input stream?
    pub(crate) stream_end_produced: bool,
    /// The number of unclosed '[' and '{' indicators.
    pub(crate) flow_level: usize,
    /// The tokens queue.
    pub(crate) tokens: Vec<Token>,
    /// The head of the tokens queue.
    pub(crate) tokens_head: usize,
    /// The number of tokens fetched from the queue.
    pub(crate) tokens_parsed: usize,
    /// Does the tokens queue contain a token ready for dequeueing.
    pub(crate) token_available: bool,
    /// The current indentation level.
    pub(crate) indent: isize,
    /// The indentation levels stack.
    pub(crate) indents: Vec<isize>,
    /// May a simple key occur at the current position?
    pub(crate) simple_key_allowed: bool,
    /// The stack of simple keys.
    pub(crate) simple_keys: Vec<SimpleKey>,
    /// possible simple_key indexes indexed by token_number
    pub(crate) simple_keys_by_tok: HashMap<usize, usize, BuildHasherDefault<TokenNumberHasher>>,

    // Parser stuff
    /// The current parser state.
    pub(crate) state: ParserState,
    /// The parser states stack.
    pub(crate) states: Vec<ParserState>,
    /// The stack of marks.
    pub(crate) marks: Vec<Mark>,
    /// The list of TAG directives.
    pub(crate) tag_directives: Vec<TagDirective>,
}

/// go-yaml's `default_tag_directives`.
fn default_tag_directives() -> [TagDirective; 2] {
    [
        TagDirective {
            handle: b"!".to_vec(),
            prefix: b"!".to_vec(),
        },
        TagDirective {
            handle: b"!!".to_vec(),
            prefix: b"tag:yaml.org,2002:".to_vec(),
        },
    ]
}

impl Parser {
    /// A parser over `input` (`yaml_parser_initialize` followed by
    /// `yaml_parser_set_input_string`).
    pub fn new(input: &[u8]) -> Parser {
        let mut parser = Parser::default();
        parser.set_input(input);
        parser
    }

    /// The next event (`yaml_parser_parse`), or go-yaml's error for the
    /// input so far. After `StreamEnd` (or an error) go-yaml hands out empty
    /// events (`EventType::None`); so does this.
    pub fn next_event(&mut self) -> Result<Event, super::decode::YamlError> {
        let mut event = Event::default();
        if !self.yaml_parser_parse(&mut event) {
            return Err(super::decode::YamlError::from_parser(self));
        }
        Ok(event)
    }

    /// The head token (the one `peek_token` returned).
    #[inline]
    fn tok(&self) -> &Token {
        &self.tokens[self.tokens_head]
    }

    /// Peek the next token in the token queue; false on error.
    fn peek_token(&mut self) -> bool {
        if self.token_available || self.yaml_parser_fetch_more_tokens() {
            let (typ, index) = {
                let t = self.tok();
                (t.typ, t.start_mark.index)
            };
            self.yaml_parser_unfold_comments(typ, index);
            return true;
        }
        false
    }

    /// yaml_parser_unfold_comments walks through the comments queue and joins all
    /// comments behind the position of the provided token into the respective
    /// top-level comment slices in the parser.
    fn yaml_parser_unfold_comments(&mut self, token_typ: TokenType, token_index: usize) {
        while self.comments_head < self.comments.len()
            && token_index as i64 >= self.comments[self.comments_head].token_mark.index as i64
        {
            let comment = &mut self.comments[self.comments_head];
            if !comment.head.is_empty() {
                if token_typ == TokenType::BlockEnd {
                    // No heads on ends, so keep comment.head for a follow up token.
                    break;
                }
                if !self.head_comment.is_empty() {
                    self.head_comment.push(b'\n');
                }
                self.head_comment.extend_from_slice(&comment.head);
            }
            if !comment.foot.is_empty() {
                if !self.foot_comment.is_empty() {
                    self.foot_comment.push(b'\n');
                }
                self.foot_comment.extend_from_slice(&comment.foot);
            }
            if !comment.line.is_empty() {
                if !self.line_comment.is_empty() {
                    self.line_comment.push(b'\n');
                }
                self.line_comment.extend_from_slice(&comment.line);
            }
            *comment = Comment::default();
            self.comments_head += 1;
        }
    }

    /// Remove the next token from the queue (must be called after peek_token).
    fn skip_token(&mut self) {
        self.token_available = false;
        self.tokens_parsed += 1;
        self.stream_end_produced = self.tokens[self.tokens_head].typ == TokenType::StreamEnd;
        self.tokens_head += 1;
    }

    /// Get the next event (`yaml_parser_parse`). Returns false on error.
    pub(crate) fn yaml_parser_parse(&mut self, event: &mut Event) -> bool {
        // Erase the event object.
        *event = Event::default();

        // No events after the end of the stream or error.
        if self.stream_end_produced
            || self.error != ErrorType::None
            || self.state == ParserState::End
        {
            return true;
        }

        // Generate the next event.
        self.yaml_parser_state_machine(event)
    }

    /// Set parser error.
    fn yaml_parser_set_parser_error(&mut self, problem: &str, problem_mark: Mark) -> bool {
        self.error = ErrorType::Parser;
        self.problem = problem.to_string();
        self.problem_mark = problem_mark;
        false
    }

    fn yaml_parser_set_parser_error_context(
        &mut self,
        context: &str,
        context_mark: Mark,
        problem: &str,
        problem_mark: Mark,
    ) -> bool {
        self.error = ErrorType::Parser;
        self.context = context.to_string();
        self.context_mark = context_mark;
        self.problem = problem.to_string();
        self.problem_mark = problem_mark;
        false
    }

    /// Pop the states stack into `state`.
    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(ParserState::End);
    }

    /// State dispatcher.
    fn yaml_parser_state_machine(&mut self, event: &mut Event) -> bool {
        match self.state {
            ParserState::StreamStart => self.yaml_parser_parse_stream_start(event),
            ParserState::ImplicitDocumentStart => {
                self.yaml_parser_parse_document_start(event, true)
            }
            ParserState::DocumentStart => self.yaml_parser_parse_document_start(event, false),
            ParserState::DocumentContent => self.yaml_parser_parse_document_content(event),
            ParserState::DocumentEnd => self.yaml_parser_parse_document_end(event),
            ParserState::BlockNode => self.yaml_parser_parse_node(event, true, false),
            ParserState::BlockNodeOrIndentlessSequence => {
                self.yaml_parser_parse_node(event, true, true)
            }
            ParserState::FlowNode => self.yaml_parser_parse_node(event, false, false),
            ParserState::BlockSequenceFirstEntry => {
                self.yaml_parser_parse_block_sequence_entry(event, true)
            }
            ParserState::BlockSequenceEntry => {
                self.yaml_parser_parse_block_sequence_entry(event, false)
            }
            ParserState::IndentlessSequenceEntry => {
                self.yaml_parser_parse_indentless_sequence_entry(event)
            }
            ParserState::BlockMappingFirstKey => {
                self.yaml_parser_parse_block_mapping_key(event, true)
            }
            ParserState::BlockMappingKey => self.yaml_parser_parse_block_mapping_key(event, false),
            ParserState::BlockMappingValue => self.yaml_parser_parse_block_mapping_value(event),
            ParserState::FlowSequenceFirstEntry => {
                self.yaml_parser_parse_flow_sequence_entry(event, true)
            }
            ParserState::FlowSequenceEntry => {
                self.yaml_parser_parse_flow_sequence_entry(event, false)
            }
            ParserState::FlowSequenceEntryMappingKey => {
                self.yaml_parser_parse_flow_sequence_entry_mapping_key(event)
            }
            ParserState::FlowSequenceEntryMappingValue => {
                self.yaml_parser_parse_flow_sequence_entry_mapping_value(event)
            }
            ParserState::FlowSequenceEntryMappingEnd => {
                self.yaml_parser_parse_flow_sequence_entry_mapping_end(event)
            }
            ParserState::FlowMappingFirstKey => {
                self.yaml_parser_parse_flow_mapping_key(event, true)
            }
            ParserState::FlowMappingKey => self.yaml_parser_parse_flow_mapping_key(event, false),
            ParserState::FlowMappingValue => {
                self.yaml_parser_parse_flow_mapping_value(event, false)
            }
            ParserState::FlowMappingEmptyValue => {
                self.yaml_parser_parse_flow_mapping_value(event, true)
            }
            ParserState::End => true,
        }
    }

    // Parse the production:
    // stream   ::= STREAM-START implicit_document? explicit_document* STREAM-END
    //              ************
    fn yaml_parser_parse_stream_start(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        let token = self.tok();
        if token.typ != TokenType::StreamStart {
            let m = token.start_mark;
            return self.yaml_parser_set_parser_error("did not find expected <stream-start>", m);
        }
        let token = self.tok();
        *event = Event {
            typ: EventType::StreamStart,
            start_mark: token.start_mark,
            end_mark: token.end_mark,
            ..Event::default()
        };
        self.state = ParserState::ImplicitDocumentStart;
        self.skip_token();
        true
    }

    // Parse the productions:
    // implicit_document    ::= block_node DOCUMENT-END*
    //                          *
    // explicit_document    ::= DIRECTIVE* DOCUMENT-START block_node? DOCUMENT-END*
    //                          *************************
    fn yaml_parser_parse_document_start(&mut self, event: &mut Event, implicit: bool) -> bool {
        if !self.peek_token() {
            return false;
        }

        // Parse extra document end indicators.
        if !implicit {
            while self.tok().typ == TokenType::DocumentEnd {
                self.skip_token();
                if !self.peek_token() {
                    return false;
                }
            }
        }

        let typ = self.tok().typ;
        if implicit
            && typ != TokenType::VersionDirective
            && typ != TokenType::TagDirective
            && typ != TokenType::DocumentStart
            && typ != TokenType::StreamEnd
        {
            // Parse an implicit document.
            if !self.yaml_parser_process_directives(None, None) {
                return false;
            }
            self.states.push(ParserState::DocumentEnd);
            self.state = ParserState::BlockNode;

            let mut head_comment = Vec::new();
            if !self.head_comment.is_empty() {
                // [Go] Scan the header comment backwards, and if an empty line is found, break
                //      the header so the part before the last empty line goes into the
                //      document header, while the bottom of it goes into a follow up event.
                let hc = &self.head_comment;
                let mut i = hc.len() - 1;
                while i > 0 {
                    if hc[i] == b'\n' {
                        if i == hc.len() - 1 {
                            head_comment = hc[..i].to_vec();
                            self.head_comment = hc[i + 1..].to_vec();
                            break;
                        } else if hc[i - 1] == b'\n' {
                            head_comment = hc[..i - 1].to_vec();
                            self.head_comment = hc[i + 1..].to_vec();
                            break;
                        }
                    }
                    i -= 1;
                }
            }

            let token = self.tok();
            *event = Event {
                typ: EventType::DocumentStart,
                start_mark: token.start_mark,
                end_mark: token.end_mark,
                head_comment,
                ..Event::default()
            };
        } else if typ != TokenType::StreamEnd {
            // Parse an explicit document.
            let mut version_directive = None;
            let mut tag_directives = Vec::new();
            let start_mark = self.tok().start_mark;
            if !self.yaml_parser_process_directives(
                Some(&mut version_directive),
                Some(&mut tag_directives),
            ) {
                return false;
            }
            if !self.peek_token() {
                return false;
            }
            if self.tok().typ != TokenType::DocumentStart {
                let m = self.tok().start_mark;
                self.yaml_parser_set_parser_error("did not find expected <document start>", m);
                return false;
            }
            self.states.push(ParserState::DocumentEnd);
            self.state = ParserState::DocumentContent;
            let end_mark = self.tok().end_mark;

            *event = Event {
                typ: EventType::DocumentStart,
                start_mark,
                end_mark,
                version_directive,
                tag_directives,
                implicit: false,
                ..Event::default()
            };
            self.skip_token();
        } else {
            // Parse the stream end.
            self.state = ParserState::End;
            let token = self.tok();
            *event = Event {
                typ: EventType::StreamEnd,
                start_mark: token.start_mark,
                end_mark: token.end_mark,
                ..Event::default()
            };
            self.skip_token();
        }

        true
    }

    // Parse the productions:
    // explicit_document    ::= DIRECTIVE* DOCUMENT-START block_node? DOCUMENT-END*
    //                                                    ***********
    fn yaml_parser_parse_document_content(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }

        let typ = self.tok().typ;
        if typ == TokenType::VersionDirective
            || typ == TokenType::TagDirective
            || typ == TokenType::DocumentStart
            || typ == TokenType::DocumentEnd
            || typ == TokenType::StreamEnd
        {
            self.pop_state();
            let m = self.tok().start_mark;
            return self.yaml_parser_process_empty_scalar(event, m);
        }
        self.yaml_parser_parse_node(event, true, false)
    }

    // Parse the productions:
    // implicit_document    ::= block_node DOCUMENT-END*
    //                                     *************
    // explicit_document    ::= DIRECTIVE* DOCUMENT-START block_node? DOCUMENT-END*
    fn yaml_parser_parse_document_end(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }

        let start_mark = self.tok().start_mark;
        let mut end_mark = self.tok().start_mark;

        let mut implicit = true;
        if self.tok().typ == TokenType::DocumentEnd {
            end_mark = self.tok().end_mark;
            self.skip_token();
            implicit = false;
        }

        self.tag_directives.clear();

        self.state = ParserState::DocumentStart;
        *event = Event {
            typ: EventType::DocumentEnd,
            start_mark,
            end_mark,
            implicit,
            ..Event::default()
        };
        self.yaml_parser_set_event_comments(event);
        if !event.head_comment.is_empty() && event.foot_comment.is_empty() {
            event.foot_comment = std::mem::take(&mut event.head_comment);
        }
        true
    }

    fn yaml_parser_set_event_comments(&mut self, event: &mut Event) {
        event.head_comment = std::mem::take(&mut self.head_comment);
        event.line_comment = std::mem::take(&mut self.line_comment);
        event.foot_comment = std::mem::take(&mut self.foot_comment);
        self.tail_comment.clear();
        self.stem_comment.clear();
    }

    // Parse the productions:
    // block_node_or_indentless_sequence    ::=
    //                          ALIAS
    //                          *****
    //                          | properties (block_content | indentless_block_sequence)?
    //                            **********  *
    //                          | block_content | indentless_block_sequence
    //                            *
    // block_node           ::= ALIAS
    //                          *****
    //                          | properties block_content?
    //                            ********** *
    //                          | block_content
    //                            *
    // flow_node            ::= ALIAS
    //                          *****
    //                          | properties flow_content?
    //                            ********** *
    //                          | flow_content
    //                            *
    // properties           ::= TAG ANCHOR? | ANCHOR TAG?
    //                          *************************
    // block_content        ::= block_collection | flow_collection | SCALAR
    //                                                               ******
    // flow_content         ::= flow_collection | SCALAR
    //                                            ******
    fn yaml_parser_parse_node(
        &mut self,
        event: &mut Event,
        block: bool,
        indentless_sequence: bool,
    ) -> bool {
        if !self.peek_token() {
            return false;
        }

        if self.tok().typ == TokenType::Alias {
            self.pop_state();
            let head = self.tokens_head;
            let token = &mut self.tokens[head];
            *event = Event {
                typ: EventType::Alias,
                start_mark: token.start_mark,
                end_mark: token.end_mark,
                anchor: std::mem::take(&mut token.value),
                ..Event::default()
            };
            self.yaml_parser_set_event_comments(event);
            self.skip_token();
            return true;
        }

        let mut start_mark = self.tok().start_mark;
        let mut end_mark = self.tok().start_mark;

        let mut tag_token = false;
        let mut tag_handle = Vec::new();
        let mut tag_suffix = Vec::new();
        let mut anchor = Vec::new();
        let mut tag_mark = Mark::default();
        if self.tok().typ == TokenType::Anchor {
            let head = self.tokens_head;
            let token = &mut self.tokens[head];
            anchor = std::mem::take(&mut token.value);
            start_mark = token.start_mark;
            end_mark = token.end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            if self.tok().typ == TokenType::Tag {
                let head = self.tokens_head;
                let token = &mut self.tokens[head];
                tag_token = true;
                tag_handle = std::mem::take(&mut token.value);
                tag_suffix = std::mem::take(&mut token.suffix);
                tag_mark = token.start_mark;
                end_mark = token.end_mark;
                self.skip_token();
                if !self.peek_token() {
                    return false;
                }
            }
        } else if self.tok().typ == TokenType::Tag {
            let head = self.tokens_head;
            let token = &mut self.tokens[head];
            tag_token = true;
            tag_handle = std::mem::take(&mut token.value);
            tag_suffix = std::mem::take(&mut token.suffix);
            start_mark = token.start_mark;
            tag_mark = token.start_mark;
            end_mark = token.end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            if self.tok().typ == TokenType::Anchor {
                let head = self.tokens_head;
                let token = &mut self.tokens[head];
                anchor = std::mem::take(&mut token.value);
                end_mark = token.end_mark;
                self.skip_token();
                if !self.peek_token() {
                    return false;
                }
            }
        }

        let mut tag = Vec::new();
        if tag_token {
            if tag_handle.is_empty() {
                tag = tag_suffix;
            } else {
                for directive in &self.tag_directives {
                    if directive.handle == tag_handle {
                        tag = directive.prefix.clone();
                        tag.extend_from_slice(&tag_suffix);
                        break;
                    }
                }
                if tag.is_empty() {
                    self.yaml_parser_set_parser_error_context(
                        "while parsing a node",
                        start_mark,
                        "found undefined tag handle",
                        tag_mark,
                    );
                    return false;
                }
            }
        }

        let implicit = tag.is_empty();
        let typ = self.tok().typ;
        if indentless_sequence && typ == TokenType::BlockEntry {
            end_mark = self.tok().end_mark;
            self.state = ParserState::IndentlessSequenceEntry;
            *event = Event {
                typ: EventType::SequenceStart,
                start_mark,
                end_mark,
                anchor,
                tag,
                implicit,
                style: collection_style::BLOCK,
                ..Event::default()
            };
            return true;
        }
        if typ == TokenType::Scalar {
            let mut plain_implicit = false;
            let mut quoted_implicit = false;
            let head = self.tokens_head;
            let token = &mut self.tokens[head];
            end_mark = token.end_mark;
            if (tag.is_empty() && token.style == scalar_style::PLAIN)
                || (tag.len() == 1 && tag[0] == b'!')
            {
                plain_implicit = true;
            } else if tag.is_empty() {
                quoted_implicit = true;
            }
            let value = std::mem::take(&mut token.value);
            let style = token.style;
            self.pop_state();

            *event = Event {
                typ: EventType::Scalar,
                start_mark,
                end_mark,
                anchor,
                tag,
                value,
                implicit: plain_implicit,
                quoted_implicit,
                style,
                ..Event::default()
            };
            self.yaml_parser_set_event_comments(event);
            self.skip_token();
            return true;
        }
        if typ == TokenType::FlowSequenceStart {
            // [Go] Some of the events below can be merged as they differ only on style.
            end_mark = self.tok().end_mark;
            self.state = ParserState::FlowSequenceFirstEntry;
            *event = Event {
                typ: EventType::SequenceStart,
                start_mark,
                end_mark,
                anchor,
                tag,
                implicit,
                style: collection_style::FLOW,
                ..Event::default()
            };
            self.yaml_parser_set_event_comments(event);
            return true;
        }
        if typ == TokenType::FlowMappingStart {
            end_mark = self.tok().end_mark;
            self.state = ParserState::FlowMappingFirstKey;
            *event = Event {
                typ: EventType::MappingStart,
                start_mark,
                end_mark,
                anchor,
                tag,
                implicit,
                style: collection_style::FLOW,
                ..Event::default()
            };
            self.yaml_parser_set_event_comments(event);
            return true;
        }
        if block && typ == TokenType::BlockSequenceStart {
            end_mark = self.tok().end_mark;
            self.state = ParserState::BlockSequenceFirstEntry;
            *event = Event {
                typ: EventType::SequenceStart,
                start_mark,
                end_mark,
                anchor,
                tag,
                implicit,
                style: collection_style::BLOCK,
                ..Event::default()
            };
            if !self.stem_comment.is_empty() {
                event.head_comment = std::mem::take(&mut self.stem_comment);
            }
            return true;
        }
        if block && typ == TokenType::BlockMappingStart {
            end_mark = self.tok().end_mark;
            self.state = ParserState::BlockMappingFirstKey;
            *event = Event {
                typ: EventType::MappingStart,
                start_mark,
                end_mark,
                anchor,
                tag,
                implicit,
                style: collection_style::BLOCK,
                ..Event::default()
            };
            if !self.stem_comment.is_empty() {
                event.head_comment = std::mem::take(&mut self.stem_comment);
            }
            return true;
        }
        if !anchor.is_empty() || !tag.is_empty() {
            self.pop_state();

            *event = Event {
                typ: EventType::Scalar,
                start_mark,
                end_mark,
                anchor,
                tag,
                implicit,
                quoted_implicit: false,
                style: scalar_style::PLAIN,
                ..Event::default()
            };
            return true;
        }

        let context = if block {
            "while parsing a block node"
        } else {
            "while parsing a flow node"
        };
        let m = self.tok().start_mark;
        self.yaml_parser_set_parser_error_context(
            context,
            start_mark,
            "did not find expected node content",
            m,
        );
        false
    }

    // Parse the productions:
    // block_sequence ::= BLOCK-SEQUENCE-START (BLOCK-ENTRY block_node?)* BLOCK-END
    //                    ********************  *********** *             *********
    fn yaml_parser_parse_block_sequence_entry(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            if !self.peek_token() {
                return false;
            }
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }

        if !self.peek_token() {
            return false;
        }

        if self.tok().typ == TokenType::BlockEntry {
            let mark = self.tok().end_mark;
            let prior_head_len = self.head_comment.len();
            self.skip_token();
            self.yaml_parser_split_stem_comment(prior_head_len);
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::BlockEntry && typ != TokenType::BlockEnd {
                self.states.push(ParserState::BlockSequenceEntry);
                return self.yaml_parser_parse_node(event, true, false);
            } else {
                self.state = ParserState::BlockSequenceEntry;
                return self.yaml_parser_process_empty_scalar(event, mark);
            }
        }
        if self.tok().typ == TokenType::BlockEnd {
            self.pop_state();
            self.marks.pop();

            let token = self.tok();
            *event = Event {
                typ: EventType::SequenceEnd,
                start_mark: token.start_mark,
                end_mark: token.end_mark,
                ..Event::default()
            };

            self.skip_token();
            return true;
        }

        let context_mark = self.marks.pop().unwrap_or_default();
        let m = self.tok().start_mark;
        self.yaml_parser_set_parser_error_context(
            "while parsing a block collection",
            context_mark,
            "did not find expected '-' indicator",
            m,
        )
    }

    // Parse the productions:
    // indentless_sequence  ::= (BLOCK-ENTRY block_node?)+
    //                           *********** *
    fn yaml_parser_parse_indentless_sequence_entry(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }

        if self.tok().typ == TokenType::BlockEntry {
            let mark = self.tok().end_mark;
            let prior_head_len = self.head_comment.len();
            self.skip_token();
            self.yaml_parser_split_stem_comment(prior_head_len);
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::BlockEntry
                && typ != TokenType::Key
                && typ != TokenType::Value
                && typ != TokenType::BlockEnd
            {
                self.states.push(ParserState::IndentlessSequenceEntry);
                return self.yaml_parser_parse_node(event, true, false);
            }
            self.state = ParserState::IndentlessSequenceEntry;
            return self.yaml_parser_process_empty_scalar(event, mark);
        }
        self.pop_state();

        let token = self.tok();
        *event = Event {
            typ: EventType::SequenceEnd,
            start_mark: token.start_mark,
            end_mark: token.start_mark, // [Go] Shouldn't this be token.end_mark?
            ..Event::default()
        };
        true
    }

    /// Split stem comment from head comment.
    ///
    /// When a sequence or map is found under a sequence entry, the former head comment
    /// is assigned to the underlying sequence or map as a whole, not the individual
    /// sequence or map entry as would be expected otherwise. To handle this case the
    /// previous head comment is moved aside as the stem comment.
    fn yaml_parser_split_stem_comment(&mut self, stem_len: usize) {
        if stem_len == 0 {
            return;
        }

        if !self.peek_token() {
            return;
        }
        let typ = self.tok().typ;
        if typ != TokenType::BlockSequenceStart && typ != TokenType::BlockMappingStart {
            return;
        }

        let stem_len = stem_len.min(self.head_comment.len());
        self.stem_comment = self.head_comment[..stem_len].to_vec();
        if self.head_comment.len() == stem_len {
            self.head_comment.clear();
        } else {
            // Copy suffix to prevent very strange bugs if someone ever appends
            // further bytes to the prefix in the stem_comment slice above.
            self.head_comment = self.head_comment[stem_len + 1..].to_vec();
        }
    }

    // Parse the productions:
    // block_mapping        ::= BLOCK-MAPPING_START
    //                          *******************
    //                          ((KEY block_node_or_indentless_sequence?)?
    //                            *** *
    //                          (VALUE block_node_or_indentless_sequence?)?)*
    //
    //                          BLOCK-END
    //                          *********
    fn yaml_parser_parse_block_mapping_key(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            if !self.peek_token() {
                return false;
            }
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }

        if !self.peek_token() {
            return false;
        }

        // [Go] A tail comment was left from the prior mapping value processed. Emit an event
        //      as it needs to be processed with that value and not the following key.
        if !self.tail_comment.is_empty() {
            let token = self.tok();
            *event = Event {
                typ: EventType::TailComment,
                start_mark: token.start_mark,
                end_mark: token.end_mark,
                ..Event::default()
            };
            event.foot_comment = std::mem::take(&mut self.tail_comment);
            return true;
        }

        if self.tok().typ == TokenType::Key {
            let mark = self.tok().end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::Key && typ != TokenType::Value && typ != TokenType::BlockEnd {
                self.states.push(ParserState::BlockMappingValue);
                return self.yaml_parser_parse_node(event, true, true);
            } else {
                self.state = ParserState::BlockMappingValue;
                return self.yaml_parser_process_empty_scalar(event, mark);
            }
        } else if self.tok().typ == TokenType::BlockEnd {
            self.pop_state();
            self.marks.pop();
            let token = self.tok();
            *event = Event {
                typ: EventType::MappingEnd,
                start_mark: token.start_mark,
                end_mark: token.end_mark,
                ..Event::default()
            };
            self.yaml_parser_set_event_comments(event);
            self.skip_token();
            return true;
        }

        let context_mark = self.marks.pop().unwrap_or_default();
        let m = self.tok().start_mark;
        self.yaml_parser_set_parser_error_context(
            "while parsing a block mapping",
            context_mark,
            "did not find expected key",
            m,
        )
    }

    // Parse the productions:
    // block_mapping        ::= BLOCK-MAPPING_START
    //
    //                          ((KEY block_node_or_indentless_sequence?)?
    //
    //                          (VALUE block_node_or_indentless_sequence?)?)*
    //                           ***** *
    //                          BLOCK-END
    fn yaml_parser_parse_block_mapping_value(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ == TokenType::Value {
            let mark = self.tok().end_mark;
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::Key && typ != TokenType::Value && typ != TokenType::BlockEnd {
                self.states.push(ParserState::BlockMappingKey);
                return self.yaml_parser_parse_node(event, true, true);
            }
            self.state = ParserState::BlockMappingKey;
            return self.yaml_parser_process_empty_scalar(event, mark);
        }
        self.state = ParserState::BlockMappingKey;
        let m = self.tok().start_mark;
        self.yaml_parser_process_empty_scalar(event, m)
    }

    // Parse the productions:
    // flow_sequence        ::= FLOW-SEQUENCE-START
    //                          *******************
    //                          (flow_sequence_entry FLOW-ENTRY)*
    //                           *                   **********
    //                          flow_sequence_entry?
    //                          *
    //                          FLOW-SEQUENCE-END
    //                          *****************
    // flow_sequence_entry  ::= flow_node | KEY flow_node? (VALUE flow_node?)?
    //                          *
    fn yaml_parser_parse_flow_sequence_entry(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            if !self.peek_token() {
                return false;
            }
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }
        if !self.peek_token() {
            return false;
        }
        if self.tok().typ != TokenType::FlowSequenceEnd {
            if !first {
                if self.tok().typ == TokenType::FlowEntry {
                    self.skip_token();
                    if !self.peek_token() {
                        return false;
                    }
                } else {
                    let context_mark = self.marks.pop().unwrap_or_default();
                    let m = self.tok().start_mark;
                    return self.yaml_parser_set_parser_error_context(
                        "while parsing a flow sequence",
                        context_mark,
                        "did not find expected ',' or ']'",
                        m,
                    );
                }
            }

            if self.tok().typ == TokenType::Key {
                self.state = ParserState::FlowSequenceEntryMappingKey;
                let token = self.tok();
                *event = Event {
                    typ: EventType::MappingStart,
                    start_mark: token.start_mark,
                    end_mark: token.end_mark,
                    implicit: true,
                    style: collection_style::FLOW,
                    ..Event::default()
                };
                self.skip_token();
                return true;
            } else if self.tok().typ != TokenType::FlowSequenceEnd {
                self.states.push(ParserState::FlowSequenceEntry);
                return self.yaml_parser_parse_node(event, false, false);
            }
        }

        self.pop_state();
        self.marks.pop();

        let token = self.tok();
        *event = Event {
            typ: EventType::SequenceEnd,
            start_mark: token.start_mark,
            end_mark: token.end_mark,
            ..Event::default()
        };
        self.yaml_parser_set_event_comments(event);

        self.skip_token();
        true
    }

    // Parse the productions:
    // flow_sequence_entry  ::= flow_node | KEY flow_node? (VALUE flow_node?)?
    //                                      *** *
    fn yaml_parser_parse_flow_sequence_entry_mapping_key(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        let typ = self.tok().typ;
        if typ != TokenType::Value
            && typ != TokenType::FlowEntry
            && typ != TokenType::FlowSequenceEnd
        {
            self.states.push(ParserState::FlowSequenceEntryMappingValue);
            return self.yaml_parser_parse_node(event, false, false);
        }
        let mark = self.tok().end_mark;
        self.skip_token();
        self.state = ParserState::FlowSequenceEntryMappingValue;
        self.yaml_parser_process_empty_scalar(event, mark)
    }

    // Parse the productions:
    // flow_sequence_entry  ::= flow_node | KEY flow_node? (VALUE flow_node?)?
    //                                                      ***** *
    fn yaml_parser_parse_flow_sequence_entry_mapping_value(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        // [Go] The start mark of the empty value comes from the token peeked
        //      first: the inner `token :=` shadows it.
        let mut empty_mark = self.tok().start_mark;
        if self.tok().typ == TokenType::Value {
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::FlowEntry && typ != TokenType::FlowSequenceEnd {
                self.states.push(ParserState::FlowSequenceEntryMappingEnd);
                return self.yaml_parser_parse_node(event, false, false);
            }
            // (the shadowed inner token is not used below)
            let _ = &mut empty_mark;
        }
        self.state = ParserState::FlowSequenceEntryMappingEnd;
        self.yaml_parser_process_empty_scalar(event, empty_mark)
    }

    // Parse the productions:
    // flow_sequence_entry  ::= flow_node | KEY flow_node? (VALUE flow_node?)?
    //                                                                      *
    fn yaml_parser_parse_flow_sequence_entry_mapping_end(&mut self, event: &mut Event) -> bool {
        if !self.peek_token() {
            return false;
        }
        self.state = ParserState::FlowSequenceEntry;
        let token = self.tok();
        *event = Event {
            typ: EventType::MappingEnd,
            start_mark: token.start_mark,
            end_mark: token.start_mark, // [Go] Shouldn't this be end_mark?
            ..Event::default()
        };
        true
    }

    // Parse the productions:
    // flow_mapping         ::= FLOW-MAPPING-START
    //                          ******************
    //                          (flow_mapping_entry FLOW-ENTRY)*
    //                           *                  **********
    //                          flow_mapping_entry?
    //                          ******************
    //                          FLOW-MAPPING-END
    //                          ****************
    // flow_mapping_entry   ::= flow_node | KEY flow_node? (VALUE flow_node?)?
    //                          *           *** *
    fn yaml_parser_parse_flow_mapping_key(&mut self, event: &mut Event, first: bool) -> bool {
        if first {
            if !self.peek_token() {
                return false;
            }
            let m = self.tok().start_mark;
            self.marks.push(m);
            self.skip_token();
        }

        if !self.peek_token() {
            return false;
        }

        if self.tok().typ != TokenType::FlowMappingEnd {
            if !first {
                if self.tok().typ == TokenType::FlowEntry {
                    self.skip_token();
                    if !self.peek_token() {
                        return false;
                    }
                } else {
                    let context_mark = self.marks.pop().unwrap_or_default();
                    let m = self.tok().start_mark;
                    return self.yaml_parser_set_parser_error_context(
                        "while parsing a flow mapping",
                        context_mark,
                        "did not find expected ',' or '}'",
                        m,
                    );
                }
            }

            if self.tok().typ == TokenType::Key {
                self.skip_token();
                if !self.peek_token() {
                    return false;
                }
                let typ = self.tok().typ;
                if typ != TokenType::Value
                    && typ != TokenType::FlowEntry
                    && typ != TokenType::FlowMappingEnd
                {
                    self.states.push(ParserState::FlowMappingValue);
                    return self.yaml_parser_parse_node(event, false, false);
                } else {
                    self.state = ParserState::FlowMappingValue;
                    let m = self.tok().start_mark;
                    return self.yaml_parser_process_empty_scalar(event, m);
                }
            } else if self.tok().typ != TokenType::FlowMappingEnd {
                self.states.push(ParserState::FlowMappingEmptyValue);
                return self.yaml_parser_parse_node(event, false, false);
            }
        }

        self.pop_state();
        self.marks.pop();
        let token = self.tok();
        *event = Event {
            typ: EventType::MappingEnd,
            start_mark: token.start_mark,
            end_mark: token.end_mark,
            ..Event::default()
        };
        self.yaml_parser_set_event_comments(event);
        self.skip_token();
        true
    }

    // Parse the productions:
    // flow_mapping_entry   ::= flow_node | KEY flow_node? (VALUE flow_node?)?
    //                                   *                  ***** *
    fn yaml_parser_parse_flow_mapping_value(&mut self, event: &mut Event, empty: bool) -> bool {
        if !self.peek_token() {
            return false;
        }
        if empty {
            self.state = ParserState::FlowMappingKey;
            let m = self.tok().start_mark;
            return self.yaml_parser_process_empty_scalar(event, m);
        }
        if self.tok().typ == TokenType::Value {
            self.skip_token();
            if !self.peek_token() {
                return false;
            }
            let typ = self.tok().typ;
            if typ != TokenType::FlowEntry && typ != TokenType::FlowMappingEnd {
                self.states.push(ParserState::FlowMappingKey);
                return self.yaml_parser_parse_node(event, false, false);
            }
        }
        self.state = ParserState::FlowMappingKey;
        let m = self.tok().start_mark;
        self.yaml_parser_process_empty_scalar(event, m)
    }

    /// Generate an empty scalar event.
    fn yaml_parser_process_empty_scalar(&mut self, event: &mut Event, mark: Mark) -> bool {
        *event = Event {
            typ: EventType::Scalar,
            start_mark: mark,
            end_mark: mark,
            implicit: true,
            style: scalar_style::PLAIN,
            ..Event::default()
        };
        true
    }

    /// Parse directives.
    fn yaml_parser_process_directives(
        &mut self,
        version_directive_ref: Option<&mut Option<VersionDirective>>,
        tag_directives_ref: Option<&mut Vec<TagDirective>>,
    ) -> bool {
        let mut version_directive: Option<VersionDirective> = None;
        let mut tag_directives: Vec<TagDirective> = Vec::new();

        if !self.peek_token() {
            return false;
        }

        loop {
            let typ = self.tok().typ;
            if typ != TokenType::VersionDirective && typ != TokenType::TagDirective {
                break;
            }
            if typ == TokenType::VersionDirective {
                let (m, major, minor) = {
                    let t = self.tok();
                    (t.start_mark, t.major, t.minor)
                };
                if version_directive.is_some() {
                    self.yaml_parser_set_parser_error("found duplicate %YAML directive", m);
                    return false;
                }
                if major != 1 || minor != 1 {
                    self.yaml_parser_set_parser_error("found incompatible YAML document", m);
                    return false;
                }
                version_directive = Some(VersionDirective { major, minor });
            } else {
                let (m, value) = {
                    let t = self.tok();
                    (
                        t.start_mark,
                        TagDirective {
                            handle: t.value.clone(),
                            prefix: t.prefix.clone(),
                        },
                    )
                };
                if !self.yaml_parser_append_tag_directive(value.clone(), false, m) {
                    return false;
                }
                tag_directives.push(value);
            }

            self.skip_token();
            if !self.peek_token() {
                return false;
            }
        }

        let m = self.tok().start_mark;
        for directive in default_tag_directives() {
            if !self.yaml_parser_append_tag_directive(directive, true, m) {
                return false;
            }
        }

        if let Some(r) = version_directive_ref {
            *r = version_directive;
        }
        if let Some(r) = tag_directives_ref {
            *r = tag_directives;
        }
        true
    }

    /// Append a tag directive to the directives stack.
    fn yaml_parser_append_tag_directive(
        &mut self,
        value: TagDirective,
        allow_duplicates: bool,
        mark: Mark,
    ) -> bool {
        for directive in &self.tag_directives {
            if value.handle == directive.handle {
                if allow_duplicates {
                    return true;
                }
                return self.yaml_parser_set_parser_error("found duplicate %TAG directive", mark);
            }
        }
        self.tag_directives.push(value);
        true
    }
}
