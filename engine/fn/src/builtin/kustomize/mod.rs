//! The kustomize-era catalog functions: `set-namespace`, `set-labels` and
//! `set-annotations` v0.1.x. Each wraps one of kustomize's transformers
//! (namespace, labels, annotations) with its default field specs, in a
//! kyaml `framework` command.
//!
//! What sets them apart from the newer, SDK-based versions (other files of
//! `builtin`), and what kpt's e2e cases pin:
//!
//! - they change **every** item: the Kptfile, function configs and
//!   `local-config` resources too;
//! - every item goes through kustomize's `resmap`, which hands it back
//!   through JSON ([`json_roundtrip`]): quotes normalised, keys sorted (so
//!   new fields land in that order after kpt restores the known ones);
//! - no results on success; a failure is `[error] : <message>` on stderr,
//!   one error result, exit 1 (`failed to configure function: ...` for a
//!   bad config, `failed to run function: ...` for a transformer error).
//!
//! Not reproduced, because nothing here shows what those versions did and
//! kpt's cases never reach them: `resmap`'s refusal of two resources with
//! the same kind, name and namespace, and its inlining of `*List` kinds.
//! Resources without a kind or name (a `kustomization.yaml`) are changed
//! like any other, as the e2e case `krm-check-exclude-kustomize` shows.

pub mod annotations;
mod config;
pub mod error;
pub mod fieldspec;
pub mod json_roundtrip;
pub mod labels;
pub mod namespace;

use super::apply_setters::report;
use rayon::prelude::*;

use super::{direct, framework, Builtin, PerItem, Verdict};
use crate::exec::ProcessOutput;
use error::{ConfigError, Error, RunError};
use krmgraph_kyaml::rnode;
use krmgraph_yaml::Node;

/// The v0.1.x tags of the three functions. `v0.1` floats to the newest
/// v0.1.x, which behaves the same.
const TAGS: &[&str] = &[
    "v0.1", "v0.1.0", "v0.1.1", "v0.1.2", "v0.1.3", "v0.1.4", "v0.1.5",
];

/// The round trip every item of the three goes through
/// ([`json_roundtrip`]), for [`PerItem::family`].
const FAMILY: &str = "kustomize-era JSON round trip v1";

/// The kustomize-era images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "set-namespace",
        registry: "gcr.io/kpt-fn/",
        tags: TAGS,
        version: "1",
        config_kinds: &["ConfigMap", "SetNamespaceConfig"],
        run: run::<namespace::SetNamespace>,
        direct: Some(run_direct::<namespace::SetNamespace>),
        per_item: Some(PerItem {
            family: FAMILY,
            leaves_alone: leaves_alone::<namespace::SetNamespace>,
            finish,
        }),
    },
    Builtin {
        name: "set-labels",
        registry: "gcr.io/kpt-fn/",
        tags: TAGS,
        version: "1",
        config_kinds: &["ConfigMap", "SetLabelConfig"],
        run: run::<labels::SetLabels>,
        direct: Some(run_direct::<labels::SetLabels>),
        per_item: Some(PerItem {
            family: FAMILY,
            leaves_alone: leaves_alone::<labels::SetLabels>,
            finish,
        }),
    },
    Builtin {
        name: "set-annotations",
        registry: "gcr.io/kpt-fn/",
        tags: TAGS,
        version: "1",
        config_kinds: &["ConfigMap", "SetAnnotationConfig"],
        run: run::<annotations::SetAnnotations>,
        direct: Some(run_direct::<annotations::SetAnnotations>),
        per_item: Some(PerItem {
            family: FAMILY,
            leaves_alone: leaves_alone::<annotations::SetAnnotations>,
            finish,
        }),
    },
];

/// A kustomize-era function: a config read from the functionConfig, and a
/// transformation of one item.
pub trait Function: Sized + Sync {
    /// The kind of its typed config (`fn.kpt.dev/v1alpha1`).
    const CONFIG_KIND: &'static str;

    /// Reads and validates the functionConfig.
    fn configure(fn_config: Option<&Node>) -> Result<Self, ConfigError>;

    /// Transforms one item in place (before the JSON round trip).
    fn transform(&self, item: &mut Node) -> Result<(), RunError>;
}

/// Runs `F` as its kyaml framework command does.
pub fn run<F: Function>(input: &[u8]) -> ProcessOutput {
    let mut list = match framework::read(input) {
        Ok(list) => list,
        Err(e) => return framework::failure(&e),
    };
    let function = match F::configure(list.function_config.as_ref()) {
        Ok(f) => f,
        Err(e) => {
            return report::kyaml_failure(list, &Error::Configure(e).to_string()).into_process()
        }
    };
    let result = list.items.iter_mut().try_for_each(|item| {
        function.transform(item)?;
        json_roundtrip::normalize(item)
    });
    match result {
        Ok(()) => report::kyaml_success(list, &[]),
        Err(e) => {
            // The function assigns its (nil) output to the items on error.
            list.items.clear();
            report::kyaml_failure(list, &Error::Run(e).to_string())
        }
    }
    .into_process()
}

/// [`run`] on nodes ([`super::direct`]): the function reads the items and
/// the config as it would have parsed them, and every item it returns
/// comes out of the JSON round trip, comment-free, as kpt reads it back.
/// `None` where a model declines or the function fails: [`run`] then gives
/// the exact output and error.
pub fn run_direct<F: Function>(items: &[Node], fn_config: Option<&Node>) -> Option<direct::Output> {
    let function = configured::<F>(fn_config)?;
    // Items are independent: they go through in parallel on the render's
    // pool, in order.
    let items = items
        .par_iter()
        .map(|item| {
            let mut item = direct::as_read(item)?;
            function.transform(&mut item).ok()?;
            finish(item)
        })
        .collect::<Option<_>>()?;
    Some(direct::Output {
        items,
        ..direct::Output::default()
    })
}

/// [`PerItem::finish`]: the JSON round trip of a transformed item and kpt's
/// reading of it.
pub fn finish(transformed: Node) -> Option<Node> {
    direct::as_written(json_roundtrip::normalized_from_root(transformed)?)
}

/// `F` configured from the functionConfig as it reads it; `None` where the
/// model declines the config or `F` refuses it.
fn configured<F: Function>(fn_config: Option<&Node>) -> Option<F> {
    let config = match fn_config {
        Some(c) => Some(direct::config_as_read(c, false)?),
        None => None,
    };
    F::configure(config.as_ref()).ok()
}

/// [`PerItem::leaves_alone`] for `F`: which items its transformation
/// leaves with the same value as it reads them (`same_value`), which is
/// all the JSON round trip after it sees.
pub fn leaves_alone<F: Function>(
    items: &[&Node],
    fn_config: Option<&Node>,
) -> Option<Vec<Verdict>> {
    let function = configured::<F>(fn_config)?;
    let verdicts = items
        .par_iter()
        .map(|item| {
            if left_alone_as_it_is(&function, item) {
                return Verdict::LeftAlone;
            }
            // The copy the function reads holds the item's value (only its
            // styles and tags are the parse's), so the transformed copy is
            // compared with the item itself.
            let Some(mut read) = direct::as_read(item) else {
                return Verdict::Unknown;
            };
            if function.transform(&mut read).is_err() {
                Verdict::Unknown
            } else if same_value(&read, rnode::y_node(item)) {
                Verdict::LeftAlone
            } else {
                Verdict::Transformed(read)
            }
        })
        .collect();
    Some(verdicts)
}

/// Whether `function` leaves `item` (one that came out of the family's
/// round trip) with the same value when run on a plain copy of it, not on
/// the copy the function reads: the restyle that copy costs is spared for
/// the items left alone, most of them. The item came out of the same
/// round trip and restoration, so its tags and styles are already those a
/// parse gives, which is all the transformation reads of them (null tags,
/// and the style a set value takes over); an item found changed here is
/// checked again on the copy the function reads.
fn left_alone_as_it_is<F: Function>(function: &F, item: &Node) -> bool {
    let mut copy = rnode::y_node(item).clone();
    rnode::clear_empty_annotations(&mut copy).is_ok()
        && function.transform(&mut copy).is_ok()
        && same_value(&copy, rnode::y_node(item))
}

/// Whether `a` and `b` hold the same value as the JSON round trip reads
/// it: the same kinds, scalar values and resolved tags, entries in the same
/// order. Styles and comments aside; `false` for anchors, aliases and tags
/// other than the core schema's.
fn same_value(a: &Node, b: &Node) -> bool {
    use krmgraph_yaml::node::tag;
    use krmgraph_yaml::Kind;
    fn resolved(n: &Node) -> Option<&str> {
        let t = match n.kind {
            _ if !n.tag.is_empty() => n.tag.as_str(),
            Kind::Mapping => tag::MAP,
            Kind::Sequence => tag::SEQ,
            _ if n.style.is_non_plain_scalar() => tag::STR,
            _ => krmgraph_yaml::resolve::resolve_tag(&n.value),
        };
        [
            tag::STR,
            tag::INT,
            tag::BOOL,
            tag::FLOAT,
            tag::NULL,
            tag::MAP,
            tag::SEQ,
        ]
        .contains(&t)
        .then_some(t)
    }
    a.kind == b.kind
        && a.kind != Kind::Alias
        && a.anchor().is_empty()
        && b.anchor().is_empty()
        && a.value == b.value
        && resolved(a).is_some_and(|t| Some(t) == resolved(b))
        && a.content.len() == b.content.len()
        && a.content
            .iter()
            .zip(&b.content)
            .all(|(x, y)| same_value(x, y))
}

#[cfg(test)]
mod tests;
