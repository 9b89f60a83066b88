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

//! The parse-side vocabulary of go-yaml v3's `yamlh.go`: tokens, simple keys,
//! the comment records the scanner queues for the parser, parser states and
//! error kinds. A port of go-yaml v3 (MIT/Apache-2.0, Canonical Ltd / Kirill
//! Simonov); names follow the Go source.

use super::event::Mark;

/// `yaml_encoding_t`: the input encoding.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// Not determined yet.
    #[default]
    Any,
    /// UTF-8 (with or without BOM).
    Utf8,
    /// UTF-16 little endian (with BOM).
    Utf16Le,
    /// UTF-16 big endian (with BOM).
    Utf16Be,
}

/// `yaml_error_type_t`: which stage failed. The discriminants are go-yaml's
/// (the oracle prints them as numbers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ErrorType {
    /// No error.
    #[default]
    None = 0,
    /// Cannot allocate memory (unused).
    Memory = 1,
    /// Cannot read or decode the input stream.
    Reader = 2,
    /// Cannot scan the input stream.
    Scanner = 3,
    /// Cannot parse the input stream.
    Parser = 4,
    /// Cannot compose a document (the decoder's own failures).
    Composer = 5,
}

/// `yaml_token_type_t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum TokenType {
    #[default]
    NoToken,
    StreamStart,
    StreamEnd,
    VersionDirective,
    TagDirective,
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowSequenceEnd,
    FlowMappingStart,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias,
    Anchor,
    Tag,
    Scalar,
}

impl TokenType {
    /// go-yaml's `yaml_token_type_t.String()`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            TokenType::NoToken => "yaml_NO_TOKEN",
            TokenType::StreamStart => "yaml_STREAM_START_TOKEN",
            TokenType::StreamEnd => "yaml_STREAM_END_TOKEN",
            TokenType::VersionDirective => "yaml_VERSION_DIRECTIVE_TOKEN",
            TokenType::TagDirective => "yaml_TAG_DIRECTIVE_TOKEN",
            TokenType::DocumentStart => "yaml_DOCUMENT_START_TOKEN",
            TokenType::DocumentEnd => "yaml_DOCUMENT_END_TOKEN",
            TokenType::BlockSequenceStart => "yaml_BLOCK_SEQUENCE_START_TOKEN",
            TokenType::BlockMappingStart => "yaml_BLOCK_MAPPING_START_TOKEN",
            TokenType::BlockEnd => "yaml_BLOCK_END_TOKEN",
            TokenType::FlowSequenceStart => "yaml_FLOW_SEQUENCE_START_TOKEN",
            TokenType::FlowSequenceEnd => "yaml_FLOW_SEQUENCE_END_TOKEN",
            TokenType::FlowMappingStart => "yaml_FLOW_MAPPING_START_TOKEN",
            TokenType::FlowMappingEnd => "yaml_FLOW_MAPPING_END_TOKEN",
            TokenType::BlockEntry => "yaml_BLOCK_ENTRY_TOKEN",
            TokenType::FlowEntry => "yaml_FLOW_ENTRY_TOKEN",
            TokenType::Key => "yaml_KEY_TOKEN",
            TokenType::Value => "yaml_VALUE_TOKEN",
            TokenType::Alias => "yaml_ALIAS_TOKEN",
            TokenType::Anchor => "yaml_ANCHOR_TOKEN",
            TokenType::Tag => "yaml_TAG_TOKEN",
            TokenType::Scalar => "yaml_SCALAR_TOKEN",
        }
    }
}

/// `yaml_token_t`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Token {
    /// The token type.
    pub(crate) typ: TokenType,
    /// The start of the token.
    pub(crate) start_mark: Mark,
    /// The end of the token.
    pub(crate) end_mark: Mark,
    /// The stream encoding (STREAM-START).
    #[allow(dead_code)]
    pub(crate) encoding: Encoding,
    /// Alias/anchor/scalar value, tag handle, or tag directive handle.
    pub(crate) value: Vec<u8>,
    /// The tag suffix (TAG).
    pub(crate) suffix: Vec<u8>,
    /// The tag directive prefix (TAG-DIRECTIVE).
    pub(crate) prefix: Vec<u8>,
    /// The scalar style (`scalar_style::*`).
    pub(crate) style: u8,
    /// The version directive major number.
    pub(crate) major: i8,
    /// The version directive minor number.
    pub(crate) minor: i8,
}

/// `yaml_simple_key_t`: a potential simple key.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SimpleKey {
    /// Is a simple key possible?
    pub(crate) possible: bool,
    /// Is a simple key required?
    pub(crate) required: bool,
    /// The number of the token.
    pub(crate) token_number: usize,
    /// The position mark.
    pub(crate) mark: Mark,
}

/// `yaml_comment_t`: a comment the scanner found, waiting to be attached to
/// the token at or after `token_mark`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Comment {
    /// Position where scanning for comments started.
    pub(crate) scan_mark: Mark,
    /// Position after which tokens will be associated with this comment.
    pub(crate) token_mark: Mark,
    /// Position of the '#' comment mark.
    pub(crate) start_mark: Mark,
    /// Position where the comment terminated.
    pub(crate) end_mark: Mark,
    pub(crate) head: Vec<u8>,
    pub(crate) line: Vec<u8>,
    pub(crate) foot: Vec<u8>,
}

/// `yaml_parser_state_t`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum ParserState {
    #[default]
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    BlockNode,
    #[allow(dead_code)]
    BlockNodeOrIndentlessSequence,
    #[allow(dead_code)]
    FlowNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}
