//! Arbitrary bytes as a KRM function's stdout, read back the way
//! `FunctionRunner` reads an `exec:` or container function's output
//! (`filter_bytes` in `engine/src/fnruntime/mod.rs`, all through public
//! API):
//!
//! - [`kio_pipeline::read_function_output`] (`ByteReader::read` with kyaml's
//!   defaults: documents split on `---`, index annotations, a single
//!   `ResourceList`/`List` unwrapped into items, `functionConfig` and
//!   `results`), and the same bytes read as `fn eval -` reads stdin;
//! - the input side of the call on the items read (as if they were what
//!   the function was given): kio.Pipeline's migration snapshot, the ids,
//!   and the ResourceList written through the item memo;
//! - the output side: comments and field order restored from the input by
//!   id, `results:` parsed ([`results::parse_results`]) and printed as kpt
//!   prints them and records them in `results.yaml`, default paths from the
//!   function's scope, kpt's path invariants and KRM checks, and the
//!   internal-annotation reconciliation that ends a pipeline step.
//!
//! Not reached: the echo shortcut (`echoed`, taken when stdout equals
//! stdin byte for byte) is private to `fnruntime`, and only a process
//! (exec or container runtime) can feed it.
//!
//! The item memo is the process's, as in a render: an input can find texts
//! that earlier inputs left in it, so a failure of the memo's check may
//! need the inputs before it (`-runs` over the corpus) to show again.
//!
//! Nothing may panic. Invariants asserted:
//!
//! - a successful read, written back as a function writes its output (a
//!   `ResourceList` with the same `functionConfig` and `results`), reads
//!   back, to the same items, `functionConfig` and `results`: compared as
//!   the writer encodes them, so after its cleaning (empty `annotations`
//!   dropped, as kyaml drops them), and without comments, which go-yaml,
//!   and so kpt, does not always keep in place across a second read; not
//!   compared where go-yaml's emitter, which krmgraph follows, is known to
//!   change a value (some folded scalars, some tags: `go_yaml_changes`);
//! - the ResourceList written through the item memo
//!   ([`kio_pipeline::function_input_remembering`], with its own check on)
//!   is byte for byte the one [`ByteWriter::write`] writes, and leaves the
//!   items as they were.
#![no_main]

use krmgraph_fn::enforce_path_invariants;
use krmgraph_fn::results::{self, FnResult};
use krmgraph_kyaml::krm;
use krmgraph_kyaml::byteio::{ByteReader, ByteWriter, ReadOutput};
use krmgraph_kyaml::{kio_pipeline, kioutil, node_to_string};
use krmgraph_yaml::{Kind, Node, Style};
use libfuzzer_sys::fuzz_target;

/// More items than this are not worth the time per input.
const MAX_ITEMS: usize = 256;

/// `node` without comments. go-yaml, and so kpt, does not keep every
/// comment in place when it reads its own output again (a bare `#` after
/// the last key of an item is dropped the second time, for one), so only
/// the data is compared.
fn uncommented(node: &Node) -> Node {
    let mut node = node.clone();
    // A loop, not recursion: deep nesting is the reader's problem to
    // report, not this target's.
    let mut stack = vec![&mut node];
    while let Some(n) = stack.pop() {
        n.take_head_comment();
        n.take_line_comment();
        n.take_foot_comment();
        stack.extend(n.content.iter_mut());
    }
    node
}

/// Each item as the function wire format writes it (cleaned as the writer
/// cleans it: empty `annotations` dropped, as kyaml drops them), without
/// comments; `None` where one does not encode.
fn item_texts(nodes: &[Node]) -> Vec<Option<String>> {
    let writer = ByteWriter::resource_list(None);
    nodes
        .iter()
        .map(|n| {
            writer
                .write(&[uncommented(n)])
                .ok()
                .map(|b| String::from_utf8_lossy(&b).into_owned())
        })
        .collect()
}

fn text(node: &Option<Node>) -> Option<String> {
    node.as_ref()
        .map(|n| node_to_string(&uncommented(n)).unwrap_or_default())
}

/// A line break as go-yaml's emitter sees one (CR, LF, NEL, LS, PS): its
/// width in bytes.
fn line_break(v: &[u8], i: usize) -> Option<usize> {
    match v.get(i..).unwrap_or_default() {
        [b'\r' | b'\n', ..] => Some(1),
        [0xC2, 0x85, ..] => Some(2),
        [0xE2, 0x80, 0xA8 | 0xA9, ..] => Some(3),
        _ => None,
    }
}

/// Space, tab, line break, NUL or the end.
fn blankz(v: &[u8], i: usize) -> bool {
    matches!(v.get(i), None | Some(b' ' | b'\t' | 0)) || line_break(v, i).is_some()
}

/// After the run of line breaks at `i`.
fn skip_breaks(v: &[u8], mut i: usize) -> usize {
    while let Some(w) = line_break(v, i) {
        i += w;
    }
    i
}

/// Whether go-yaml's folded-scalar writer (`yaml_emitter_write_folded_scalar`,
/// which krmgraph keeps as it is: `engine/src/yaml/emitter/write.rs`) writes
/// `value` so that it reads back as another value, so that kpt changes it
/// too. To keep a line break that ends a line not starting with a blank,
/// the writer must add an empty line when the next line does not start
/// with a blank (libyaml looks after the break); go-yaml looks at the start
/// of the value instead (`k := 0`). Where the two differ, the value
/// changes: a line break more, or two lines folded into one. A difference
/// at the value's last break only counts with `+` chomping (two breaks or
/// more at the end): with clip, the extra empty line is chomped.
fn folded_changes(v: &[u8]) -> bool {
    let go_adds = !blankz(v, skip_breaks(v, 0));
    let (mut breaks, mut leading_spaces, mut i) = (true, true, 0);
    while i < v.len() {
        if let Some(w) = line_break(v, i) {
            if !breaks && !leading_spaces && v[i] == b'\n' {
                let next = skip_breaks(v, i);
                let kept_by_clip = next == v.len() && next - i == 1;
                if !kept_by_clip && go_adds != !blankz(v, next) {
                    return true;
                }
            }
            breaks = true;
            i += w;
        } else {
            if breaks {
                leading_spaces = matches!(v[i], b' ' | b'\t');
            }
            breaks = false;
            i += 1;
        }
    }
    false
}

/// The tags every parse gives; they are written back as they came.
const CORE_TAGS: &[&str] = &[
    "!!str",
    "!!int",
    "!!float",
    "!!bool",
    "!!null",
    "!!map",
    "!!seq",
    "!!timestamp",
    "!!binary",
    "!!merge",
];

/// Whether a scalar tagged `tag` reads back with another tag (or not at
/// all) once written: go-yaml writes some tags it cannot read (`!%21`
/// becomes `!!`; `docs/performance.md`, fuzzing), and so does krmgraph.
fn tag_changes(tag: &str) -> bool {
    let mut node = Node::string("x");
    node.tag = tag.into();
    let Ok(text) = node_to_string(&node) else {
        return true;
    };
    match krmgraph_yaml::parse_documents(text.as_bytes()) {
        Ok(docs) => docs
            .first()
            .and_then(|d| d.content.first())
            .is_none_or(|n| n.tag != tag),
        Err(_) => true,
    }
}

/// Whether `node` holds something go-yaml's emitter, and so kpt's, does not
/// write back as it read it ([`folded_changes`], [`tag_changes`]): such an
/// output is not compared after its round trip.
fn go_yaml_changes(node: &Node) -> bool {
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind == Kind::Scalar
            && n.style.has(Style::FOLDED)
            && folded_changes(n.value.as_bytes())
        {
            return true;
        }
        if !n.tag.is_empty() && !CORE_TAGS.contains(&n.tag.as_str()) && tag_changes(&n.tag) {
            return true;
        }
        stack.extend(&n.content);
    }
    false
}

/// The output written back as a function writes it, then read again: the
/// same items, functionConfig and results.
fn round_trip(read: &ReadOutput) {
    if read
        .nodes
        .iter()
        .chain(&read.function_config)
        .chain(&read.results)
        .any(go_yaml_changes)
    {
        return;
    }
    let writer = ByteWriter {
        results: read.results.clone(),
        ..ByteWriter::resource_list(read.function_config.clone())
    };
    let Ok(bytes) = writer.write(&read.nodes) else {
        return;
    };
    let show = || String::from_utf8_lossy(&bytes).into_owned();
    let again = kio_pipeline::read_function_output(&bytes).unwrap_or_else(|e| {
        panic!(
            "a ResourceList written from a successful read does not read back: {e}\n{}",
            show()
        )
    });
    let (before, after) = (item_texts(&read.nodes), item_texts(&again.nodes));
    assert_eq!(before.len(), after.len(), "item count changed:\n{}", show());
    if let Some((a, b)) = before.iter().zip(&after).find(|(a, b)| a != b) {
        panic!(
            "an item changed on the way back:\n{}\n--- read back as:\n{}\n--- written:\n{}",
            a.as_deref().unwrap_or("(does not encode)"),
            b.as_deref().unwrap_or("(does not encode)"),
            show()
        );
    }
    assert_eq!(
        text(&read.function_config),
        text(&again.function_config),
        "functionConfig changed:\n{}",
        show()
    );
    assert_eq!(
        text(&read.results),
        text(&again.results),
        "results changed:\n{}",
        show()
    );
}

// The CLI's threads: stacks deep enough for the deepest tree the parser
// gives (`par::STACK_SIZE`), so the fuzzer finds what a render would.
fuzz_target!(
    init: krmgraph_util::par::init_global_pool(),
    |data: &[u8]| {
        krmgraph_util::par::with_stack(|| run(data));
    }
);

fn run(data: &[u8]) {
    // `fn eval -` reads a ResourceList on stdin with the package reader's
    // options.
    let _ = ByteReader {
        preserve_seq_indent: true,
        wrap_bare_seq_node: true,
        ..ByteReader::default()
    }
    .read(data);

    let Ok(read) = kio_pipeline::read_function_output(data) else {
        return;
    };
    if read.nodes.len() > MAX_ITEMS {
        return;
    }
    round_trip(&read);

    // Results, as kpt prints them and writes them to results.yaml.
    if let Some(r) = &read.results {
        let items = results::parse_results(r);
        for item in &items {
            let _ = item.line();
        }
        let _ = results::results_block(&items, true);
        let _ = results::results_block(&items, false);
        let record = FnResult {
            exec: "fuzz".into(),
            stderr: String::from_utf8_lossy(&data[..data.len().min(64)]).into_owned(),
            exit_code: 1,
            results: items,
            ..FnResult::default()
        };
        let list = results::result_list_node(std::slice::from_ref(&record), 1);
        let _ = node_to_string(&list);
    }

    // The input side: what the function would have been given.
    let function_config = read.function_config.as_ref();
    let mut input = read.nodes.clone();
    let Ok(snapshot) = kio_pipeline::preprocess_for_internal_annotation_migration(&mut input)
    else {
        return;
    };
    if kio_pipeline::set_ids(&mut input).is_err() {
        return;
    }
    let before = input.clone();
    let long_way = ByteWriter::resource_list(function_config.cloned()).write(&input);
    let remembered = kio_pipeline::function_input_remembering(&mut input, function_config, true);
    match (&long_way, &remembered) {
        (Ok(a), Ok((b, _))) => assert!(
            a == b,
            "the ResourceList through the item memo differs:\n{}\n--- long way:\n{}",
            String::from_utf8_lossy(b),
            String::from_utf8_lossy(a)
        ),
        (Err(_), Err(_)) => {}
        (a, b) => panic!(
            "the item memo and the long way disagree on success: {:?} / {:?}",
            a.as_ref().map(|_| ()),
            b.as_ref().map(|_| ())
        ),
    }
    assert!(input == before, "writing in place changed the items");

    // The output side, as after a successful call.
    let mut output = read.nodes;
    if kio_pipeline::copy_comments_and_sync_order(&input, &mut output).is_err() {
        return;
    }
    if let Ok(dir) = kio_pipeline::function_scope(function_config) {
        if kioutil::default_path_annotation(&dir, &mut output).is_err() {
            return;
        }
    }
    let _ = enforce_path_invariants(&output);
    let _ = krm::check_all_krm(&output);
    if kio_pipeline::finish_filter(&mut output, &snapshot).is_err() {
        return;
    }
    // What the next function in the pipeline is sent.
    if let Ok(next) = kio_pipeline::function_input(&mut output, None) {
        let _ = kio_pipeline::read_function_output(&next);
    }
}
