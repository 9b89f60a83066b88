//! The render as a graph (`krmgraph graph`): packages and their pipeline
//! steps as a DAG in the order a render runs them, each node with a key.
//!
//! A package node stands for its rendered output; its steps run in
//! pipeline order (mutators, then validators) and the last one feeds the
//! package node. Depth-first, a package's first step depends on every
//! subpackage's output; breadth-first, a subpackage's first step depends
//! on its parent's output. Depth-first, a package's key is its subtree key
//! in the step cache (`stepcache`), and the graph tells whether the store
//! holds a record of it (a render would replay the subtree whole);
//! breadth-first, it covers the bytes and paths of every file of its
//! subtree. A step's key covers its package's key, its position and its
//! function's identity (`shortcut::function_identity`), so a key changes
//! exactly when what that node depends on changes. (A step's key in the
//! step cache also covers its input, which only a render knows.)

use std::path::Path;

use petgraph::graph::{DiGraph, NodeIndex};

use std::sync::Arc;

use krmgraph_cache::{MemoryStore, Store};

use super::hydrate::{files_of, read_local};
use super::predict::{self, Feed, Prediction, Verdict};
use super::shortcut::{function_identity, Entry, Hasher, Snapshot};
use super::stepcache::{RenderCache, Role, StepCache};
use super::{Order, RenderError, RenderOptions};
use krmgraph_cache::Digest;
use krmgraph_fn::{exec, FunctionRunner, RunnerOptions};
use krmgraph_package::kptfile::Function;
use krmgraph_package::{direct_subpackages, Package};

/// A node of the render graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphNode {
    /// A package's rendered output.
    Package {
        /// Its display path (`root/sub`).
        path: String,
        /// Its subtree key (depth-first), else blake3 over its subtree's
        /// files; hex.
        key: String,
        /// Whether the store holds a record of the subtree (`None`: no
        /// store, or no subtree key).
        recorded: Option<bool>,
    },
    /// One function of a package's pipeline.
    Step {
        /// The package's display path.
        package: String,
        /// `mutator` or `validator`.
        role: &'static str,
        /// Its position in the pipeline (from 0, mutators first).
        index: usize,
        /// The image or exec command line.
        function: String,
        /// Whether it is an `exec:` function.
        exec: bool,
        /// blake3 over the package key, the position and the function's
        /// identity, hex.
        key: String,
        /// Why the step cache cannot key the function (its identity is
        /// unknown before it runs, so a render runs it uncached), or why a
        /// render would refuse it with these flags.
        unkeyed: Option<String>,
        /// What a render would do with it (depth-first, with a store).
        state: Option<Prediction>,
    },
}

impl GraphNode {
    /// The node's key.
    pub fn key(&self) -> &str {
        match self {
            GraphNode::Package { key, .. } | GraphNode::Step { key, .. } => key,
        }
    }

    /// A one-line label.
    pub fn label(&self) -> String {
        match self {
            GraphNode::Package { path, .. } => format!("package {path}"),
            GraphNode::Step {
                package,
                role,
                index,
                function,
                ..
            } => format!("{package} {role}[{index}] {function}"),
        }
    }
}

/// The render graph of a tree, with its nodes in execution order.
pub struct RenderGraph {
    /// The DAG (edges point from a dependency to its dependent).
    pub graph: DiGraph<GraphNode, ()>,
    /// Every node in the order a sequential render runs it.
    pub order: Vec<NodeIndex>,
}

/// Builds the render graph of the tree at `root` in `order`, with the
/// state of each subtree in `store` (if given).
pub fn build(
    root: &Path,
    order: Order,
    options: &RenderOptions,
    store: Option<Arc<dyn Store>>,
) -> Result<RenderGraph, RenderError> {
    let runner = &options.runner;
    let root_parent = root.parent().unwrap_or(Path::new("/")).to_path_buf();
    let snapshot = Snapshot::read(root)
        .map_err(|e| RenderError::Message(format!("{}: {e}", root.display())))?;
    let known = store.is_some();
    let cache = RenderCache {
        store: store.unwrap_or_else(|| Arc::new(MemoryStore::new())),
        snapshot: Some(Arc::new(snapshot.clone())),
        verify: false,
        memos: Default::default(),
    };
    let subtrees = StepCache::new(&cache, root, options, order == Order::DepthFirst);
    let mut builder = Builder {
        graph: DiGraph::new(),
        order: Vec::new(),
        root: root.to_path_buf(),
        snapshot,
        runner: runner.clone(),
        subtrees: &subtrees,
        store: known.then_some(cache.store.as_ref()),
    };
    let root_pkg = Package::load(root, &root_parent)?;
    match order {
        Order::DepthFirst => {
            builder.dfs(&root_pkg, &root_parent, false)?;
        }
        Order::BreadthFirst => builder.bfs(root_pkg, &root_parent)?,
    }
    Ok(RenderGraph {
        graph: builder.graph,
        order: builder.order,
    })
}

/// What a depth-first build knows of a package's place, for predictions.
struct Predicting {
    /// A recorded subtree holds the package.
    covered: bool,
    /// Its subpackages (root-relative) and their predicted outputs.
    subpackages: Vec<(String, Option<Digest>)>,
    /// Set by [`Builder::package`]: its last mutator's predicted output.
    output: Option<Digest>,
}

struct Builder<'c> {
    graph: DiGraph<GraphNode, ()>,
    order: Vec<NodeIndex>,
    root: std::path::PathBuf,
    snapshot: Snapshot,
    runner: RunnerOptions,
    subtrees: &'c StepCache<'c>,
    store: Option<&'c dyn Store>,
}

impl Builder<'_> {
    /// Adds `pkg`'s subtree depth-first (`covered`: a recorded subtree
    /// holds it); returns its package node and, when a render would
    /// replay it, its output digest.
    fn dfs(
        &mut self,
        pkg: &Package,
        root_parent: &Path,
        covered: bool,
    ) -> Result<(NodeIndex, Option<Digest>), RenderError> {
        let key = self.subtrees.subtree_key(pkg);
        let recorded = match (key, self.store) {
            (Some(key), Some(_)) => self.subtrees.recorded_subtree(&key),
            _ => None,
        };
        let mut inputs = Vec::new();
        let mut outputs = Vec::new();
        for dir in direct_subpackages(&pkg.dir)? {
            let sub = Package::load(&dir, root_parent)?;
            let (node, output) = self.dfs(&sub, root_parent, covered || recorded.is_some())?;
            inputs.push(node);
            outputs.push((krmgraph_package::display_path(&dir, &self.root), output));
        }
        let mut feed = Predicting {
            covered: covered || recorded.is_some(),
            subpackages: outputs,
            output: None,
        };
        let node = self.package(pkg, &inputs, Some(&mut feed));
        Ok((node, recorded.or(feed.output)))
    }

    /// Adds every package level by level.
    fn bfs(&mut self, root: Package, root_parent: &Path) -> Result<(), RenderError> {
        let mut queue = std::collections::VecDeque::from([(root, None)]);
        while let Some((pkg, parent)) = queue.pop_front() {
            let inputs: Vec<NodeIndex> = parent.into_iter().collect();
            let node = self.package(&pkg, &inputs, None);
            for dir in direct_subpackages(&pkg.dir)? {
                queue.push_back((Package::load(&dir, root_parent)?, Some(node)));
            }
        }
        Ok(())
    }

    /// Adds `pkg`'s steps and package node, the first fed by `inputs`;
    /// with `predicting` (depth-first), says what a render would do with
    /// each step.
    fn package(
        &mut self,
        pkg: &Package,
        inputs: &[NodeIndex],
        predicting: Option<&mut Predicting>,
    ) -> NodeIndex {
        let (key, recorded) = match self.subtrees.subtree_key(pkg) {
            Some(key) => {
                let recorded = self.store.map(|s| s.contains(&key).unwrap_or(false));
                (key.to_hex(), recorded)
            }
            None => (self.subtree_key(&pkg.dir), None),
        };
        let files = match predicting.as_deref() {
            Some(p) if !p.covered && self.store.is_some() => read_local(pkg)
                .map(|resources| files_of(pkg, &self.root, &resources))
                .ok(),
            _ => None,
        };
        let pipeline = &pkg.kptfile.pipeline;
        let mutators = pipeline.mutators.len();
        let steps = pipeline
            .mutators
            .iter()
            .map(|f| ("mutator", f))
            .chain(pipeline.validators.iter().map(|f| ("validator", f)));
        let mut previous: Vec<NodeIndex> = inputs.to_vec();
        // The last mutator's label and predicted output, for the steps
        // after it.
        let mut last: Option<(String, Option<Digest>)> = None;
        for (index, (role, f)) in steps.enumerate() {
            let function = if f.exec.is_empty() {
                f.image.clone()
            } else {
                f.exec.clone()
            };
            let identity = function_identity(f, &self.runner);
            let mut h = Hasher::default();
            h.field(key.as_bytes());
            h.field(&(index as u64).to_le_bytes());
            h.field(identity.as_deref().unwrap_or_default());
            h.field(function.as_bytes());
            let unkeyed = why_unkeyed(f, &self.runner, identity.is_some());
            let state = predicting.as_deref().map(|p| {
                let (role, label) = match index < mutators {
                    true => (Role::Mutator, format!("mutator[{index}]")),
                    false => (Role::Validator, format!("validator[{index}]")),
                };
                let state = self.predict(
                    pkg,
                    p,
                    index,
                    role,
                    f,
                    unkeyed.as_deref(),
                    files.as_deref(),
                    &last,
                );
                if role == Role::Mutator {
                    last = Some((label, state.1));
                }
                state.0
            });
            let step = self.add(GraphNode::Step {
                package: pkg.display_path.clone(),
                role,
                index,
                function,
                exec: !f.exec.is_empty(),
                key: h.0.finalize().to_hex().to_string(),
                unkeyed,
                state,
            });
            for p in previous.drain(..) {
                self.graph.add_edge(p, step, ());
            }
            previous.push(step);
        }
        if let Some(p) = predicting {
            p.output = last.and_then(|(_, output)| output);
        }
        let node = self.add(GraphNode::Package {
            path: pkg.display_path.clone(),
            key,
            recorded,
        });
        for p in previous {
            self.graph.add_edge(p, node, ());
        }
        node
    }

    /// What a depth-first render would do with the step at `index` of
    /// `pkg`, and its output digest when it is cached.
    #[allow(clippy::too_many_arguments)] // the step and what feeds it
    fn predict(
        &self,
        pkg: &Package,
        p: &Predicting,
        index: usize,
        role: Role,
        f: &Function,
        unkeyed: Option<&str>,
        files: Option<&[String]>,
        last: &Option<(String, Option<Digest>)>,
    ) -> (Prediction, Option<Digest>) {
        let said = |verdict, why: &str| Prediction {
            verdict,
            why: why.to_string(),
        };
        if p.covered {
            let why = "a recorded subtree holds it";
            return (said(Verdict::Cached, why), None);
        }
        if let Some(why) = unkeyed {
            return (said(Verdict::Runs, why), None);
        }
        let runner = match FunctionRunner::new(f, &pkg.dir, &self.runner) {
            Ok(runner) => runner,
            Err(e) => return (said(Verdict::Runs, &e.to_string()), None),
        };
        let Some(files) = files else {
            let why = "its package's resources do not read";
            return (said(Verdict::MayRun, why), None);
        };
        let feed = match last {
            None => Feed::First {
                subpackages: &p.subpackages,
                files,
            },
            Some((label, output)) => Feed::After {
                label: label.clone(),
                output: *output,
            },
        };
        predict::step(
            self.subtrees,
            (&pkg.display_path, index),
            role,
            (f, &runner),
            feed,
        )
    }

    fn add(&mut self, node: GraphNode) -> NodeIndex {
        let i = self.graph.add_node(node);
        self.order.push(i);
        i
    }

    /// blake3 over the paths (relative to `dir`) and bytes of its files.
    fn subtree_key(&self, dir: &Path) -> String {
        let rel = dir
            .strip_prefix(&self.root)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let mut h = Hasher::default();
        for (path, entry) in self.snapshot.entries().range(prefix.clone()..) {
            let Some(local) = path.strip_prefix(&prefix) else {
                break;
            };
            h.field(local.as_bytes());
            h.field(match entry {
                Entry::File(b) => b.as_slice(),
                Entry::Link(t) => t.as_bytes(),
            });
        }
        h.0.finalize().to_hex().to_string()
    }
}

/// Why a render would not key the step running `f` (`keyed`: whether
/// [`function_identity`] found its identity), or would refuse it.
fn why_unkeyed(f: &Function, runner: &RunnerOptions, keyed: bool) -> Option<String> {
    if !f.exec.is_empty() {
        if !runner.allow_exec {
            return Some("exec: functions run only with --allow-exec".to_string());
        }
        if keyed {
            return None;
        }
        let program = exec::split_command(&f.exec)
            .ok()
            .and_then(|words| words.first().cloned())
            .unwrap_or_default();
        return Some(format!(
            "its program {program:?} cannot be found or read, so it is not keyed (a render fails to run it)"
        ));
    }
    if keyed {
        return None;
    }
    Some(if runner.image_pull_policy.eq_ignore_ascii_case("always") {
        "--image-pull-policy Always: the image may change at each pull, so the step runs uncached"
            .to_string()
    } else {
        "the image is not present locally (or no container engine answers): its digest is not known until a render pulls it, so that render runs the step uncached".to_string()
    })
}

/// Marks every node of `g` as a render that is replayed whole would: all
/// cached.
pub fn replayed_whole(g: &mut RenderGraph) {
    for node in g.graph.node_weights_mut() {
        match node {
            GraphNode::Package { recorded, .. } => *recorded = Some(true),
            GraphNode::Step { state, .. } => {
                *state = Some(Prediction {
                    verdict: Verdict::Cached,
                    why: "the whole render is replayed".into(),
                })
            }
        }
    }
}

/// What a render would do with a node, as the graph's column says it.
fn verdict(node: &GraphNode) -> Option<Verdict> {
    match node {
        GraphNode::Package {
            recorded: Some(true),
            ..
        } => Some(Verdict::Cached),
        GraphNode::Package { .. } => None,
        GraphNode::Step { state, .. } => state.as_ref().map(|s| s.verdict),
    }
}

/// The graph as text: one node per line in execution order, with its
/// short key, what a render would do with it (depth-first, with a store:
/// cached, runs or may run) and what it depends on.
pub fn to_text(g: &RenderGraph, state: &str) -> String {
    let mut out = format!("render cache: {state}\n");
    for &i in &g.order {
        let node = &g.graph[i];
        let mut deps: Vec<usize> = g
            .graph
            .neighbors_directed(i, petgraph::Direction::Incoming)
            .map(|d| position(g, d))
            .collect();
        deps.sort_unstable();
        let deps: Vec<String> = deps.iter().map(|d| format!("#{d}")).collect();
        let why = match node {
            GraphNode::Package {
                recorded: Some(true),
                ..
            } => "  (recorded: a render replays it)".to_string(),
            GraphNode::Step {
                unkeyed: Some(why), ..
            } => format!("  (not keyed: {why})"),
            GraphNode::Step {
                state: Some(state), ..
            } if state.verdict != Verdict::Cached => {
                format!("  ({}: {})", state.verdict.as_str(), state.why)
            }
            _ => String::new(),
        };
        out.push_str(&format!(
            "#{:<3} {}  {:<7}  {}{}{why}\n",
            position(g, i),
            &node.key()[..12],
            verdict(node).map_or("-", Verdict::as_str),
            node.label(),
            if deps.is_empty() {
                String::new()
            } else {
                format!("  <- {}", deps.join(" "))
            }
        ));
    }
    out
}

fn position(g: &RenderGraph, i: NodeIndex) -> usize {
    g.order.iter().position(|&o| o == i).unwrap_or(0)
}

/// The graph in Graphviz DOT: a cluster per package (its steps and its
/// output), nodes filled by what a render would do with them (green:
/// cached, red: runs, yellow: may run).
pub fn to_dot(g: &RenderGraph) -> String {
    let mut out = String::from("digraph render {\n  rankdir=LR;\n");
    let mut clusters: Vec<(&str, Vec<NodeIndex>)> = Vec::new();
    for &i in &g.order {
        let package = match &g.graph[i] {
            GraphNode::Package { path, .. } => path,
            GraphNode::Step { package, .. } => package,
        };
        match clusters.iter_mut().find(|(p, _)| *p == package.as_str()) {
            Some((_, nodes)) => nodes.push(i),
            None => clusters.push((package, vec![i])),
        }
    }
    for (n, (package, nodes)) in clusters.iter().enumerate() {
        out.push_str(&format!(
            "  subgraph cluster_{n} {{\n    label={};\n",
            serde_json::to_string(package).unwrap_or_default()
        ));
        for &i in nodes {
            let node = &g.graph[i];
            let shape = match node {
                GraphNode::Package { .. } => "box",
                GraphNode::Step { .. } => "ellipse",
            };
            let fill = match verdict(node) {
                Some(Verdict::Cached) => ", style=filled, fillcolor=palegreen",
                Some(Verdict::Runs) => ", style=filled, fillcolor=salmon",
                Some(Verdict::MayRun) => ", style=filled, fillcolor=khaki",
                None => "",
            };
            out.push_str(&format!(
                "    n{} [shape={shape}{fill}, label={}];\n",
                i.index(),
                serde_json::to_string(&format!("{}\n{}", node.label(), &node.key()[..12]))
                    .unwrap_or_default()
            ));
        }
        out.push_str("  }\n");
    }
    for e in g.graph.edge_indices() {
        if let Some((a, b)) = g.graph.edge_endpoints(e) {
            out.push_str(&format!("  n{} -> n{};\n", a.index(), b.index()));
        }
    }
    out.push_str("}\n");
    out
}

/// The graph as JSON: `{"cache": state, "nodes": [...], "edges": [[from, to]...]}`
/// with nodes in execution order and edges by node position.
pub fn to_json(g: &RenderGraph, state: &str) -> String {
    let nodes: Vec<serde_json::Value> = g
        .order
        .iter()
        .map(|&i| match &g.graph[i] {
            GraphNode::Package {
                path,
                key,
                recorded,
            } => {
                serde_json::json!({"kind": "package", "package": path, "key": key, "recorded": recorded})
            }
            GraphNode::Step {
                package,
                role,
                index,
                function,
                exec,
                key,
                unkeyed,
                state,
            } => serde_json::json!({
                "kind": "step", "package": package, "role": role,
                "index": index, "function": function, "exec": exec, "key": key,
                "unkeyed": unkeyed,
                "state": state.as_ref().map(|s| s.verdict.as_str()),
                "why": state.as_ref().map(|s| s.why.as_str()),
            }),
        })
        .collect();
    let edges: Vec<[usize; 2]> = g
        .graph
        .edge_indices()
        .filter_map(|e| g.graph.edge_endpoints(e))
        .map(|(a, b)| [position(g, a), position(g, b)])
        .collect();
    let doc = serde_json::json!({"cache": state, "nodes": nodes, "edges": edges});
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dir: &Path) {
        for (path, text) in [
            ("Kptfile", "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: root\npipeline:\n  mutators:\n    - image: gcr.io/kpt-functions/no-op\n  validators:\n    - image: gcr.io/kpt-functions/no-op\n"),
            ("a/Kptfile", "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: a\npipeline:\n  mutators:\n    - image: gcr.io/kpt-functions/no-op\n"),
            ("a/cm.yaml", "kind: ConfigMap\n"),
            ("b/Kptfile", "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: b\n"),
        ] {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
    }

    fn labels(g: &RenderGraph) -> Vec<String> {
        g.order.iter().map(|&i| g.graph[i].label()).collect()
    }

    #[test]
    fn orders_and_keys() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        tree(&root);
        let dfs = build(&root, Order::DepthFirst, &RenderOptions::default(), None).unwrap();
        assert_eq!(
            labels(&dfs),
            [
                "root/a mutator[0] gcr.io/kpt-functions/no-op",
                "package root/a",
                "package root/b",
                "root mutator[0] gcr.io/kpt-functions/no-op",
                "root validator[1] gcr.io/kpt-functions/no-op",
                "package root",
            ]
        );
        // root's first step depends on both subpackages.
        assert!(
            to_text(&dfs, "miss").contains("root mutator[0] gcr.io/kpt-functions/no-op  <- #1 #2")
        );
        let bfs = build(&root, Order::BreadthFirst, &RenderOptions::default(), None).unwrap();
        assert_eq!(
            labels(&bfs)[0],
            "root mutator[0] gcr.io/kpt-functions/no-op"
        );
        assert_eq!(
            labels(&bfs)[3],
            "root/a mutator[0] gcr.io/kpt-functions/no-op"
        );

        // Editing a's file changes a's keys and root's, not b's.
        let before: Vec<String> = dfs
            .order
            .iter()
            .map(|&i| dfs.graph[i].key().to_string())
            .collect();
        std::fs::write(root.join("a/cm.yaml"), "kind: Secret\n").unwrap();
        let after_g = build(&root, Order::DepthFirst, &RenderOptions::default(), None).unwrap();
        let after: Vec<String> = after_g
            .order
            .iter()
            .map(|&i| after_g.graph[i].key().to_string())
            .collect();
        let changed: Vec<bool> = before.iter().zip(&after).map(|(a, b)| a != b).collect();
        assert_eq!(changed, [true, true, false, true, true, true]);
    }
}
