//! The function boundary on nodes, for built-ins that can cross it without
//! the ResourceList text.
//!
//! A built-in normally gets the bytes kpt would send a process and returns
//! the bytes it would print (the module doc of [`super`]): kpt's side
//! writes the input, the function parses it, writes its output, and kpt's
//! side parses that. Both crossings are a write and a parse, so a built-in
//! can instead take the input nodes as the function would have parsed them
//! ([`as_read`]) and hand back its output as kpt would have parsed it
//! ([`as_written`]), when [`reparse`] models both round trips. The
//! engine keeps one boundary: ids, comment and order restoration, default
//! paths and invariants are applied to these nodes exactly as to parsed
//! ones (`fnruntime::FunctionRunner::filter`).
//!
//! Two models: the kustomize-era functions drop every comment in their
//! JSON round trip, so they read their input as [`as_read`] gives it
//! (styles and tags as parsed, comments left as they were) and their
//! output is comment-free; every other kyaml- or SDK-based built-in reads
//! and writes comments (apply-setters reads `# kpt-set:`), so it goes
//! through [`as_read_keeping_comments`] and [`as_written_keeping_comments`],
//! which answer only where the comments also come back in place
//! (`framework::run_nodes`).
//!
//! Where a model declines (anchors, multi-line folded scalars, comments
//! go-yaml cannot write back, ...) or the function fails, a [`DirectFn`]
//! returns `None` and the engine runs the built-in on the bytes, which
//! gives the exact result and error text. `RunnerOptions::check_direct`
//! (`KRMGRAPH_CHECK_DIRECT=1`) makes the engine run both and fail loudly
//! where they differ (CI sets it).
//!
//! What a node-level function must not depend on: source positions (a
//! parse would have set them; here they are the input's). Built-ins read
//! them only for error messages, and a failure always reruns on the bytes.

use crate::results::FnResult;
use crate::FnError;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::{reparse, Node};

/// A built-in on nodes: the input items (kpt's nodes, ids set) and the
/// functionConfig in, its successful output as kpt would read it back out;
/// `None` to run the built-in on the bytes instead.
pub type DirectFn = fn(items: &[Node], config: Option<&Node>) -> Option<Output>;

/// A successful run of a built-in on nodes.
#[derive(Debug, Default)]
pub struct Output {
    /// The output items, as kpt reads them back.
    pub items: Vec<Node>,
    /// Its `results`, as kpt reads them back.
    pub results: Option<Node>,
    /// What it printed on stderr.
    pub stderr: Vec<u8>,
}

/// A copy of `node` as a function parses it from kpt's ResourceList: the
/// resource root, cleaned as kpt's writer cleans it, restyled as the text
/// would parse. `None` where the model declines.
pub fn as_read(node: &Node) -> Option<Node> {
    let mut copy = rnode::y_node(node).clone();
    rnode::clear_empty_annotations(&mut copy).ok()?;
    reparse::restyle(&mut copy).then_some(copy)
}

/// The functionConfig as a function parses it from kpt's ResourceList:
/// kpt writes it as it is (it does not clean it as it cleans items);
/// restyled, with its comments kept in place when `keep_comments`. `None`
/// where the model declines.
pub fn config_as_read(node: &Node, keep_comments: bool) -> Option<Node> {
    let mut copy = rnode::y_node(node).clone();
    let accepted = if keep_comments {
        reparse::restyle_keeping_comments(&mut copy)
    } else {
        reparse::restyle(&mut copy)
    };
    accepted.then_some(copy)
}

/// [`as_read`] with the comments where the parse puts them: for a function
/// that echoes its input, what kpt reads back. `None` where the model
/// declines.
pub fn as_read_keeping_comments(node: &Node) -> Option<Node> {
    let mut copy = rnode::y_node(node).clone();
    rnode::clear_empty_annotations(&mut copy).ok()?;
    reparse::restyle_keeping_comments(&mut copy).then_some(copy)
}

/// A node other than an item (a `results` list) as kpt reads it back:
/// restyled, comments aside (only its values are read).
pub fn as_parsed(mut node: Node) -> Option<Node> {
    reparse::restyle(&mut node).then_some(node)
}

/// A function's output item as kpt reads it back from the function's
/// ResourceList: cleaned as the function's writer cleans it, restyled as
/// the text would parse. `None` where the model declines.
pub fn as_written(mut node: Node) -> Option<Node> {
    rnode::clear_empty_annotations(&mut node).ok()?;
    reparse::restyle(&mut node).then_some(node)
}

/// [`as_written`] with the comments in place: `None` where the
/// round trip would move them.
pub fn as_written_keeping_comments(mut node: Node) -> Option<Node> {
    rnode::clear_empty_annotations(&mut node).ok()?;
    reparse::restyle_keeping_comments(&mut node).then_some(node)
}

/// Panics, naming the function and both outputs, unless the run on the
/// bytes (`bytes`, which filled `on_bytes`) succeeded with the stderr and
/// results of the run on nodes (`on_nodes`) and gave `direct` (source
/// positions aside). A check for tests and CI: a difference is a bug in a
/// model, never a user error.
pub fn check(
    name: &str,
    direct: &[Node],
    on_nodes: &FnResult,
    on_bytes: &FnResult,
    bytes: Result<Vec<Node>, FnError>,
) {
    let bytes = match bytes {
        Ok(nodes) => nodes,
        Err(e) => panic!("KRMGRAPH_CHECK_DIRECT: {name}: on nodes it succeeded, on bytes: {e}"),
    };
    assert!(
        on_nodes.stderr == on_bytes.stderr && on_nodes.results == on_bytes.results,
        "KRMGRAPH_CHECK_DIRECT: {name}: on nodes it reported {on_nodes:?}, on bytes {on_bytes:?}"
    );
    let same = direct.len() == bytes.len()
        && direct
            .iter()
            .zip(&bytes)
            .all(|(a, b)| same_but_positions(a, b));
    assert!(
        same,
        "KRMGRAPH_CHECK_DIRECT: {name}: outputs differ\non nodes: {direct:#?}\non bytes: {bytes:#?}"
    );
}

/// Panics unless `echoed` (an echoing function's output as the model
/// gives it) is what parsing, and restoring, the output gives.
pub fn check_echo(name: &str, echoed: &[Node], parsed: &[Node]) {
    let same = echoed.len() == parsed.len()
        && echoed
            .iter()
            .zip(parsed)
            .all(|(a, b)| same_but_positions(a, b));
    assert!(
        same,
        "KRMGRAPH_CHECK_DIRECT: {name}: echoed input differs\nmodel: {echoed:#?}\nparsed: {parsed:#?}"
    );
}

/// Whether `a` and `b` are the same tree, source positions aside.
pub fn same_but_positions(a: &Node, b: &Node) -> bool {
    // Most strings of a node are empty (comments, anchors): they compare
    // without a call.
    let eq = |x: &str, y: &str| x.len() == y.len() && (x.is_empty() || x == y);
    a.kind == b.kind
        && a.style == b.style
        && a.content.len() == b.content.len()
        && eq(&a.value, &b.value)
        && eq(&a.tag, &b.tag)
        && eq(a.anchor(), b.anchor())
        && eq(a.head_comment(), b.head_comment())
        && eq(a.line_comment(), b.line_comment())
        && eq(a.foot_comment(), b.foot_comment())
        && a.content
            .iter()
            .zip(&b.content)
            .all(|(x, y)| same_but_positions(x, y))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builtin::lookup;
    use krmgraph_kyaml::byteio::ByteReader;
    use krmgraph_kyaml::kio_pipeline;

    /// The demo package's resources, read as kpt reads them.
    fn demo_items() -> Vec<Node> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo");
        let mut items = Vec::new();
        for file in ["deployment.yaml", "service.yaml", "Kptfile"] {
            let bytes = std::fs::read(dir.join(file)).unwrap();
            let reader = ByteReader {
                preserve_seq_indent: true,
                ..ByteReader::default()
            };
            items.extend(reader.clone().read(&bytes).unwrap().nodes);
        }
        kio_pipeline::set_ids(&mut items).unwrap();
        items
    }

    fn config(yaml: &str) -> Node {
        ByteReader::default()
            .read(yaml.as_bytes())
            .unwrap()
            .nodes
            .remove(0)
    }

    /// Each built-in with a node form answers on the demo's resources
    /// (so the form is used, not only declined) and gives what the run on
    /// the bytes gives kpt to read back.
    #[test]
    fn node_forms_answer_and_agree_with_the_bytes() {
        let cases = [
            ("gcr.io/kpt-fn/set-namespace:v0.1.3", "namespace: prod"),
            ("gcr.io/kpt-fn/set-namespace:v0.2.0", "namespace: prod"),
            ("gcr.io/kpt-fn/set-namespace:v0.4.1", "namespace: prod"),
            ("gcr.io/kpt-fn/set-labels:v0.1.4", "tier: backend"),
            ("gcr.io/kpt-fn/set-labels:v0.2.0", "tier: backend"),
            ("gcr.io/kpt-fn/set-annotations:v0.1.4", "owner: me"),
            ("gcr.io/kpt-fn/set-annotations:latest", "owner: me"),
            ("gcr.io/kpt-fn/apply-setters:v0.2.0", "tag: 6.5-apache"),
            (
                "gcr.io/kpt-fn/set-image:latest",
                "name: wordpress\n  newTag: '6.6'",
            ),
            (
                "gcr.io/kpt-fn/search-replace:v0.2.0",
                "by-value: demo\n  put-value: prod",
            ),
            (
                "gcr.io/kpt-fn/ensure-name-substring:latest",
                "prepend: prod-",
            ),
        ];
        for (image, data) in cases {
            let builtin = lookup(image).unwrap_or_else(|| panic!("{image} is a built-in"));
            let direct = builtin
                .direct
                .unwrap_or_else(|| panic!("{image} has a node form"));
            let fc = config(&format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fn\ndata:\n  {data}\n"
            ));
            let mut items = demo_items();
            let on_nodes = direct(&items, Some(&fc)).unwrap_or_else(|| panic!("{image} answers"));
            let stdin = kio_pipeline::function_input(&mut items, Some(&fc)).unwrap();
            let process = (builtin.run)(&stdin);
            assert_eq!(process.exit_code, Some(0), "{image}");
            let read = kio_pipeline::read_function_output(&process.stdout).unwrap();
            assert_eq!(on_nodes.items.len(), read.nodes.len(), "{image}");
            for (a, b) in on_nodes.items.iter().zip(&read.nodes) {
                assert!(same_but_positions(a, b), "{image}: {a:#?}\n{b:#?}");
            }
            assert_eq!(on_nodes.stderr, process.stderr, "{image}");
            match (&on_nodes.results, &read.results) {
                (Some(a), Some(b)) => assert!(same_but_positions(a, b), "{image} results"),
                (None, None) => {}
                _ => panic!("{image}: results differ"),
            }
        }
    }
}
