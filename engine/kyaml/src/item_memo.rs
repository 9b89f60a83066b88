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
//! Two fingerprints are taken. The text's leaves out, besides the ids'
//! values, what the encoder does not read: a node with no tag is written
//! as the same node with the tag the parser gives it — `!!map`, `!!seq`,
//! or `!!str` for a scalar that is quoted or reads as a string — which is
//! how an item read from its file (whose reader annotations kio.Pipeline
//! set without tags) and the same item after one echo (parsed, so tagged)
//! differ; the second finds the first's text. The item's own fingerprint
//! also covers which nodes had no tag, and keys what is known of its echo
//! (which the tags change).
//!
//! `KRMGRAPH_CHECK_DIRECT=1` (CI) encodes every remembered item again and
//! fails on a difference; the echo check already reads every echo back the
//! long way.
//!
//! An [`ItemMemo`] is a value its owner passes down: one render's, or a
//! `watch` session's across its renders. It forgets everything once its
//! texts pass 256 MiB. A render with a cache store passes it on to the next
//! process ([`ItemMemo::export`], [`ItemMemo::import`], kept in the store by
//! the step cache): the entries it used whose echoes read back plainly,
//! which is what the ancestors of an edited package pass up again.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::kioutil::{
    ID_ANNOTATION, INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION as MIGRATION_ID,
    LEGACY_ID_ANNOTATION,
};
use super::rnode::{self, MapEntry};
use super::{byteio, kio_pipeline};
use krmgraph_yaml::node::tag;
use krmgraph_yaml::resolve::resolve_tag;
use krmgraph_yaml::{Kind, Node, Style};

/// The annotations numbered by position, in the order their values are
/// kept.
const IDS: [&str; 3] = [MIGRATION_ID, ID_ANNOTATION, LEGACY_ID_ANNOTATION];

/// The texts the memo keeps before it starts over.
const BUDGET: usize = 256 << 20;

const SHARDS: usize = 16;

/// A blake3 fingerprint.
pub type Fingerprint = [u8; 32];

/// A map by fingerprint. Its keys are already uniformly random, so a
/// slot is taken from eight of their bytes instead of hashing them again
/// (not the first: the memos' shards are picked by the first byte).
pub type FingerprintMap<V> =
    HashMap<Fingerprint, V, std::hash::BuildHasherDefault<FingerprintHasher>>;

/// [`FingerprintMap`]'s hasher: bytes 8 to 16 of what is written.
#[derive(Default)]
pub struct FingerprintHasher(u64);

impl std::hash::Hasher for FingerprintHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // A fingerprint's bytes come in one write (after its length, as a
        // `usize`); anything shorter is mixed in.
        match bytes.get(8..16).and_then(|b| b.first_chunk::<8>()) {
            Some(head) => self.0 ^= u64::from_le_bytes(*head),
            None => {
                for &b in bytes {
                    self.0 = self.0.rotate_left(8) ^ u64::from(b);
                }
            }
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.0 = self.0.rotate_left(13) ^ n as u64;
    }
}

/// Each item's memo entry, by position in its list (`None` where it has
/// none).
pub type Entries = Vec<Option<Arc<Entry>>>;

/// An item's text in a ResourceList, shared by the items that encode
/// alike.
#[derive(Debug)]
struct Text {
    /// The text fingerprint of the items it is the text of.
    fingerprint: Fingerprint,
    text: Vec<u8>,
    /// Where each id's value is in `text` (inside its quotes), in text
    /// order, with the index of the id in [`IDS`].
    values: [(Range<usize>, usize); 3],
}

/// An item's two fingerprints: of what its text depends on, and of the
/// item itself (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fingerprints {
    text: Fingerprint,
    item: Fingerprint,
}

/// One remembered item.
#[derive(Debug)]
pub struct Entry {
    /// The item's fingerprint, which it is remembered under.
    fingerprint: Fingerprint,
    text: Arc<Text>,
    /// Once an echo of the item is known to read back as the item less its
    /// ids: the style and tag of the migration id's key and value after
    /// reading back (the one id restoring keeps; the parser gives the
    /// key a tag kio.Pipeline's setter does not).
    echo: OnceLock<MigrationIdLook>,
    /// Whether the memo's owner looked the item up or remembered it (what
    /// [`ItemMemo::export`] keeps).
    used: AtomicBool,
}

impl Entry {
    /// The item's fingerprint: [`ItemMemo::remembered`] finds the entry by
    /// it.
    pub fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    /// The item's text in a list where it is at `position` (its ids are
    /// numbered by position).
    pub fn text_at(&self, position: usize) -> ItemText {
        let id = (position + 1).to_string();
        let ids = [position.to_string(), id.clone(), id];
        ItemText(Piece::Remembered(self.text.clone(), ids))
    }

    /// Whether an echo of this item is known to read back as the item less
    /// its ids.
    pub fn echo_reads_back_plainly(&self) -> bool {
        self.echo.get().is_some()
    }

    /// What [`kio_pipeline::restore_echo`] makes of an echo of `item`, when
    /// the echo is known to read back plainly: the item less its ids, with
    /// the migration id as it reads back.
    pub fn restore_echo(&self, item: &mut Node) -> super::Result<()> {
        less_ids(item, self.echo.get())
    }
}

/// The style and tag of the migration id's key and value in `restored` (an
/// output item kpt read back and restored): what [`less_ids`] gives them.
pub type MigrationIdLook = [(Style, compact_str::CompactString); 2];

/// [`MigrationIdLook`] of `restored`, which has the migration id.
pub fn migration_id_look(restored: &Node) -> Option<MigrationIdLook> {
    let pair = annotation(restored, MIGRATION_ID)?;
    let look = |n: &Node| (n.style, n.tag.clone());
    Some([look(pair.key), look(pair.value)])
}

/// Makes an input item (with its ids) the output item of a function that
/// gave it back as it was: the item's root, less its ids, with the
/// migration id's key and value styled as `look` says kpt reads them back.
pub fn less_ids(item: &mut Node, look: Option<&MigrationIdLook>) -> super::Result<()> {
    *item = byteio::into_y_node(std::mem::take(item));
    kio_pipeline::clear_ids(item)?;
    let (Some([key, value]), Some(pair)) = (look, annotation_mut(item, MIGRATION_ID)) else {
        return Ok(());
    };
    (pair[0].style, pair[0].tag) = (key.0, key.1.clone());
    (pair[1].style, pair[1].tag) = (value.0, value.1.clone());
    Ok(())
}

impl Text {
    /// The text with `ids` (in [`IDS`] order) as the values.
    fn with(&self, ids: &[&str; 3]) -> Vec<u8> {
        let mut out = vec![0; self.len_with(ids)];
        self.write_with(ids, &mut out);
        out
    }

    /// The length of [`Text::with`].
    fn len_with(&self, ids: &[&str; 3]) -> usize {
        let values: usize = self.values.iter().map(|(range, _)| range.len()).sum();
        let new: usize = self.values.iter().map(|(_, id)| ids[*id].len()).sum();
        self.text.len() - values + new
    }

    /// Writes [`Text::with`] into `out`, which is exactly as long.
    fn write_with(&self, ids: &[&str; 3], out: &mut [u8]) {
        let mut at = 0;
        let mut to = 0;
        let mut put = |bytes: &[u8]| {
            out[to..to + bytes.len()].copy_from_slice(bytes);
            to += bytes.len();
        };
        for (range, id) in &self.values {
            put(&self.text[at..range.start]);
            put(ids[*id].as_bytes());
            at = range.end;
        }
        put(&self.text[at..]);
    }
}

/// An item's text in a ResourceList ([`ItemMemo::item_text`]): encoded, or a
/// remembered text that gets the item's own ids as it is written, so the
/// texts of a list go straight into the list's buffer.
pub struct ItemText(Piece);

enum Piece {
    Encoded(Vec<u8>),
    /// A remembered text, and the item's ids in [`IDS`] order.
    Remembered(Arc<Text>, [String; 3]),
}

impl ItemText {
    /// An item's text as encoded.
    pub fn encoded(bytes: Vec<u8>) -> ItemText {
        ItemText(Piece::Encoded(bytes))
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        match &self.0 {
            Piece::Encoded(bytes) => bytes.len(),
            Piece::Remembered(text, ids) => text.len_with(&ids.each_ref().map(String::as_str)),
        }
    }

    /// Whether it is empty (no item's text is).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes it into `out`, which is exactly [`ItemText::len`] long.
    pub fn write_to(&self, out: &mut [u8]) {
        match &self.0 {
            Piece::Encoded(bytes) => out.copy_from_slice(bytes),
            Piece::Remembered(text, ids) => {
                text.write_with(&ids.each_ref().map(String::as_str), out)
            }
        }
    }

    /// Its bytes.
    pub fn into_bytes(self) -> Vec<u8> {
        match self.0 {
            Piece::Encoded(bytes) => bytes,
            Piece::Remembered(text, ids) => text.with(&ids.each_ref().map(String::as_str)),
        }
    }
}

type Shards<T> = [Mutex<FingerprintMap<Arc<T>>>; SHARDS];

/// The item memo (see the module doc). Shared by the threads of a render
/// through `&`.
pub struct ItemMemo {
    /// By item fingerprint.
    entries: Shards<Entry>,
    /// By text fingerprint.
    texts: Shards<Text>,
    /// The size of the texts.
    bytes: AtomicUsize,
    /// Entries learnt that an [`ItemMemo::export`] writes (items whose
    /// echo was found to read back plainly) and an import did not give.
    learnt: AtomicUsize,
    /// Whether an export was imported (only the first is).
    imported: AtomicBool,
}

impl Default for ItemMemo {
    fn default() -> Self {
        ItemMemo {
            entries: std::array::from_fn(|_| Mutex::default()),
            texts: std::array::from_fn(|_| Mutex::default()),
            bytes: AtomicUsize::new(0),
            learnt: AtomicUsize::new(0),
            imported: AtomicBool::new(false),
        }
    }
}

impl std::fmt::Debug for ItemMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ItemMemo")
            .field("bytes", &self.bytes.load(Ordering::Relaxed))
            .field("learnt", &self.learnt.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

fn shard<'m, T>(shards: &'m Shards<T>, fp: &Fingerprint) -> MutexGuard<'m, FingerprintMap<Arc<T>>> {
    shards[usize::from(fp[0]) % SHARDS]
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

impl ItemMemo {
    fn get(&self, fp: &Fingerprint) -> Option<Arc<Entry>> {
        let entry = shard(&self.entries, fp).get(fp).cloned()?;
        entry.used.store(true, Ordering::Relaxed);
        Some(entry)
    }

    fn text(&self, fp: &Fingerprint) -> Option<Arc<Text>> {
        shard(&self.texts, fp).get(fp).cloned()
    }

    /// Remembers `text` (new, unless `known`) and an entry for it.
    fn insert(&self, fps: Fingerprints, text: Arc<Text>, known: bool) -> Arc<Entry> {
        let entry = Arc::new(Entry {
            fingerprint: fps.item,
            text: text.clone(),
            echo: OnceLock::new(),
            used: AtomicBool::new(true),
        });
        if !known {
            let size = text.text.len();
            if self.bytes.fetch_add(size, Ordering::Relaxed) + size > BUDGET {
                self.clear();
                self.bytes.store(size, Ordering::Relaxed);
            }
            shard(&self.texts, &fps.text).insert(fps.text, text);
        }
        shard(&self.entries, &fps.item).insert(fps.item, entry.clone());
        entry
    }

    fn clear(&self) {
        for s in &self.entries {
            s.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
        for s in &self.texts {
            s.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
    }
}

/// The start of an exported memo: what wrote it. Another version's memo is
/// not read (its encoder may write other texts).
const EXPORT_HEADER: &[u8] =
    concat!("krmgraph item memo v2 ", env!("CARGO_PKG_VERSION"), "\n").as_bytes();

impl ItemMemo {
    /// The entries used whose echoes read back plainly (the items a later
    /// render passes up again), for a later process to
    /// [`ItemMemo::import`]; `None` when there are none. The last 32 bytes
    /// are the blake3 of the rest.
    pub fn export(&self) -> Option<Vec<u8>> {
        framed(EXPORT_HEADER, |out| {
            let mut count = 0u32;
            for shard in &self.entries {
                let shard = shard.lock().unwrap_or_else(|e| e.into_inner());
                for (fp, entry) in shard.iter() {
                    let Some(echo) = entry.echo.get() else {
                        continue;
                    };
                    let text = &entry.text;
                    if !entry.used.load(Ordering::Relaxed) || text.text.len() > u32::MAX as usize {
                        continue;
                    }
                    count += 1;
                    out.extend_from_slice(fp);
                    out.extend_from_slice(&text.fingerprint);
                    put_bytes(out, &text.text);
                    for (range, id) in &text.values {
                        out.extend_from_slice(&(range.start as u32).to_le_bytes());
                        out.extend_from_slice(&(range.end as u32).to_le_bytes());
                        out.push(*id as u8);
                    }
                    for (style, tag) in echo {
                        out.push(style.0);
                        put_bytes(out, tag.as_bytes());
                    }
                }
            }
            count
        })
    }

    /// How many entries this memo learnt that an [`ItemMemo::export`]
    /// writes and an import did not give it.
    pub fn learnt(&self) -> usize {
        self.learnt.load(Ordering::Relaxed)
    }

    /// Remembers the entries of an [`ItemMemo::export`] (the first one
    /// given only; entries the memo has already are kept). Anything wrong
    /// with `bytes` — another version, damage, an entry that does not hold
    /// together — and nothing is imported. Returns how many entries were.
    pub fn import(&self, bytes: &[u8]) -> usize {
        if self.imported.swap(true, Ordering::SeqCst) {
            return 0;
        }
        let Some(entries) = decode_export(bytes) else {
            return 0;
        };
        let count = entries.len();
        for (fps, entry) in entries {
            let text = {
                let mut texts = shard(&self.texts, &fps.text);
                let text = texts.entry(fps.text).or_insert_with(|| {
                    self.bytes
                        .fetch_add(entry.text.text.len(), Ordering::Relaxed);
                    entry.text.clone()
                });
                text.clone()
            };
            shard(&self.entries, &fps.item)
                .entry(fps.item)
                .or_insert_with(|| Arc::new(Entry { text, ..entry }));
        }
        count
    }

    /// Records that an echo of `entry`'s item read back plainly:
    /// `restored` is the echo, restored.
    pub fn learn_echo(&self, entry: &Entry, restored: &Node) {
        if let Some(look) = migration_id_look(restored) {
            if entry.echo.set(look).is_ok() {
                self.learnt.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The entry remembered for the item whose fingerprint is
    /// `fingerprint`.
    pub fn remembered(&self, fingerprint: &Fingerprint) -> Option<Arc<Entry>> {
        self.get(fingerprint)
    }

    /// The text of `root` (an item's mapping) in a ResourceList, from the
    /// memo or from `encode` (which is then remembered), and the memo's entry
    /// for it. `None` when `encode` fails. `check`: encode remembered items
    /// too and panic on a difference.
    pub fn item_text(
        &self,
        root: &mut Node,
        check: bool,
        encode: impl Fn(&mut Node) -> Option<Vec<u8>>,
    ) -> Option<(ItemText, Option<Arc<Entry>>)> {
        let Some((fps, ids)) = fingerprint(root) else {
            return encode(root).map(|text| (ItemText::encoded(text), None));
        };
        let memo = self;
        let (entry, remembered) = match memo.get(&fps.item) {
            Some(entry) => (entry, true),
            None => match memo.text(&fps.text) {
                // Another item encodes alike (see the module doc).
                Some(text) => (memo.insert(fps, text, true), true),
                None => {
                    let text = encode(root)?;
                    let Some(values) = values_in(&text, &ids.each_ref().map(String::as_str)) else {
                        return Some((ItemText::encoded(text), None));
                    };
                    let remembered = Arc::new(Text {
                        fingerprint: fps.text,
                        text,
                        values,
                    });
                    (memo.insert(fps, remembered, false), false)
                }
            },
        };
        if check && remembered {
            let text = entry.text.with(&ids.each_ref().map(String::as_str));
            let fresh = encode(root);
            assert!(
                fresh.as_deref() == Some(text.as_slice()),
                "KRMGRAPH_CHECK_DIRECT: a remembered item's text differs from its encoding\n\
                 remembered: {}\nencoded: {}",
                String::from_utf8_lossy(&text),
                String::from_utf8_lossy(fresh.as_deref().unwrap_or_default()),
            );
        }
        Some((
            ItemText(Piece::Remembered(entry.text.clone(), ids)),
            Some(entry),
        ))
    }
}

/// Appends `bytes` with their length (a little-endian u32) before them.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// An export: `header`, the count of entries `write` appended after it,
/// the entries, and the blake3 of all that; `None` when `write` wrote
/// none.
pub fn framed(header: &[u8], write: impl FnOnce(&mut Vec<u8>) -> u32) -> Option<Vec<u8>> {
    let mut out = header.to_vec();
    let count_at = out.len();
    out.extend_from_slice(&[0; 4]);
    let count = write(&mut out);
    if count == 0 {
        return None;
    }
    out[count_at..count_at + 4].copy_from_slice(&count.to_le_bytes());
    let sum = blake3::hash(&out);
    out.extend_from_slice(sum.as_bytes());
    Some(out)
}

/// What [`framed`] wrote under `header`: the entry count and a reader at
/// the first entry; `None` when the checksum or the header differs.
pub fn unframed<'a>(bytes: &'a [u8], header: &[u8]) -> Option<(u32, Reader<'a>)> {
    let (content, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if blake3::hash(content).as_bytes() != sum {
        return None;
    }
    let mut r = Reader(content.strip_prefix(header)?);
    let count = r.u32()?;
    Some((count, r))
}

fn decode_export(bytes: &[u8]) -> Option<Vec<(Fingerprints, Entry)>> {
    let (count, mut r) = unframed(bytes, EXPORT_HEADER)?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let item: Fingerprint = r.take(32)?.try_into().ok()?;
        let text_fp: Fingerprint = r.take(32)?.try_into().ok()?;
        let text = r.bytes()?.to_vec();
        let mut values: [(Range<usize>, usize); 3] = Default::default();
        for value in &mut values {
            let (start, end) = (r.u32()? as usize, r.u32()? as usize);
            *value = (start..end, usize::from(r.take(1)?[0]));
        }
        let mut echo: MigrationIdLook = Default::default();
        for look in &mut echo {
            let style = Style(r.take(1)?[0]);
            *look = (style, std::str::from_utf8(r.bytes()?).ok()?.into());
        }
        if !holds_together(&text, &values) {
            return None;
        }
        let text = Arc::new(Text {
            fingerprint: text_fp,
            text,
            values,
        });
        entries.push((
            Fingerprints {
                text: text_fp,
                item,
            },
            Entry {
                fingerprint: item,
                text,
                echo: OnceLock::from(echo),
                used: AtomicBool::new(false),
            },
        ));
    }
    r.is_done().then_some(entries)
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

/// Reads what [`put_bytes`] and fixed-size fields wrote.
pub struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    /// Whether everything has been read.
    pub fn is_done(&self) -> bool {
        self.0.is_empty()
    }

    /// The next `n` bytes, if there are as many.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    /// The next bytes [`put_bytes`] wrote (length-prefixed).
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

/// Where each id's value is in `text`: `None` unless each `key: 'value'`
/// is there exactly once.
fn values_in(text: &[u8], ids: &[&str; 3]) -> Option<[(Range<usize>, usize); 3]> {
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

/// The fingerprints of `root` without its ids' values, and those values;
/// `None` unless the ids are where the memo can replace them (see the
/// module doc).
fn fingerprint(root: &Node) -> Option<(Fingerprints, [String; 3])> {
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
        ids[i] = value.value.to_string();
    }
    Some((fingerprints_skipping(root, &skip).0, ids))
}

/// An item's fingerprint as [`ItemMemo::item_text`] takes it (see the module doc),
/// with the values of the `skip` nodes left out (their kind, style and tag
/// are kept).
pub fn fingerprint_skipping(node: &Node, skip: &[*const Node]) -> Fingerprint {
    fingerprints_skipping(node, skip).0.item
}

/// [`fingerprint_skipping`] of `node` less the mapping entries whose
/// values are the `drop` nodes (keys, values and all), and whether any node
/// of `node` has a foot comment (found on the same walk).
pub fn fingerprint_and_foot(
    node: &Node,
    skip: &[*const Node],
    drop: &[*const Node],
) -> (Fingerprint, bool) {
    let (fingerprints, foot) = fingerprints_dropping(node, skip, drop);
    (fingerprints.item, foot)
}

fn fingerprints_skipping(node: &Node, skip: &[*const Node]) -> (Fingerprints, bool) {
    fingerprints_dropping(node, skip, &[])
}

fn fingerprints_dropping(
    node: &Node,
    skip: &[*const Node],
    drop: &[*const Node],
) -> (Fingerprints, bool) {
    let mut feed = Feed {
        bytes: Vec::with_capacity(4096),
        untagged: Vec::new(),
        nodes: 0,
        foot: false,
        skip,
        drop,
    };
    feed.node(node);
    let text = *blake3::hash(&feed.bytes).as_bytes();
    let mut item = blake3::Hasher::new();
    item.update(&text);
    for ordinal in &feed.untagged {
        item.update(&ordinal.to_le_bytes());
    }
    let item = *item.finalize().as_bytes();
    (Fingerprints { text, item }, feed.foot)
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
pub fn is_id(value: &str) -> bool {
    !value.is_empty()
        && value.bytes().all(|b| b.is_ascii_digit())
        && (value == "0" || !value.starts_with('0'))
}

/// What the fingerprints cover of an item, gathered in one walk.
struct Feed<'s> {
    /// The text fingerprint's input. Compact, since it is hashed for every
    /// item of every list: per node, kind and style in a byte, a byte
    /// saying which strings are there, and only those, length-prefixed.
    bytes: Vec<u8>,
    /// The ordinals (in walk order) of the nodes fed with the tag they are
    /// written alike with, having none.
    untagged: Vec<u32>,
    nodes: u32,
    /// Whether a node fed so far has a foot comment.
    foot: bool,
    /// The nodes whose values are left out (the ids' values).
    skip: &'s [*const Node],
    /// The values of the mapping entries left out whole.
    drop: &'s [*const Node],
}

impl Feed<'_> {
    /// Feeds `node` and its descendants. Runs for every node of every item
    /// at every step, so the common node (no anchor or comments, nothing
    /// left out) takes a path of its own.
    fn node(&mut self, node: &Node) {
        let skipped = !self.skip.is_empty() && self.skip.contains(&(node as *const Node));
        let value = if skipped { "" } else { node.value.as_str() };
        let tag = match implied_tag(node) {
            Some(tag) => {
                self.untagged.push(self.nodes);
                tag
            }
            None => node.tag.as_str(),
        };
        self.nodes += 1;
        let flags =
            u8::from(skipped) << 6 | u8::from(!tag.is_empty()) | u8::from(!value.is_empty()) << 1;
        match node.has_extras() {
            false => {
                let out = &mut self.bytes;
                out.reserve(3 + 2 * 10 + tag.len() + value.len());
                out.extend_from_slice(&[node.kind as u8, node.style.0, flags]);
                put(out, tag);
                put(out, value);
            }
            true => self.extras(node, [tag, value], flags),
        }
        let drop = self.drop;
        if node.kind == Kind::Mapping && !drop.is_empty() {
            let kept =
                |pair: &&[Node]| pair.len() < 2 || !drop.contains(&(&pair[1] as *const Node));
            let pairs = node.content.chunks(2).filter(kept);
            varint(&mut self.bytes, pairs.clone().map(<[Node]>::len).sum());
            for child in pairs.flatten() {
                self.node(child);
            }
            return;
        }
        varint(&mut self.bytes, node.content.len());
        for child in &node.content {
            self.node(child);
        }
    }

    /// The head of a node with an anchor or comments: `strings` (its tag
    /// and value as fed) and then those, each flagged when present.
    fn extras(&mut self, node: &Node, strings: [&str; 2], flags: u8) {
        self.foot |= !node.foot_comment().is_empty();
        let extras = [
            node.anchor().as_str(),
            node.head_comment().as_str(),
            node.line_comment().as_str(),
            node.foot_comment().as_str(),
        ];
        let flags = extras.iter().enumerate().fold(flags, |flags, (i, s)| {
            flags | u8::from(!s.is_empty()) << (i + 2)
        });
        let out = &mut self.bytes;
        out.extend_from_slice(&[node.kind as u8, node.style.0, flags]);
        for s in strings.iter().chain(&extras) {
            put(out, s);
        }
    }
}

/// `s` length-prefixed, or nothing when it is empty (the node's flags say
/// which strings are there).
fn put(out: &mut Vec<u8>, s: &str) {
    if !s.is_empty() {
        varint(out, s.len());
        out.extend_from_slice(s.as_bytes());
    }
}

/// The tag that `node`, which has none, is written alike with
/// (`encode::presented_tag` drops both): `!!map` and `!!seq` for
/// collections, `!!str` for a scalar that is quoted or reads as a string;
/// `None` for a tagged node, an explicit tag style, or another scalar.
fn implied_tag(node: &Node) -> Option<&'static str> {
    if !node.tag.is_empty() || node.style.has(Style::TAGGED) {
        return None;
    }
    match node.kind {
        Kind::Mapping => Some(tag::MAP),
        Kind::Sequence => Some(tag::SEQ),
        Kind::Scalar
            if node.style.is_non_plain_scalar() || resolve_tag(&node.value) == tag::STR =>
        {
            Some(tag::STR)
        }
        _ => None,
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
    use crate::rnode::tests::parse;

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
        let memo = ItemMemo::default();
        let encode = |root: &mut Node| crate::yamlio::encode_documents([(&*root, true)]).ok();
        let mut first = item(["3", "4", "4"], " # first");
        let (text, entry) = memo.item_text(&mut first, false, encode).unwrap();
        assert!(entry.is_some());
        let mut second = item(["103", "104", "104"], " # first");
        let (remembered, entry) = memo.item_text(&mut second, true, encode).unwrap();
        assert!(entry.is_some());
        // Written into a buffer as long as it says, it is its bytes.
        let mut written = vec![0; remembered.len()];
        remembered.write_to(&mut written);
        assert_eq!(written, remembered.into_bytes());
        assert_ne!(text.into_bytes(), written);
        assert_eq!(Some(written), encode(&mut second));
    }

    /// `item` with its `data.x` key's tag (as the parser gives it) taken
    /// away, as kio.Pipeline's setters leave the keys they add.
    fn untagged(mut node: Node, key: &str) -> Node {
        let data = rnode::field_value_mut(&mut node, "data").unwrap();
        let i = data.content.iter().position(|k| k.value == key).unwrap();
        data.content[i].tag.clear();
        node
    }

    #[test]
    fn an_untagged_scalar_shares_the_text_of_the_tagged_one() {
        let memo = ItemMemo::default();
        let encodes = AtomicUsize::new(0);
        let encode = |root: &mut Node| {
            encodes.fetch_add(1, Ordering::Relaxed);
            crate::yamlio::encode_documents([(&*root, true)]).ok()
        };
        let tagged = item(["5", "6", "6"], " # shared");
        let mut plain = untagged(tagged.clone(), "x");
        let (a, _) = fingerprint(&tagged).unwrap();
        let (b, _) = fingerprint(&plain).unwrap();
        assert_eq!(a.text, b.text);
        assert_ne!(a.item, b.item, "the echo of each is known apart");
        let (first, _) = memo.item_text(&mut tagged.clone(), false, encode).unwrap();
        let (second, entry) = memo.item_text(&mut plain, true, encode).unwrap();
        assert_eq!(first.into_bytes(), second.into_bytes());
        assert!(!entry.unwrap().echo_reads_back_plainly());
        // The check encoded it; without the check nothing is.
        assert_eq!(encodes.load(Ordering::Relaxed), 2);
        let mut again = untagged(item(["7", "8", "8"], " # shared"), "x");
        memo.item_text(&mut again, false, encode).unwrap();
        assert_eq!(encodes.load(Ordering::Relaxed), 2);

        // A value that would read as another type is quoted when tagged
        // `!!str`, and written plain without a tag: no shared text.
        let number = |x: &str| {
            let mut n = item(["5", "6", "6"], "");
            let data = rnode::field_value_mut(&mut n, "data").unwrap();
            data.content[1].value = x.into();
            n
        };
        let (tagged, _) = fingerprint(&number("12")).unwrap();
        let mut bare = number("12");
        rnode::field_value_mut(&mut bare, "data").unwrap().content[1]
            .tag
            .clear();
        let (bare, _) = fingerprint(&bare).unwrap();
        assert_ne!(tagged.text, bare.text);
    }

    #[test]
    fn an_id_pattern_elsewhere_in_the_text_is_not_remembered() {
        let memo = ItemMemo::default();
        let encode = |root: &mut Node| crate::yamlio::encode_documents([(&*root, true)]).ok();
        let extra = format!("\n  z: |\n    {LEGACY_ID_ANNOTATION}: '7'");
        let mut node = item(["6", "7", "7"], &extra);
        let (_, entry) = memo.item_text(&mut node, false, encode).unwrap();
        assert!(entry.is_none());
    }

    /// An exported memo holding one entry for `extra`, whose echo is known
    /// to read back plainly.
    fn exported(memo: &ItemMemo, extra: &str) -> (Fingerprint, Vec<u8>) {
        let encode = |root: &mut Node| crate::yamlio::encode_documents([(&*root, true)]).ok();
        let mut node = item(["1", "2", "2"], extra);
        let (_, entry) = memo.item_text(&mut node, false, encode).unwrap();
        memo.learn_echo(&entry.unwrap(), &node);
        let (fps, _) = fingerprint(&node).unwrap();
        (fps.item, memo.export().unwrap())
    }

    #[test]
    fn an_export_reads_back_and_a_damaged_one_is_refused() {
        let memo = ItemMemo::default();
        let (fp, bytes) = exported(&memo, " # exported");
        let entries = decode_export(&bytes).unwrap();
        let (fps, entry) = entries.iter().find(|(f, _)| f.item == fp).unwrap();
        let remembered = memo.get(&fp).unwrap();
        assert_eq!(fps.text, remembered.text.fingerprint);
        assert_eq!(entry.text.text, remembered.text.text);
        assert_eq!(entry.text.values, remembered.text.values);
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
