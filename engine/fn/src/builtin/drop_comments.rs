//! `gcr.io/kpt-fn-demo/drop-comments`: removes every comment from every
//! resource (kpt then restores them from its input, which is what the
//! function demonstrates).

use super::direct;
use super::framework::{self, Outcome, ResourceList};
use crate::exec::ProcessOutput;
use krmgraph_yaml::Node;

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, run_list)
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list)
}

fn run_list(mut list: ResourceList) -> Outcome {
    list.items.iter_mut().for_each(strip);
    Outcome::success(list)
}

fn strip(node: &mut Node) {
    node.set_head_comment("");
    node.set_line_comment("");
    node.set_foot_comment("");
    node.content.iter_mut().for_each(strip);
}
