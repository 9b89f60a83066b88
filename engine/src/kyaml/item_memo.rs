//! What the render remembers about the items of functions' ResourceLists:
//! an item's text in the list, and whether reading an echo of it back
//! changes anything but its ids.
//!
//! A pipeline hands its output up the tree, so a resource four packages
//! deep goes into five ResourceLists. With a function that passes its
//! input through (`cat`, a validator that echoes), it is the same item
//! every time except for the three annotations kio.Pipeline numbers by
//! position (the migration id and the two ids). Encoding it and walking
//! its echo again is most of such a render's work.
//!
//! An item is remembered under its fingerprint: blake3 over everything the
//! encoder and the echo's restoration read (kinds, styles, tags, values,
//! anchors, comments, order), with the three ids' values left out. Its
//! text is remembered with where those values are, and a later item with
//! the same fingerprint gets that text with its own ids put in. That is
//! the text the encoder would write, because the ids are plain keys with
//! digit values in block mappings: the encoder single-quotes such a value,
//! and its length changes nothing else on any line (the fingerprint
//! declines every other case, and the memo any item whose text holds an
//! id's `key: 'value'` twice). The echo is known to read back plainly once
//! reading it back changed no style, tag or comment but the ids' (which
//! kio.Pipeline sets afresh at every step) and restoring it moved no
//! comment: an item with the same fingerprint then reads back the same
//! way, so its echo is the item less its ids, with the migration id's key
//! and value restyled as they were.
//!
//! `KRMGRAPH_CHECK_DIRECT=1` (CI) encodes every remembered item again and
//! fails on a difference; the echo check already reads every echo back the
//! long way.
//!
//! The memo is the process's (a `watch` renders many times): it forgets
//! everything once its texts pass 256 MiB. A render with a cache
//! store passes it on to the next process ([`export`], [`import`], kept in
//! the store by the step cache): the entries it used whose echoes read back
//! plainly, which is what the ancestors of an edited package pass up again.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::kioutil::{
    ID_ANNOTATION, INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION as MIGRATION_ID,
    LEGACY_ID_ANNOTATION,
};
use super::rnode::{self, MapEntry};
use super::{byteio, kio_pipeline};
use crate::yaml::{Kind, Node, Style};

/// The annotations numbered by position, in the order their values are
/// kept.
const IDS: [&str; 3] = [MIGRATION_ID, ID_ANNOTATION, LEGACY_ID_ANNOTATION];

/// The texts the memo keeps before it starts over.
const BUDGET: usize = 256 << 20;

const SHARDS: usize = 16;

type Fingerprint = [u8; 32];

/// Each item's memo entry, by position in its list (`None` where it has
/// none).
pub type Entries = Vec<Option<Arc<Entry>>>;

/// One remembered item.
#[derive(Debug)]
pub struct Entry {
    text: Vec<u8>,
    /// Where each id's value is in `text` (inside its quotes), in text
    /// order, with the index of the id in [`IDS`].
    values: [(Range<usize>, usize); 3],
    /// Once an echo of the item is known to read back as the item less its
    /// ids: the style and tag of the migration id's key and value after
    /// reading back (the one id restoring keeps; the parser gives the
    /// key a tag kio.Pipeline's setter does not).
    echo: OnceLock<[(Style, String); 2]>,
    /// Whether this process looked the item up or remembered it (what
    /// [`export`] keeps).
    used: AtomicBool,
}

impl Entry {
    /// Whether an echo of this item is known to read back as the item less
    /// its ids.
    pub fn echo_reads_back_plainly(&self) -> bool {
        self.echo.get().is_some()
    }

    /// Records that an echo of this item read back plainly: `restored` is
    /// the echo, restored.
    pub fn learn_echo(&self, restored: &Node) {
        let Some(pair) = annotation(restored, MIGRATION_ID) else {
            return;
        };
        let look = |n: &Node| (n.style, n.tag.clone());
        let _ = self.echo.set([look(pair.key), look(pair.value)]);
    }

    /// What [`kio_pipeline::restore_echo`] makes of an echo of `item`, when
    /// the echo is known to read back plainly: the item less its ids, with
    /// the migration id as it reads back.
    pub fn restore_echo(&self, item: &mut Node) -> super::Result<()> {
        *item = byteio::into_y_node(std::mem::take(item));
        kio_pipeline::clear_ids(item)?;
        let (Some([key, value]), Some(pair)) =
            (self.echo.get(), annotation_mut(item, MIGRATION_ID))
        else {
            return Ok(());
        };
        (pair[0].style, pair[0].tag) = (key.0, key.1.clone());
        (pair[1].style, pair[1].tag) = (value.0, value.1.clone());
        Ok(())
    }

    /// The text with `ids` (in [`IDS`] order) as the values.
    fn text_with(&self, ids: &[&str; 3]) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text.len() + 8);
        let mut at = 0;
        for (range, id) in &self.values {
            out.extend_from_slice(&self.text[at..range.start]);
            out.extend_from_slice(ids[*id].as_bytes());
            at = range.end;
        }
        out.extend_from_slice(&self.text[at..]);
        out
    }
}

struct Memo {
    shards: [Mutex<HashMap<Fingerprint, Arc<Entry>>>; SHARDS],
    bytes: AtomicUsize,
}

fn memo() -> &'static Memo {
    static MEMO: OnceLock<Memo> = OnceLock::new();
    MEMO.get_or_init(|| Memo {
        shards: std::array::from_fn(|_| Mutex::new(HashMap::new())),
        bytes: AtomicUsize::new(0),
    })
}

impl Memo {
    fn shard(&self, fp: &Fingerprint) -> &Mutex<HashMap<Fingerprint, Arc<Entry>>> {
        &self.shards[usize::from(fp[0]) % SHARDS]
    }

    fn get(&self, fp: &Fingerprint) -> Option<Arc<Entry>> {
        let shard = self.shard(fp).lock().unwrap_or_else(|e| e.into_inner());
        let entry = shard.get(fp).cloned()?;
        entry.used.store(true, Ordering::Relaxed);
        Some(entry)
    }

    fn insert(&self, fp: Fingerprint, entry: Arc<Entry>) {
        let size = entry.text.len();
        if self.bytes.fetch_add(size, Ordering::Relaxed) + size > BUDGET {
            for shard in &self.shards {
                shard.lock().unwrap_or_else(|e| e.into_inner()).clear();
            }
            self.bytes.store(size, Ordering::Relaxed);
        }
        let mut shard = self.shard(&fp).lock().unwrap_or_else(|e| e.into_inner());
        shard.insert(fp, entry);
    }
}

/// The start of an exported memo: what wrote it. Another version's memo is
/// not read (its encoder may write other texts).
const EXPORT_HEADER: &[u8] =
    concat!("krmgraph item memo v1 ", env!("CARGO_PKG_VERSION"), "\n").as_bytes();

/// The entries this process used whose echoes read back plainly (the
/// items a later render passes up again), for a later process to
/// [`import`]; `None` when there are none. The last 32 bytes are the
/// blake3 of the rest.
pub fn export() -> Option<Vec<u8>> {
    let mut out = EXPORT_HEADER.to_vec();
    let count_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let mut count = 0u32;
    for shard in &memo().shards {
        let shard = shard.lock().unwrap_or_else(|e| e.into_inner());
        for (fp, entry) in shard.iter() {
            let Some(echo) = entry.echo.get() else {
                continue;
            };
            if !entry.used.load(Ordering::Relaxed) || entry.text.len() > u32::MAX as usize {
                continue;
            }
            count += 1;
            out.extend_from_slice(fp);
            put_bytes(&mut out, &entry.text);
            for (range, id) in &entry.values {
                out.extend_from_slice(&(range.start as u32).to_le_bytes());
                out.extend_from_slice(&(range.end as u32).to_le_bytes());
                out.push(*id as u8);
            }
            for (style, tag) in echo {
                out.push(style.0);
                put_bytes(&mut out, tag.as_bytes());
            }
        }
    }
    if count == 0 {
        return None;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    let sum = blake3::hash(&out);
    out.extend_from_slice(sum.as_bytes());
    Some(out)
}

/// Remembers the entries of an [`export`] (once per process; entries the
/// memo has already are kept). Anything wrong with `bytes` — another
/// version, damage, an entry that does not hold together — and nothing is
/// imported. Returns how many entries were.
pub fn import(bytes: &[u8]) -> usize {
    static IMPORTED: AtomicBool = AtomicBool::new(false);
    if IMPORTED.swap(true, Ordering::SeqCst) {
        return 0;
    }
    let Some(entries) = decode_export(bytes) else {
        return 0;
    };
    let count = entries.len();
    let memo = memo();
    for (fp, entry) in entries {
        let size = entry.text.len();
        let mut shard = memo.shard(&fp).lock().unwrap_or_else(|e| e.into_inner());
        if let std::collections::hash_map::Entry::Vacant(slot) = shard.entry(fp) {
            slot.insert(Arc::new(entry));
            memo.bytes.fetch_add(size, Ordering::Relaxed);
        }
    }
    count
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn decode_export(bytes: &[u8]) -> Option<Vec<(Fingerprint, Entry)>> {
    let (content, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if blake3::hash(content).as_bytes() != sum {
        return None;
    }
    let mut r = Reader(content.strip_prefix(EXPORT_HEADER)?);
    let count = r.u32()?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let fp: Fingerprint = r.take(32)?.try_into().ok()?;
        let text = r.bytes()?.to_vec();
        let mut values: [(Range<usize>, usize); 3] = Default::default();
        for value in &mut values {
            let (start, end) = (r.u32()? as usize, r.u32()? as usize);
            *value = (start..end, usize::from(r.take(1)?[0]));
        }
        let mut echo: [(Style, String); 2] = Default::default();
        for look in &mut echo {
            let style = Style(r.take(1)?[0]);
            *look = (style, String::from_utf8(r.bytes()?.to_vec()).ok()?);
        }
        if !holds_together(&text, &values) {
            return None;
        }
        entries.push((
            fp,
            Entry {
                text,
                values,
                echo: OnceLock::from(echo),
                used: AtomicBool::new(false),
            },
        ));
    }
    r.0.is_empty().then_some(entries)
}

/// Whether `values` are three ids' places in `text`, in text order: each
/// id once, digits between quotes.
fn holds_together(text: &[u8], values: &[(Range<usize>, usize); 3]) -> bool {
    let mut ids: Vec<usize> = values.iter().map(|(_, id)| *id).collect();
    ids.sort_unstable();
    let in_order = values.windows(2).all(|w| w[0].0.end < w[1].0.start);
    ids == [0, 1, 2]
        && in_order
        && values.iter().all(|(range, _)| {
            range.start > 0
                && text.get(range.start - 1) == Some(&b'\'')
                && text.get(range.end) == Some(&b'\'')
                && text
                    .get(range.clone())
                    .and_then(|v| std::str::from_utf8(v).ok())
                    .is_some_and(is_id)
        })
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// The text of `root` (an item's mapping) in a ResourceList, from the
/// memo or from `encode` (which is then remembered), and the memo's entry
/// for it. `None` when `encode` fails. `check`: encode remembered items
/// too and panic on a difference.
pub fn item_text(
    root: &mut Node,
    check: bool,
    encode: impl Fn(&mut Node) -> Option<Vec<u8>>,
) -> Option<(Vec<u8>, Option<Arc<Entry>>)> {
    let Some((fp, ids)) = fingerprint(root) else {
        return encode(root).map(|text| (text, None));
    };
    if let Some(entry) = memo().get(&fp) {
        let text = entry.text_with(&ids.each_ref().map(String::as_str));
        if check {
            let fresh = encode(root);
            assert!(
                fresh.as_deref() == Some(text.as_slice()),
                "KRMGRAPH_CHECK_DIRECT: a remembered item's text differs from its encoding\n\
                 remembered: {}\nencoded: {}",
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(fresh.as_deref().unwrap_or_default()),
            );
        }
        return Some((text, Some(entry)));
    }
    let text = encode(root)?;
    let entry = values_in(&text, &ids).map(|values| {
        Arc::new(Entry {
            text: text.clone(),
            values,
            echo: OnceLock::new(),
            used: AtomicBool::new(true),
        })
    });
    if let Some(entry) = &entry {
        memo().insert(fp, entry.clone());
    }
    Some((text, entry))
}

/// Where each id's value is in `text`: `None` unless each `key: 'value'`
/// is there exactly once.
fn values_in(text: &[u8], ids: &[String; 3]) -> Option<[(Range<usize>, usize); 3]> {
    let mut values: [(Range<usize>, usize); 3] = Default::default();
    for (i, (key, value)) in IDS.iter().zip(ids).enumerate() {
        let pattern = format!("{key}: '{value}'");
        let mut found = memchr::memmem::find_iter(text, pattern.as_bytes());
        let at = found.next()?;
        if found.next().is_some() {
            return None;
        }
        let start = at + key.len() + 3;
        values[i] = (start..start + value.len(), i);
    }
    values.sort_by_key(|(range, _)| range.start);
    Some(values)
}

/// The fingerprint of `root` without its ids' values, and those values;
/// `None` unless the ids are where the memo can replace them (see the
/// module doc).
fn fingerprint(root: &Node) -> Option<(Fingerprint, [String; 3])> {
    let block = |n: &Node| n.kind == Kind::Mapping && !n.style.has(Style::FLOW);
    let metadata = rnode::field_value(root, rnode::METADATA_FIELD).filter(|m| block(m))?;
    let annotations =
        rnode::field_value(metadata, rnode::ANNOTATIONS_FIELD).filter(|a| block(a))?;
    if !block(root) {
        return None;
    }
    let mut skip = [std::ptr::null::<Node>(); 3];
    let mut ids: [String; 3] = Default::default();
    for (i, name) in IDS.iter().enumerate() {
        let MapEntry { key, value } = rnode::field(annotations, name)?;
        if key.style != Style::NONE || value.kind != Kind::Scalar || !is_id(&value.value) {
            return None;
        }
        skip[i] = value;
        ids[i] = value.value.clone();
    }
    let mut bytes = Vec::with_capacity(4096);
    feed(&mut bytes, root, &skip);
    Some((*blake3::hash(&bytes).as_bytes(), ids))
}

/// The keys and values of the ids' annotations of `root` (an item's
/// mapping), by address: what an echo of the item changes at every step.
pub fn id_nodes(root: &Node) -> Vec<*const Node> {
    IDS.iter()
        .filter_map(|name| annotation(root, name))
        .flat_map(|MapEntry { key, value }| [key as *const Node, value as *const Node])
        .collect()
}

fn annotation<'a>(root: &'a Node, name: &str) -> Option<MapEntry<'a>> {
    let metadata = rnode::field_value(root, rnode::METADATA_FIELD)?;
    rnode::field(
        rnode::field_value(metadata, rnode::ANNOTATIONS_FIELD)?,
        name,
    )
}

/// The key and value nodes of annotation `name` of `root`.
fn annotation_mut<'a>(root: &'a mut Node, name: &str) -> Option<&'a mut [Node]> {
    let metadata = rnode::field_value_mut(root, rnode::METADATA_FIELD)?;
    let annotations = rnode::field_value_mut(metadata, rnode::ANNOTATIONS_FIELD)?;
    let i = annotations
        .content
        .chunks_exact(2)
        .position(|kv| kv[0].value == name)?;
    Some(&mut annotations.content[2 * i..2 * i + 2])
}

/// A position as kio.Pipeline writes it: decimal, no leading zero.
fn is_id(value: &str) -> bool {
    !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit())
        && (value == "0" || !value.starts_with('0'))
}

/// Appends what the fingerprint covers of `node`; the values of the nodes
/// in `skip` are left out. Compact, since it is hashed for every item of
/// every list: kind and style in a byte, a byte saying which strings are
/// there, and only those, length-prefixed.
fn feed(out: &mut Vec<u8>, node: &Node, skip: &[*const Node; 3]) {
    let skipped = skip.contains(&(node as *const Node));
    let value = if skipped { "" } else { node.value.as_str() };
    let strings = [
        node.tag.as_str(),
        value,
        &node.anchor,
        &node.head_comment,
        &node.line_comment,
        &node.foot_comment,
    ];
    let present = strings
        .iter()
        .enumerate()
        .fold(u8::from(skipped) << 6, |flags, (i, s)| {
            flags | u8::from(!s.is_empty()) << i
        });
    out.extend_from_slice(&[node.kind as u8, node.style.0, present]);
    for s in strings.iter().filter(|s| !s.is_empty()) {
        varint(out, s.len());
        out.extend_from_slice(s.as_bytes());
    }
    varint(out, node.content.len());
    for child in &node.content {
        feed(out, child, skip);
    }
}

fn varint(out: &mut Vec<u8>, mut n: usize) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kyaml::rnode::tests::parse;

    fn item(ids: [&str; 3], extra: &str) -> Node {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    \
             {MIGRATION_ID}: '{}'\n    {ID_ANNOTATION}: '{}'\n    {LEGACY_ID_ANNOTATION}: '{}'\n\
             data:\n  x: y{extra}\n",
            ids[0], ids[1], ids[2]
        );
        rnode::y_node(&parse(&text)).clone()
    }

    #[test]
    fn ids_do_not_change_the_fingerprint_and_everything_else_does() {
        let (a, ids) = fingerprint(&item(["0", "1", "1"], "")).unwrap();
        let (b, _) = fingerprint(&item(["12", "13", "13"], "")).unwrap();
        let (c, _) = fingerprint(&item(["0", "1", "1"], " # c")).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(ids, ["0", "1", "1"].map(String::from));
    }

    #[test]
    fn a_remembered_text_gets_the_new_ids() {
        let encode =
            |root: &mut Node| crate::kyaml::yamlio::encode_documents([(&*root, true)]).ok();
        let mut first = item(["3", "4", "4"], " # first");
        let (text, entry) = item_text(&mut first, false, encode).unwrap();
        assert!(entry.is_some());
        let mut second = item(["103", "104", "104"], " # first");
        let (remembered, entry) = item_text(&mut second, true, encode).unwrap();
        assert!(entry.is_some());
        assert_ne!(text, remembered);
        assert_eq!(Some(remembered), encode(&mut second));
    }

    #[test]
    fn an_id_pattern_elsewhere_in_the_text_is_not_remembered() {
        let encode =
            |root: &mut Node| crate::kyaml::yamlio::encode_documents([(&*root, true)]).ok();
        let extra = format!("\n  z: |\n    {LEGACY_ID_ANNOTATION}: '7'");
        let mut node = item(["6", "7", "7"], &extra);
        let (_, entry) = item_text(&mut node, false, encode).unwrap();
        assert!(entry.is_none());
    }

    /// An exported memo holding one entry for `extra`, whose echo is known
    /// to read back plainly.
    fn exported(extra: &str) -> (Fingerprint, Vec<u8>) {
        let encode =
            |root: &mut Node| crate::kyaml::yamlio::encode_documents([(&*root, true)]).ok();
        let mut node = item(["1", "2", "2"], extra);
        let (_, entry) = item_text(&mut node, false, encode).unwrap();
        entry.unwrap().learn_echo(&node);
        let (fp, _) = fingerprint(&node).unwrap();
        (fp, export().unwrap())
    }

    #[test]
    fn an_export_reads_back_and_a_damaged_one_is_refused() {
        let (fp, bytes) = exported(" # exported");
        let entries = decode_export(&bytes).unwrap();
        let (_, entry) = entries.iter().find(|(f, _)| *f == fp).unwrap();
        let remembered = memo().get(&fp).unwrap();
        assert_eq!(entry.text, remembered.text);
        assert_eq!(entry.values, remembered.values);
        assert_eq!(entry.echo.get(), remembered.echo.get());
        assert!(!entry.used.load(Ordering::Relaxed));
        let mut flipped = bytes.clone();
        flipped[EXPORT_HEADER.len() + 40] ^= 1;
        assert!(decode_export(&flipped).is_none());
        assert!(decode_export(&bytes[..bytes.len() - 1]).is_none());
        let mut other_version = bytes.clone();
        other_version[EXPORT_HEADER.len() - 2] ^= 1;
        let sum = blake3::hash(&other_version[..bytes.len() - 32]);
        let n = other_version.len();
        other_version[n - 32..].copy_from_slice(sum.as_bytes());
        assert!(decode_export(&other_version).is_none());
    }

    #[test]
    fn exported_places_must_hold_together() {
        let text = b"a: '1'\nb: '2'\nc: '3'\n";
        let good = [(4..5, 0), (11..12, 1), (18..19, 2)];
        assert!(holds_together(text, &good));
        let mut twice = good.clone();
        twice[1].1 = 0;
        assert!(!holds_together(text, &twice));
        let mut outside = good.clone();
        outside[2] = (18..40, 2);
        assert!(!holds_together(text, &outside));
        let mut unquoted = good.clone();
        unquoted[0] = (3..5, 0);
        assert!(!holds_together(text, &unquoted));
    }

    #[test]
    fn flow_annotations_and_odd_ids_are_not_fingerprinted() {
        let text = format!(
            "metadata:\n  annotations: {{{MIGRATION_ID}: '0', {ID_ANNOTATION}: '1', \
             {LEGACY_ID_ANNOTATION}: '1'}}\n"
        );
        assert!(fingerprint(rnode::y_node(&parse(&text))).is_none());
        assert!(fingerprint(&item(["0", "01", "01"], "")).is_none());
        assert!(fingerprint(&item(["0", "x", "1"], "")).is_none());
    }
}
