//! A mutator run on a list of which some items are known only by what
//! earlier runs of the same step showed (`render::blocks`): their texts in
//! the function's input (the item memo's, their ids put in by position),
//! their path keys and annotation format, and that the step gives them
//! back exactly as they are when its function echoes its input.
//!
//! The items of the other parts go through everything
//! [`super::run_in_pipeline`] does to a list — migration ids, ids, the
//! ResourceList, the echo's restoring, default paths, package paths, the
//! path invariants, reconciliation — numbered by their place in the whole
//! list. The known items only take their place in the ResourceList and in
//! the checks that span the list. Anything this cannot do as the whole
//! list would is declined before a word is reported: a function that does
//! not echo, an item the memo declines, a failing check. The caller then
//! runs the step the long way; the process already run is handed to it
//! (`FunctionRunner::invoke` takes it for the same stdin), so the
//! function runs once either way.

use std::sync::Arc;
use std::time::Instant;

use super::{echoed, FunctionRunner, RunContext};
use crate::event::Event;
use krmgraph_kyaml::byteio::{ByteWriter, ListPart};
use krmgraph_kyaml::item_memo;
use krmgraph_kyaml::kio_pipeline::{self, AnnotationSnapshot};
use krmgraph_yaml::Node;

/// Items known by what earlier runs of the step showed.
pub struct KnownItems {
    /// Each item's memo entry (its text; its echo reads back plainly).
    pub entries: Vec<Arc<item_memo::Entry>>,
    /// Each item's package, cleaned path and index
    /// ([`super::path_key`]).
    pub keys: Vec<[String; 3]>,
    /// Whether the items carry the internal and the legacy path/index/id
    /// annotations.
    pub format: (bool, bool),
}

/// A part of a mutator's input list.
pub enum InputPart {
    /// Items as nodes.
    Nodes(Vec<Node>),
    /// Items the step gives back as they are when it echoes.
    Known(KnownItems),
}

impl InputPart {
    fn len(&self) -> usize {
        match self {
            InputPart::Nodes(nodes) => nodes.len(),
            InputPart::Known(known) => known.entries.len(),
        }
    }
}

/// Runs `runner` (a mutator on the ResourceList's bytes, its own
/// functionConfig, no selectors) on the list `parts` make, as
/// [`super::run_in_pipeline`] would, when its function echoes the list:
/// the output of each part of nodes, in order (the known parts' output is
/// their input), and the ResourceList sent. `None`, with nothing reported,
/// where that cannot be done so; the process run, if any, then waits for
/// the caller's run of the same input.
pub fn run_echoing(
    runner: &FunctionRunner,
    parts: Vec<InputPart>,
    ctx: &mut RunContext,
) -> Option<(Vec<Vec<Node>>, Vec<u8>)> {
    let start = Instant::now();
    let offsets: Vec<usize> = parts
        .iter()
        .scan(0, |at, part| {
            let offset = *at;
            *at += part.len();
            Some(offset)
        })
        .collect();
    let total: usize = parts.iter().map(InputPart::len).sum();
    if total == 0 {
        return None;
    }
    let mut nodes: Vec<(usize, Vec<Node>)> = Vec::new();
    let mut known: Vec<(usize, KnownItems)> = Vec::new();
    for (part, offset) in parts.into_iter().zip(offsets) {
        match part {
            InputPart::Nodes(n) => nodes.push((offset, n)),
            InputPart::Known(k) => known.push((offset, k)),
        }
    }
    let (snapshot, format) = preprocess(&mut nodes, &known, total)?;
    let (stdin, remembered) = function_input(runner, &mut nodes, &known)?;
    // From here on the function runs: kpt's `[RUNNING]` goes out now, and
    // the long way, if it takes over, does not report it again.
    runner.report_started(total, ctx);
    let process = match runner.invoke(&stdin) {
        Ok(p) if p.exit_code == Some(0) && p.stdout == stdin => p,
        other => {
            runner.prefetched.put((stdin, other));
            return None;
        }
    };
    let stderr = String::from_utf8_lossy(&process.stderr).into_owned();
    let node_parts = nodes.len();
    let outputs = after_echo(
        runner,
        nodes,
        &known,
        remembered,
        &process.stdout,
        &snapshot,
        format,
    );
    let Some(outputs) = outputs.filter(|o| o.len() == node_parts) else {
        runner.prefetched.put((stdin, Ok(process)));
        return None;
    };
    report_passed(runner, stderr, start, ctx);
    Some((outputs, stdin))
}

/// kio.Pipeline's preprocessing of the node parts (migration ids by place
/// in the whole list) and the annotation format of the whole list.
fn preprocess(
    nodes: &mut [(usize, Vec<Node>)],
    known: &[(usize, KnownItems)],
    total: usize,
) -> Option<(AnnotationSnapshot, (bool, bool))> {
    let mut entries = Vec::with_capacity(nodes.len());
    for (offset, part) in nodes.iter_mut() {
        entries.push((*offset, kio_pipeline::preprocess_from(part, *offset).ok()?));
    }
    let snapshot = AnnotationSnapshot::of_parts(total, entries);
    let formats = snapshot
        .formats()
        .chain(known.iter().map(|(_, k)| k.format))
        .collect::<Vec<_>>();
    let format = kio_pipeline::annotations_format(true, formats.into_iter()).ok()?;
    Some((snapshot, format))
}

/// The KRM check, the ids, and the ResourceList: the bytes and the node
/// parts' memo entries.
fn function_input(
    runner: &FunctionRunner,
    nodes: &mut [(usize, Vec<Node>)],
    known: &[(usize, KnownItems)],
) -> Option<(Vec<u8>, Vec<item_memo::Entries>)> {
    for (offset, part) in nodes.iter_mut() {
        krmgraph_kyaml::krm::check_all_krm(part).ok()?;
        kio_pipeline::set_ids_from(part, *offset).ok()?;
    }
    let mut list: Vec<(usize, ListPart)> = nodes
        .iter_mut()
        .map(|(offset, part)| (*offset, ListPart::Nodes(part.as_mut_slice())))
        .chain(known.iter().map(|(offset, k)| {
            let texts = k
                .entries
                .iter()
                .enumerate()
                .map(|(i, e)| e.text_at(offset + i))
                .collect();
            (*offset, ListPart::Texts(texts))
        }))
        .collect();
    list.sort_by_key(|(offset, _)| *offset);
    let mut list: Vec<ListPart> = list.into_iter().map(|(_, part)| part).collect();
    ByteWriter::resource_list(runner.config.clone()).write_parts_remembering(
        &mut list,
        &runner.memos.items,
        false,
    )
}

/// What follows an echo: the node parts restored, given default and
/// package paths, checked with the known items, and reconciled.
fn after_echo(
    runner: &FunctionRunner,
    nodes: Vec<(usize, Vec<Node>)>,
    known: &[(usize, KnownItems)],
    remembered: Vec<item_memo::Entries>,
    stdout: &[u8],
    snapshot: &AnnotationSnapshot,
    format: (bool, bool),
) -> Option<Vec<Vec<Node>>> {
    let config = runner.config.as_ref();
    let mut outputs = Vec::with_capacity(nodes.len());
    for ((offset, mut part), remembered) in nodes.into_iter().zip(remembered) {
        let output = echoed(
            &runner.memos.items,
            &mut part,
            offset,
            config,
            &remembered,
            stdout,
            false,
        )?
        .ok()?;
        let mut output = runner.default_paths(output, config).ok()?;
        runner.set_package_paths(&mut output);
        outputs.push((offset, output));
    }
    let mut keys: Vec<(usize, Vec<super::PathKey>)> = outputs
        .iter()
        .map(|(offset, output)| (*offset, krmgraph_util::par::map(output, super::path_key)))
        .chain(known.iter().map(|(offset, k)| {
            (
                *offset,
                k.keys.iter().map(|key| (None, key.clone())).collect(),
            )
        }))
        .collect();
    keys.sort_by_key(|(offset, _)| *offset);
    let keys: Vec<_> = keys.into_iter().flat_map(|(_, keys)| keys).collect();
    super::check_path_keys(&keys).ok()?;
    for (_, output) in &mut outputs {
        krmgraph_kyaml::krm::check_all_krm(output).ok()?;
        kio_pipeline::reconcile_in_format(output, snapshot, format).ok()?;
    }
    Some(outputs.into_iter().map(|(_, output)| output).collect())
}

/// What [`super::FunctionRunner::run_step`] reports of a run that passed,
/// and its entry in `results.yaml`.
fn report_passed(runner: &FunctionRunner, stderr: String, start: Instant, ctx: &mut RunContext) {
    let mut record = runner.new_result();
    record.stderr = stderr;
    record.exit_code = 0;
    ctx.results.push(record.clone());
    ctx.reporter.report(&Event::FunctionPassed {
        name: runner.name.clone(),
        duration: start.elapsed(),
        results: record.results,
        stderr: record.stderr,
    });
}
