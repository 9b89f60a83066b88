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

//! Events to [`Node`] trees, and go-yaml's error messages. A port of the
//! `parser` type of go-yaml v3's `decode.go` (MIT/Apache-2.0, Canonical Ltd /
//! Kirill Simonov): `parse`, `node`, `document`, `alias`, `scalar`,
//! `sequence`, `mapping` (with their foot-comment fix-ups), the anchors map,
//! and `fail()`'s `yaml: line N: <problem>` formatting. The reflection-based
//! unmarshal into Go values is not ported: decoding into a `yaml.Node` is a
//! plain copy of the tree.
//!
//! go-yaml builds the tree recursively; this port keeps an explicit stack so
//! deeply nested input (up to the scanner's 10000 indentation and 10000
//! flow levels) cannot overflow the Rust stack.
//!
//! [`Decoder`] is `yaml.NewDecoder(r)`: each [`Decoder::next_document`] is
//! one `Decode(&node)` call and parses lazily, so an error in a later
//! document does not fail an earlier call. [`unmarshal`] is
//! `yaml.Unmarshal(in, &node)`.

use compact_str::CompactString;
use std::collections::HashSet;
use std::fmt;

use super::event::{collection_style, scalar_style, Event, EventType, Mark};
use super::node::{short_tag, tag, Kind, Node, Style};
use super::parser::Parser;
use super::resolve::resolve_tag;
use super::token::ErrorType;

/// A YAML error, carrying go-yaml's problem, context and marks; `Display`
/// prints exactly go-yaml's message (`yaml: line 3: could not find expected
/// ':'`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct YamlError(Box<ErrorDetails>);

#[derive(Clone, Debug, PartialEq, Eq)]
struct ErrorDetails {
    kind: ErrorType,
    problem: String,
    context: String,
    problem_mark: Mark,
    context_mark: Mark,
    problem_offset: usize,
    problem_value: i64,
    message: String,
}

impl YamlError {
    /// go-yaml's error message, `yaml: ...` (what `Display` prints).
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// Which stage failed (`Composer` for the decoder's own failures such as
    /// unknown anchors).
    pub fn kind(&self) -> ErrorType {
        self.0.kind
    }

    /// The problem, e.g. `could not find expected ':'`.
    pub fn problem(&self) -> &str {
        &self.0.problem
    }

    /// The context, e.g. `while scanning a simple key`, possibly empty.
    pub fn context(&self) -> &str {
        &self.0.context
    }

    /// 0-based (line, column) a diagnostic should point at: the offending
    /// token. That is where the problem was found (the token a parser did
    /// not expect, the tab, the `:`), except for errors found only past the
    /// mistake, which point at go-yaml's context: a key with no `:` (found
    /// on a later line), a quoted scalar never closed (found at the end),
    /// and a flow collection whose `,` or closing bracket is missing on a
    /// later line (an unclosed `[` or `{`). go-yaml's message counts its
    /// line from the context whenever there is one, so it can name the line
    /// of an enclosing mapping above the mistake.
    pub fn position(&self) -> (usize, usize) {
        let (context, problem) = (self.0.context.as_str(), self.0.problem.as_str());
        let at_context = match self.0.kind {
            ErrorType::Scanner => {
                !context.is_empty()
                    && matches!(
                        problem,
                        "could not find expected ':'" | "found unexpected end of stream"
                    )
            }
            ErrorType::Parser => {
                matches!(
                    context,
                    "while parsing a flow sequence" | "while parsing a flow mapping"
                ) && self.0.context_mark.line != self.0.problem_mark.line
            }
            _ => false,
        };
        let m = if at_context {
            self.0.context_mark
        } else {
            self.0.problem_mark
        };
        (m.line, m.column)
    }

    /// [`position`](YamlError::position) in `input`, the bytes that were
    /// decoded: a reader error (bad UTF-8, a control character) has no
    /// mark, only the byte offset of the bad input, which this turns into
    /// a line and a character column.
    pub fn position_in(&self, input: &[u8]) -> (usize, usize) {
        if self.0.kind != ErrorType::Reader {
            return self.position();
        }
        let offset = self.0.problem_offset.min(input.len());
        let before = &input[..offset];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = before.iter().filter(|&&b| b == b'\n').count();
        let column = String::from_utf8_lossy(&before[line_start..])
            .chars()
            .count();
        (line, column)
    }

    /// Where the problem is (0-based line and column, as in go-yaml).
    pub fn problem_mark(&self) -> Mark {
        self.0.problem_mark
    }

    /// Where the context starts (0-based).
    pub fn context_mark(&self) -> Mark {
        self.0.context_mark
    }

    /// For reader errors: the byte offset of the bad input.
    pub fn problem_offset(&self) -> usize {
        self.0.problem_offset
    }

    /// For reader errors: the offending value, or -1.
    pub fn problem_value(&self) -> i64 {
        self.0.problem_value
    }

    /// [`failf`](YamlError::failf) about what is at `mark`, for
    /// [`position`](YamlError::position) (go-yaml's message names no line).
    fn failf_at(msg: String, mark: Mark) -> YamlError {
        let mut e = YamlError::failf(msg);
        e.0.problem_mark = mark;
        e
    }

    /// `failf`: a decoder failure with a formatted message.
    fn failf(msg: String) -> YamlError {
        YamlError(Box::new(ErrorDetails {
            kind: ErrorType::Composer,
            message: format!("yaml: {msg}"),
            problem: msg,
            context: String::new(),
            problem_mark: Mark::default(),
            context_mark: Mark::default(),
            problem_offset: 0,
            problem_value: 0,
        }))
    }

    /// `(*parser).fail()`: the parser's recorded error, formatted.
    pub(crate) fn from_parser(p: &Parser) -> YamlError {
        let mut line = 0usize;
        if p.context_mark.line != 0 {
            line = p.context_mark.line;
            // Scanner errors don't iterate line before returning error
            if p.error == ErrorType::Scanner {
                line += 1;
            }
        } else if p.problem_mark.line != 0 {
            line = p.problem_mark.line;
            // Scanner errors don't iterate line before returning error
            if p.error == ErrorType::Scanner {
                line += 1;
            }
        }
        let where_ = if line != 0 {
            format!("line {line}: ")
        } else {
            String::new()
        };
        let msg = if !p.problem.is_empty() {
            p.problem.as_str()
        } else {
            "unknown problem parsing YAML content"
        };
        YamlError(Box::new(ErrorDetails {
            kind: p.error,
            problem: p.problem.clone(),
            context: p.context.clone(),
            problem_mark: p.problem_mark,
            context_mark: p.context_mark,
            problem_offset: p.problem_offset,
            problem_value: p.problem_value,
            message: format!("yaml: {where_}{msg}"),
        }))
    }
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for YamlError {}

/// Bytes from the parser as a `String` (always UTF-8 except for tags built
/// from `%`-escapes, which are converted lossily).
fn string(v: Vec<u8>) -> String {
    match String::from_utf8(v) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

fn str_of(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

/// A collection being built (a suspended `document()`, `sequence()` or
/// `mapping()` call of go-yaml's recursive decoder). The children of the
/// open sequences and mappings wait in one shared list, each collection's
/// from the index it holds here, and move into its `content` when it ends:
/// one allocation of the exact size per collection rather than a vector
/// regrown child by child, which also leaves the tree compact in memory
/// for whoever walks it next (the emitter).
enum Frame {
    Document(Node),
    Sequence(Node, usize),
    Mapping(Node, usize),
}

/// go-yaml's decode-side `parser`: events to nodes.
struct NodeParser {
    parser: Parser,
    event: Event,
    anchors: HashSet<String>,
    done_init: bool,
    /// The children of the open collections (see [`Frame`]); empty
    /// between documents, kept for its allocation.
    children: Vec<Node>,
}

impl NodeParser {
    fn new(input: &[u8]) -> NodeParser {
        NodeParser {
            parser: Parser::new(input),
            event: Event::default(),
            anchors: HashSet::new(),
            done_init: false,
            children: Vec::new(),
        }
    }

    fn init(&mut self) -> Result<(), YamlError> {
        if self.done_init {
            return Ok(());
        }
        self.expect(EventType::StreamStart)?;
        self.done_init = true;
        Ok(())
    }

    fn fail(&self) -> YamlError {
        YamlError::from_parser(&self.parser)
    }

    /// expect consumes an event from the event stream and
    /// checks that it's of the expected type.
    fn expect(&mut self, e: EventType) -> Result<(), YamlError> {
        if self.event.typ == EventType::None && !self.parser.yaml_parser_parse(&mut self.event) {
            return Err(self.fail());
        }
        if self.event.typ == EventType::StreamEnd {
            return Err(YamlError::failf(
                "attempted to go past the end of stream; corrupted value?".into(),
            ));
        }
        if self.event.typ != e {
            self.parser.problem = format!(
                "expected {} event but got {}",
                e.name(),
                self.event.typ.name()
            );
            return Err(self.fail());
        }
        self.event = Event::default();
        Ok(())
    }

    /// peek peeks at the next event in the event stream,
    /// puts the results into p.event and returns the event type.
    fn peek(&mut self) -> Result<EventType, YamlError> {
        if self.event.typ != EventType::None {
            return Ok(self.event.typ);
        }
        if !self.parser.yaml_parser_parse(&mut self.event) || self.parser.error != ErrorType::None {
            return Err(self.fail());
        }
        Ok(self.event.typ)
    }

    fn anchor(&mut self, n: &mut Node, anchor: &[u8]) {
        if !anchor.is_empty() {
            n.set_anchor(str_of(anchor));
            self.anchors.insert(n.anchor().to_string());
        }
    }

    fn node(&mut self, kind: Kind, default_tag: &str, tag: Vec<u8>, value: String) -> Node {
        let mut style = Style::NONE;
        let tag = if !tag.is_empty() && tag != b"!" {
            style = Style::TAGGED;
            CompactString::from(short_tag(&string(tag)))
        } else if !default_tag.is_empty() {
            CompactString::from(default_tag)
        } else if kind == Kind::Scalar {
            CompactString::const_new(resolve_tag(&value))
        } else {
            CompactString::default()
        };
        let mut node = Node {
            kind,
            style,
            tag,
            value: value.into(),
            content: Vec::new(),
            line: position(self.event.start_mark.line),
            column: position(self.event.start_mark.column),
            ..Node::default()
        };
        node.set_head_comment(string(std::mem::take(&mut self.event.head_comment)));
        node.set_line_comment(string(std::mem::take(&mut self.event.line_comment)));
        node.set_foot_comment(string(std::mem::take(&mut self.event.foot_comment)));
        node
    }

    fn alias(&mut self) -> Result<Node, YamlError> {
        let name = str_of(&self.event.anchor);
        let n = self.node(Kind::Alias, "", Vec::new(), name);
        if !self.anchors.contains(n.value.as_str()) {
            return Err(YamlError::failf_at(
                format!("unknown anchor '{}' referenced", n.value),
                self.event.start_mark,
            ));
        }
        self.expect(EventType::Alias)?;
        Ok(n)
    }

    fn scalar(&mut self) -> Result<Node, YamlError> {
        let parsed_style = self.event.style;
        let node_style = if parsed_style & scalar_style::DOUBLE_QUOTED != 0 {
            Style::DOUBLE_QUOTED
        } else if parsed_style & scalar_style::SINGLE_QUOTED != 0 {
            Style::SINGLE_QUOTED
        } else if parsed_style & scalar_style::LITERAL != 0 {
            Style::LITERAL
        } else if parsed_style & scalar_style::FOLDED != 0 {
            Style::FOLDED
        } else {
            Style::NONE
        };
        let node_value = string(std::mem::take(&mut self.event.value));
        let node_tag = std::mem::take(&mut self.event.tag);
        let default_tag = if node_style == Style::NONE {
            if node_value == "<<" {
                tag::MERGE
            } else {
                ""
            }
        } else {
            tag::STR
        };
        let mut n = self.node(Kind::Scalar, default_tag, node_tag, node_value);
        n.style |= node_style;
        let anchor = std::mem::take(&mut self.event.anchor);
        self.anchor(&mut n, &anchor);
        self.expect(EventType::Scalar)?;
        Ok(n)
    }

    fn sequence_start(&mut self) -> Result<Node, YamlError> {
        let t = std::mem::take(&mut self.event.tag);
        let mut n = self.node(Kind::Sequence, tag::SEQ, t, String::new());
        if self.event.style & collection_style::FLOW != 0 {
            n.style |= Style::FLOW;
        }
        let anchor = std::mem::take(&mut self.event.anchor);
        self.anchor(&mut n, &anchor);
        self.expect(EventType::SequenceStart)?;
        Ok(n)
    }

    fn mapping_start(&mut self) -> Result<Node, YamlError> {
        let t = std::mem::take(&mut self.event.tag);
        let mut n = self.node(Kind::Mapping, tag::MAP, t, String::new());
        if self.event.style & collection_style::FLOW != 0 {
            n.style |= Style::FLOW;
        }
        let anchor = std::mem::take(&mut self.event.anchor);
        self.anchor(&mut n, &anchor);
        self.expect(EventType::MappingStart)?;
        Ok(n)
    }

    /// `parse()`: the next node (a document at the top level), or `None` at
    /// the end of the stream.
    fn parse(&mut self) -> Result<Option<Node>, YamlError> {
        let mut children = std::mem::take(&mut self.children);
        let result = self.parse_into(&mut children);
        children.clear();
        self.children = children;
        result
    }

    /// [`parse`](NodeParser::parse), with the children of open collections
    /// in `children`.
    fn parse_into(&mut self, children: &mut Vec<Node>) -> Result<Option<Node>, YamlError> {
        self.init()?;
        let mut stack: Vec<Frame> = Vec::new();
        loop {
            // Start a node (the body of go-yaml's `parse()`).
            let mut done: Node = match self.peek()? {
                EventType::Scalar => self.scalar()?,
                EventType::Alias => self.alias()?,
                EventType::MappingStart => {
                    let n = self.mapping_start()?;
                    stack.push(Frame::Mapping(n, children.len()));
                    match self.collection_loop(&mut stack, children)? {
                        Some(n) => n,
                        None => continue,
                    }
                }
                EventType::SequenceStart => {
                    let n = self.sequence_start()?;
                    stack.push(Frame::Sequence(n, children.len()));
                    match self.collection_loop(&mut stack, children)? {
                        Some(n) => n,
                        None => continue,
                    }
                }
                EventType::DocumentStart => {
                    let n = self.node(Kind::Document, "", Vec::new(), String::new());
                    self.expect(EventType::DocumentStart)?;
                    stack.push(Frame::Document(n));
                    continue;
                }
                EventType::StreamEnd if stack.is_empty() => {
                    // Happens when attempting to decode an empty buffer.
                    return Ok(None);
                }
                EventType::TailComment => {
                    return Err(YamlError::failf(
                        "internal error: unexpected tail comment event (please report)".into(),
                    ));
                }
                other => {
                    return Err(YamlError::failf(format!(
                        "internal error: attempted to parse unknown event (please report): {}",
                        other.name()
                    )));
                }
            };
            // Hand the finished node to its parent, finishing parents as
            // they complete.
            loop {
                let Some(top) = stack.last_mut() else {
                    return Ok(Some(done));
                };
                match top {
                    Frame::Document(n) => {
                        // A document has one child: exactly that.
                        n.content = vec![done];
                        let mut n = match stack.pop() {
                            Some(Frame::Document(n)) => n,
                            _ => unreachable!("top frame is a document"),
                        };
                        if self.peek()? == EventType::DocumentEnd {
                            n.set_foot_comment(string(std::mem::take(
                                &mut self.event.foot_comment,
                            )));
                        }
                        self.expect(EventType::DocumentEnd)?;
                        done = n;
                    }
                    Frame::Sequence(..) => {
                        children.push(done);
                        match self.collection_loop(&mut stack, children)? {
                            Some(n) => done = n,
                            None => break,
                        }
                    }
                    Frame::Mapping(n, start) => {
                        let block = !n.style.has(Style::FLOW);
                        children.push(done);
                        // The mapping's content so far.
                        let content = &mut children[*start..];
                        let len = content.len();
                        if len % 2 == 1 {
                            // A key was parsed.
                            if block && !content[len - 1].foot_comment().is_empty() {
                                // Must be a foot comment for the prior value when being dedented.
                                if len > 2 {
                                    let foot = content[len - 1].take_foot_comment();
                                    content[len - 3].set_foot_comment(foot);
                                }
                            }
                            // Parse the value.
                            break;
                        }
                        // A value was parsed.
                        if content[len - 2].foot_comment().is_empty()
                            && !content[len - 1].foot_comment().is_empty()
                        {
                            let foot = content[len - 1].take_foot_comment();
                            content[len - 2].set_foot_comment(foot);
                        }
                        if self.peek()? == EventType::TailComment {
                            let key = children.len() - 2;
                            if children[key].foot_comment().is_empty() {
                                children[key].set_foot_comment(string(std::mem::take(
                                    &mut self.event.foot_comment,
                                )));
                            }
                            self.expect(EventType::TailComment)?;
                        }
                        match self.collection_loop(&mut stack, children)? {
                            Some(n) => done = n,
                            None => break,
                        }
                    }
                }
            }
        }
    }

    /// The loop condition of `sequence()` / `mapping()` for the collection
    /// on top of the stack: if its end event is next, finish it (pop it and
    /// return it); otherwise return `None` so the next child is parsed.
    fn collection_loop(
        &mut self,
        stack: &mut Vec<Frame>,
        children: &mut Vec<Node>,
    ) -> Result<Option<Node>, YamlError> {
        let end = match stack.last() {
            Some(Frame::Sequence(..)) => EventType::SequenceEnd,
            Some(Frame::Mapping(..)) => EventType::MappingEnd,
            _ => return Ok(None),
        };
        if self.peek()? != end {
            return Ok(None);
        }
        let mut n = match stack.pop() {
            Some(Frame::Sequence(n, start)) | Some(Frame::Mapping(n, start)) => Node {
                content: children.split_off(start),
                ..n
            },
            _ => unreachable!("top frame is a collection"),
        };
        n.set_line_comment(string(std::mem::take(&mut self.event.line_comment)));
        n.set_foot_comment(string(std::mem::take(&mut self.event.foot_comment)));
        if n.kind == Kind::Mapping
            && !n.style.has(Style::FLOW)
            && !n.foot_comment().is_empty()
            && n.content.len() > 1
        {
            let len = n.content.len();
            let foot = n.take_foot_comment();
            n.content[len - 2].set_foot_comment(foot);
        }
        self.expect(end)?;
        Ok(Some(n))
    }
}

/// `yaml.NewDecoder(r)`: decodes one document per
/// [`next_document`](Decoder::next_document) call, lazily.
pub struct Decoder {
    parser: NodeParser,
    failed: Option<YamlError>,
}

impl Decoder {
    /// A decoder over the whole input.
    pub fn new(input: &[u8]) -> Decoder {
        Decoder {
            parser: NodeParser::new(input),
            failed: None,
        }
    }

    /// `Decode(&node)`: the next document node, `Ok(None)` at the end of
    /// the stream (go-yaml's `io.EOF`). After an error every call returns
    /// that error again.
    pub fn next_document(&mut self) -> Result<Option<Node>, YamlError> {
        if let Some(err) = &self.failed {
            return Err(err.clone());
        }
        match self.parser.parse() {
            Ok(n) => Ok(n),
            Err(err) => {
                self.failed = Some(err.clone());
                Err(err)
            }
        }
    }
}

/// All documents of `input`, as by calling `Decode` until `io.EOF`.
pub fn parse_documents(input: &[u8]) -> Result<Vec<Node>, YamlError> {
    let mut decoder = Decoder::new(input);
    let mut docs = Vec::new();
    while let Some(doc) = decoder.next_document()? {
        docs.push(doc);
    }
    Ok(docs)
}

/// `yaml.Unmarshal(in, &node)`: the first document, or `Ok(None)` when the
/// input has no document (the node is left untouched in Go). Later
/// documents are not parsed, except for the scanner's small lookahead.
pub fn unmarshal(input: &[u8]) -> Result<Option<Node>, YamlError> {
    let input: &[u8] = if input.is_empty() { b"\n" } else { input };
    let mut p = NodeParser::new(input);
    p.parse()
}

/// A 0-based mark as a node's 1-based line or column (saturating: no file
/// krmgraph reads has 4 billion lines).
fn position(mark: usize) -> u32 {
    u32::try_from(mark + 1).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a diagnostic points for the error in `text`.
    fn at(text: &str) -> (usize, usize) {
        parse_documents(text.as_bytes())
            .unwrap_err()
            .position_in(text.as_bytes())
    }

    #[test]
    fn diagnostics_point_at_the_offending_token() {
        // A key without `:` (found on the next line): the key.
        assert_eq!(at("a: 1\nb\nc: 2\n"), (1, 0));
        // A quote never closed (found at the end): the quote.
        assert_eq!(at("a: 'x\n"), (0, 3));
        // An entry indented between two levels: the entry, not the start
        // of the mapping above it, where go-yaml's line number points.
        assert_eq!(at("m:\n  a: 1\n  b:\n    c: 1\n   d: 2\n"), (4, 3));
        // A flow sequence never closed: its `[`; one missing a `,`: the
        // item after the gap.
        assert_eq!(at("a: [x\n  b: c\n"), (0, 3));
        assert_eq!(at("a: [\"x\" \"y\"]\n"), (0, 8));
        // A tab that breaks the indentation: the tab.
        assert_eq!(at("a:\n  b: c\n\td: e\n"), (2, 0));
        // An alias to no anchor: the alias.
        assert_eq!(at("a: *x\n"), (0, 3));
    }
}
