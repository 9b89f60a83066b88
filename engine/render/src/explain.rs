//! Why a step ran (`--explain`, `KRMGRAPH_CACHE_LOG`): what a step's key
//! covered the last time it ran at its place in the tree (its slot
//! record), compared with what it covers now.
//!
//! A slot record holds the step's [`StepInputs`] (the four digests its key
//! is made of) and two [`Names`] lists that only a miss computes: the
//! function config by field, and — for a package's first step — its input
//! by file (root-relative) and by subpackage. A difference in a part is
//! then said with the names whose digests differ, five at most.
//!
//! An in-place render rewrites the files it read, so a file's digest in a
//! slot is not what the user edits next. Each in-place render therefore
//! records the files it left (one "left" record per tree, [`record_left`]),
//! and a file counts as changed when it differs from what the last render
//! left (or, with no such record, from what the step read).

use std::collections::BTreeMap;
use std::path::Path;

use krmgraph_cache::{Digest, Output, StepRecord, Store};
use krmgraph_fn::FunctionRunner;
use krmgraph_package::kptfile::Function;

use super::codec::{self, Root};
use super::shortcut::{Hasher, Snapshot};
use super::stepcache::{kinds, StepInputs, KEY_SCHEMA};

/// How many names a reason lists before "and N more".
const MAX_NAMES: usize = 5;

/// Digests by name, in a fixed order: what a part of a key covered, in
/// pieces a person can be told about.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Names(pub Vec<(String, Digest)>);

impl Names {
    /// What differs from `before`: changed names, then new and deleted
    /// ones, each said once.
    pub fn changes(&self, before: &Names) -> Vec<String> {
        let old: std::collections::HashMap<&str, &Digest> =
            before.0.iter().map(|(n, d)| (n.as_str(), d)).collect();
        let now: std::collections::HashSet<&str> = self.0.iter().map(|(n, _)| n.as_str()).collect();
        let mut changes = Vec::new();
        for (name, digest) in &self.0 {
            match old.get(name.as_str()) {
                Some(was) if *was == digest => {}
                Some(_) => changes.push(name.clone()),
                None => changes.push(format!("{name} (new)")),
            }
        }
        for (name, _) in &before.0 {
            if !now.contains(name.as_str()) {
                changes.push(format!("{name} (deleted)"));
            }
        }
        changes
    }

    fn encode(&self, out: &mut Vec<u8>) {
        out.extend((self.0.len() as u32).to_le_bytes());
        for (name, digest) in &self.0 {
            out.extend((name.len() as u32).to_le_bytes());
            out.extend(name.as_bytes());
            out.extend(digest.as_bytes());
        }
    }

    fn decode(bytes: &mut &[u8]) -> Option<Names> {
        let count = take_u32(bytes)?;
        let mut names = Vec::new();
        for _ in 0..count {
            let len = take_u32(bytes)? as usize;
            let name = String::from_utf8(take(bytes, len)?.to_vec()).ok()?;
            let digest = Digest::from_bytes(take(bytes, 32)?.try_into().ok()?);
            names.push((name, digest));
        }
        Some(Names(names))
    }
}

/// The key of the "left" record of the tree at `root_dir`: by its
/// directory's name, as slot keys are.
pub(super) fn left_key(root_dir: &Path) -> Digest {
    let mut h = Hasher::default();
    h.field(b"left tree");
    h.field(KEY_SCHEMA.as_bytes());
    h.field(root_dir.file_name().unwrap_or_default().as_encoded_bytes());
    Digest::from(h.0.finalize())
}

const LEFT: &str = "files";

/// Records the files an in-place render of `root_dir` left (`after`).
pub(super) fn record_left(
    store: &dyn Store,
    root_dir: &Path,
    after: &Snapshot,
) -> krmgraph_cache::Result<()> {
    let names = Names(
        after
            .file_digests()
            .iter()
            .map(|(path, digest)| (path.clone(), *digest))
            .collect(),
    );
    let mut bytes = Vec::new();
    names.encode(&mut bytes);
    let blob = Output {
        name: LEFT.into(),
        digest: store.put_blob(&bytes)?,
        size: bytes.len() as u64,
    };
    store.put_step(
        &left_key(root_dir),
        &StepRecord::new(kinds::left(), vec![blob], Vec::new()),
    )
}

/// The files the last in-place render of `root_dir` left, by path.
pub(super) fn load_left(store: &dyn Store, root_dir: &Path) -> Option<BTreeMap<String, Digest>> {
    let record = store.peek_step(&left_key(root_dir)).ok()??;
    let blob = record
        .outputs
        .first()
        .filter(|_| record.kind == kinds::left())?;
    let bytes = store.get_blob(&blob.digest, blob.size).ok()??;
    let names = Names::decode(&mut bytes.as_slice())?;
    Some(names.0.into_iter().collect())
}

fn take<'b>(bytes: &mut &'b [u8], n: usize) -> Option<&'b [u8]> {
    if bytes.len() < n {
        return None;
    }
    let (head, tail) = bytes.split_at(n);
    *bytes = tail;
    Some(head)
}

fn take_u32(bytes: &mut &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(take(bytes, 4)?.try_into().ok()?))
}

/// What a slot record holds: the step's key parts, its config by field,
/// and its input by name (a package's first step only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Slot {
    pub inputs: StepInputs,
    pub config: Names,
    pub input: Option<Names>,
}

impl Slot {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = self.inputs.encode();
        self.config.encode(&mut out);
        match &self.input {
            None => out.push(0),
            Some(names) => {
                out.push(1);
                names.encode(&mut out);
            }
        }
        out
    }

    pub fn decode(bytes: &[u8]) -> Option<Slot> {
        let inputs = StepInputs::decode(bytes.get(..StepInputs::ENCODED_LEN)?)?;
        let mut rest = &bytes[StepInputs::ENCODED_LEN..];
        let config = Names::decode(&mut rest)?;
        let input = match take(&mut rest, 1)? {
            [0] => None,
            [1] => Some(Names::decode(&mut rest)?),
            _ => return None,
        };
        rest.is_empty().then_some(Slot {
            inputs,
            config,
            input,
        })
    }

    /// `self` with each file's digest replaced by what the last in-place
    /// render left (`left`), where it left that file.
    pub fn with_left(mut self, left: Option<&BTreeMap<String, Digest>>) -> Slot {
        if let (Some(left), Some(input)) = (left, self.input.as_mut()) {
            for (name, digest) in &mut input.0 {
                if let Some(was) = left.get(name) {
                    *digest = *was;
                }
            }
        }
        self
    }

    /// What differs from `before`, as `--explain` says it. `earlier`: what
    /// the package's first step found changed in the package's input (set
    /// here when this is that step), said again by a later step whose
    /// input changed with it.
    pub fn why_not(&self, before: &Slot, earlier: &mut Option<String>) -> String {
        let (now, was) = (&self.inputs, &before.inputs);
        let mut changed = Vec::new();
        if now.base != was.base {
            changed.push("render flags or environment changed".to_string());
        }
        if now.function != was.function {
            changed.push("function changed (image, exec program or built-in version)".to_string());
        }
        if now.config != was.config {
            changed.push(said(
                "function config changed",
                self.config.changes(&before.config),
            ));
        }
        if now.input != was.input {
            let names = match (&self.input, &before.input) {
                (Some(a), Some(b)) => a.changes(b),
                _ => Vec::new(),
            };
            let text = match (names.is_empty(), &earlier) {
                (true, Some(earlier)) => earlier.clone(),
                _ => said("input changed", names),
            };
            if self.input.is_some() {
                *earlier = Some(text.clone());
            }
            changed.push(text);
        }
        if changed.is_empty() {
            return "its record is gone or unusable (evicted, damaged or of another version)"
                .into();
        }
        changed.join("; ")
    }
}

/// `what`, then up to [`MAX_NAMES`] of `names`.
fn said(what: &str, names: Vec<String>) -> String {
    if names.is_empty() {
        return what.to_string();
    }
    let more = names.len().saturating_sub(MAX_NAMES);
    let mut text = format!("{what}: {}", names[..names.len().min(MAX_NAMES)].join(", "));
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// The fields of a step's config (its Kptfile entry and the
/// functionConfig it gets), by name.
pub(super) fn config_names(f: &Function, runner: &FunctionRunner, root: &Root) -> Names {
    let mut names = Vec::new();
    let mut field = |name: &str, parts: &[&[u8]]| {
        let mut h = Hasher::default();
        for part in parts {
            h.field(part);
        }
        names.push((name.to_string(), Digest::from(h.0.finalize())));
    };
    field("image", &[f.image.as_bytes()]);
    field("exec", &[f.exec.as_bytes()]);
    field("configPath", &[f.config_path.as_bytes()]);
    field("name", &[f.name.as_bytes()]);
    let config_map: Vec<&[u8]> = f
        .config_map
        .iter()
        .flatten()
        .flat_map(|(k, v)| [k.as_bytes(), v.as_bytes()])
        .collect();
    field("configMap", &config_map);
    field("selectors", &[format!("{:?}", f.selectors).as_bytes()]);
    field("exclusions", &[format!("{:?}", f.exclusions).as_bytes()]);
    let config = runner
        .config
        .as_ref()
        .and_then(|node| codec::encode_nodes(std::slice::from_ref(node), root))
        .unwrap_or_default();
    field("functionConfig", &[&config]);
    Names(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pairs: &[(&str, &[u8])]) -> Names {
        Names(
            pairs
                .iter()
                .map(|(n, b)| (n.to_string(), Digest::of(b)))
                .collect(),
        )
    }

    #[test]
    fn changes_name_changed_new_and_deleted() {
        let before = names(&[("a.yaml", b"1"), ("b.yaml", b"2"), ("c.yaml", b"3")]);
        let now = names(&[("a.yaml", b"1"), ("b.yaml", b"edited"), ("d.yaml", b"4")]);
        assert_eq!(
            now.changes(&before),
            ["b.yaml", "d.yaml (new)", "c.yaml (deleted)"]
        );
    }

    #[test]
    fn at_most_five_names() {
        let list: Vec<String> = (0..7).map(|i| format!("f{i}")).collect();
        assert_eq!(
            said("input changed", list),
            "input changed: f0, f1, f2, f3, f4 and 2 more"
        );
        assert_eq!(said("input changed", Vec::new()), "input changed");
    }

    #[test]
    fn slots_round_trip_and_reject_garbage() {
        let d = |b: &[u8]| Digest::of(b);
        let slot = Slot {
            inputs: StepInputs::new(d(b"b"), d(b"f"), d(b"c"), d(b"i")),
            config: names(&[("image", b"x")]),
            input: Some(names(&[("sub/cm.yaml", b"y")])),
        };
        let bytes = slot.encode();
        assert_eq!(Slot::decode(&bytes), Some(slot.clone()));
        assert_eq!(Slot::decode(&bytes[..bytes.len() - 1]), None);
        let mut longer = bytes.clone();
        longer.push(0);
        assert_eq!(Slot::decode(&longer), None);
        let bare = Slot {
            input: None,
            ..slot
        };
        assert_eq!(Slot::decode(&bare.encode()), Some(bare));
    }
}
