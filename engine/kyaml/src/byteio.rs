//! kyaml's `ByteReader` and `ByteWriter` (`kio/byteio_reader.go`,
//! `kio/byteio_writer.go`): the bytes of one file or one function stream to
//! resources and back.
//!
//! Reading splits the text on `\n---<anything>\n` itself (so head comments
//! stay with their document), decodes only the first document of each
//! chunk, drops empty and null documents, annotates each resource with its
//! index (and the caller's annotations, in sorted key order), and unwraps a
//! single `ResourceList`/`List`. Writing clears the reader's annotations,
//! then encodes every resource with one encoder (so they are separated by
//! `---`), each with its own sequence indentation, or wraps them all in a
//! `ResourceList`; a lone resource from a `.json` file is written as JSON.

use std::collections::BTreeMap;

use rayon::prelude::*;

use super::kioutil::{self, INDEX_ANNOTATION, LEGACY_INDEX_ANNOTATION, SEQ_INDENT_ANNOTATION};
use super::rnode::{self, BARE_SEQ_NODE_WRAPPING_KEY};
use super::{gopath, item_memo, json, seqindent, yamlio, KyamlError, Result};
use krmgraph_yaml::{Kind, Node, Style};

/// `kind` of the function wire format.
pub const RESOURCE_LIST_KIND: &str = "ResourceList";
/// `apiVersion` of the function wire format.
pub const RESOURCE_LIST_API_VERSION: &str = "config.kubernetes.io/v1";
/// File globs written as JSON (`kio.JSONMatch`).
pub const JSON_MATCH: &[&str] = &["*.json"];

/// From this many items on, a function's ResourceList is encoded item by
/// item in parallel: below it, the pool's overhead is more than the gain.
const PARALLEL_ITEMS: usize = 128;

/// `kio.ByteReader`'s options.
#[derive(Clone, Debug, Default)]
pub struct ByteReader {
    /// Do not set the index (and seqindent) annotations.
    pub omit_reader_annotations: bool,
    /// Record each document's sequence indentation
    /// (`internal.config.kubernetes.io/seqindent`).
    pub preserve_seq_indent: bool,
    /// Annotations set on every resource. Like kyaml, the reader adds its
    /// own (index, seqindent) to this map, so they persist across reads.
    pub set_annotations: BTreeMap<String, String>,
    /// Keep a `ResourceList`/`List` as one resource instead of unwrapping.
    pub disable_unwrapping: bool,
    /// Wrap a document that is a bare sequence in a mapping under
    /// `bareSeqNodeWrappingKey`, so it can carry annotations.
    pub wrap_bare_seq_node: bool,
}

/// What [`ByteReader::read`] found.
#[derive(Clone, Debug, Default)]
pub struct ReadOutput {
    /// The resources: documents as decoded, or the items of an unwrapped
    /// list.
    pub nodes: Vec<Node>,
    /// `functionConfig` of an unwrapped list.
    pub function_config: Option<Node>,
    /// `results` of an unwrapped list.
    pub results: Option<Node>,
    /// `kind` of the unwrapped list, empty if none.
    pub wrapping_kind: String,
    /// `apiVersion` of the unwrapped list.
    pub wrapping_api_version: String,
}

impl ByteReader {
    /// `ByteReader.Read` of `input`.
    pub fn read(&mut self, input: &[u8]) -> Result<ReadOutput> {
        if self.preserve_seq_indent && self.omit_reader_annotations {
            return Err(KyamlError::Package(
                "\"PreserveSeqIndent\" option adds a reader annotation, please set \"OmitReaderAnnotations\" to false"
                    .to_string(),
            ));
        }
        let text = replace_crlf(input);
        let mut values = split_documents(&text)?;
        let count = values.len();
        let mut out = ReadOutput::default();
        let mut index = 0;
        // Line where the current chunk starts, so errors can point into the
        // whole input (a separator line sits between chunks).
        let mut first_line = 0;
        for (i, value) in values.iter_mut().enumerate() {
            let lines = value.iter().filter(|&&b| b == b'\n').count() + 1;
            if i != count - 1 {
                value.push(b'\n');
            }
            let decoded = self.decode(value, index).map_err(|e| match e {
                KyamlError::MalformedYaml { message, mark } => KyamlError::MalformedYaml {
                    message,
                    mark: (mark.0 + first_line, mark.1),
                },
                other => other,
            });
            first_line += lines + 1;
            let Some(node) = decoded? else {
                continue;
            };
            if !self.disable_unwrapping && count == 1 && is_wrapper(&node) {
                unwrap_list(node, &mut out);
                continue;
            }
            out.nodes.push(node);
            index += 1;
        }
        Ok(out)
    }

    /// Decodes the first document of `chunk` and annotates it; `None` for
    /// no document, an empty one, or a null one.
    fn decode(&mut self, chunk: &[u8], index: usize) -> Result<Option<Node>> {
        let Some(doc) = yamlio::decode_first_document(chunk)? else {
            return Ok(None);
        };
        if rnode::is_y_node_empty_doc(&doc) || rnode::is_missing_or_null(Some(&doc)) {
            return Ok(None);
        }
        let mut node = self.wrap_bare_seq(doc)?;
        if !self.omit_reader_annotations {
            kioutil::copy_legacy_annotations(&mut node)?;
            self.set_annotations
                .insert(INDEX_ANNOTATION.into(), index.to_string());
            self.set_annotations
                .insert(LEGACY_INDEX_ANNOTATION.into(), index.to_string());
            if self.preserve_seq_indent {
                let style = seqindent::derive_seq_indent_style(chunk);
                self.set_annotations
                    .insert(SEQ_INDENT_ANNOTATION.into(), style.into());
            }
        }
        for (k, v) in &self.set_annotations {
            rnode::set_annotation(&mut node, k, v)?;
        }
        Ok(Some(node))
    }

    fn wrap_bare_seq(&self, doc: Node) -> Result<Node> {
        let is_bare_seq = doc.kind == Kind::Document
            && doc
                .content
                .first()
                .is_some_and(|c| c.kind == Kind::Sequence);
        if !self.wrap_bare_seq_node || !is_bare_seq {
            return Ok(doc);
        }
        let mut wrapped = rnode::new_node(Kind::Mapping);
        let root = doc.content.into_iter().next().unwrap_or_default();
        rnode::set_field(&mut wrapped, BARE_SEQ_NODE_WRAPPING_KEY, root)?;
        Ok(wrapped)
    }
}

fn replace_crlf(input: &[u8]) -> Vec<u8> {
    if !input.contains(&b'\r') {
        return input.to_vec();
    }
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'\r' && input.get(i + 1) == Some(&b'\n') {
            out.push(b'\n');
            i += 2;
        } else {
            out.push(input[i]);
            i += 1;
        }
    }
    out
}

/// `splitDocuments`: cuts `text` at every non-overlapping match of
/// `\n---.*\n`; a separator line may carry only whitespace and a comment.
pub fn split_documents(text: &[u8]) -> Result<Vec<Vec<u8>>> {
    let mut docs = Vec::new();
    if text.is_empty() {
        return Ok(docs);
    }
    let mut prev = 0;
    let mut pos = 0;
    while let Some(start) = find_from(text, b"\n---", pos) {
        let Some(nl) = text[start + 4..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let end = start + 4 + nl + 1;
        let after = go_trim_space(&text[start + 4..end]);
        if after.first().is_some_and(|&b| b != b'#') {
            let separator = go_trim_space(&text[start..end]);
            return Err(KyamlError::InvalidDocumentSeparator(
                String::from_utf8_lossy(separator).into_owned(),
            ));
        }
        docs.push(text[prev..start].to_vec());
        prev = end;
        pos = end;
    }
    docs.push(text[prev..].to_vec());
    Ok(docs)
}

fn find_from(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    haystack
        .get(from..)?
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| p + from)
}

/// Go's `strings.TrimSpace` for ASCII whitespace.
fn go_trim_space(s: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c');
    let start = s.iter().take_while(|b| ws(b)).count();
    let end = s.len() - s[start..].iter().rev().take_while(|b| ws(b)).count();
    &s[start..end]
}

/// A `ResourceList` or `List` with `items` or `functionConfig`.
fn is_wrapper(node: &Node) -> bool {
    let kind = rnode::get_meta(node).unwrap_or_default().kind;
    (kind == RESOURCE_LIST_KIND || kind == "List")
        && (rnode::field(node, "items").is_some() || rnode::field(node, "functionConfig").is_some())
}

fn unwrap_list(mut node: Node, out: &mut ReadOutput) {
    let meta = rnode::get_meta(&node).unwrap_or_default();
    out.wrapping_kind = meta.kind;
    out.wrapping_api_version = meta.api_version;
    if let Some(fc) = rnode::field_value(&node, "functionConfig") {
        out.function_config = Some(fc.clone());
    }
    if let Some(results) = rnode::field_value(&node, "results") {
        out.results = Some(results.clone());
    }
    // The list is dropped afterwards, so its items move out rather than
    // being copied.
    if let Some(items) = rnode::field_value_mut(&mut node, "items") {
        out.nodes
            .extend(std::mem::take(&mut rnode::y_node_mut(items).content));
    }
}

/// `kio.ByteWriter`'s options.
#[derive(Clone, Debug, Default)]
pub struct ByteWriter {
    /// Keep the index and seqindent annotations.
    pub keep_reader_annotations: bool,
    /// Annotations removed from every resource.
    pub clear_annotations: Vec<String>,
    /// Style set on every resource's root (`0` leaves it).
    pub style: Style,
    /// `functionConfig` of the wrapping list.
    pub function_config: Option<Node>,
    /// `results` of the wrapping list.
    pub results: Option<Node>,
    /// `kind` of the list to wrap the resources in; empty to write them as
    /// documents.
    pub wrapping_kind: String,
    /// `apiVersion` of the wrapping list.
    pub wrapping_api_version: String,
    /// Sort by path and index first.
    pub sort: bool,
}

impl ByteWriter {
    /// The function wire format: a `config.kubernetes.io/v1` `ResourceList`
    /// keeping the reader annotations.
    pub fn resource_list(function_config: Option<Node>) -> ByteWriter {
        ByteWriter {
            keep_reader_annotations: true,
            function_config,
            wrapping_kind: RESOURCE_LIST_KIND.into(),
            wrapping_api_version: RESOURCE_LIST_API_VERSION.into(),
            ..ByteWriter::default()
        }
    }

    /// `ByteWriter.Write`: the bytes for `nodes` (which are not modified).
    pub fn write(&self, nodes: &[Node]) -> Result<Vec<u8>> {
        self.write_owned(nodes.to_vec())
    }

    /// [`ByteWriter::write`] of nodes the caller no longer needs.
    pub fn write_owned(&self, mut nodes: Vec<Node>) -> Result<Vec<u8>> {
        if self.sort {
            kioutil::sort_nodes(&mut nodes)?;
        }
        let as_json = self.should_json_encode_single_bare_node(&nodes);
        let seq_indents: Vec<String> = nodes
            .iter()
            .map(|n| {
                rnode::get_annotations(n)
                    .remove(SEQ_INDENT_ANNOTATION)
                    .unwrap_or_default()
            })
            .collect();
        for node in &mut nodes {
            self.clean(node)?;
        }
        if as_json {
            return json::encode_resource(&nodes[0]);
        }
        if self.wrapping_kind.is_empty() {
            let docs: Vec<(&Node, bool)> = nodes
                .iter()
                .zip(&seq_indents)
                .map(|(n, indent)| (unwrap_bare_sequence_node(n), indent != seqindent::WIDE))
                .collect();
            return yamlio::encode_documents(docs);
        }
        let doc = self.wrapped(nodes);
        yamlio::encode_documents([(&doc, true)])
    }

    /// [`ByteWriter::write`] of a wrapping list without copying `nodes`:
    /// their roots move into the list for encoding and back. Copying every
    /// resource a function sees, as kyaml does, costs as much as encoding
    /// it. Only when cleaning would change nothing (`write` cleans a copy;
    /// here the nodes are the caller's), which holds for a function's
    /// input: its ids keep every `annotations` non-empty.
    pub fn write_list_in_place(&self, nodes: &mut [Node]) -> Result<Vec<u8>> {
        if !self.encodes_in_place(nodes) {
            return self.write(nodes);
        }
        let roots: Vec<Node> = nodes.iter_mut().map(take_y_node).collect();
        let (bytes, roots) = self.encode_list(roots, PARALLEL_ITEMS);
        for (node, root) in nodes.iter_mut().zip(roots) {
            put_y_node(node, root);
        }
        bytes
    }

    /// [`ByteWriter::write_list_in_place`] through `memo` ([`item_memo`]):
    /// each item's text is remembered, or taken from the
    /// memo with its own ids. Also returns each item's memo entry (`None`
    /// where it has none). `check`: encode remembered items too and panic
    /// on a difference.
    pub fn write_list_remembering(
        &self,
        nodes: &mut [Node],
        memo: &item_memo::ItemMemo,
        check: bool,
    ) -> Result<(Vec<u8>, item_memo::Entries)> {
        if !self.encodes_in_place(nodes) {
            return Ok((self.write(nodes)?, vec![None; nodes.len()]));
        }
        let mut roots: Vec<Node> = nodes.iter_mut().map(take_y_node).collect();
        let remembered =
            self.encode_items(&mut roots, |root| memo.item_text(root, check, encode_item));
        let (bytes, entries, roots) = match remembered {
            Some((bytes, entries)) => (Ok(bytes), entries, roots),
            None => {
                let (bytes, roots) = self.encode_list(roots, usize::MAX);
                (bytes, vec![None; nodes.len()], roots)
            }
        };
        for (node, root) in nodes.iter_mut().zip(roots) {
            put_y_node(node, root);
        }
        Ok((bytes?, entries))
    }

    /// Whether `nodes` can be encoded in place: a wrapping list that keeps
    /// them as they are (`write` cleans a copy; in place the nodes are the
    /// caller's), which holds for a function's input: its ids keep every
    /// `annotations` non-empty.
    fn encodes_in_place(&self, nodes: &[Node]) -> bool {
        !self.wrapping_kind.is_empty()
            && self.keep_reader_annotations
            && self.clear_annotations.is_empty()
            && self.style == Style::NONE
            && !self.sort
            && nodes.iter().all(cleaning_changes_nothing)
    }

    /// The wrapped list of `roots`, encoded; the roots are handed back.
    /// From `parallel_from` items on, the items are encoded at once on the
    /// render's pool ([`Self::encode_items_in_parallel`]).
    fn encode_list(
        &self,
        mut roots: Vec<Node>,
        parallel_from: usize,
    ) -> (Result<Vec<u8>>, Vec<Node>) {
        if roots.len() >= parallel_from {
            if let Some(bytes) = self.encode_items_in_parallel(&mut roots) {
                return (Ok(bytes), roots);
            }
        }
        let mut doc = self.wrapped(roots);
        let bytes = yamlio::encode_documents([(&doc, true)]);
        let roots = std::mem::take(&mut doc.content[0].content[5].content);
        (bytes, roots)
    }

    /// The wrapped list with each item encoded on its own, as a list of
    /// one, and the texts joined. The emitter carries nothing from one
    /// list item to the next but a foot comment (written as the next
    /// item's tail comment), so an item's text is the same alone — and an
    /// item with a foot comment is encoded together with the items after
    /// it, up to the first without one (a run, [`runs`]). The list's own
    /// text around its items comes from encoding it with the first run
    /// alone, which also checks that run's text is what the list writes.
    /// `None` (encode the list whole) where that does not hold, the last
    /// item has a foot comment, an item ends its text with a document end
    /// marker, or encoding fails.
    fn encode_items_in_parallel(&self, roots: &mut [Node]) -> Option<Vec<u8>> {
        self.encode_items(roots, |root| {
            encode_item(root).map(|text| (item_memo::ItemText::encoded(text), ()))
        })
        .map(|(bytes, _)| bytes)
    }

    /// [`Self::encode_items_in_parallel`] with each item's text from
    /// `text_of` (which also gives something to keep for each item; an
    /// item of a longer run keeps `T::default()`). The texts are written
    /// into the list's buffer at once, each at its place.
    fn encode_items<T: Send + Default>(
        &self,
        roots: &mut [Node],
        text_of: impl Fn(&mut Node) -> Option<(item_memo::ItemText, T)> + Sync,
    ) -> Option<(Vec<u8>, Vec<T>)> {
        let lengths = runs(roots)?;
        let mut chunks = Vec::with_capacity(lengths.len());
        let mut rest = roots;
        for len in lengths {
            let (run, after) = rest.split_at_mut(len);
            chunks.push(run);
            rest = after;
        }
        let texts: Vec<(item_memo::ItemText, Vec<T>)> = chunks
            .par_iter_mut()
            .map(|run| match run {
                [root] => text_of(root).map(|(text, kept)| (text, vec![kept])),
                run => {
                    let text = item_memo::ItemText::encoded(encode_run(run)?);
                    Some((text, run.iter().map(|_| T::default()).collect()))
                }
            })
            .collect::<Option<_>>()?;
        let (mut texts, kept): (Vec<item_memo::ItemText>, Vec<Vec<T>>) = texts.into_iter().unzip();
        let (head, tail) = self.head_and_tail(chunks[0], &mut texts[0])?;
        let bytes = assemble(&head, &texts, &tail);
        Some((bytes, kept.into_iter().flatten().collect()))
    }

    /// The list's own text before and after its items: from encoding the
    /// list with `run` alone (any run of its items), whose text `text` is
    /// checked to be what the list writes for it.
    fn head_and_tail(
        &self,
        run: &mut [Node],
        text: &mut item_memo::ItemText,
    ) -> Option<(Vec<u8>, Vec<u8>)> {
        let mut doc = self.wrapped(run.iter_mut().map(std::mem::take).collect());
        let with_run = yamlio::encode_documents([(&doc, true)]);
        let taken = std::mem::take(&mut doc.content[0].content[5].content);
        for (slot, root) in run.iter_mut().zip(taken) {
            *slot = root;
        }
        let with_run = with_run.ok()?;
        let marker = b"\nitems:\n";
        let at = with_run.windows(marker.len()).position(|w| w == marker)? + marker.len();
        let (head, rest) = with_run.split_at(at);
        let run_text = std::mem::replace(text, item_memo::ItemText::encoded(Vec::new()));
        let run_text = run_text.into_bytes();
        let tail = rest.strip_prefix(run_text.as_slice())?.to_vec();
        *text = item_memo::ItemText::encoded(run_text);
        Some((head.to_vec(), tail))
    }

    /// [`ByteWriter::write_list_remembering`] of a list given in parts,
    /// some of whose items are known only by their texts (with their ids
    /// in place): the bytes, and the entries of the items of each part of
    /// nodes. `None` where the list cannot be written so — the nodes do
    /// not encode in place, a foot comment would run an item's text into
    /// the next part, or no part has nodes — and the caller writes it
    /// whole.
    pub fn write_parts_remembering(
        &self,
        parts: &mut [ListPart],
        memo: &item_memo::ItemMemo,
        check: bool,
    ) -> Option<(Vec<u8>, Vec<item_memo::Entries>)> {
        let encodable = parts.iter().all(|part| match part {
            ListPart::Nodes(nodes) => self.encodes_in_place(nodes),
            ListPart::Texts(_) => true,
        });
        if !encodable {
            return None;
        }
        let mut roots: Vec<Option<Vec<Node>>> = parts
            .iter_mut()
            .map(|part| match part {
                ListPart::Nodes(nodes) => Some(nodes.iter_mut().map(take_y_node).collect()),
                ListPart::Texts(_) => None,
            })
            .collect();
        let written = self.write_parts(parts, &mut roots, memo, check);
        for (part, roots) in parts.iter_mut().zip(roots) {
            if let (ListPart::Nodes(nodes), Some(roots)) = (part, roots) {
                for (node, root) in nodes.iter_mut().zip(roots) {
                    put_y_node(node, root);
                }
            }
        }
        written
    }

    fn write_parts(
        &self,
        parts: &mut [ListPart],
        roots: &mut [Option<Vec<Node>>],
        memo: &item_memo::ItemMemo,
        check: bool,
    ) -> Option<(Vec<u8>, Vec<item_memo::Entries>)> {
        let mut texts: Vec<item_memo::ItemText> = Vec::new();
        let mut entries = Vec::new();
        let mut carrier = None;
        for (part, roots) in parts.iter_mut().zip(roots.iter_mut()) {
            let ListPart::Texts(known) = part else {
                let roots = roots.as_mut()?;
                let (part_texts, part_entries) = self.encode_runs(roots, memo, check)?;
                carrier.get_or_insert((texts.len(), roots.len()));
                entries.push(part_entries);
                texts.extend(part_texts);
                continue;
            };
            texts.extend(std::mem::take(known));
        }
        let (at, _) = carrier?;
        // The carrier is the first part of nodes: its first run's text is
        // the first of its texts.
        let first_part = roots.iter_mut().flatten().next()?;
        let first_run = runs(first_part)?[0];
        let (head, tail) = self.head_and_tail(&mut first_part[..first_run], &mut texts[at])?;
        Some((assemble(&head, &texts, &tail), entries))
    }

    /// The texts of `roots`' runs ([`runs`]) and each item's memo entry.
    fn encode_runs(
        &self,
        roots: &mut [Node],
        memo: &item_memo::ItemMemo,
        check: bool,
    ) -> Option<(Vec<item_memo::ItemText>, item_memo::Entries)> {
        let lengths = runs(roots)?;
        let mut chunks = Vec::with_capacity(lengths.len());
        let mut rest = roots;
        for len in lengths {
            let (run, after) = rest.split_at_mut(len);
            chunks.push(run);
            rest = after;
        }
        let texts: Vec<(item_memo::ItemText, item_memo::Entries)> = chunks
            .par_iter_mut()
            .map(|run| match run {
                [root] => memo
                    .item_text(root, check, encode_item)
                    .map(|(text, entry)| (text, vec![entry])),
                run => {
                    let text = item_memo::ItemText::encoded(encode_run(run)?);
                    Some((text, vec![None; run.len()]))
                }
            })
            .collect::<Option<_>>()?;
        let (texts, entries): (Vec<_>, Vec<_>) = texts.into_iter().unzip();
        Some((texts, entries.into_iter().flatten().collect()))
    }

    /// Removes the reader's and the requested annotations, then empty
    /// `annotations`/`metadata`.
    fn clean(&self, node: &mut Node) -> Result<()> {
        if !self.keep_reader_annotations {
            for key in [
                INDEX_ANNOTATION,
                LEGACY_INDEX_ANNOTATION,
                SEQ_INDENT_ANNOTATION,
            ] {
                rnode::clear_annotation(node, key)?;
            }
        }
        for key in &self.clear_annotations {
            rnode::clear_annotation(node, key)?;
        }
        rnode::clear_empty_annotations(node)?;
        if self.style != Style::NONE {
            rnode::y_node_mut(node).style = self.style;
        }
        Ok(())
    }

    fn wrapped(&self, nodes: Vec<Node>) -> Node {
        let mut items = rnode::new_node(Kind::Sequence);
        items.content = nodes.into_iter().map(into_y_node).collect();
        let mut list = rnode::new_node(Kind::Mapping);
        list.style = self.style;
        list.content = vec![
            rnode::new_scalar("apiVersion"),
            rnode::new_scalar(self.wrapping_api_version.clone()),
            rnode::new_scalar("kind"),
            rnode::new_scalar(self.wrapping_kind.clone()),
            rnode::new_scalar("items"),
            items,
        ];
        if let Some(fc) = &self.function_config {
            list.content.push(rnode::new_scalar("functionConfig"));
            list.content.push(rnode::y_node(fc).clone());
        }
        if let Some(results) = &self.results {
            list.content.push(rnode::new_scalar("results"));
            list.content.push(rnode::y_node(results).clone());
        }
        Node::document(list)
    }

    /// `shouldJSONEncodeSingleBareNode`: one unwrapped resource whose path
    /// annotation names a `*.json` file.
    fn should_json_encode_single_bare_node(&self, nodes: &[Node]) -> bool {
        if !self.wrapping_kind.is_empty() || nodes.len() != 1 {
            return false;
        }
        let (path, _) = kioutil::get_file_annotations(&nodes[0]);
        if path.is_empty() {
            return false;
        }
        let name = gopath::base(&path);
        JSON_MATCH
            .iter()
            .any(|g| gopath::matches(g, &name).unwrap_or(false))
    }
}

/// A part of a list [`ByteWriter::write_parts_remembering`] writes.
pub enum ListPart<'a> {
    /// Items as nodes.
    Nodes(&'a mut [Node]),
    /// Items known only by their texts in the list.
    Texts(Vec<item_memo::ItemText>),
}

/// A list's text: `head`, the items' `texts`, `tail`; the texts are
/// written into the list's buffer at once, each at its place.
fn assemble(head: &[u8], texts: &[item_memo::ItemText], tail: &[u8]) -> Vec<u8> {
    let lengths: Vec<usize> = texts.iter().map(item_memo::ItemText::len).collect();
    let items_len: usize = lengths.iter().sum();
    let mut bytes = vec![0; head.len() + items_len + tail.len()];
    bytes[..head.len()].copy_from_slice(head);
    bytes[head.len() + items_len..].copy_from_slice(tail);
    let mut places = Vec::with_capacity(texts.len());
    let mut free = &mut bytes[head.len()..head.len() + items_len];
    for len in lengths {
        let (place, after) = free.split_at_mut(len);
        places.push(place);
        free = after;
    }
    places
        .into_par_iter()
        .zip(texts.par_iter())
        .for_each(|(place, text)| text.write_to(place));
    bytes
}

pub(crate) fn into_y_node(node: Node) -> Node {
    match node.kind {
        Kind::Document if !node.content.is_empty() => {
            node.content.into_iter().next().unwrap_or_default()
        }
        _ => node,
    }
}

/// Whether `ByteWriter::clean` with kept reader annotations leaves
/// `node` as it is: a mapping whose `metadata` and `metadata.annotations`
/// are absent or have content.
pub fn cleaning_changes_nothing(node: &Node) -> bool {
    let root = rnode::y_node(node);
    let has_empty = |map: &Node, name: &str| {
        rnode::pairs(map).any(|(k, v)| k.value == name && v.content.is_empty())
    };
    if root.kind != Kind::Mapping || has_empty(root, rnode::METADATA_FIELD) {
        return false;
    }
    match rnode::field_value(root, rnode::METADATA_FIELD) {
        None => true,
        Some(meta) => meta.kind == Kind::Mapping && !has_empty(meta, rnode::ANNOTATIONS_FIELD),
    }
}

/// The text of one item of a wrapping list: `root` encoded as a list of
/// one (`None` where that text could not be joined with others).
fn encode_item(root: &mut Node) -> Option<Vec<u8>> {
    encode_run(std::slice::from_mut(root))
}

/// The text of a run of items of a wrapping list ([`runs`]): `roots`
/// encoded as a list of their own (`None` where that text could not be
/// joined with others).
fn encode_run(roots: &mut [Node]) -> Option<Vec<u8>> {
    let mut list = rnode::new_node(Kind::Sequence);
    list.content = roots.iter_mut().map(std::mem::take).collect();
    let bytes = yamlio::encode_documents([(&list, true)]);
    for (slot, root) in roots.iter_mut().zip(list.content) {
        *slot = root;
    }
    bytes
        .ok()
        .filter(|b| starts_an_item(b) && !b.ends_with(b"\n...\n"))
}

/// The runs of a list's items, by length: each item with a foot comment
/// runs on to the next item, whose text the emitter writes the comment
/// into; a run ends with an item without one. `None` when the last item
/// has a foot comment (the list's own text would hold it), or there are
/// no items.
pub(crate) fn runs(roots: &[Node]) -> Option<Vec<usize>> {
    if roots.last().is_none_or(has_foot_comment) {
        return None;
    }
    Some(runs_to_end(roots).iter().map(|run| run.len).collect())
}

/// One of [`runs_to_end`]'s runs.
pub struct Run {
    /// How many items it holds.
    pub len: usize,
    /// Whether any of them has a foot comment.
    pub has_foot_comment: bool,
}

/// `runs`, the last run ending with the list, foot comment or not.
pub fn runs_to_end(roots: &[Node]) -> Vec<Run> {
    let feet: Vec<bool> = roots.par_iter().map(has_foot_comment).collect();
    runs_of_feet(&feet)
}

/// [`runs_to_end`] of items of which `feet` says which have a foot comment.
pub fn runs_of_feet(feet: &[bool]) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut len = 0;
    for (i, &foot) in feet.iter().enumerate() {
        len += 1;
        if !foot {
            let has_foot_comment = len > 1;
            runs.push(Run {
                len,
                has_foot_comment,
            });
            len = 0;
        } else if i + 1 == feet.len() {
            runs.push(Run {
                len,
                has_foot_comment: true,
            });
        }
    }
    runs
}

/// Whether `text` starts with a list item, after the item's own head
/// comment lines (a resource read with a document head comment has it on
/// its mapping once a function's output is read back).
fn starts_an_item(text: &[u8]) -> bool {
    let mut rest = text;
    while rest.starts_with(b"#") {
        match memchr::memchr(b'\n', rest) {
            Some(end) => rest = &rest[end + 1..],
            None => return false,
        }
    }
    rest.starts_with(b"- ")
}

/// Moves out the node [`into_y_node`] would give, leaving a placeholder.
fn take_y_node(node: &mut Node) -> Node {
    match node.kind {
        Kind::Document if !node.content.is_empty() => std::mem::take(&mut node.content[0]),
        _ => std::mem::take(node),
    }
}

/// Whether any node of `node` has a foot comment.
pub fn has_foot_comment(node: &Node) -> bool {
    !node.foot_comment().is_empty() || node.content.iter().any(has_foot_comment)
}

/// Undoes [`take_y_node`].
fn put_y_node(node: &mut Node, root: Node) {
    match node.kind {
        Kind::Document if !node.content.is_empty() => node.content[0] = root,
        _ => *node = root,
    }
}

/// `upWrapBareSequenceNode`: the sequence a bare-sequence wrapper holds, or
/// the node itself.
fn unwrap_bare_sequence_node(node: &Node) -> &Node {
    match rnode::lookup(node, &[BARE_SEQ_NODE_WRAPPING_KEY]) {
        Ok(Some(seq)) if !rnode::is_nil_or_empty(Some(seq)) => seq,
        _ => node,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every mapping document of the fixture YAML files.
    fn fixture_roots() -> Vec<Node> {
        let mut roots = Vec::new();
        for path in krmgraph_util::testdata::fixture_files(&["yaml"]) {
            let bytes = std::fs::read(&path).unwrap_or_default();
            let mut decoder = krmgraph_yaml::decode::Decoder::new(&bytes);
            while let Ok(Some(doc)) = decoder.next_document() {
                let root = into_y_node(doc);
                if root.kind == Kind::Mapping {
                    roots.push(root);
                }
            }
        }
        roots
    }

    #[test]
    fn runs_end_with_an_item_without_a_foot_comment() {
        let item = |foot: &str| {
            let mut n = Node::mapping();
            n.set_foot_comment(foot);
            n
        };
        let roots = [item(""), item("# a"), item(""), item(""), item("# b")];
        let flags: Vec<(usize, bool)> = runs_to_end(&roots)
            .iter()
            .map(|run| (run.len, run.has_foot_comment))
            .collect();
        assert_eq!(flags, [(1, false), (2, true), (1, false), (1, true)]);
        assert_eq!(runs(&roots), None, "the last item's foot is the list's");
        assert_eq!(runs(&roots[..4]), Some(vec![1, 2, 1]));
    }

    #[test]
    fn items_encoded_in_parallel_are_the_list_encoded_whole() {
        let mut roots = fixture_roots();
        // Items with head comments of their own, between others.
        for (i, head) in ["# one", "# two\n# lines", "#"].iter().enumerate() {
            let mut root = roots[i * 7].clone();
            root.set_head_comment(*head);
            roots.insert(i * 5 + 2, root);
        }
        let mut first = roots[30].clone();
        first.set_head_comment("# first of its list");
        roots.insert(15, first);
        // Foot comments: on two items in a row, on the first item of a
        // list, and on a value nested in an item.
        for i in [21, 22, 25, 33] {
            roots[i].set_foot_comment(format!("# foot of {i}"));
        }
        let nested = roots[41]
            .content
            .iter_mut()
            .find(|n| n.kind == Kind::Mapping)
            .expect("a fixture with a nested mapping");
        nested.set_foot_comment("# nested foot");
        let has_feet = |window: &[Node]| window.iter().any(has_foot_comment);
        assert!(roots.len() > 100, "{} fixture documents", roots.len());
        let writer = ByteWriter::resource_list(None);
        let mut parallel = 0;
        for (i, window) in roots.chunks(5).chain([roots.as_slice()]).enumerate() {
            let whole = writer.encode_list(window.to_vec(), usize::MAX);
            let mut items = window.to_vec();
            let joined = writer.encode_items_in_parallel(&mut items);
            assert_eq!(items, window, "the items come back as they went");
            let last_has_foot = window.last().is_some_and(has_foot_comment);
            if i < 4 || has_feet(window) && !last_has_foot {
                assert!(
                    joined.is_some(),
                    "list {i}, with a head or foot comment on an item"
                );
            }
            if let Some(joined) = joined {
                parallel += 1;
                assert_eq!(
                    String::from_utf8_lossy(&joined),
                    String::from_utf8_lossy(&whole.0.unwrap())
                );
            }
        }
        assert!(parallel > 20, "only {parallel} lists encoded in parallel");
    }

    fn split(s: &str) -> Result<Vec<String>> {
        split_documents(s.as_bytes()).map(|d| {
            d.into_iter()
                .map(|b| String::from_utf8(b).unwrap_or_default())
                .collect()
        })
    }

    #[test]
    fn split_documents_like_kyaml() {
        assert_eq!(split("").unwrap(), Vec::<String>::new());
        assert_eq!(split("a: 1\n").unwrap(), vec!["a: 1\n"]);
        assert_eq!(split("a: 1\n---\nb: 2\n").unwrap(), vec!["a: 1", "b: 2\n"]);
        assert_eq!(split("---\na: 1\n").unwrap(), vec!["---\na: 1\n"]);
        assert_eq!(split("a\n---   # c\nb").unwrap(), vec!["a", "b"]);
        // matches do not overlap: the second `---` starts a chunk
        assert_eq!(split("a\n---\n---\nb\n").unwrap(), vec!["a", "---\nb\n"]);
        assert_eq!(split("a\n---\n\n---\nb\n").unwrap(), vec!["a", "", "b\n"]);
        // no newline after the last separator: not a separator
        assert_eq!(split("a\n---").unwrap(), vec!["a\n---"]);
        assert_eq!(
            split("a\n----\nb").unwrap_err().to_string(),
            "invalid document separator: ----"
        );
        assert_eq!(split("a\n--- \t\nb").unwrap(), vec!["a", "b"]);
    }

    #[test]
    fn split_documents_rejects_content_after_separator() {
        let err = split("a\n--- b\nc").unwrap_err();
        assert_eq!(err.to_string(), "invalid document separator: --- b");
        let err = split("a\n---x\nc").unwrap_err();
        assert_eq!(err.to_string(), "invalid document separator: ---x");
    }

    fn emit_all(nodes: &[Node]) -> String {
        nodes
            .iter()
            .map(crate::rnode::tests::emit)
            .collect::<Vec<_>>()
            .join("---\n")
    }

    #[test]
    fn reader_annotates_skips_and_wraps() {
        let mut reader = ByteReader {
            preserve_seq_indent: true,
            wrap_bare_seq_node: true,
            set_annotations: [("z.example/last".to_string(), "v".to_string())].into(),
            ..ByteReader::default()
        };
        let input = b"# only a comment\n---\na: 1\nl:\n  - x\n---\n---\n~\n---\n- s\n";
        let out = reader.read(input).unwrap();
        assert_eq!(
            emit_all(&out.nodes),
            "a: 1\nl:\n- x\nmetadata:\n  annotations:\n    config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/index: '0'\n    internal.config.kubernetes.io/seqindent: 'wide'\n    z.example/last: 'v'\n---\nbareSeqNodeWrappingKey:\n- s\nmetadata:\n  annotations:\n    config.kubernetes.io/index: '1'\n    internal.config.kubernetes.io/index: '1'\n    internal.config.kubernetes.io/seqindent: 'compact'\n    z.example/last: 'v'\n"
        );
        let err = ByteReader {
            preserve_seq_indent: true,
            omit_reader_annotations: true,
            ..ByteReader::default()
        }
        .read(b"a: 1\n")
        .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("\"PreserveSeqIndent\" option adds a reader annotation"));
    }

    #[test]
    fn reader_unwraps_a_single_resource_list() {
        let list = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n- kind: B\nfunctionConfig:\n  kind: C\nresults:\n- message: m\n";
        let out = ByteReader::default().read(list.as_bytes()).unwrap();
        assert_eq!(out.wrapping_kind, "ResourceList");
        assert_eq!(out.wrapping_api_version, "config.kubernetes.io/v1");
        assert_eq!(emit_all(&out.nodes), "kind: A\n---\nkind: B\n");
        assert!(out.function_config.is_some() && out.results.is_some());
        let two = format!("{list}---\nkind: D\n");
        assert_eq!(
            ByteReader::default()
                .read(two.as_bytes())
                .unwrap()
                .nodes
                .len(),
            2
        );
        let kept = ByteReader {
            disable_unwrapping: true,
            ..ByteReader::default()
        };
        assert_eq!(kept.clone().read(list.as_bytes()).unwrap().nodes.len(), 1);
        let list_kind = "kind: List\nitems: [{kind: A}]\n";
        assert_eq!(
            ByteReader::default()
                .read(list_kind.as_bytes())
                .unwrap()
                .wrapping_kind,
            "List"
        );
    }

    #[test]
    fn writer_clears_reader_annotations_and_keeps_each_documents_indent() {
        let input = b"a:\n  - x\n---\nb:\n- y\n---\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/package-path: /p\n";
        let mut reader = ByteReader {
            preserve_seq_indent: true,
            ..ByteReader::default()
        };
        let nodes = reader.read(input).unwrap().nodes;
        let writer = ByteWriter {
            clear_annotations: vec!["internal.config.kubernetes.io/package-path".into()],
            ..ByteWriter::default()
        };
        assert_eq!(
            String::from_utf8(writer.write(&nodes).unwrap()).unwrap(),
            "a:\n  - x\n---\nb:\n- y\n---\n{}\n"
        );
        assert_eq!(ByteWriter::default().write(&[]).unwrap(), b"");
    }

    #[test]
    fn writer_wraps_in_a_resource_list() {
        let nodes = ByteReader {
            omit_reader_annotations: true,
            ..ByteReader::default()
        }
        .read(b"kind: A\nl:\n  - x\n")
        .unwrap()
        .nodes;
        let config = crate::rnode::tests::parse("kind: ConfigMap\ndata: {a: b}\n");
        let out = ByteWriter::resource_list(Some(config))
            .write(&nodes)
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n  l:\n  - x\nfunctionConfig:\n  kind: ConfigMap\n  data: {a: b}\n"
        );
        let empty = ByteWriter::resource_list(None).write(&[]).unwrap();
        assert_eq!(
            String::from_utf8(empty).unwrap(),
            "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems: []\n"
        );
    }

    #[test]
    fn writer_writes_a_lone_json_resource_as_json() {
        let nodes = ByteReader::default()
            .read(b"{\"kind\": \"A\", \"metadata\": {\"name\": \"x\", \"annotations\": {\"config.kubernetes.io/path\": \"a.json\"}}, \"b\": [1, 2.5]}\n")
            .unwrap()
            .nodes;
        let writer = ByteWriter {
            clear_annotations: vec![
                "config.kubernetes.io/path".into(),
                "internal.config.kubernetes.io/path".into(),
            ],
            ..ByteWriter::default()
        };
        assert_eq!(
            String::from_utf8(writer.write(&nodes).unwrap()).unwrap(),
            "{\n  \"b\": [\n    1,\n    2.5\n  ],\n  \"kind\": \"A\",\n  \"metadata\": {\n    \"name\": \"x\"\n  }\n}\n"
        );
        let two = [nodes[0].clone(), nodes[0].clone()];
        assert!(String::from_utf8(writer.write(&two).unwrap())
            .unwrap()
            .starts_with("{\"kind\": \"A\""));
    }

    #[test]
    fn crlf_becomes_lf() {
        assert_eq!(replace_crlf(b"a\r\nb\r\r\n\r"), b"a\nb\r\n\r".to_vec());
    }
}
