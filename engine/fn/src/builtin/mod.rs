//! The `builtin` runtime: catalog functions run in process, no container.
//!
//! An image reference (`gcr.io/kpt-fn/set-namespace:v0.1.3`, the short form
//! `set-namespace:v0.1.3`, `gcr.io/kpt-functions/no-op`, ...) resolves to a
//! [`Builtin`] when krmgraph has one for that name and tag. A built-in has
//! exactly the interface of a function process — the ResourceList bytes in,
//! the output bytes, stderr and an exit code out — so it crosses the same
//! function boundary as `exec:` and container functions (ids, comment and
//! order restoration, default paths, invariants). Inside, it reads and
//! writes the ResourceList the way the original (Go, kyaml-based) function
//! does (`framework`), which reproduces the original's formatting side
//! effects.
//!
//! One file per function family, each exporting its `BUILTINS` (with the
//! image tags each answers for); [`REGISTRY`] lists the families.

pub(crate) mod apply_replacements;
pub(crate) mod apply_setters;
pub(crate) mod create_setters;
pub(crate) mod direct;
pub(crate) mod drop_comments;
pub(crate) mod ensure_name_substring;
pub mod fixed_point;
pub(crate) mod framework;
pub(crate) mod gatekeeper;
pub(crate) mod json_value;
pub(crate) mod kubeval;
pub(crate) mod kustomize;
pub(crate) mod list_setters;
pub(crate) mod no_op;
pub(crate) mod remove_local_config;
pub(crate) mod search_replace;
pub(crate) mod set_annotations;
pub(crate) mod set_image;
pub(crate) mod set_labels;
pub(crate) mod set_namespace;
pub(crate) mod starlark;

use super::exec::ProcessOutput;
use krmgraph_yaml::Node;

/// A built-in function: the ResourceList bytes in, the process result out.
pub type RunFn = fn(input: &[u8]) -> ProcessOutput;

/// One built-in: the catalog name, which tags it implements, and its code.
#[derive(Clone, Copy)]
pub struct Builtin {
    /// Image path without registry or tag, e.g. `set-namespace`.
    pub name: &'static str,
    /// Registry prefix, e.g. `gcr.io/kpt-fn/`.
    pub registry: &'static str,
    /// Tags this implementation answers for; `*` matches any tag (and no
    /// tag).
    pub tags: &'static [&'static str],
    /// The behaviour version that enters cache keys: bump it whenever the
    /// output for some input changes.
    pub version: &'static str,
    /// The functionConfig kinds it accepts, for `krmgraph fn list`.
    pub config_kinds: &'static [&'static str],
    /// The function.
    pub run: RunFn,
    /// The same function on nodes, where it has that form (`direct`).
    pub direct: Option<direct::DirectFn>,
    /// Set where, on nodes, each output item depends only on the matching
    /// input item and the functionConfig, with no results and no stderr on
    /// success: the step then runs only on the items not known to come
    /// back as they are ([`fixed_point`]).
    pub per_item: Option<PerItem>,
}

/// What the engine knows of a per-item built-in ([`Builtin::per_item`]).
#[derive(Clone, Copy)]
pub struct PerItem {
    /// The round trip its output items come out of, shared by the
    /// functions that name the same one ([`fixed_point::FixedPoints::round_tripped`]).
    pub family: &'static str,
    /// Which of `items` (each as kpt's side holds it, ids set) the
    /// transformation with this functionConfig leaves exactly as the
    /// function reads them; `None` when the config does not configure it.
    pub leaves_alone: LeavesAloneFn,
    /// The rest of the run on nodes for an item [`Verdict::Transformed`]:
    /// its output as kpt reads it back (before restoration); `None` where
    /// a model declines.
    pub finish: fn(transformed: Node) -> Option<Node>,
}

/// [`PerItem::leaves_alone`].
pub type LeavesAloneFn = fn(items: &[&Node], config: Option<&Node>) -> Option<Vec<Verdict>>;

/// What [`PerItem::leaves_alone`] found for one item.
pub enum Verdict {
    /// The transformation leaves its value as the function reads it.
    LeftAlone,
    /// It changes it: the item as the function read and transformed it,
    /// for [`PerItem::finish`], so that its run does not read and
    /// transform it again.
    Transformed(Node),
    /// Not known (a model declined, or the transformation failed): the
    /// item runs.
    Unknown,
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Builtin({}{}@{})",
            self.registry, self.name, self.version
        )
    }
}

/// Every family of built-ins, in `krmgraph fn list` order. Each function
/// file exports its entries as `BUILTINS`.
pub static REGISTRY: &[&[Builtin]] = &[
    BASE,
    kustomize::BUILTINS,
    starlark::BUILTINS,
    apply_setters::BUILTINS,
    create_setters::BUILTINS,
    list_setters::BUILTINS,
    search_replace::BUILTINS,
    set_image::BUILTINS,
    apply_replacements::BUILTINS,
    remove_local_config::BUILTINS,
    set_namespace::BUILTINS,
    set_labels::BUILTINS,
    set_annotations::BUILTINS,
    ensure_name_substring::BUILTINS,
    kubeval::BUILTINS,
    gatekeeper::BUILTINS,
];

/// The demo and identity functions.
static BASE: &[Builtin] = &[
    Builtin {
        name: "no-op",
        registry: "gcr.io/kpt-functions/",
        tags: &["*"],
        version: "1",
        config_kinds: &[],
        run: no_op::run,
        direct: Some(no_op::run_direct),
        per_item: None,
    },
    Builtin {
        name: "drop-comments",
        registry: "gcr.io/kpt-fn-demo/",
        tags: &["*"],
        version: "1",
        config_kinds: &[],
        run: drop_comments::run,
        direct: Some(drop_comments::run_direct),
        per_item: None,
    },
];

/// Every built-in.
pub fn all() -> impl Iterator<Item = &'static Builtin> {
    REGISTRY.iter().flat_map(|family| family.iter())
}

/// Splits a resolved image reference into registry+name and tag.
pub fn split_image(image: &str) -> (&str, &str) {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(i) if !image[i..].contains('/') => (&image[..i], &image[i + 1..]),
        _ => (image, ""),
    }
}

/// The built-in for a resolved image reference, if krmgraph has one.
pub fn lookup(image: &str) -> Option<&'static Builtin> {
    let (path, tag) = split_image(image);
    all().find(|b| {
        path.strip_prefix(b.registry) == Some(b.name)
            && b.tags.iter().any(|t| *t == "*" || *t == tag)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_images_to_builtins() {
        assert_eq!(
            lookup("gcr.io/kpt-functions/no-op").map(|b| b.name),
            Some("no-op")
        );
        assert_eq!(
            lookup("gcr.io/kpt-fn-demo/drop-comments:v0.1").map(|b| b.name),
            Some("drop-comments")
        );
        assert!(lookup("gcr.io/kpt-fn/not-a-builtin:v1").is_none());
        assert_eq!(
            split_image("localhost:5000/a/b:v1"),
            ("localhost:5000/a/b", "v1")
        );
        assert_eq!(
            split_image("localhost:5000/a/b"),
            ("localhost:5000/a/b", "")
        );
    }
}
