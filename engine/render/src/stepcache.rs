//! The step cache: per-step records with early cutoff, and per-subtree
//! shortcuts, so that a render after an edit runs only what depends on it.
//!
//! **Step keys.** A pipeline step (one mutator or validator of one package)
//! is keyed by blake3 over length-prefixed, domain-separated fields
//! (`StepCache::step_key`): the key schema, krmgraph's version and the
//! flags that change a render; the step's role; the function's identity
//! (`shortcut::function_identity`: built-in name and behaviour version, exec
//! program content, image); its spec (image or exec command line with its
//! arguments, `configPath`, `configMap`, name, selectors, exclusions); the
//! functionConfig it would get; its package's directory relative to the
//! root; and the digest of its input. The input digest of a package's first
//! step combines the output digests of its subpackages with the digest of
//! its own resources; every later step's input digest is the previous
//! step's output digest. Digests are of the [`codec`] encoding, which cuts
//! out the root directory, so keys do not depend on the checkout location.
//! Because downstream keys use upstream *output* digests, a step that re-ran
//! and gave the same output leaves every later key unchanged (early cutoff).
//!
//! **Step records.** A successful step records its output resources (a
//! mutator's, as a blob) and its log — its progress events and its entry in
//! `results.yaml`, inside the record unless large — so a replay reports
//! exactly what the run reported (durations included). Failures are never
//! recorded.
//!
//! **Subtree shortcuts** (depth-first only). A package's subtree is keyed
//! by the relative paths and bytes of every file under it, the identity of
//! every function its Kptfiles name, its place in the tree and the flags
//! (`StepCache::subtree_key`); its record is the subtree's rendered
//! resources, log, packages and functions counted, and the files it read.
//! A hit skips the whole subtree without reading its YAML. A subtree with a
//! symlink that leaves it has no key. Breadth-first renders have no subtree
//! shortcut: every pipeline there sees what its ancestors changed, so their
//! steps are cached one by one.
//!
//! **Failure.** The cache never fails a render: a record whose blobs are
//! missing, damaged or do not decode is a miss and is removed; the first
//! error of the store itself turns the cache off for the rest of the render
//! and is reported once (`StepCache::take_failure`).
//!
//! **Verify.** With `verify`, nothing is replayed: every step runs, and a
//! step whose fresh output differs from the output recorded under its key is
//! noted (`StepCache::take_mismatch`), naming the function.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use krmgraph_cache::{Digest, Output as BlobRef, RecordKind, StepRecord, Store};

use super::codec::{self, Log, Root};
use super::explain::{self, Names, Slot};
use super::shortcut::{is_kptfile, Entry, Hasher, Identities, Snapshot};
use super::{inputs, RenderOptions};
use krmgraph_fn::memos::Memos;
use krmgraph_fn::FunctionRunner;
use krmgraph_package::kptfile::validate::clean_path;
use krmgraph_package::kptfile::{Function, Selector};
use krmgraph_package::{display_path, Package};
use krmgraph_yaml::Node;

/// The key schema: bump it when what a step or subtree key covers, or what
/// its record holds, changes, or when krmgraph renders some input
/// differently (v2: a mutator writing nothing fails).
pub(super) const KEY_SCHEMA: &str = "krmgraph step cache v2";

/// The kinds of record a render keeps, each with the version of its
/// format. A record of another kind or version under a key is a miss (and
/// is removed), so bumping one kind's version when its outputs or meta
/// change leaves the other kinds' records usable.
pub(crate) mod kinds {
    use krmgraph_cache::RecordKind;

    /// A step's output and log.
    pub fn step() -> RecordKind {
        RecordKind::new("step", 1)
    }
    /// A subtree's resources, log and counts.
    pub fn subtree() -> RecordKind {
        RecordKind::new("subtree", 1)
    }
    /// What a step showed about a replayed block (`blocks`).
    pub fn facts() -> RecordKind {
        RecordKind::new("facts", 1)
    }
    /// The files a block's resources are written to.
    pub fn files() -> RecordKind {
        RecordKind::new("files", 1)
    }
    /// The item memo, the fixed points and the file memo.
    pub fn memos() -> RecordKind {
        RecordKind::new("memos", 1)
    }
    /// A whole in-place render (`shortcut`).
    pub fn render() -> RecordKind {
        RecordKind::new("render", 1)
    }
    /// A tree that is a render's fixed point (`shortcut`).
    pub fn fixed_point() -> RecordKind {
        RecordKind::new("fixed-point", 1)
    }
    /// The kinds whose records mean the same in every checkout (their keys
    /// and contents hold no absolute path), so a shared remote cache may
    /// serve and keep them: not the facts (keyed by the checkout's
    /// directory), the memos (this machine's) or the slots (`--explain`'s
    /// history of one tree).
    pub fn shared() -> [&'static str; 5] {
        ["step", "subtree", "files", "render", "fixed-point"]
    }
    /// What the key of the step at a place in the tree covered the last
    /// time it ran (`--explain`).
    pub fn slot() -> RecordKind {
        RecordKind::new("slot", 2)
    }
    /// The files the last in-place render of a tree left (`--explain`).
    pub fn left() -> RecordKind {
        RecordKind::new("left", 1)
    }
}

/// Record outputs: a mutator's or subtree's resources, and a log too
/// large to keep in the record itself.
const NODES: &str = "nodes";
const LOG: &str = "log";
/// What a mutator is known to do to a block ([`super::blocks`]).
const FACTS: &str = "facts";
/// The files a block is written to at the root ([`super::blocks`]).
const FILES: &str = "files";

/// Logs up to this size live in the record's meta bytes, not in a blob of
/// their own: a blob is a file to create, and most logs are a few events.
const INLINE_LOG: usize = 32 << 10;

/// The cache a render uses (`RenderOptions::cache`).
#[derive(Clone)]
pub struct RenderCache {
    /// Where records and blobs live.
    pub store: Arc<dyn Store>,
    /// The tree as already read (by the render cache around an in-place
    /// render); read again when `None`.
    pub snapshot: Option<Arc<Snapshot>>,
    /// Replay nothing; note steps whose output differs from their record.
    pub verify: bool,
    /// What the renders of this session (one `render`, or every render of
    /// a `watch`) did with the memos' record.
    pub memos: Arc<MemoSession>,
}

/// The memos' record as the renders of one session have used it: the
/// session's renders share one [`Memos`] (`RunnerOptions::memos`; a
/// session must pass the same one to each render), so the record is read
/// by the session's first render only, and
/// written again only when a render learnt enough since it was read or
/// last written (under one entry per hundred is not enough).
#[derive(Debug, Default)]
pub struct MemoSession {
    /// Whether a render of this session has read the record.
    loaded: AtomicBool,
    /// About how many entries the record holds: what was read, plus what
    /// was learnt by the time it was last written.
    entries: AtomicUsize,
    /// The memos' learnt count when the record was read or last written.
    learnt_then: AtomicUsize,
}

impl MemoSession {
    /// The record was read: `entries` of it are in `memos`.
    fn loaded_now(&self, entries: usize, memos: &Memos) {
        self.entries.store(entries, Ordering::SeqCst);
        self.learnt_then.store(memos.learnt(), Ordering::SeqCst);
    }
}

impl std::fmt::Debug for RenderCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RenderCache")
            .field("store", &self.store.location())
            .field("verify", &self.verify)
            .finish()
    }
}

/// The role of a step in its pipeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// Its output replaces the resource list.
    Mutator,
    /// Runs on a copy; only its log counts.
    Validator,
}

/// Resources with the digest of their encoding, when known.
pub(super) struct Resources {
    /// The resources, in parts.
    pub parts: Vec<Part>,
    /// blake3 of their [`codec`] encoding, and whether the store holds it.
    pub blob: Option<Blob>,
}

impl Resources {
    /// Resources held as nodes.
    pub fn of_nodes(nodes: Vec<Node>, blob: Option<Blob>) -> Resources {
        Resources {
            parts: vec![Part::Nodes(nodes)],
            blob,
        }
    }
}

/// A run of resources in a list: nodes, or a record's encoding of them.
pub(super) enum Part {
    Nodes(Vec<Node>),
    Block(Arc<Block>),
    /// A block with its nodes at hand too: a step that ran on it decoded
    /// gave it back as it was.
    Decoded(Arc<Block>, Vec<Node>),
}

impl Part {
    /// How many resources it holds.
    pub fn len(&self) -> usize {
        match self {
            Part::Nodes(nodes) => nodes.len(),
            Part::Block(block) | Part::Decoded(block, _) => block.count,
        }
    }

    /// Its block, if it is one.
    pub fn block(&self) -> Option<&Arc<Block>> {
        match self {
            Part::Nodes(_) => None,
            Part::Block(block) | Part::Decoded(block, _) => Some(block),
        }
    }
}

/// Appends `part` to `parts`, joining it to a part of nodes before it.
/// An empty part of nodes is left out.
pub(super) fn push_part(parts: &mut Vec<Part>, part: Part) {
    match (parts.last_mut(), part) {
        (_, Part::Nodes(nodes)) if nodes.is_empty() => {}
        (Some(Part::Nodes(last)), Part::Nodes(nodes)) => last.extend(nodes),
        (_, part) => parts.push(part),
    }
}

/// Resources a record holds, kept as their encoding until something needs
/// their nodes: most of what a render after an edit replays passes through
/// every pipeline above it unchanged ([`super::blocks`]).
pub(super) struct Block {
    /// The blob: the encoding of the resources.
    bytes: Vec<u8>,
    /// Where the nodes start in `bytes`.
    body: usize,
    count: usize,
    digest: Digest,
}

impl Block {
    /// The digest of the encoding.
    pub fn digest(&self) -> Digest {
        self.digest
    }

    /// How many resources it holds.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The encoding of the nodes, without the header.
    pub fn body(&self) -> &[u8] {
        &self.bytes[self.body..]
    }
}

/// The encoding of some resources, by digest.
#[derive(Clone, Copy, Debug)]
pub(super) struct Blob {
    digest: Digest,
    size: u64,
    stored: bool,
}

impl Blob {
    /// The digest downstream keys use.
    pub fn digest(&self) -> Digest {
        self.digest
    }
}

/// A step's record, decoded.
pub(super) struct StepHit {
    /// A mutator's output.
    pub output: Option<Resources>,
    /// What it reported.
    pub log: Log,
}

/// A subtree's record, decoded.
pub(super) struct SubtreeHit {
    /// Its rendered resources.
    pub output: Resources,
    /// What it reported, and the files its resources came from.
    pub log: Log,
    /// Functions it ran.
    pub executed: usize,
    /// Packages it rendered.
    pub packages: usize,
}

/// What a successful subtree render gives to record.
pub(super) struct SubtreeRun<'r> {
    /// Its rendered resources.
    pub output: &'r Resources,
    /// What it reported, and the files its resources came from.
    pub log: Log,
    /// Functions it ran.
    pub executed: usize,
    /// Packages it rendered.
    pub packages: usize,
}

/// A file of the tree, as subtree keys see it.
pub(super) enum FileKey {
    Bytes(Digest),
    Link(String),
}

/// The step cache of one render.
pub(super) struct StepCache<'a> {
    store: &'a dyn Store,
    root: Root,
    root_dir: PathBuf,
    verify: bool,
    /// Schema, version and flags ([`inputs::digest`]): the start of every
    /// key.
    base: Digest,
    /// [`RenderOptions::attribution`].
    attribution: bool,
    /// Every file under the root; `None` when the tree could not be read
    /// (then no subtree has a key).
    files: Option<BTreeMap<String, FileKey>>,
    snapshot: Option<Arc<Snapshot>>,
    subtrees: bool,
    /// Function identities, each computed once.
    identities: Identities<'a>,
    /// Subtree keys, by package directory.
    subtree_keys: Mutex<HashMap<PathBuf, Option<Digest>>>,
    disabled: AtomicBool,
    failure: Mutex<Option<String>>,
    mismatch: Mutex<Option<String>>,
    /// The thread loading the previous render's memos, until they are
    /// needed ([`StepCache::memos_loaded`]).
    memo_loader: Mutex<Option<std::thread::JoinHandle<usize>>>,
    /// The session's use of the memos' record.
    memo_record: &'a MemoSession,
    /// The memos the record is read into and written from.
    memos: &'a Arc<Memos>,
    /// The files the last in-place render left, read at the first miss.
    left: std::sync::OnceLock<Option<BTreeMap<String, Digest>>>,
}

impl<'a> StepCache<'a> {
    /// The cache of a render of `root_dir` (absolute, cleaned). `subtrees`:
    /// whether subtree shortcuts apply (depth-first).
    pub fn new(
        cache: &'a RenderCache,
        root_dir: &Path,
        options: &'a RenderOptions,
        subtrees: bool,
    ) -> StepCache<'a> {
        let runner = &options.runner;
        // Breadth-first, the tree is only for the writer (the file memo,
        // files changed while the render ran): not read for that alone.
        let snapshot = match (&cache.snapshot, subtrees) {
            (Some(s), _) => Some(s.clone()),
            (None, true) => Snapshot::read(root_dir).ok().map(Arc::new),
            (None, false) => None,
        };
        // The memos (megabytes, for a large tree) load beside whatever the
        // render does before its first step: reading the tree, replaying
        // subtrees.
        // A session reads the memos' record once: what it holds is in the
        // session's memos from then on.
        let first = !cache.memos.loaded.swap(true, Ordering::SeqCst);
        let memo_loader = (!cache.verify && first).then(|| {
            let store = Arc::clone(&cache.store);
            let memos = Arc::clone(&runner.memos);
            std::thread::Builder::new()
                .name("krmgraph-memos".into())
                .stack_size(krmgraph_util::par::STACK_SIZE)
                .spawn(move || load_item_memo(store.as_ref(), &memos))
        });
        let memo_loader = match memo_loader {
            Some(Ok(handle)) => Some(handle),
            // No thread to be had: load them here.
            Some(Err(_)) => {
                let loaded = load_item_memo(cache.store.as_ref(), &runner.memos);
                cache.memos.loaded_now(loaded, &runner.memos);
                None
            }
            None => None,
        };
        StepCache {
            store: cache.store.as_ref(),
            root: Root::new(&root_dir.to_string_lossy()),
            root_dir: root_dir.to_path_buf(),
            verify: cache.verify,
            base: base_digest(options),
            attribution: options.attribution,
            files: snapshot.as_deref().map(file_keys),
            snapshot,
            subtrees,
            identities: Identities::new(runner),
            subtree_keys: Mutex::default(),
            disabled: AtomicBool::new(false),
            failure: Mutex::default(),
            mismatch: Mutex::default(),
            memo_loader: Mutex::new(memo_loader),
            memo_record: &cache.memos,
            memos: &runner.memos,
            left: Default::default(),
        }
    }

    /// [`RenderOptions::attribution`] of this render.
    pub fn attribution(&self) -> bool {
        self.attribution
    }

    /// Waits until the previous render's memos (items' texts, fixed points,
    /// files' keys) are loaded: before any step runs and before the output
    /// is written, so that what they save does not depend on timing.
    pub fn memos_loaded(&self) {
        let handle = self
            .memo_loader
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(handle) = handle {
            // A loader that panicked loaded nothing: the memos only save
            // work.
            self.memo_record
                .loaded_now(handle.join().unwrap_or(0), self.memos);
        }
    }

    /// The blake3 of the file at `path` (slash, relative to the root) as
    /// the render read it; `None` for a symlink or a file it did not read.
    pub fn read_digest(&self, path: &str) -> Option<[u8; 32]> {
        match self.files.as_ref()?.get(path)? {
            FileKey::Bytes(digest) => Some(*digest.as_bytes()),
            FileKey::Link(_) => None,
        }
    }

    /// The bytes of the file at `path` as the render read it.
    pub fn read_bytes(&self, path: &str) -> Option<Vec<u8>> {
        match self.snapshot.as_ref()?.entries().get(path)? {
            Entry::File(bytes) => Some(bytes.to_vec()),
            Entry::Link(_) => None,
        }
    }

    /// The first store error of the render, once.
    pub fn take_failure(&self) -> Option<String> {
        self.failure.lock().ok()?.take()
    }

    /// With `verify`: the first step whose fresh output differed from its
    /// record.
    pub fn take_mismatch(&self) -> Option<String> {
        self.mismatch.lock().ok()?.take()
    }

    fn on<T>(&self, result: krmgraph_cache::Result<T>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(e) => {
                if !self.disabled.swap(true, Ordering::SeqCst) {
                    if let Ok(mut failure) = self.failure.lock() {
                        *failure = Some(e.to_string());
                    }
                }
                None
            }
        }
    }

    fn enabled(&self) -> bool {
        !self.disabled.load(Ordering::SeqCst)
    }

    /// The digest of `nodes`' encoding (not stored).
    pub fn digest_of(&self, nodes: &[Node]) -> Option<Blob> {
        let bytes = codec::encode_nodes(nodes, &self.root)?;
        Some(Blob {
            digest: Digest::of(&bytes),
            size: bytes.len() as u64,
            stored: false,
        })
    }

    /// The digest of the encoding of the resources `parts` hold (not
    /// stored).
    pub fn digest_of_parts(&self, parts: &[Part]) -> Option<Blob> {
        Some(unstored(&self.encoding(parts)?))
    }

    /// The encoding of the resources `parts` hold.
    pub fn encode_parts(&self, parts: &[Part]) -> Option<Vec<u8>> {
        Some(self.encoding(parts)?.concat())
    }

    /// [`StepCache::encode_parts`] in pieces: a block's nodes are its
    /// bytes as they are, not copied.
    fn encoding<'p>(&self, parts: &'p [Part]) -> Option<Vec<Cow<'p, [u8]>>> {
        let count = parts.iter().map(Part::len).sum();
        let mut pieces = vec![Cow::Owned(codec::nodes_header(count))];
        for part in parts {
            pieces.push(match part {
                Part::Nodes(nodes) => Cow::Owned(codec::encode_nodes_body(nodes, &self.root)?),
                Part::Block(block) | Part::Decoded(block, _) => Cow::Borrowed(block.body()),
            });
        }
        Some(pieces)
    }

    /// The encoding of `nodes` without its header.
    pub fn encode_body(&self, nodes: &[Node]) -> Option<Vec<u8>> {
        codec::encode_nodes_body(nodes, &self.root)
    }

    /// `nodes` as a block (not stored), for tests.
    #[cfg(test)]
    pub fn block_of(&self, nodes: &[Node]) -> Arc<Block> {
        let bytes = codec::encode_nodes(nodes, &self.root).unwrap();
        let (count, body) = codec::nodes_body(&bytes).unwrap();
        Arc::new(Block {
            digest: Digest::of(&bytes),
            bytes,
            body,
            count,
        })
    }

    /// The resources `block` holds, as nodes; `None` when its bytes do not
    /// decode.
    pub fn decode(&self, block: &Block) -> Option<Vec<Node>> {
        codec::decode_nodes(&block.bytes, &self.root)
    }

    /// The key of what step (mutator `f`, built as `runner`) is known to
    /// do to the resources of the block whose digest is `block`.
    pub fn facts_key(
        &self,
        f: &Function,
        runner: &FunctionRunner,
        block: &Digest,
    ) -> Option<Digest> {
        let mut h = Hasher::default();
        h.field(b"block facts");
        // The facts name memo entries, whose texts hold absolute paths
        // (package-path annotations): they are the checkout's own.
        h.field(self.root_dir.to_string_lossy().as_bytes());
        h.field(block.as_bytes());
        let input = Digest::from(h.0.finalize());
        self.step_key(Role::Mutator, f, runner, &input)
    }

    /// The facts recorded under `key`.
    pub fn lookup_facts(&self, key: &Digest) -> Option<codec::BlockFacts> {
        let hit = self.lookup(key, &kinds::facts())?;
        let decoded =
            output(&hit, FACTS).and_then(|(_, bytes)| codec::decode_facts(bytes, &self.root));
        self.discard_unless(key, decoded)
    }

    /// The key of the files the resources of the block whose digest is
    /// `block` are written to in place, at the root of a render.
    pub fn files_key(&self, block: &Digest) -> Digest {
        let mut h = Hasher::default();
        h.field(b"block files");
        h.field(self.base.as_bytes());
        h.field(block.as_bytes());
        Digest::from(h.0.finalize())
    }

    /// The files recorded under `key`: root-relative paths and the blake3
    /// of their bytes.
    pub fn lookup_files(&self, key: &Digest) -> Option<Vec<(String, [u8; 32])>> {
        let hit = self.lookup(key, &kinds::files())?;
        let decoded = output(&hit, FILES).and_then(|(_, bytes)| codec::decode_files(bytes));
        self.discard_unless(key, decoded)
    }

    /// Records `files` (as [`StepCache::lookup_files`] gives them) under
    /// `key`.
    pub fn record_files(&self, key: &Digest, files: &[(String, [u8; 32])]) {
        if !self.enabled() {
            return;
        }
        let bytes = codec::encode_files(files);
        if let Some(blob) = self.blob_ref(FILES, &bytes) {
            self.on(self.store.put_step(
                key,
                &StepRecord::new(kinds::files(), vec![blob], Vec::new()),
            ));
        }
    }

    /// Records `facts` under `key`.
    pub fn record_facts(&self, key: &Digest, facts: &codec::BlockFacts) {
        if !self.enabled() {
            return;
        }
        let bytes = codec::encode_facts(facts, &self.root);
        if let Some(blob) = self.blob_ref(FACTS, &bytes) {
            self.on(self.store.put_step(
                key,
                &StepRecord::new(kinds::facts(), vec![blob], Vec::new()),
            ));
        }
    }

    /// The input digest of a package's first step: its subpackages' output
    /// digests, then its own resources'.
    pub fn combine(parts: &[Digest]) -> Digest {
        let mut h = Hasher::default();
        h.field(b"pipeline input");
        for part in parts {
            h.field(part.as_bytes());
        }
        Digest::from(h.0.finalize())
    }

    /// The key of running `f` (built as `runner`) as a `role` step of the
    /// package at `package_dir` on input `input`; `None` when the function
    /// has no identity (its program cannot be read).
    pub fn step_key(
        &self,
        role: Role,
        f: &Function,
        runner: &FunctionRunner,
        input: &Digest,
    ) -> Option<Digest> {
        Some(self.step_inputs(role, f, runner, input)?.key())
    }

    /// What the key of a step covers, in the parts a miss is explained by
    /// ([`Slot::why_not`]).
    pub fn step_inputs(
        &self,
        role: Role,
        f: &Function,
        runner: &FunctionRunner,
        input: &Digest,
    ) -> Option<StepInputs> {
        let mut function = Hasher::default();
        function.field(match role {
            Role::Mutator => b"mutator",
            Role::Validator => b"validator",
        });
        function.field(&self.identities.of(f)?);
        function.field(self.relative(Path::new(&runner.package_dir)).as_bytes());
        function.field(&[u8::from(runner.use_builtins)]);
        let mut config = Hasher::default();
        function_spec(&mut config, f);
        match &runner.config {
            Some(node) => config.field(&codec::encode_nodes(
                std::slice::from_ref(node),
                &self.root,
            )?),
            None => config.field(b""),
        }
        Some(StepInputs {
            base: self.base,
            function: Digest::from(function.0.finalize()),
            config: Digest::from(config.0.finalize()),
            input: *input,
        })
    }

    /// Why the step in `slot` runs although its key's inputs are `now`:
    /// what differs from the last time it ran in this tree, as recorded
    /// under its slot key. Records what it covers now there for the next
    /// render. `input`: the names of the step's input (a package's first
    /// step); `earlier`: what an earlier step of the package found changed.
    pub fn explain_miss(
        &self,
        slot: &Digest,
        now: &StepInputs,
        step: (&Function, &FunctionRunner),
        input: Option<Names>,
        earlier: &mut Option<String>,
    ) -> String {
        if self.verify {
            return "cache bypassed (--verify)".into();
        }
        let now = Slot {
            inputs: *now,
            config: explain::config_names(step.0, step.1, &self.root),
            input,
        };
        let before = self
            .on(self.store.peek_step(slot))
            .flatten()
            .filter(|r| r.kind == kinds::slot())
            .and_then(|r| Slot::decode(&r.meta))
            .map(|slot| {
                slot.with_left(
                    self.left
                        .get_or_init(|| explain::load_left(self.store, &self.root_dir))
                        .as_ref(),
                )
            });
        self.on(self.store.put_step(
            slot,
            &StepRecord::new(kinds::slot(), Vec::new(), now.encode()),
        ));
        match before {
            None => "no earlier record of this step (its first render)".into(),
            Some(before) => now.why_not(&before, earlier),
        }
    }

    /// The names of a package's first step's input: its subpackages
    /// (root-relative directories) with their output digests, and its
    /// resource files (`files`, root-relative) with their bytes' digests.
    /// `None` when the tree was not read (breadth-first).
    pub fn input_names(&self, files: &[String], subpackages: &[(String, Digest)]) -> Option<Names> {
        let keys = self.files.as_ref()?;
        // In the order the input digest combines them.
        let subpackages = subpackages
            .iter()
            .map(|(dir, digest)| (format!("the output of {dir}/"), *digest));
        let files = files.iter().filter_map(|path| match keys.get(path) {
            Some(FileKey::Bytes(digest)) => Some((path.clone(), *digest)),
            _ => None,
        });
        Some(Names(subpackages.chain(files).collect()))
    }

    /// The slot record of the step at `index` of `package` (display
    /// path): what its key covered the last time it ran.
    pub fn slot(&self, package: &str, index: usize) -> Option<Slot> {
        let record = self
            .store
            .peek_step(&self.slot_key(package, index))
            .ok()??;
        (record.kind == kinds::slot()).then_some(())?;
        Slot::decode(&record.meta)
    }

    /// Whether the store holds a step record under `key`: `Some` with its
    /// output's digest (a mutator's), else `None`.
    pub fn recorded_step(&self, key: &Digest) -> Option<Option<Digest>> {
        let record = self.store.peek_step(key).ok()??;
        (record.kind == kinds::step()).then_some(())?;
        Some(
            record
                .outputs
                .iter()
                .find(|o| o.name == NODES)
                .map(|o| o.digest),
        )
    }

    /// The output digest of the subtree recorded under `key`.
    pub fn recorded_subtree(&self, key: &Digest) -> Option<Digest> {
        let record = self.store.peek_step(key).ok()??;
        (record.kind == kinds::subtree()).then_some(())?;
        record
            .outputs
            .iter()
            .find(|o| o.name == NODES)
            .map(|o| o.digest)
    }

    /// The key-independent parts of the render: its root, for encodings.
    pub(super) fn root(&self) -> &Root {
        &self.root
    }

    /// The slot key of a step: its place in the tree (package, position),
    /// the same from render to render, for [`StepCache::explain_miss`].
    pub fn slot_key(&self, package: &str, index: usize) -> Digest {
        let mut h = Hasher::default();
        h.field(b"step slot");
        h.field(KEY_SCHEMA.as_bytes());
        h.field(
            self.root_dir
                .file_name()
                .unwrap_or_default()
                .as_encoded_bytes(),
        );
        h.field(package.as_bytes());
        h.field(&(index as u64).to_le_bytes());
        Digest::from(h.0.finalize())
    }

    /// A root-relative slash path.
    fn relative(&self, dir: &Path) -> String {
        dir.strip_prefix(&self.root_dir)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| dir.to_string_lossy().into_owned())
    }

    /// The record of step `key`, if the store has a usable one (never with
    /// `verify`).
    pub fn lookup_step(&self, key: &Digest, role: Role) -> Option<StepHit> {
        let mut hit = self.lookup(key, &kinds::step())?;
        let decoded = (|| {
            let output = match role {
                Role::Validator => None,
                Role::Mutator => Some(self.resources(&mut hit, NODES)?),
            };
            let log = self.log(&hit, &hit.record.meta)?;
            Some(StepHit { output, log })
        })();
        self.discard_unless(key, decoded)
    }

    /// A verified record of `kind` and its blobs, unless verifying or
    /// turned off. A record of another kind or version is removed.
    fn lookup(&self, key: &Digest, kind: &RecordKind) -> Option<krmgraph_cache::Hit> {
        if self.verify || !self.enabled() {
            return None;
        }
        let hit = if kinds::shared().contains(&kind.name.as_str()) {
            self.on(self.store.lookup_shared(key))??
        } else {
            self.on(self.store.lookup(key))??
        };
        self.discard_unless(key, (hit.record.kind == *kind).then_some(hit))
    }

    /// `decoded`, or `None` with the record of `key` removed.
    fn discard_unless<T>(&self, key: &Digest, decoded: Option<T>) -> Option<T> {
        if decoded.is_none() {
            self.on(self.store.remove_step(key));
        }
        decoded
    }

    /// The log a record keeps in `meta` (`0` then the log) or in its `log`
    /// blob (`1`).
    fn log(&self, hit: &krmgraph_cache::Hit, meta: &[u8]) -> Option<Log> {
        let bytes = match meta.split_first()? {
            (0, inline) => inline,
            (1, []) => output(hit, LOG)?.1,
            _ => return None,
        };
        codec::decode_log(bytes, &self.root)
    }

    /// Where a record keeps `log`: the meta bytes (and no blob) when small.
    fn place_log(&self, log: &Log) -> Option<(Vec<u8>, Option<BlobRef>)> {
        let bytes = codec::encode_log(log, &self.root)?;
        if bytes.len() <= INLINE_LOG {
            let mut meta = vec![0];
            meta.extend(bytes);
            return Some((meta, None));
        }
        Some((vec![1], Some(self.blob_ref(LOG, &bytes)?)))
    }

    /// The resources of a record's output, as a block.
    fn resources(&self, hit: &mut krmgraph_cache::Hit, name: &str) -> Option<Resources> {
        let i = hit.record.outputs.iter().position(|o| o.name == name)?;
        let blob = &hit.record.outputs[i];
        let bytes = std::mem::take(hit.outputs.get_mut(i)?);
        let (count, body) = codec::nodes_body(&bytes)?;
        let block = Block {
            bytes,
            body,
            count,
            digest: blob.digest,
        };
        Some(Resources {
            parts: vec![Part::Block(Arc::new(block))],
            blob: Some(Blob {
                digest: blob.digest,
                size: blob.size,
                stored: true,
            }),
        })
    }

    /// Records a successful step; returns the digest of its output (a
    /// mutator's), which is computed even when nothing can be recorded.
    pub fn record_step(
        &self,
        key: Option<&Digest>,
        output: Option<&[Part]>,
        log: &Log,
        label: impl FnOnce() -> String,
    ) -> Option<Blob> {
        let nodes = match output {
            Some(parts) => Some(self.encoding(parts)?),
            None => None,
        };
        let Some(key) = key.filter(|_| self.enabled()) else {
            return nodes.as_deref().map(unstored);
        };
        // The store names the blob by its digest: the output is hashed once.
        let nodes_ref = nodes
            .as_deref()
            .map(|pieces| self.blob_ref_parts(NODES, pieces));
        let mut blob = match (&nodes, &nodes_ref) {
            (Some(_), Some(Some(stored))) => Some(Blob {
                digest: stored.digest,
                size: stored.size,
                stored: false,
            }),
            (Some(pieces), _) => Some(unstored(pieces)),
            (None, _) => None,
        };
        if self.verify {
            self.compare(key, blob.as_ref(), label);
        }
        let recorded = (|| {
            let (meta, log_blob) = self.place_log(log)?;
            let mut outputs: Vec<BlobRef> = log_blob.into_iter().collect();
            if let Some(nodes_ref) = nodes_ref {
                outputs.push(nodes_ref?);
            }
            self.on(self
                .store
                .put_step(key, &StepRecord::new(kinds::step(), outputs, meta)))
        })();
        if let (Some(()), Some(b)) = (recorded, &mut blob) {
            b.stored = true;
        }
        blob
    }

    /// With `verify`: notes the first step whose fresh output differs from
    /// the one recorded under its key.
    fn compare(&self, key: &Digest, fresh: Option<&Blob>, label: impl FnOnce() -> String) {
        let Some(Some(record)) = self.on(self.store.peek_step(key)) else {
            return;
        };
        let recorded = record.outputs.iter().find(|o| o.name == NODES);
        if recorded.map(|o| o.digest) != fresh.map(|b| b.digest) {
            if let Ok(mut mismatch) = self.mismatch.lock() {
                mismatch.get_or_insert_with(label);
            }
        }
    }

    /// The subtree key of `pkg`; `None` without subtree shortcuts, when the
    /// tree could not be read, a Kptfile under it does not decode or names
    /// an exec program that cannot be read, or a symlink leaves it.
    pub fn subtree_key(&self, pkg: &Package) -> Option<Digest> {
        self.subtree_key_at(&pkg.dir, &pkg.display_path)
    }

    /// [`StepCache::subtree_key`] of the package at `dir` shown as
    /// `display_path`, computed once per render.
    pub fn subtree_key_at(&self, dir: &Path, display_path: &str) -> Option<Digest> {
        let known = self.subtree_keys.lock().ok()?.get(dir).copied();
        if let Some(key) = known {
            return key;
        }
        let key = self.compute_subtree_key(dir, display_path);
        self.subtree_keys
            .lock()
            .ok()?
            .insert(dir.to_path_buf(), key);
        key
    }

    /// Tells the store the subtree records of the packages at `dirs` (a
    /// package's subpackages) are about to be looked up, so that a remote
    /// behind it is asked for all of them at once rather than one sibling
    /// after another. Nothing when lookups are off.
    pub fn prefetch_subtrees(&self, dirs: &[PathBuf], root_parent: &Path) {
        if self.verify || !self.enabled() {
            return;
        }
        let keys: Vec<Digest> = dirs
            .iter()
            .filter_map(|dir| self.subtree_key_at(dir, &display_path(dir, root_parent)))
            .collect();
        self.store.prefetch_shared(&keys);
    }

    /// Whether the store holds a record under `key`; its blobs are not
    /// read, so a hit may still turn out to be a miss.
    pub fn has_record(&self, key: &Digest) -> bool {
        !self.verify && self.enabled() && self.on(self.store.peek_step(key)).flatten().is_some()
    }

    fn compute_subtree_key(&self, dir: &Path, display_path: &str) -> Option<Digest> {
        if !self.subtrees || !self.enabled() {
            return None;
        }
        let keys = SubtreeKeys {
            base: &self.base,
            files: self.files.as_ref()?,
            snapshot: self.snapshot.as_deref()?,
            identities: &self.identities,
        };
        keys.key(&self.relative(dir), display_path)
    }

    /// The record of subtree `key`, if the store has a usable one (never
    /// with `verify`).
    pub fn lookup_subtree(&self, key: &Digest) -> Option<SubtreeHit> {
        let mut hit = self.lookup(key, &kinds::subtree())?;
        let decoded = (|| {
            let record_meta = hit.record.meta.clone();
            let (counts, meta) = record_meta.split_at_checked(16)?;
            let count =
                |bytes: &[u8]| usize::try_from(u64::from_le_bytes(bytes.try_into().ok()?)).ok();
            let log = self.log(&hit, meta)?;
            Some(SubtreeHit {
                output: self.resources(&mut hit, NODES)?,
                log,
                executed: count(&counts[..8])?,
                packages: count(&counts[8..])?,
            })
        })();
        self.discard_unless(key, decoded)
    }

    /// Records a successful subtree render: its resources (usually the
    /// blob its last step recorded), log, files and counts. Returns the
    /// blob of its resources when they are stored.
    pub fn record_subtree(&self, key: &Digest, run: &SubtreeRun) -> Option<Blob> {
        if !self.enabled() {
            return None;
        }
        let record = (|| {
            let nodes = match run.output.blob {
                Some(blob) if blob.stored => BlobRef {
                    name: NODES.into(),
                    digest: blob.digest,
                    size: blob.size,
                },
                _ => {
                    let pieces = self.encoding(&run.output.parts)?;
                    self.blob_ref_parts(NODES, &pieces)?
                }
            };
            let (log_meta, log_blob) = self.place_log(&run.log)?;
            let mut meta = (run.executed as u64).to_le_bytes().to_vec();
            meta.extend((run.packages as u64).to_le_bytes());
            meta.extend(log_meta);
            let blob = Blob {
                digest: nodes.digest,
                size: nodes.size,
                stored: true,
            };
            let mut outputs = vec![nodes];
            outputs.extend(log_blob);
            Some((StepRecord::new(kinds::subtree(), outputs, meta), blob))
        })();
        let (record, blob) = record?;
        self.on(self.store.put_step(key, &record))?;
        Some(blob)
    }

    fn blob_ref_parts(&self, name: &str, pieces: &[Cow<[u8]>]) -> Option<BlobRef> {
        let pieces: Vec<&[u8]> = pieces.iter().map(|p| p.as_ref()).collect();
        Some(BlobRef {
            name: name.into(),
            digest: self.on(self.store.put_blob_parts(&pieces))?,
            size: pieces.iter().map(|p| p.len() as u64).sum(),
        })
    }

    fn blob_ref(&self, name: &str, bytes: &[u8]) -> Option<BlobRef> {
        Some(BlobRef {
            name: name.into(),
            digest: self.on(self.store.put_blob(bytes))?,
            size: bytes.len() as u64,
        })
    }

    /// Makes the render's records durable, with the item memo for the next
    /// render.
    pub fn flush(&self) {
        self.memos_loaded();
        if self.enabled() {
            self.save_item_memo();
            self.on(self.store.flush());
        }
    }

    /// Records what the item memo holds for the next render
    /// (`ItemMemo::export`), and the fixed points the render met
    /// (`FixedPoints::export`), in place of what it held before.
    fn save_item_memo(&self) {
        // A render that learnt little beyond what it loaded (an edit of a
        // few resources in a large tree) leaves the record as it is: it
        // would rewrite megabytes to add a few entries, which the next
        // render learns again at the cost of a few items. Entries this
        // render did not use stay in it until the next time it is written.
        let session = self.memo_record;
        let entries = session.entries.load(Ordering::SeqCst);
        let learnt_now = self.memos.learnt();
        let learnt = learnt_now.saturating_sub(session.learnt_then.load(Ordering::SeqCst));
        if learnt == 0 || entries > 0 && learnt * LEARNT_TO_SAVE <= entries {
            return;
        }
        let memo = self.memos.items.export();
        let fixed_points = self.memos.fixed_points.export();
        let files = self.memos.files.export();
        let exports = [
            (ITEM_MEMO, &memo),
            (FIXED_POINTS, &fixed_points),
            (FILE_MEMO, &files),
        ];
        let outputs: Vec<(&str, &[u8])> = exports
            .into_iter()
            .filter_map(|(name, bytes)| Some((name, bytes.as_deref()?)))
            .collect();
        if outputs.is_empty() {
            return;
        }
        let key = item_memo_key();
        let before = self.on(self.store.peek_step(&key)).flatten();
        let Some(record) = self.on(self.store.record(&key, &kinds::memos(), &outputs, &[])) else {
            return;
        };
        // The memo a render replaces is garbage at once: it goes now
        // rather than at the next gc.
        let old = before.iter().flat_map(|r| &r.outputs).map(|o| o.digest);
        for digest in old.filter(|d| record.outputs.iter().all(|o| o.digest != *d)) {
            self.on(self.store.remove_blob(&digest));
        }
        session.entries.store(entries + learnt, Ordering::SeqCst);
        session.learnt_then.store(learnt_now, Ordering::SeqCst);
    }
}

/// The output names of the item memo's record: the memo, and the
/// per-item built-ins' fixed points (`FixedPoints::export`).
const ITEM_MEMO: &str = "item-memo";
const FIXED_POINTS: &str = "fixed-points";
/// And the file memo (`FileMemo::export`).
const FILE_MEMO: &str = "file-memo";

/// The key the item memo is recorded under: one per krmgraph version.
fn item_memo_key() -> Digest {
    let mut h = Hasher::default();
    h.field(b"krmgraph item memo v1");
    h.field(env!("CARGO_PKG_VERSION").as_bytes());
    Digest::from(h.0.finalize())
}

/// The memos are recorded again when a render learnt at least one entry
/// for this many it loaded.
const LEARNT_TO_SAVE: usize = 100;

/// Imports into `memos` the item memo, the fixed points and the file memo
/// the last render with this store recorded (each memo takes the first
/// import only); returns how many entries it did. A
/// store failure here is a miss: both only save time.
fn load_item_memo(store: &dyn Store, memos: &Memos) -> usize {
    let Ok(Some(hit)) = store.lookup(&item_memo_key()) else {
        return 0;
    };
    if hit.record.kind != kinds::memos() {
        return 0;
    }
    let mut imported = 0;
    if let Some((_, bytes)) = output(&hit, ITEM_MEMO) {
        imported += memos.items.import(bytes);
    }
    if let Some((_, bytes)) = output(&hit, FIXED_POINTS) {
        imported += memos.fixed_points.import(bytes);
    }
    if let Some((_, bytes)) = output(&hit, FILE_MEMO) {
        imported += memos.files.import(bytes);
    }
    imported
}

impl Drop for StepCache<'_> {
    fn drop(&mut self) {
        self.memos_loaded();
    }
}

/// The blob of an encoding in `pieces`, not stored.
fn unstored(pieces: &[Cow<[u8]>]) -> Blob {
    let mut hasher = blake3::Hasher::new();
    for piece in pieces {
        hasher.update(piece);
    }
    Blob {
        digest: Digest::from(hasher.finalize()),
        size: pieces.iter().map(|p| p.len() as u64).sum(),
        stored: false,
    }
}

/// The output named `name` of a hit, with its bytes.
fn output<'h>(hit: &'h krmgraph_cache::Hit, name: &str) -> Option<(&'h BlobRef, &'h [u8])> {
    let i = hit.record.outputs.iter().position(|o| o.name == name)?;
    Some((&hit.record.outputs[i], hit.outputs.get(i)?.as_slice()))
}

/// What a step's key covers, in parts: the render's inputs (flags,
/// environment, version: [`base_digest`]), the function (role, identity,
/// package, built-in or not), its config (the Kptfile spec and the
/// functionConfig) and its input resources.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepInputs {
    pub(super) base: Digest,
    pub(super) function: Digest,
    pub(super) config: Digest,
    pub(super) input: Digest,
}

impl StepInputs {
    /// The length of [`StepInputs::encode`]'s bytes.
    pub(super) const ENCODED_LEN: usize = 128;

    #[cfg(test)]
    pub(super) fn new(base: Digest, function: Digest, config: Digest, input: Digest) -> Self {
        StepInputs {
            base,
            function,
            config,
            input,
        }
    }

    /// The step key.
    pub fn key(&self) -> Digest {
        let mut h = Hasher::default();
        h.field(b"step");
        for part in [&self.base, &self.function, &self.config, &self.input] {
            h.field(part.as_bytes());
        }
        Digest::from(h.0.finalize())
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        [&self.base, &self.function, &self.config, &self.input]
            .iter()
            .flat_map(|d| *d.as_bytes())
            .collect()
    }

    pub(super) fn decode(bytes: &[u8]) -> Option<StepInputs> {
        let part = |i: usize| -> Option<Digest> {
            Some(Digest::from_bytes(
                bytes.get(i * 32..(i + 1) * 32)?.try_into().ok()?,
            ))
        };
        (bytes.len() == Self::ENCODED_LEN).then_some(())?;
        Some(StepInputs {
            base: part(0)?,
            function: part(1)?,
            config: part(2)?,
            input: part(3)?,
        })
    }
}

/// The step cache's schema and the render's inputs ([`inputs::digest`]):
/// the start of every step, subtree and files key.
pub(super) fn base_digest(options: &RenderOptions) -> Digest {
    let mut h = Hasher::default();
    h.field(KEY_SCHEMA.as_bytes());
    h.field(inputs::digest(options).as_bytes());
    Digest::from(h.0.finalize())
}

/// The Kptfile fields of a step, each length-prefixed.
fn function_spec(h: &mut Hasher, f: &Function) {
    for text in [&f.image, &f.exec, &f.config_path, &f.name] {
        h.field(text.as_bytes());
    }
    match &f.config_map {
        None => h.field(b"no configMap"),
        Some(entries) => {
            h.field(&(entries.len() as u64).to_le_bytes());
            for (k, v) in entries {
                h.field(k.as_bytes());
                h.field(v.as_bytes());
            }
        }
    }
    for selectors in [&f.selectors, &f.exclusions] {
        h.field(&(selectors.len() as u64).to_le_bytes());
        for s in selectors {
            selector(h, s);
        }
    }
}

fn selector(h: &mut Hasher, s: &Selector) {
    for text in [&s.api_version, &s.kind, &s.name, &s.namespace] {
        h.field(text.as_bytes());
    }
    for pairs in [&s.labels, &s.annotations] {
        h.field(&(pairs.len() as u64).to_le_bytes());
        for (k, v) in pairs {
            h.field(k.as_bytes());
            h.field(v.as_bytes());
        }
    }
}

/// The subtree keys of one tree: as a render read it, or as it left it.
pub(super) struct SubtreeKeys<'t> {
    /// The render's [`base_digest`].
    pub base: &'t Digest,
    /// [`file_keys`] of `snapshot`.
    pub files: &'t BTreeMap<String, FileKey>,
    pub snapshot: &'t Snapshot,
    pub identities: &'t Identities<'t>,
}

impl SubtreeKeys<'_> {
    /// The subtree key of the package at `rel` (root-relative, empty for
    /// the root) shown as `display_path`: the relative paths and bytes of
    /// every file under it and its Kptfiles' function identities. `None`
    /// when a symlink leaves it or a function has no identity.
    pub fn key(&self, rel: &str, display_path: &str) -> Option<Digest> {
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let mut h = Hasher::default();
        h.field(b"subtree");
        h.field(self.base.as_bytes());
        h.field(rel.as_bytes());
        h.field(display_path.as_bytes());
        for (path, file) in self.files.range(prefix.clone()..) {
            let Some(local) = path.strip_prefix(&prefix) else {
                break;
            };
            h.field(local.as_bytes());
            match file {
                FileKey::Bytes(digest) => {
                    h.field(b"file");
                    h.field(digest.as_bytes());
                }
                FileKey::Link(target) if link_stays_inside(local, target) => {
                    h.field(b"link");
                    h.field(target.as_bytes());
                }
                FileKey::Link(_) => return None,
            }
            if is_kptfile(local) {
                let identities = self.snapshot.kptfile_identities(self.identities);
                for identity in identities.get(path)?.as_deref()? {
                    h.field(identity);
                }
            }
        }
        Some(Digest::from(h.0.finalize()))
    }
}

/// Every file of the snapshot by path: the digest of its bytes, or its link
/// target.
pub(super) fn file_keys(snapshot: &Snapshot) -> BTreeMap<String, FileKey> {
    let digests = snapshot.file_digests();
    snapshot
        .entries()
        .iter()
        .map(|(path, entry)| {
            let key = match entry {
                Entry::File(_) => FileKey::Bytes(digests[path]),
                Entry::Link(target) => FileKey::Link(target.clone()),
            };
            (path.clone(), key)
        })
        .collect()
}

/// Whether a symlink at `local` (slash path inside a subtree) pointing at
/// `target` resolves inside the subtree, so its content is keyed too.
fn link_stays_inside(local: &str, target: &str) -> bool {
    if target.starts_with('/') {
        return false;
    }
    let dir = local.rsplit_once('/').map_or("", |(d, _)| d);
    let joined = if dir.is_empty() {
        target.to_string()
    } else {
        format!("{dir}/{target}")
    };
    let cleaned = clean_path(&joined);
    cleaned != ".." && !cleaned.starts_with("../")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same tree at two paths: equal subtree keys, equal input digests
    /// and step keys; a changed byte changes them.
    #[test]
    fn keys_do_not_depend_on_the_checkout_location() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |root: &Path, value: &str| {
            std::fs::create_dir_all(root.join("sub")).unwrap();
            std::fs::write(
                root.join("Kptfile"),
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n    - image: gcr.io/kpt-fn/set-labels:v0.1.4\n      configMap:\n        app: x\n",
            )
            .unwrap();
            std::fs::write(
                root.join("sub/cm.yaml"),
                format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: {value}\n"
                ),
            )
            .unwrap();
        };
        let keys = |root: &Path| {
            let options = RenderOptions::default();
            let runner = options.runner.clone();
            let cache = RenderCache {
                store: Arc::new(krmgraph_cache::MemoryStore::new()),
                snapshot: None,
                verify: false,
                memos: Default::default(),
            };
            let steps = StepCache::new(&cache, root, &options, true);
            let pkg = Package::load(root, root.parent().unwrap()).unwrap();
            let local =
                krmgraph_kyaml::pkgio::LocalPackageReader::kpt(root, &root.to_string_lossy())
                    .read()
                    .unwrap();
            let f = &pkg.kptfile.pipeline.mutators[0];
            let function = FunctionRunner::new(f, root, &runner).unwrap();
            let input = steps.digest_of(&local).unwrap().digest();
            let step = steps.step_key(Role::Mutator, f, &function, &input).unwrap();
            (steps.subtree_key(&pkg).unwrap(), input, step)
        };
        let (a, b, c) = (
            tmp.path().join("one/pkg"),
            tmp.path().join("elsewhere/two/pkg"),
            tmp.path().join("three/pkg"),
        );
        write(&a, "v");
        write(&b, "v");
        write(&c, "w");
        let (at_a, at_b, at_c) = (keys(&a), keys(&b), keys(&c));
        assert_eq!(at_a, at_b);
        assert_ne!(at_a.0, at_c.0);
        assert_ne!(at_a.1, at_c.1);
        assert_ne!(at_a.2, at_c.2);
    }

    #[test]
    fn links_inside_and_outside() {
        assert!(link_stays_inside("a/l.yaml", "x.yaml"));
        assert!(link_stays_inside("a/l.yaml", "../b/x.yaml"));
        assert!(!link_stays_inside("l.yaml", "../x.yaml"));
        assert!(!link_stays_inside("a/l.yaml", "../../x.yaml"));
        assert!(!link_stays_inside("l.yaml", "/etc/x.yaml"));
    }
}
