//! The items a per-item built-in is known to give back as they are.
//!
//! Every package's pipeline hands its output up the tree, so with the same
//! built-in at every level (a monorepo whose every Kptfile runs
//! set-namespace and set-labels), a resource four packages deep goes
//! through the same step five times. From the second or third time on the
//! step gives it back unchanged, yet running it costs the whole function
//! boundary: the input as the function reads it, the transformation, the
//! output as kpt reads it back, comments and field order restored.
//!
//! A built-in whose output items each depend only on the matching input
//! item and the functionConfig ([`super::Builtin::per_item`]) can skip the
//! items it is known to leave alone. An item is known under blake3 over the
//! step (image, behaviour version, functionConfig) and the item less the
//! values of the annotations that change as it goes up the tree: the ids
//! kio.Pipeline numbers by position and the two path annotations, which
//! gain the subpackage's directory. The function cannot tell those values
//! apart, so they are left out only where that holds for every part of the
//! boundary: ids in kio.Pipeline's form, and paths of plain characters that
//! read as strings (so every writer keeps their style); their kind, style
//! and tag stay in the key. An item is learnt as a fixed point when the
//! step's restored output is the input less its ids (the migration id
//! styled as kpt reads it back); a known item's output is then made that
//! way without running the function. Nothing differs but source positions,
//! as on the rest of the node boundary; `KRMGRAPH_CHECK_DIRECT=1` runs every
//! such step on the bytes too and compares.
//!
//! What is known is the process's (a `watch` renders many times); it starts
//! over past a million items.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::kyaml::item_memo::{self, Fingerprint, MigrationIdLook};
use crate::kyaml::kioutil::{
    ID_ANNOTATION, INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION as MIGRATION_ID,
    LEGACY_ID_ANNOTATION, LEGACY_PATH_ANNOTATION, PATH_ANNOTATION,
};
use crate::kyaml::{byteio, rnode};
use crate::yaml::node::tag;
use crate::yaml::resolve::resolve_tag;
use crate::yaml::{Kind, Node, Style};

use super::direct::same_but_positions;

/// The items known before the set starts over.
const LIMIT: usize = 1 << 20;

const SHARDS: usize = 16;

/// Annotations whose values change as an item goes up the tree, and which
/// of them are ids (the rest are paths).
const VARYING: [(&str, bool); 5] = [
    (MIGRATION_ID, true),
    (ID_ANNOTATION, true),
    (LEGACY_ID_ANNOTATION, true),
    (PATH_ANNOTATION, false),
    (LEGACY_PATH_ANNOTATION, false),
];

/// One run of a per-item built-in: the image, its behaviour version and
/// the functionConfig it gets.
pub struct Step(Fingerprint);

impl Step {
    /// The step of `image` (behaviour `version`) with `config`.
    pub fn new(image: &str, version: &str, config: Option<&Node>) -> Step {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"krmgraph fixed point v1\0");
        for part in [image, version] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part.as_bytes());
        }
        match config {
            Some(config) => hasher.update(&item_memo::fingerprint_skipping(config, &[])),
            None => hasher.update(b"no config"),
        };
        Step(*hasher.finalize().as_bytes())
    }

    /// The key `item` (an input item, ids set) is known under; `None`
    /// where an annotation that varies has a value the key cannot leave
    /// out.
    pub fn key(&self, item: &Node) -> Option<Fingerprint> {
        self.key_and_foot(item).map(|(key, _)| key)
    }

    /// [`Step::key`], and whether `item` has a foot comment, found on the
    /// walk that keys it.
    fn key_and_foot(&self, item: &Node) -> Option<(Fingerprint, bool)> {
        let skip = varying_values(rnode::y_node(item))?;
        let (fingerprint, foot) = item_memo::fingerprint_and_foot(item, &skip);
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.0);
        hasher.update(&fingerprint);
        Some((*hasher.finalize().as_bytes(), foot))
    }
}

/// The value nodes of the annotations that vary, where each is one the
/// function cannot tell from another.
fn varying_values(root: &Node) -> Option<Vec<*const Node>> {
    let Some(annotations) = rnode::field_value(root, rnode::METADATA_FIELD)
        .and_then(|m| rnode::field_value(m, rnode::ANNOTATIONS_FIELD))
    else {
        return Some(Vec::new());
    };
    let mut skip = Vec::with_capacity(VARYING.len());
    for (name, is_id) in VARYING {
        let Some(entry) = rnode::field(annotations, name) else {
            continue;
        };
        let value = entry.value;
        let alike = value.kind == Kind::Scalar
            && value.anchor().is_empty()
            && if is_id {
                item_memo::is_id(&value.value)
            } else {
                is_plain_path(&value.value)
            };
        if !alike {
            return None;
        }
        skip.push(value as *const Node);
    }
    Some(skip)
}

/// A path every writer writes in whatever style it has, whatever its
/// characters: letters, digits and `._/-`, not first a `.` or `-` (which
/// can start an indicator), reading as a string.
fn is_plain_path(value: &str) -> bool {
    let bytes = value.as_bytes();
    !bytes.is_empty()
        && !matches!(bytes[0], b'.' | b'-')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'/' | b'-'))
        && resolve_tag(value) == tag::STR
}

/// What is known of one fixed point: how the migration id reads back.
type Known = Option<MigrationIdLook>;

/// A known fixed point, and whether this process looked it up or learnt
/// it (what [`export`] keeps).
type Entry = (Known, bool);

struct Set {
    shards: [Mutex<HashMap<Fingerprint, Entry>>; SHARDS],
    len: AtomicUsize,
}

fn set() -> &'static Set {
    static SET: OnceLock<Set> = OnceLock::new();
    SET.get_or_init(|| Set {
        shards: std::array::from_fn(|_| Mutex::default()),
        len: Default::default(),
    })
}

fn shard(key: &Fingerprint) -> MutexGuard<'static, HashMap<Fingerprint, Entry>> {
    set().shards[usize::from(key[0]) % SHARDS]
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// Whether the item under `key` is a known fixed point, and how its
/// migration id reads back.
pub fn lookup(key: &Fingerprint) -> Option<Known> {
    let mut shard = shard(key);
    let (known, used) = shard.get_mut(key)?;
    *used = true;
    Some(known.clone())
}

/// Knows `key`, unless the set is full: then it starts over.
fn insert(key: Fingerprint, entry: Entry) {
    let set = set();
    if set.len.fetch_add(1, Ordering::Relaxed) >= LIMIT {
        for shard in &set.shards {
            shard.lock().unwrap_or_else(|e| e.into_inner()).clear();
        }
        set.len.store(1, Ordering::Relaxed);
    }
    shard(&key).entry(key).or_insert(entry);
}

/// The start of an exported set: what wrote it.
const EXPORT_HEADER: &[u8] =
    concat!("krmgraph fixed points v1 ", env!("CARGO_PKG_VERSION"), "\n").as_bytes();

/// The fixed points this process looked up or learnt (what the ancestors
/// of an edited package meet again), for a later process to [`import`];
/// `None` when there are none. The last 32 bytes are the blake3 of the
/// rest.
pub fn export() -> Option<Vec<u8>> {
    item_memo::framed(EXPORT_HEADER, |out| {
        let mut count = 0u32;
        for shard in &set().shards {
            let shard = shard.lock().unwrap_or_else(|e| e.into_inner());
            for (key, (known, _)) in shard.iter().filter(|(_, (_, used))| *used) {
                count += 1;
                out.extend_from_slice(key);
                out.push(u8::from(known.is_some()));
                for (style, tag) in known.iter().flatten() {
                    out.push(style.0);
                    item_memo::put_bytes(out, tag.as_bytes());
                }
            }
        }
        count
    })
}

/// Knows the fixed points of an [`export`] (as not yet used; once per
/// process). Anything wrong with `bytes` (another version, damage) and
/// nothing is imported. Returns how many were.
pub fn import(bytes: &[u8]) -> usize {
    static IMPORTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if IMPORTED.swap(true, Ordering::SeqCst) {
        return 0;
    }
    let Some(entries) = decode_export(bytes) else {
        return 0;
    };
    let count = entries.len();
    for (key, known) in entries {
        insert(key, (known, false));
    }
    count
}

fn decode_export(bytes: &[u8]) -> Option<Vec<(Fingerprint, Known)>> {
    let (count, mut r) = item_memo::unframed(bytes, EXPORT_HEADER)?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let key: Fingerprint = r.take(32)?.try_into().ok()?;
        let known = match r.take(1)?[0] {
            0 => None,
            1 => {
                let mut look: MigrationIdLook = Default::default();
                for (style, tag) in &mut look {
                    *style = Style(r.take(1)?[0]);
                    *tag = std::str::from_utf8(r.bytes()?).ok()?.into();
                }
                Some(look)
            }
            _ => return None,
        };
        entries.push((key, known));
    }
    r.is_done().then_some(entries)
}

/// The output of a step for an input item known to be a fixed point.
pub fn output(mut item: Node, known: &Known) -> crate::kyaml::Result<Node> {
    item_memo::less_ids(&mut item, known.as_ref())?;
    Ok(item)
}

/// Learns `input` (under `key`) as a fixed point if `output`, the step's
/// restored output for it, is what [`output`] would make of it.
pub fn learn(key: Fingerprint, input: &Node, restored: &Node) {
    if !same_less_ids(rnode::y_node(input), restored, Depth::Root) {
        return;
    }
    insert(key, (item_memo::migration_id_look(restored), true));
}

/// Where [`same_less_ids`] is in an item.
#[derive(Clone, Copy, PartialEq)]
enum Depth {
    Root,
    Metadata,
    Annotations,
    Below,
}

/// Whether `output` is `input` (an item's root) as [`output`] makes it:
/// less the ids' annotations, with the migration id's styles as they read
/// back; source positions aside. Compared in place: most items a step
/// learns from are not fixed points, and a copy of each would cost more
/// than the comparison.
fn same_less_ids(input: &Node, output: &Node, depth: Depth) -> bool {
    let same_look = |a: &Node, b: &Node| a.style == b.style && a.tag == b.tag;
    let same_but_look = |a: &Node, b: &Node| {
        a.kind == b.kind
            && a.value == b.value
            && a.anchor() == b.anchor()
            && a.head_comment() == b.head_comment()
            && a.line_comment() == b.line_comment()
            && a.foot_comment() == b.foot_comment()
    };
    let same_node = |a: &Node, b: &Node| same_look(a, b) && same_but_look(a, b);
    if depth == Depth::Below || input.kind != Kind::Mapping {
        return same_but_positions(input, output);
    }
    if !same_node(input, output) {
        return false;
    }
    let is_id = |k: &Node| {
        depth == Depth::Annotations
            && [ID_ANNOTATION, LEGACY_ID_ANNOTATION].contains(&k.value.as_str())
    };
    let kept = input.content.chunks_exact(2).filter(|kv| !is_id(&kv[0]));
    if kept.clone().count() * 2 != output.content.len() {
        return false;
    }
    kept.zip(output.content.chunks_exact(2)).all(|(i, o)| {
        let (next, field) = match depth {
            Depth::Root => (Depth::Metadata, rnode::METADATA_FIELD),
            Depth::Metadata => (Depth::Annotations, rnode::ANNOTATIONS_FIELD),
            _ => (Depth::Below, ""),
        };
        if depth == Depth::Annotations && i[0].value == MIGRATION_ID {
            // Its key and value read back with the styles kpt's parser
            // gives them, which `output` takes from the restored item.
            return same_but_look(&i[0], &o[0])
                && same_but_look(&i[1], &o[1])
                && i[1].content.is_empty()
                && o[1].content.is_empty();
        }
        same_node(&i[0], &o[0])
            && if i[0].value == field {
                same_less_ids(&i[1], &o[1], next)
            } else {
                same_but_positions(&i[1], &o[1])
            }
    })
}

/// Which items of `input` are known fixed points of `step` (`Some`), and
/// the keys of the others (`None` where an item has none); and which items
/// have a foot comment.
pub fn classify(step: &Step, input: &[Node]) -> (Vec<Lookup>, Vec<bool>) {
    use rayon::prelude::*;
    input
        .par_iter()
        .map(|item| match step.key_and_foot(item) {
            None => (Lookup::Unkeyed, byteio::has_foot_comment(item)),
            Some((key, foot)) => match lookup(&key) {
                Some(known) => (Lookup::Known(known), foot),
                None => (Lookup::Unknown(key), foot),
            },
        })
        .unzip()
}

/// What [`classify`] says of one item.
pub enum Lookup {
    /// A known fixed point.
    Known(Known),
    /// Not known yet; learnt under this key.
    Unknown(Fingerprint),
    /// Never known: a varying annotation has a value the key cannot leave
    /// out.
    Unkeyed,
}

impl Lookup {
    /// Whether the item is a known fixed point.
    pub fn is_known(&self) -> bool {
        matches!(self, Lookup::Known(_))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kyaml::rnode::tests::parse;

    fn item(path: &str, id: &str, extra: &str) -> Node {
        parse(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    \
             internal.config.kubernetes.io/path: {path}\n    \
             internal.config.kubernetes.io/id: '{id}'\n    config.k8s.io/id: '{id}'\n\
             data:\n  k: v{extra}\n"
        ))
    }

    #[test]
    fn an_export_holds_what_was_used_and_a_damaged_one_is_refused() {
        let step = Step::new("test-export", "1", None);
        let input = item("x/export.yaml", "3", "");
        let key = step.key(&input).unwrap();
        learn(key, &input, &output(input.clone(), &None).unwrap());
        let bytes = export().expect("one fixed point at least");
        let entries = decode_export(&bytes).expect("reads back");
        assert!(entries
            .iter()
            .any(|(k, known)| *k == key && known.is_none()));
        let mut damaged = bytes.clone();
        damaged[EXPORT_HEADER.len() + 6] ^= 1;
        assert!(decode_export(&damaged).is_none());
        assert!(decode_export(&bytes[..bytes.len() - 1]).is_none());
    }

    #[test]
    fn the_key_leaves_out_paths_and_ids_but_nothing_else() {
        let step = Step::new("gcr.io/kpt-fn/set-labels:v0.1.4", "1", None);
        let key = |n: &Node| step.key(n).unwrap();
        let a = key(&item("a.yaml", "1", ""));
        assert_eq!(a, key(&item("sub/dir/a.yaml", "17", "")));
        assert_ne!(a, key(&item("a.yaml", "1", " # c")));
        assert_ne!(a, key(&item("'a.yaml'", "1", "")), "the style is kept");
        let other = Step::new("gcr.io/kpt-fn/set-labels:v0.1.4", "2", None);
        assert_ne!(Some(a), other.key(&item("a.yaml", "1", "")));
        // Values a writer might write in another style are not left out.
        assert!(step.key(&item("'true'", "1", "")).is_none());
        assert!(step.key(&item("'a b.yaml'", "1", "")).is_none());
        assert!(step.key(&item("a.yaml", "01", "")).is_none());
    }

    #[test]
    fn only_an_output_that_is_the_input_less_its_ids_is_learnt() {
        let step = Step::new("test-learn", "1", None);
        let input = item("x/learn.yaml", "3", "");
        let key = step.key(&input).unwrap();
        let mut changed = output(input.clone(), &None).unwrap();
        rnode::set_annotation(&mut changed, "x", "y").unwrap();
        learn(key, &input, &changed);
        assert!(lookup(&key).is_none());
        let same = output(input.clone(), &None).unwrap();
        learn(key, &input, &same);
        let known = lookup(&key).expect("learnt");
        // In place, the comparison is the one with a copy made the way a
        // known item's output is made.
        let moved = |edit: &dyn Fn(&mut Node)| {
            let mut out = output(input.clone(), &None).unwrap();
            edit(&mut out);
            out
        };
        type Edit = Box<dyn Fn(&mut Node)>;
        let cases: [(&str, Edit); 4] = [
            ("as is", Box::new(|_| {})),
            (
                "a value",
                Box::new(|n| rnode::set_annotation(n, PATH_ANNOTATION, "z.yaml").unwrap()),
            ),
            (
                "a style",
                Box::new(|n| rnode::y_node_mut(n).style = crate::yaml::Style::FLOW),
            ),
            (
                "a field",
                Box::new(|n| rnode::set_annotation(n, "extra", "1").unwrap()),
            ),
        ];
        for (what, edit) in cases {
            let out = moved(&*edit);
            let expected = output(input.clone(), &None).unwrap();
            assert_eq!(
                same_less_ids(rnode::y_node(&input), &out, Depth::Root),
                same_but_positions(&expected, &out),
                "{what}"
            );
        }
        let next = item("y/x/learn.yaml", "9", "");
        assert_eq!(step.key(&next), Some(key));
        let out = output(next, &known).unwrap();
        assert!(rnode::get_annotation(&out, ID_ANNOTATION)
            .unwrap()
            .is_none());
        assert_eq!(
            rnode::get_annotation(&out, PATH_ANNOTATION)
                .unwrap()
                .map(|v| v.value.as_str()),
            Some("y/x/learn.yaml")
        );
    }
}
