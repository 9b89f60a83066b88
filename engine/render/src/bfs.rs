//! Breadth-first hydration (porch and kpt ≥ v1.0.0-beta.60.1,
//! `hydrateBfsOrder`; `porch-crossplane-catalog.md` §1.5), chosen by
//! `kpt.dev/bfs-rendering: "true"` on the root Kptfile or `--order bfs`.
//!
//! Two phases. Discovery reads and validates every Kptfile and loads every
//! package's own resources, in level order, before any function runs.
//! Execution then runs each package's pipeline in that order on its own
//! resources followed by its descendants' (pre-order), as ancestors have
//! left them; the output is split back to the packages by their
//! `package-path` annotation. The result is every package's resources
//! concatenated in level order. With more than one job, the packages of a
//! level run at once (they own disjoint subtrees), reported in level order.
//! Where kpt's later versions differ from
//! v1.0.0-beta.56 in other ways (Kptfile render status, saving on failure),
//! krmgraph keeps beta.56's behaviour.

use std::collections::HashMap;

use rayon::prelude::*;

use super::hydrate::{Hydrator, Recorded};
use super::RenderError;
use krmgraph_fn::RunContext;
use krmgraph_kyaml::kioutil;
use krmgraph_package::{direct_subpackages, Package};
use krmgraph_yaml::Node;

/// The annotation on the root Kptfile that selects breadth-first order.
pub const BFS_ANNOTATION: &str = "kpt.dev/bfs-rendering";

/// The order in which a hierarchy's pipelines run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Subpackages first (kpt's `hydrate`, the only order of beta.56).
    DepthFirst,
    /// The root first, level by level (`hydrateBfsOrder`).
    BreadthFirst,
}

impl Order {
    /// The order the root Kptfile asks for: breadth-first when its
    /// `kpt.dev/bfs-rendering` annotation is `true` in any case, as kpt's
    /// `ToCondition` reads it.
    pub fn of_root(root: &Package) -> Order {
        let bfs = root
            .kptfile
            .annotations
            .iter()
            .any(|(k, v)| k == BFS_ANNOTATION && v.eq_ignore_ascii_case("true"));
        if bfs {
            Order::BreadthFirst
        } else {
            Order::DepthFirst
        }
    }
}

/// One package of the tree, in level order.
struct PkgNode {
    pkg: Package,
    /// Its resources as they stand: local files, then as changed by the
    /// pipelines that ran so far.
    resources: Vec<Node>,
    /// Indexes of its direct subpackages, in display-path order.
    children: Vec<usize>,
}

impl Hydrator<'_> {
    /// Renders the tree rooted at `root` breadth-first; returns every
    /// package's resources in level order.
    pub fn hydrate_bfs(
        &mut self,
        root: Package,
        ctx: &mut RunContext,
    ) -> Result<Vec<Node>, RenderError> {
        let packages_before = self.packages;
        let mut nodes = self.discover(root.clone())?;
        if self.jobs > 1 {
            match self.bfs_parallel(&mut nodes, ctx) {
                Parallel::Done(result) => return result,
                Parallel::Escaped => {
                    // A pipeline gave resources to a package outside its
                    // subtree, which a concurrent sibling may have read:
                    // render again, one package at a time.
                    self.packages = packages_before;
                    nodes = self.discover(root)?;
                }
            }
        }
        let by_path = paths(&nodes);
        for current in 0..nodes.len() {
            let mut input = std::mem::take(&mut nodes[current].resources);
            for d in descendants(&nodes, current) {
                input.extend(nodes[d].resources.iter().cloned());
            }
            let pkg_path = nodes[current].pkg.dir.to_string_lossy().into_owned();
            let output = self.run_pipeline(&nodes[current].pkg, input, ctx)?;
            split_back(&mut nodes, &pkg_path, &by_path, output);
        }
        Ok(nodes.into_iter().flat_map(|n| n.resources).collect())
    }

    /// Phase 2 with the packages of each level run at once: they read and
    /// write disjoint subtrees, so the result is the sequential one, unless
    /// a pipeline's output names a package outside its own subtree
    /// ([`Parallel::Escaped`], before anything is reported). Events and
    /// results are reported in level order after the last level, up to the
    /// first failure.
    fn bfs_parallel(&mut self, nodes: &mut [PkgNode], ctx: &mut RunContext) -> Parallel {
        let by_path = paths(nodes);
        let parents = parents(nodes);
        let mut done: Vec<Recorded<()>> = Vec::new();
        for level in levels(nodes) {
            let inputs: Vec<(usize, Vec<Node>)> = level
                .iter()
                .map(|&i| {
                    let mut input = std::mem::take(&mut nodes[i].resources);
                    for d in descendants(nodes, i) {
                        input.extend(nodes[d].resources.iter().cloned());
                    }
                    (i, input)
                })
                .collect();
            let this = &*self;
            let shared: &[PkgNode] = nodes;
            let runs: Vec<(usize, Recorded<Vec<Node>>)> = inputs
                .into_par_iter()
                .map(|(i, input)| {
                    let pkg = &shared[i].pkg;
                    (i, this.recorded(|h, ctx| h.run_pipeline(pkg, input, ctx)))
                })
                .collect();
            for (i, run) in runs {
                let (output, rest) = run.take_outcome();
                done.push(rest);
                let output = match output {
                    Ok(output) => output,
                    Err(e) => {
                        self.report(done, ctx);
                        return Parallel::Done(Err(e));
                    }
                };
                let pkg_path = nodes[i].pkg.dir.to_string_lossy().into_owned();
                if escapes(&output, i, &pkg_path, &by_path, &parents) {
                    return Parallel::Escaped;
                }
                split_back(nodes, &pkg_path, &by_path, output);
            }
        }
        self.report(done, ctx);
        let resources = nodes
            .iter_mut()
            .flat_map(|n| std::mem::take(&mut n.resources))
            .collect();
        Parallel::Done(Ok(resources))
    }

    /// Reports recorded runs in order.
    fn report(&mut self, runs: Vec<Recorded<()>>, ctx: &mut RunContext) {
        for run in runs {
            let _ = self.join(run, ctx);
        }
    }

    /// Phase 1: every package in level order with its local resources.
    fn discover(&mut self, root: Package) -> Result<Vec<PkgNode>, RenderError> {
        let mut nodes = Vec::new();
        let mut next = 0;
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(pkg) = queue.pop_front() {
            self.packages += 1;
            let (resources, _) = self.local_resources(&pkg)?;
            let mut children = Vec::new();
            for sub_dir in direct_subpackages(&pkg.dir)? {
                queue.push_back(Package::load(&sub_dir, self.root_parent())?);
                next += 1;
                children.push(next);
            }
            nodes.push(PkgNode {
                pkg,
                resources,
                children,
            });
        }
        Ok(nodes)
    }
}

/// What a parallel BFS came to.
enum Parallel {
    /// The render's result (events and results already reported).
    Done(Result<Vec<Node>, RenderError>),
    /// A pipeline's output left its subtree: nothing was reported.
    Escaped,
}

/// The package a pipeline's output resource goes back to: its
/// `package-path`, else the package whose pipeline ran.
fn owner(resource: &Node, running: &str) -> String {
    krmgraph_kyaml::krm::annotation(resource, kioutil::PACKAGE_PATH_ANNOTATION)
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| running.to_string())
}

/// Package directory → index.
fn paths(nodes: &[PkgNode]) -> HashMap<String, usize> {
    nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.pkg.dir.to_string_lossy().into_owned(), i))
        .collect()
}

/// Each package's parent index (the root's is itself).
fn parents(nodes: &[PkgNode]) -> Vec<usize> {
    let mut parents: Vec<usize> = (0..nodes.len()).collect();
    for (i, n) in nodes.iter().enumerate() {
        for &c in &n.children {
            parents[c] = i;
        }
    }
    parents
}

/// The packages grouped by depth, each group in level order.
fn levels(nodes: &[PkgNode]) -> Vec<Vec<usize>> {
    let mut depth = vec![0usize; nodes.len()];
    let mut levels: Vec<Vec<usize>> = Vec::new();
    for (i, n) in nodes.iter().enumerate() {
        for &c in &n.children {
            depth[c] = depth[i] + 1;
        }
        if levels.len() <= depth[i] {
            levels.resize(depth[i] + 1, Vec::new());
        }
        levels[depth[i]].push(i);
    }
    levels
}

/// Whether some output resource would go to a package outside `node`'s
/// subtree.
fn escapes(
    output: &[Node],
    node: usize,
    node_path: &str,
    by_path: &HashMap<String, usize>,
    parents: &[usize],
) -> bool {
    output.iter().any(|r| {
        let Some(&target) = by_path.get(&owner(r, node_path)) else {
            return false;
        };
        let mut t = target;
        loop {
            if t == node {
                return false;
            }
            if parents[t] == t {
                return true;
            }
            t = parents[t];
        }
    })
}

/// The descendants of `node` in pre-order (each child, then its subtree).
fn descendants(nodes: &[PkgNode], node: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack: Vec<usize> = nodes[node].children.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        out.push(i);
        stack.extend(nodes[i].children.iter().rev());
    }
    out
}

/// `propagateResourcesAcrossNodes`: each package named by an output
/// resource's `package-path` (none: the current package) gets that group
/// in place of its resources; a package with no group keeps what it had;
/// resources of unknown packages are dropped.
fn split_back(
    nodes: &mut [PkgNode],
    current_path: &str,
    by_path: &HashMap<String, usize>,
    output: Vec<Node>,
) {
    let mut groups: HashMap<usize, Vec<Node>> = HashMap::new();
    for resource in output {
        if let Some(&target) = by_path.get(&owner(&resource, current_path)) {
            groups.entry(target).or_default().push(resource);
        }
    }
    // The current package's resources were taken as its input; without a
    // group it is left with none, as kpt leaves `remaining` empty.
    for (target, resources) in groups {
        nodes[target].resources = resources;
    }
}
