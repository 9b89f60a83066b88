//! `gcr.io/kpt-fn-demo/drop-comments`: removes every comment from every
//! resource (kpt then restores them from its input, which is what the
//! function demonstrates).

use super::framework;
use crate::fnruntime::exec::ProcessOutput;
use crate::yaml::Node;

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_items(input, |list| {
        list.items.iter_mut().for_each(strip);
        Ok(())
    })
}

fn strip(node: &mut Node) {
    node.head_comment.clear();
    node.line_comment.clear();
    node.foot_comment.clear();
    node.content.iter_mut().for_each(strip);
}
