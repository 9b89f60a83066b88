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
//! concatenated in level order. Where kpt's later versions differ from
//! v1.0.0-beta.56 in other ways (Kptfile render status, saving on failure),
//! krmgraph keeps beta.56's behaviour.

use std::collections::HashMap;

use super::hydrate::Hydrator;
use super::RenderError;
use crate::fnruntime::RunContext;
use crate::kyaml::kioutil;
use crate::package::{direct_subpackages, Package};
use crate::yaml::Node;

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
        let mut nodes = self.discover(root)?;
        let by_path: HashMap<String, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.pkg.dir.to_string_lossy().into_owned(), i))
            .collect();
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

    /// Phase 1: every package in level order with its local resources.
    fn discover(&mut self, root: Package) -> Result<Vec<PkgNode>, RenderError> {
        let mut nodes = Vec::new();
        let mut next = 0;
        let mut queue = std::collections::VecDeque::from([root]);
        while let Some(pkg) = queue.pop_front() {
            self.packages += 1;
            let resources = self.local_resources(&pkg)?;
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
        let path = crate::krm::annotation(&resource, kioutil::PACKAGE_PATH_ANNOTATION)
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| current_path.to_string());
        if let Some(&target) = by_path.get(&path) {
            groups.entry(target).or_default().push(resource);
        }
    }
    // The current package's resources were taken as its input; without a
    // group it is left with none, as kpt leaves `remaining` empty.
    for (target, resources) in groups {
        nodes[target].resources = resources;
    }
}
