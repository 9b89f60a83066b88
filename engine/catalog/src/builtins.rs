//! krmgraph's built-ins as a catalog (`krmgraph fn catalog`): one function
//! per functionConfig kind a built-in reads (not `ConfigMap`, which every
//! built-in reads and so names none of them), at `fn.kpt.dev/v1alpha1`,
//! each `runtime: {builtin: NAME:TAG}` — so a team can publish the catalog
//! and pin the behaviour its pipelines get.

use std::fmt::Write;

/// The group and version of kpt's function configs.
const GROUP: &str = "fn.kpt.dev";
const VERSION: &str = "v1alpha1";

/// The built-ins' catalog, as YAML.
pub fn catalog() -> String {
    let mut out = format!(
        "apiVersion: {}\nkind: Catalog\nmetadata:\n  name: krmgraph-builtins\n  annotations:\n    krmgraph.dev/version: \"{}\"\nspec:\n  krmFunctions:\n",
        crate::parse::API_VERSION,
        env!("CARGO_PKG_VERSION")
    );
    let mut seen = Vec::new();
    for b in krmgraph_fn::builtin::all() {
        let Some(tag) = b.tags.iter().rev().find(|t| **t != "*") else {
            continue;
        };
        for kind in b.config_kinds.iter().filter(|k| **k != "ConfigMap") {
            if seen.contains(kind) {
                continue;
            }
            seen.push(kind);
            let _ = write!(
                out,
                "  - group: {GROUP}\n    names:\n      kind: {kind}\n    description: krmgraph's built-in {name} ({registry}{name}:{tag})\n    publisher: krmgraph\n    versions:\n    - name: {VERSION}\n      idempotent: true\n      runtime:\n        builtin: {name}:{tag}\n",
                name = b.name,
                registry = b.registry,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::{parse, verify, Resolved, Runtime};

    /// Every printed entry parses back and resolves to a built-in that
    /// reads the entry's kind.
    #[test]
    fn builtin_catalog_round_trips() {
        let text = super::catalog();
        let entries = parse::parse_file(Path::new("builtins.yaml"), text.as_bytes()).unwrap();
        assert!(entries.len() >= 8, "{text}");
        for e in &entries {
            assert!(matches!(e.runtime, Runtime::Builtin(_)));
            let Resolved::Image(image) = verify::verify(e, false, None).unwrap() else {
                panic!("{} is not an image", e.kind);
            };
            let b = krmgraph_fn::builtin::lookup(&image).unwrap();
            assert!(
                b.config_kinds.contains(&e.kind.as_str()),
                "{image}: {}",
                e.kind
            );
        }
    }
}
