//! Blocks: the resources of a replayed record, passed up the tree as the
//! record's bytes, not decoded, through the pipelines that give them back
//! unchanged.
//!
//! After an edit, a package's pipeline sees its subpackages' outputs, most
//! of them replayed, and its mutator (often an identity, or one that finds
//! nothing left to change) gives them back as they were. Decoding them, writing them into the function's
//! ResourceList, restoring the echo and encoding the output again is most
//! of such a render's work, at every ancestor of the edited package.
//!
//! So a replayed output is a [`Block`], and a step that ran on decoded
//! blocks and gave a block's resources back byte for byte (in the
//! [`codec`] encoding) while its function echoed its input records the
//! block's **facts** under the step and the block's digest
//! ([`StepCache::facts_key`]): each resource's item memo fingerprint, its
//! path key, and the annotation format. The next time that step sees the
//! block, with facts for every block of its input and the memo holding
//! their texts, it runs on the block's texts
//! ([`fnruntime::known::run_echoing`]); if the function echoes again, the
//! block passes through as it is, and the step's record is the blocks'
//! bytes and the other parts' encoding, one after the other (a node's
//! encoding depends on the node alone, so this is the encoding of the
//! whole list). Whatever else happens — no facts, a memo miss, a function
//! that does not echo — the step runs on the decoded list, with the
//! process already run.
//!
//! `KRMGRAPH_CHECK_DIRECT=1` (CI) runs every such step the long way too
//! and fails on a different ResourceList or output.
//!
//! What stops blocks: a step with selectors, exclusions or a `configPath`
//! functionConfig (its input is not the whole list as it is), a built-in
//! that runs on nodes, and validators (they run on the decoded output, and
//! the package passes nodes on). A block's record that does not decode
//! (blobs are verified, so only a codec fault) fails the render with a
//! message to clear the cache.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::Arc;

use krmgraph_cache::Digest;

use super::codec::BlockFacts;
use super::stepcache::{push_part, Block, Part, StepCache};
use krmgraph_fn::known::{self, InputPart, KnownItems};
use krmgraph_fn::{self as fnruntime, ConfigSource, FunctionRunner, RunContext};
use krmgraph_kyaml::{item_memo, kio_pipeline};
use krmgraph_package::kptfile::Function;
use krmgraph_yaml::Node;

/// Runs mutator `f` (built as `runner`) on `input` with its blocks kept as
/// they are, when every block's facts say how and the function echoes:
/// the output. `None`, with nothing reported, otherwise.
pub(super) fn run_known(
    cache: &StepCache,
    f: &Function,
    runner: &FunctionRunner,
    input: &[Part],
    ctx: &mut RunContext,
) -> Option<Vec<Part>> {
    if !keeps_blocks(f, runner) {
        return None;
    }
    // Every block's facts first: the parts of nodes are copied (the long
    // way needs them as they are) only when the step can run so.
    let mut known = Vec::new();
    for block in input.iter().filter_map(Part::block) {
        known.push(known_items(cache, f, runner, block)?);
    }
    let mut known = known.into_iter();
    let mut parts = Vec::with_capacity(input.len());
    for part in input {
        parts.push(match part {
            Part::Nodes(nodes) => InputPart::Nodes(nodes.clone()),
            Part::Block(_) | Part::Decoded(..) => InputPart::Known(known.next()?),
        });
    }
    let (outputs, stdin) = known::run_echoing(runner, parts, ctx)?;
    let mut outputs = outputs.into_iter();
    let mut output = Vec::with_capacity(input.len());
    for part in input {
        let part = match part.block() {
            None => Part::Nodes(outputs.next()?),
            Some(block) => Part::Block(Arc::clone(block)),
        };
        push_part(&mut output, part);
    }
    if runner.check_direct {
        check_against_long_way(cache, runner, input, &stdin, &output);
    }
    Some(output)
}

/// Whether mutator `f` (built as `runner`) can run with blocks: it sees
/// every resource (no selectors or exclusions), takes its own
/// functionConfig, not one from its input, and runs on the ResourceList's
/// bytes.
fn keeps_blocks(f: &Function, runner: &FunctionRunner) -> bool {
    let whole = f.selectors.is_empty() && f.exclusions.is_empty() && f.config_path.is_empty();
    whole && runner.runs_on_bytes()
}

/// What the facts of `block` under this step say, with the memo's entries
/// for its resources; `None` unless all of it is known.
fn known_items(
    cache: &StepCache,
    f: &Function,
    runner: &FunctionRunner,
    block: &Block,
) -> Option<KnownItems> {
    let facts = cache.lookup_facts(&cache.facts_key(f, runner, &block.digest())?)?;
    if facts.fingerprints.len() != block.count() {
        return None;
    }
    let entries = facts
        .fingerprints
        .iter()
        .map(|fp| {
            runner
                .memos
                .items
                .remembered(fp)
                .filter(|e| e.echo_reads_back_plainly())
        })
        .collect::<Option<Vec<_>>>()?;
    Some(KnownItems {
        entries,
        keys: facts.keys,
        format: facts.format,
    })
}

/// Where the blocks of a step's input are: each part's length, and its
/// block.
pub(super) fn layout(input: &[Part]) -> Vec<(usize, Option<Arc<Block>>)> {
    input
        .iter()
        .map(|part| (part.len(), part.block().cloned()))
        .collect()
}

/// The output of mutator `f` that ran on the decoded `layout`, in parts:
/// each block its function echoed back byte for byte is that block again,
/// and its facts are recorded for the next run.
pub(super) fn settle(
    cache: &StepCache,
    f: &Function,
    runner: &FunctionRunner,
    layout: &[(usize, Option<Arc<Block>>)],
    output: Vec<Node>,
) -> Vec<Part> {
    let echo = runner.take_echo();
    if !keeps_blocks(f, runner) || layout.iter().all(|(_, block)| block.is_none()) {
        return vec![Part::Nodes(output)];
    }
    let total: usize = layout.iter().map(|(len, _)| len).sum();
    let Some(echo) = echo.filter(|e| e.len() == total && output.len() == total) else {
        return vec![Part::Nodes(output)];
    };
    let mut parts = Vec::with_capacity(layout.len());
    let mut rest = output.into_iter();
    let mut at = 0;
    for (len, block) in layout {
        let nodes: Vec<Node> = rest.by_ref().take(*len).collect();
        let entries = &echo[at..at + len];
        at += len;
        let settled = block
            .as_ref()
            .filter(|block| cache.encode_body(&nodes).as_deref() == Some(block.body()));
        let part = match settled {
            Some(block) => {
                if let Some(facts) = facts_of(&nodes, entries) {
                    if let Some(key) = cache.facts_key(f, runner, &block.digest()) {
                        cache.record_facts(&key, &facts);
                    }
                }
                Part::Decoded(Arc::clone(block), nodes)
            }
            None => Part::Nodes(nodes),
        };
        push_part(&mut parts, part);
    }
    parts
}

/// The facts of a block whose resources a step echoed and gave back as
/// `nodes`, the memo knowing each one's echo (`entries`); `None` when not
/// all are known or the resources do not agree on one annotation format.
fn facts_of(nodes: &[Node], entries: &[Option<Arc<item_memo::Entry>>]) -> Option<BlockFacts> {
    let fingerprints = entries
        .iter()
        .map(|e| e.as_ref().map(|e| *e.fingerprint()))
        .collect::<Option<Vec<_>>>()?;
    let formats = krmgraph_util::par::map(nodes, kio_pipeline::annotation_format);
    let mut formats = formats.into_iter().flatten();
    let format = formats.next()?;
    if formats.any(|f| f != format) {
        return None;
    }
    let keys = krmgraph_util::par::map(nodes, |n| match fnruntime::path_key(n) {
        (None, key) => Some(key),
        (Some(_), _) => None,
    })
    .into_iter()
    .collect::<Option<Vec<_>>>()?;
    Some(BlockFacts {
        fingerprints,
        keys,
        format,
    })
}

/// `KRMGRAPH_CHECK_DIRECT`: the ResourceList the step sent (`stdin`) and
/// its `output` are what the long way gives on the decoded input.
fn check_against_long_way(
    cache: &StepCache,
    runner: &FunctionRunner,
    input: &[Part],
    stdin: &[u8],
    output: &[Part],
) {
    let decoded = || -> Vec<Node> {
        let mut nodes = Vec::new();
        for part in input {
            match part {
                Part::Nodes(n) | Part::Decoded(_, n) => nodes.extend(n.iter().cloned()),
                Part::Block(b) => nodes.extend(
                    cache
                        .decode(b)
                        .expect("KRMGRAPH_CHECK_DIRECT: a block does not decode"),
                ),
            }
        }
        nodes
    };
    let mut nodes = decoded();
    kio_pipeline::preprocess_for_internal_annotation_migration(&mut nodes)
        .and_then(|_| kio_pipeline::set_ids(&mut nodes))
        .expect("KRMGRAPH_CHECK_DIRECT: the long way's ids fail");
    let (long_stdin, _) = kio_pipeline::function_input_remembering(
        &mut nodes,
        runner.config.as_ref(),
        &runner.memos.items,
        false,
    )
    .expect("KRMGRAPH_CHECK_DIRECT: the long way's ResourceList fails");
    assert!(
        long_stdin == stdin,
        "KRMGRAPH_CHECK_DIRECT: a step's ResourceList from blocks differs from the long way's\n\
         from blocks:\n{}\nlong way:\n{}",
        String::from_utf8_lossy(stdin),
        String::from_utf8_lossy(&long_stdin),
    );
    let mut reporter = krmgraph_fn::event::RecordingReporter::default();
    let mut scratch = RunContext {
        reporter: &mut reporter,
        results: Vec::new(),
        exit_code: 0,
    };
    let mut nodes = decoded();
    let long = fnruntime::run_in_pipeline(runner, &mut nodes, ConfigSource::Runner, &mut scratch)
        .expect("KRMGRAPH_CHECK_DIRECT: the long way fails where blocks passed");
    runner.take_echo();
    let long = cache.encode_parts(&[Part::Nodes(long)]);
    assert!(
        long.is_some() && long == cache.encode_parts(output),
        "KRMGRAPH_CHECK_DIRECT: a step's output from blocks differs from the long way's"
    );
}

/// Files by root-relative path, with their bytes.
type Files = Vec<(String, Vec<u8>)>;

/// The root's output, ready to write in place: the resources to write,
/// and the files of the blocks known to be on disk as this render would
/// write them (with the bytes the render read).
#[derive(Default)]
pub(super) struct ToWrite {
    pub nodes: Vec<Node>,
    pub files: Files,
    /// The blocks whose files those are.
    pub kept: Vec<Arc<Block>>,
    /// Where each decoded block's resources are in `nodes`.
    pub decoded: Vec<(Range<usize>, Digest)>,
}

/// Splits the root's output `parts` for writing in place. A block is left
/// undecoded when the files it is written to are recorded, the tree as
/// read holds each as recorded, and no other resource goes to them;
/// `rel_path` is the root-relative path a resource is written to. `None`
/// when a block does not decode.
pub(super) fn to_write(
    cache: &StepCache,
    parts: Vec<Part>,
    rel_path: impl Fn(&Node) -> Option<String> + Sync,
) -> Option<ToWrite> {
    let mut kept: Vec<Option<Files>> = Vec::with_capacity(parts.len());
    let mut taken = HashSet::new();
    for part in &parts {
        let files = part.block().and_then(|block| on_disk(cache, block, &taken));
        taken.extend(files.iter().flatten().map(|(path, _)| path.clone()));
        kept.push(files);
    }
    let mut decoded: Vec<Option<Vec<Node>>> = Vec::with_capacity(parts.len());
    for (part, files) in parts.iter().zip(&kept) {
        decoded.push(match (part, files) {
            (Part::Block(block), None) => Some(cache.decode(block)?),
            _ => None,
        });
    }
    // A file another resource goes to is written from all of them.
    let mut shared = HashSet::new();
    for (part, decoded) in parts.iter().zip(&decoded) {
        let nodes = match (part, decoded) {
            (Part::Nodes(nodes) | Part::Decoded(_, nodes), _) | (_, Some(nodes)) => nodes,
            _ => continue,
        };
        for path in krmgraph_util::par::map(nodes, &rel_path)
            .into_iter()
            .flatten()
        {
            if taken.contains(&path) {
                shared.insert(path);
            }
        }
    }
    let mut out = ToWrite::default();
    for ((part, files), decoded) in parts.into_iter().zip(kept).zip(decoded) {
        let files = files.filter(|f| !f.iter().any(|(path, _)| shared.contains(path)));
        match (part, files, decoded) {
            (Part::Nodes(nodes), _, _) => out.nodes.extend(nodes),
            (block, Some(files), _) => {
                out.files.extend(files);
                out.kept.extend(block.block().cloned());
            }
            (Part::Decoded(block, nodes), None, _) | (Part::Block(block), None, Some(nodes)) => {
                out.push_decoded(&block, nodes)
            }
            (Part::Block(block), None, None) => out.push_decoded(&block, cache.decode(&block)?),
        }
    }
    Some(out)
}

impl ToWrite {
    fn push_decoded(&mut self, block: &Block, nodes: Vec<Node>) {
        let start = self.nodes.len();
        self.nodes.extend(nodes);
        self.decoded.push((start..self.nodes.len(), block.digest()));
    }
}

/// The files `block` is written to, with their bytes as the render read
/// them, when they are recorded, none is `taken` and each holds what was
/// recorded.
fn on_disk(cache: &StepCache, block: &Block, taken: &HashSet<String>) -> Option<Files> {
    let files = cache.lookup_files(&cache.files_key(&block.digest()))?;
    files
        .into_iter()
        .map(|(path, digest)| {
            if taken.contains(&path) || cache.read_digest(&path) != Some(digest) {
                return None;
            }
            let bytes = cache.read_bytes(&path)?;
            Some((path, bytes))
        })
        .collect()
}

/// Records, for each decoded block (`decoded`) whose resources alone are
/// written to their files, those files with the digests of their bytes as
/// written (`written`); `paths`: the file each resource went to.
pub(super) fn learn_files(
    cache: &StepCache,
    decoded: &[(Range<usize>, Digest)],
    paths: &[String],
    written: &HashMap<&str, &[u8]>,
) {
    if decoded.is_empty() {
        return;
    }
    // Each file's writer: the block, or `None` for another resource.
    let mut writer: HashMap<&str, Option<usize>> = HashMap::new();
    let mut shared = HashSet::new();
    let mut blocks = decoded.iter().enumerate().peekable();
    for (i, path) in paths.iter().enumerate() {
        while blocks.peek().is_some_and(|(_, (range, _))| range.end <= i) {
            blocks.next();
        }
        let block = blocks
            .peek()
            .filter(|(_, (range, _))| range.contains(&i))
            .map(|(k, _)| *k);
        if *writer.entry(path).or_insert(block) != block {
            shared.insert(path.as_str());
        }
    }
    for (k, (range, digest)) in decoded.iter().enumerate() {
        let mut files: Vec<&str> = paths[range.clone()].iter().map(String::as_str).collect();
        files.sort_unstable();
        files.dedup();
        let owned = files
            .iter()
            .all(|path| !shared.contains(path) && writer.get(path) == Some(&Some(k)));
        if !owned || files.is_empty() {
            continue;
        }
        let recorded = files
            .iter()
            .map(|path| {
                Some((
                    path.to_string(),
                    *blake3::hash(written.get(path)?).as_bytes(),
                ))
            })
            .collect::<Option<Vec<_>>>();
        if let Some(recorded) = recorded {
            cache.record_files(&cache.files_key(digest), &recorded);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stepcache::RenderCache;

    fn resource(path: &str, name: &str) -> Node {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  annotations:\n    internal.config.kubernetes.io/path: '{path}'\n"
        );
        krmgraph_yaml::decode::parse_documents(text.as_bytes())
            .unwrap()
            .remove(0)
    }

    fn names(nodes: &[Node]) -> Vec<String> {
        nodes
            .iter()
            .map(|n| {
                krmgraph_kyaml::rnode::meta_view(n)
                    .unwrap()
                    .name
                    .to_string()
            })
            .collect()
    }

    /// A block whose files were recorded and are on disk as recorded is
    /// kept undecoded; one whose file another resource also goes to, or
    /// whose file changed, is decoded in its place.
    #[test]
    fn blocks_keep_their_files_only_when_they_alone_hold_them_as_recorded() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("pkg");
        std::fs::create_dir_all(root.join("a")).unwrap();
        for (file, text) in [
            ("a/x.yaml", "x: 1\n"),
            ("a/y.yaml", "y: 1\n"),
            ("a/z.yaml", "z: 2\n"),
        ] {
            std::fs::write(root.join(file), text).unwrap();
        }
        let cache = RenderCache {
            store: Arc::new(krmgraph_cache::MemoryStore::new()),
            snapshot: None,
            verify: false,
            memos: Default::default(),
        };
        let options = crate::RenderOptions::default();
        let steps = StepCache::new(&cache, &root, &options, true);
        let (x, y, z) = (
            steps.block_of(&[resource("a/x.yaml", "x1"), resource("a/x.yaml", "x2")]),
            steps.block_of(&[resource("a/y.yaml", "y")]),
            steps.block_of(&[resource("a/z.yaml", "z")]),
        );
        // A render wrote the three blocks' files; z's file has changed since.
        let paths: Vec<String> = ["a/x.yaml", "a/x.yaml", "a/y.yaml", "a/z.yaml"]
            .map(String::from)
            .to_vec();
        let written: HashMap<&str, &[u8]> = [
            ("a/x.yaml", &b"x: 1\n"[..]),
            ("a/y.yaml", b"y: 1\n"),
            ("a/z.yaml", b"z: 1\n"),
        ]
        .into();
        let decoded = [(0..2, x.digest()), (2..3, y.digest()), (3..4, z.digest())];
        learn_files(&steps, &decoded, &paths, &written);
        let path_of = |r: &Node| Some(krmgraph_kyaml::krm::path_of(r));
        let parts = || {
            vec![
                Part::Block(Arc::clone(&x)),
                Part::Block(Arc::clone(&y)),
                Part::Block(Arc::clone(&z)),
                Part::Nodes(vec![resource("b/w.yaml", "w")]),
            ]
        };
        let split = to_write(&steps, parts(), path_of).unwrap();
        let files: Vec<&str> = split.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(files, ["a/x.yaml", "a/y.yaml"]);
        assert_eq!(split.files[0].1, b"x: 1\n");
        assert_eq!(names(&split.nodes), ["z", "w"]);
        assert_eq!(split.decoded, [(0..1, z.digest())]);
        // Another resource goes to y's file: y is decoded, in its place.
        let mut shared = parts();
        shared.push(Part::Nodes(vec![resource("a/y.yaml", "y-too")]));
        let split = to_write(&steps, shared, path_of).unwrap();
        let files: Vec<&str> = split.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(files, ["a/x.yaml"]);
        assert_eq!(names(&split.nodes), ["y", "z", "w", "y-too"]);
        assert_eq!(split.decoded, [(0..1, y.digest()), (1..2, z.digest())]);
        // A block whose file another resource was written to is not
        // recorded.
        let v = steps.block_of(&[resource("a/x.yaml", "v")]);
        let paths: Vec<String> = ["a/x.yaml", "a/x.yaml"].map(String::from).to_vec();
        learn_files(&steps, &[(0..1, v.digest())], &paths, &written);
        assert!(steps.lookup_files(&steps.files_key(&v.digest())).is_none());
        assert!(steps.lookup_files(&steps.files_key(&y.digest())).is_some());
    }
}
