//! Helpers shared by the YAML integration tests (and the kyaml reparse test).

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use krmgraph_yaml::Node;

/// Every `.yaml`, `.yml` and `Kptfile` below `dir` (none if it is missing).
pub fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.ends_with(".yaml") || name.ends_with(".yml") || name == "Kptfile" {
                out.push(path);
            }
        }
    }
}

/// The model without source positions, which legitimately change.
pub fn strip_positions(n: &Node) -> Node {
    let mut n = n.clone();
    fn walk(n: &mut Node) {
        n.line = 0;
        n.column = 0;
        n.content.iter_mut().for_each(walk);
    }
    walk(&mut n);
    n
}
