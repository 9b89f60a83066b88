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
//! An item met for the first time at a step can still be known without
//! running it: when it came out of a step of the same round trip (the
//! kustomize-era functions' JSON round trip and kpt's restoration, noted by
//! its shape, the item less its ids and the values of its paths) and the
//! step's transformation leaves its value alone, the step gives it back as
//! it is ([`FixedPoints::round_tripped`], [`super::PerItem`]). That is an item's second
//! step at each level (its package's second function, then its parent's
//! first), which would otherwise run in full only to be learnt.
//!
//! What is known is a [`FixedPoints`] value its owner passes down (one
//! render's, or a `watch` session's across its renders); it starts over
//! past a million items.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use krmgraph_kyaml::item_memo::{self, Fingerprint, FingerprintMap, MigrationIdLook};
use krmgraph_kyaml::kioutil::{
    ID_ANNOTATION, INTERNAL_ANNOTATIONS_MIGRATION_RESOURCE_ID_ANNOTATION as MIGRATION_ID,
    LEGACY_ID_ANNOTATION, LEGACY_PATH_ANNOTATION, PATH_ANNOTATION,
};
use krmgraph_kyaml::{byteio, rnode};
use krmgraph_yaml::node::tag;
use krmgraph_yaml::resolve::resolve_tag;
use krmgraph_yaml::{Kind, Node, Style};

use super::direct::same_but_positions;

/// The items known before the set starts over.
const LIMIT: usize = 1 << 20;

const SHARDS: usize = 16;

/// The annotations kio.Pipeline sets around every function call and
/// removes after it (the migration id and the two ids), numbered by
/// position: left out of an item's fingerprint whole, and described apart.
const IDS: [&str; 3] = [MIGRATION_ID, ID_ANNOTATION, LEGACY_ID_ANNOTATION];

/// The path annotations, which gain the subpackage's directory as the item
/// goes up the tree: their values are left out of the fingerprint.
const PATHS: [&str; 2] = [PATH_ANNOTATION, LEGACY_PATH_ANNOTATION];

/// One run of a per-item built-in: the image, its behaviour version and
/// the functionConfig it gets.
pub struct Step(Fingerprint);

/// What an input item is known under: its key under the step, and its
/// shape (the item less what varies, which every step shares: see
/// [`FixedPoints::round_tripped`]).
#[derive(Clone, Copy)]
pub struct Keyed {
    /// The key under the step.
    pub key: Fingerprint,
    shape: Fingerprint,
}

impl Step {
    /// The step of `image` (behaviour `version`) with `config`.
    pub fn new(image: &str, version: &str, config: Option<&Node>) -> Step {
        let mut hasher = blake3::Hasher::new();
        hasher.update(b"krmgraph fixed point v2\0");
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
        self.keyed(item).map(|keyed| keyed.key)
    }

    /// [`Step::key`] with the item's shape.
    pub fn keyed(&self, item: &Node) -> Option<Keyed> {
        self.keyed_and_foot(item).map(|(keyed, _)| keyed)
    }

    /// [`Step::key`] with the item's shape, and whether `item` has a foot
    /// comment, found on the walk that keys it.
    fn keyed_and_foot(&self, item: &Node) -> Option<(Keyed, bool)> {
        let varying = varying(rnode::y_node(item))?;
        let (shape, foot) =
            item_memo::fingerprint_and_foot(item, &varying.paths, &varying.id_values);
        let mut hasher = blake3::Hasher::new();
        hasher.update(&self.0);
        hasher.update(&shape);
        hasher.update(&varying.ids);
        let key = *hasher.finalize().as_bytes();
        Some((Keyed { key, shape }, foot))
    }
}

/// The annotations of an item whose values vary as it goes up the tree.
#[derive(Default)]
struct Varying {
    /// The values of the paths.
    paths: Vec<*const Node>,
    /// The values of the ids, whose entries are left out whole.
    id_values: Vec<*const Node>,
    /// Where the ids are among the annotations and how their keys and
    /// values are styled: what the key keeps of them.
    ids: Vec<u8>,
}

/// The annotations of `root` that vary, where each is one the function
/// cannot tell from another: ids in kio.Pipeline's form (with nothing
/// but a style and a tag), paths of plain characters that read as strings.
fn varying(root: &Node) -> Option<Varying> {
    let Some(annotations) = rnode::field_value(root, rnode::METADATA_FIELD)
        .and_then(|m| rnode::field_value(m, rnode::ANNOTATIONS_FIELD))
    else {
        return Some(Varying::default());
    };
    let mut varying = Varying::default();
    if annotations.kind != Kind::Mapping {
        // No annotation there to leave out: the item is keyed whole.
        return Some(varying);
    }
    let mut seen = [false; IDS.len() + PATHS.len()];
    for (position, pair) in annotations.content.chunks_exact(2).enumerate() {
        let (key, value) = (&pair[0], &pair[1]);
        let name = key.value.as_str();
        let Some(which) = IDS.iter().chain(&PATHS).position(|n| *n == name) else {
            continue;
        };
        if std::mem::replace(&mut seen[which], true)
            || key.kind != Kind::Scalar
            || value.kind != Kind::Scalar
            || !value.anchor().is_empty()
        {
            return None;
        }
        if which >= IDS.len() {
            if !is_plain_path(&value.value) {
                return None;
            }
            varying.paths.push(value);
            continue;
        }
        if !item_memo::is_id(&value.value) || !bare(key) || !bare(value) {
            return None;
        }
        varying.id_values.push(value);
        let ids = &mut varying.ids;
        ids.push(which as u8);
        ids.extend_from_slice(&(position as u32).to_le_bytes());
        for node in [key, value] {
            ids.push(node.style.0);
            item_memo::put_bytes(ids, node.tag.as_bytes());
        }
    }
    Some(varying)
}

/// Whether `node` has nothing a fingerprint would see but its kind, value,
/// style and tag.
fn bare(node: &Node) -> bool {
    node.anchor().is_empty()
        && node.head_comment().is_empty()
        && node.line_comment().is_empty()
        && node.foot_comment().is_empty()
        && node.content.is_empty()
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
pub type Known = Option<MigrationIdLook>;

/// A known fixed point, and whether its owner looked it up or learnt it
/// (what [`FixedPoints::export`] keeps).
type Entry = (Known, bool);

/// A map by fingerprint, sharded for the render's pool, that starts over
/// past [`LIMIT`] entries.
struct Set<V> {
    shards: [Mutex<FingerprintMap<V>>; SHARDS],
    len: AtomicUsize,
}

impl<V> Set<V> {
    fn new() -> Set<V> {
        Set {
            shards: std::array::from_fn(|_| Mutex::default()),
            len: Default::default(),
        }
    }

    fn shard(&self, key: &Fingerprint) -> MutexGuard<'_, FingerprintMap<V>> {
        self.shards[usize::from(key[0]) % SHARDS]
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps `value` under `key` unless one is there already (then
    /// `false`); when full, starts over first.
    fn insert(&self, key: Fingerprint, value: V) -> bool {
        if self.len.fetch_add(1, Ordering::Relaxed) >= LIMIT {
            for shard in &self.shards {
                shard.lock().unwrap_or_else(|e| e.into_inner()).clear();
            }
            self.len.store(1, Ordering::Relaxed);
        }
        let mut shard = self.shard(&key);
        if shard.contains_key(&key) {
            return false;
        }
        shard.insert(key, value);
        true
    }
}

/// What per-item built-ins are known to give back as they are (see the
/// module doc).
#[derive(Default)]
pub struct FixedPoints {
    /// The known fixed points, by key.
    known: Set<Entry>,
    /// The items that came out of a round trip: by family and shape, how
    /// their migration id read back.
    ///
    /// The kustomize-era functions send every item through the same JSON
    /// round trip, and kpt restores the comments and field order of what
    /// comes back from the item that went in. What comes out of that is the
    /// round trip of its own value, in its own order, with its own
    /// comments: so a function of the family whose transformation leaves
    /// such an item as the function reads it gives it back as it is
    /// ([`super::PerItem`]). That is the second step an item meets at each
    /// level of a monorepo (its package's other function, then its parent's
    /// first), which would otherwise run in full to be learnt.
    /// `KRMGRAPH_CHECK_DIRECT=1` runs those steps on the bytes too.
    round_tripped: Set<Known>,
    /// Fixed points learnt that an import did not give.
    learnt: AtomicUsize,
    /// Whether an export was imported (only the first is).
    imported: AtomicBool,
}

impl std::fmt::Debug for FixedPoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FixedPoints")
            .field("known", &self.known.len.load(Ordering::Relaxed))
            .field("learnt", &self.learnt())
            .finish_non_exhaustive()
    }
}

impl<V> Default for Set<V> {
    fn default() -> Self {
        Set::new()
    }
}

fn family_key(family: &str, shape: &Fingerprint) -> Fingerprint {
    let mut hasher = blake3::Hasher::new();
    hasher.update(family.as_bytes());
    hasher.update(&[0]);
    hasher.update(shape);
    *hasher.finalize().as_bytes()
}

/// The start of an exported set: what wrote it.
const EXPORT_HEADER: &[u8] =
    concat!("krmgraph fixed points v2 ", env!("CARGO_PKG_VERSION"), "\n").as_bytes();

impl FixedPoints {
    /// Whether the item under `key` is a known fixed point, and how its
    /// migration id reads back.
    pub fn lookup(&self, key: &Fingerprint) -> Option<Known> {
        let mut shard = self.known.shard(key);
        let (known, used) = shard.get_mut(key)?;
        *used = true;
        Some(known.clone())
    }

    /// Knows `key` as a fixed point whose migration id reads back as
    /// `known` says, as used.
    pub fn know(&self, key: Fingerprint, known: Known) {
        if self.known.insert(key, (known, true)) {
            self.learnt.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many fixed points were learnt that an import did not give.
    pub fn learnt(&self) -> usize {
        self.learnt.load(Ordering::Relaxed)
    }

    /// Notes that an item of this `shape` came out of `family`'s round
    /// trip, its migration id reading back as `known` says.
    fn note_round_tripped(&self, family: &str, shape: &Fingerprint, known: Known) {
        self.round_tripped.insert(family_key(family, shape), known);
    }

    /// Notes `restored`, a restored output item of a step of `family`, as
    /// having come out of its round trip.
    pub fn note_output(&self, family: &str, restored: &Node) {
        let Some(varying) = varying(rnode::y_node(restored)) else {
            return;
        };
        let (shape, _) =
            item_memo::fingerprint_and_foot(restored, &varying.paths, &varying.id_values);
        self.note_round_tripped(family, &shape, item_memo::migration_id_look(restored));
    }

    /// How the migration id of an item of this shape read back, if one came
    /// out of `family`'s round trip.
    pub fn round_tripped(&self, family: &str, keyed: &Keyed) -> Option<Known> {
        let key = family_key(family, &keyed.shape);
        self.round_tripped.shard(&key).get(&key).cloned()
    }

    /// The fixed points looked up or learnt (what the ancestors of an
    /// edited package meet again), for a later process to
    /// [`FixedPoints::import`]; `None` when there are none. The last 32
    /// bytes are the blake3 of the rest.
    pub fn export(&self) -> Option<Vec<u8>> {
        item_memo::framed(EXPORT_HEADER, |out| {
            let mut count = 0u32;
            for shard in &self.known.shards {
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

    /// Knows the fixed points of an [`FixedPoints::export`] (as not yet
    /// used; the first one given only). Anything wrong with `bytes`
    /// (another version, damage) and nothing is imported. Returns how many
    /// were.
    pub fn import(&self, bytes: &[u8]) -> usize {
        if self.imported.swap(true, Ordering::SeqCst) {
            return 0;
        }
        let Some(entries) = decode_export(bytes) else {
            return 0;
        };
        let count = entries.len();
        for (key, known) in entries {
            self.known.insert(key, (known, false));
        }
        count
    }

    /// Learns `input` (under `keyed`) as a fixed point if `restored`, the
    /// step's restored output for it, is what [`output`] would make of it;
    /// either way notes `restored` as having come out of `family`'s round
    /// trip.
    pub fn learn(&self, family: &str, keyed: &Keyed, input: &Node, restored: &Node) {
        if !same_less_ids(rnode::y_node(input), restored, Depth::Root) {
            self.note_output(family, restored);
            return;
        }
        let known = item_memo::migration_id_look(restored);
        self.note_round_tripped(family, &keyed.shape, known.clone());
        self.know(keyed.key, known);
    }

    /// Which items of `input` are known fixed points of `step` (`Some`),
    /// and the keys of the others (`None` where an item has none); and
    /// which items have a foot comment.
    pub fn classify(&self, step: &Step, input: &[Node]) -> (Vec<Lookup>, Vec<bool>) {
        use rayon::prelude::*;
        input
            .par_iter()
            .map(|item| match step.keyed_and_foot(item) {
                None => (Lookup::Unkeyed, byteio::has_foot_comment(item)),
                Some((keyed, foot)) => match self.lookup(&keyed.key) {
                    Some(known) => (Lookup::Known(known), foot),
                    None => (Lookup::Unknown(keyed), foot),
                },
            })
            .unzip()
    }
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
pub fn output(mut item: Node, known: &Known) -> krmgraph_kyaml::Result<Node> {
    item_memo::less_ids(&mut item, known.as_ref())?;
    Ok(item)
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

/// What [`FixedPoints::classify`] says of one item.
pub enum Lookup {
    /// A known fixed point.
    Known(Known),
    /// Not known yet; learnt under this key.
    Unknown(Keyed),
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
    use crate::testing::parse;

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
        let points = FixedPoints::default();
        let step = Step::new("test-export", "1", None);
        let input = item("x/export.yaml", "3", "");
        let keyed = step.keyed(&input).unwrap();
        let key = keyed.key;
        points.learn(
            "test",
            &keyed,
            &input,
            &output(input.clone(), &None).unwrap(),
        );
        let bytes = points.export().expect("one fixed point at least");
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
        let points = FixedPoints::default();
        let step = Step::new("test-learn", "1", None);
        let input = item("x/learn.yaml", "3", "");
        let keyed = step.keyed(&input).unwrap();
        let key = keyed.key;
        let mut changed = output(input.clone(), &None).unwrap();
        rnode::set_annotation(&mut changed, "x", "y").unwrap();
        points.learn("test", &keyed, &input, &changed);
        assert!(points.lookup(&key).is_none());
        let same = output(input.clone(), &None).unwrap();
        points.learn("test", &keyed, &input, &same);
        let known = points.lookup(&key).expect("learnt");
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
                Box::new(|n| rnode::y_node_mut(n).style = krmgraph_yaml::Style::FLOW),
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

    #[test]
    fn an_output_is_known_as_round_tripped_by_its_shape_at_the_next_step() {
        let points = FixedPoints::default();
        // A restored output: ids gone, the migration id as it read back.
        let restored = parse(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    \
             internal.config.kubernetes.io/path: x/shape.yaml\n    \
             internal.config.kubernetes.io/annotations-migration-resource-id: \"4\"\n\
             data:\n  k: v\n",
        );
        points.note_output("test-shape", &restored);
        // The same item as the next step's input: the migration id and
        // the ids set again (other values, kpt's style), elsewhere a path.
        let next = |path: &str, value: &str| {
            let mut item = parse(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    \
                 internal.config.kubernetes.io/path: {path}\n\
                 data:\n  k: {value}\n"
            ));
            rnode::set_annotation(&mut item, MIGRATION_ID, "9").unwrap();
            rnode::set_annotation(&mut item, ID_ANNOTATION, "10").unwrap();
            rnode::set_annotation(&mut item, LEGACY_ID_ANNOTATION, "10").unwrap();
            item
        };
        let step = Step::new("test-shape", "1", None);
        let keyed = step.keyed(&next("y/x/shape.yaml", "v")).unwrap();
        let look = points
            .round_tripped("test-shape", &keyed)
            .expect("known by its shape");
        assert_eq!(look, item_memo::migration_id_look(&restored));
        assert!(points.round_tripped("another family", &keyed).is_none());
        let other = step.keyed(&next("x/shape.yaml", "w")).unwrap();
        assert!(
            points.round_tripped("test-shape", &other).is_none(),
            "another value"
        );
        // Ids the key cannot leave out leave the item unkeyed.
        let mut odd = next("x/shape.yaml", "v");
        rnode::set_annotation(&mut odd, ID_ANNOTATION, "x").unwrap();
        assert!(step.keyed(&odd).is_none());
    }
}
