//! `gcr.io/kpt-fn/set-image` (latest, kpt functions SDK): replaces the name,
//! tag or digest of matching container images.
//!
//! Config: `ConfigMap` data `name` (required), `newName`, `newTag`,
//! `digest` (any other key is an error), or `fn.kpt.dev/v1alpha1 SetImage`
//! with `image: {name, newName, newTag, digest}` and
//! `additionalImageFields` (kustomize field specs: `group`, `version`,
//! `kind`, `path` with `/` separators and `[]` for every list item).
//!
//! An image matches when it is `^<name>(:tag)?(@sha256:digest)?$` (the name
//! is used as a regular expression, unescaped). Its new value is the new
//! name (or its old one) followed by `@<digest>` if a digest is given, else
//! `:<newTag>` if a tag is given, else its old tag and digest. Fields:
//! `Pod` `spec.containers[].image`; `Deployment`, `StatefulSet`,
//! `ReplicaSet`, `DaemonSet` and `PodTemplate`
//! `spec.template.spec.containers[].image` (init containers are not
//! updated: the original reads `iniContainers`); and the additional fields.
//! Result: `summary: updated a total of N image(s)` (info).

use super::apply_replacements::path_splitter;
use super::apply_setters::report::{self, Item};
use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// The set-image images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[Builtin {
    name: "set-image",
    registry: "gcr.io/kpt-fn/",
    tags: &["unstable", "latest"],
    version: "1",
    config_kinds: &["ConfigMap", "SetImage"],
    run,
    direct: Some(run_direct),
    per_item: None,
}];

/// Runs the function.
pub fn run(input: &[u8]) -> ProcessOutput {
    framework::run_bytes(input, report::sdk_error, run_list)
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, run_list)
}

fn run_list(mut list: ResourceList) -> Outcome {
    let config = match SetImage::decode(list.function_config.as_ref()) {
        Ok(c) => c,
        Err(e) => return report::sdk_output(list, &[Item::with_severity(e, "error")], true),
    };
    let count: usize = list
        .items
        .iter_mut()
        .map(|item| config.transform(item))
        .sum();
    let summary = format!("summary: updated a total of {count} image(s)");
    report::sdk_output(list, &[Item::with_severity(summary, "info")], false)
}

/// The image to replace and its replacement.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Image {
    /// The image name to match.
    pub name: String,
    /// The new name.
    pub new_name: String,
    /// The new tag.
    pub new_tag: String,
    /// The new digest.
    pub digest: String,
}

/// A kustomize field spec.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSpec {
    /// API group; empty matches any.
    pub group: String,
    /// API version; empty matches any.
    pub version: String,
    /// Kind; empty matches any.
    pub kind: String,
    /// `/`-separated path, `[]` after a field for its list items.
    pub path: String,
}

/// The function's configuration.
#[derive(Clone, Debug, Default)]
pub struct SetImage {
    /// The image.
    pub image: Image,
    /// `additionalImageFields`.
    pub additional_fields: Vec<FieldSpec>,
}

fn text(node: &Node, name: &str) -> String {
    rnode::get_value(rnode::field_value(node, name)).to_string()
}

impl SetImage {
    /// Reads and validates the config.
    pub fn decode(config: Option<&Node>) -> Result<SetImage, String> {
        let mut si = SetImage::default();
        let config = config.map(rnode::y_node);
        let meta = config
            .and_then(|c| rnode::get_meta(c).ok())
            .unwrap_or_default();
        match (meta.api_version.as_str(), meta.kind.as_str()) {
            (_, "ConfigMap") => {
                let data = config.and_then(|c| rnode::field_value(c, "data"));
                for (k, v) in data
                    .map(|d| rnode::pairs(rnode::y_node(d)))
                    .into_iter()
                    .flatten()
                {
                    let value = rnode::get_value(Some(v)).to_string();
                    match k.value.as_str() {
                        "name" => si.image.name = value,
                        "newName" => si.image.new_name = value,
                        "newTag" => si.image.new_tag = value,
                        "digest" => si.image.digest = value,
                        other => return Err(format!("ConfigMap has wrong field name {other}")),
                    }
                }
            }
            ("fn.kpt.dev/v1alpha1", "SetImage") => {
                let config = config.expect("a SetImage config");
                if let Some(image) = rnode::field_value(config, "image") {
                    si.image = Image {
                        name: text(image, "name"),
                        new_name: text(image, "newName"),
                        new_tag: text(image, "newTag"),
                        digest: text(image, "digest"),
                    };
                }
                if let Some(fields) = rnode::field_value(config, "additionalImageFields") {
                    for fs in &rnode::y_node(fields).content {
                        si.additional_fields.push(FieldSpec {
                            group: text(fs, "group"),
                            version: text(fs, "version"),
                            kind: text(fs, "kind"),
                            path: text(fs, "path"),
                        });
                    }
                }
            }
            _ => {
                return Err(
                    "`functionConfig` must be either a `ConfigMap` or `SetImage`".to_string(),
                )
            }
        }
        if si.image.name.is_empty() {
            return Err("must specify `name`".into());
        }
        if si.image.new_name.is_empty() && si.image.new_tag.is_empty() && si.image.digest.is_empty()
        {
            return Err("must specify one of `newName`, `newTag`, or `digest`".into());
        }
        Ok(si)
    }

    /// Updates the images of one resource; returns how many it updated.
    pub fn transform(&self, item: &mut Node) -> usize {
        let meta = rnode::get_meta(item).unwrap_or_default();
        let (group, version) = match meta.api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), meta.api_version.clone()),
        };
        let mut count = 0;
        let pod_spec: Option<&[&str]> = match meta.kind.as_str() {
            "Pod" => Some(&["spec"]),
            "Deployment" | "StatefulSet" | "ReplicaSet" | "DaemonSet" | "PodTemplate" => {
                Some(&["spec", "template", "spec"])
            }
            _ => None,
        };
        if let Some(path) = pod_spec {
            if let Ok(Some(containers)) = rnode::lookup_mut(item, &[path, &["containers"]].concat())
            {
                if containers.kind == Kind::Sequence {
                    for c in &mut containers.content {
                        if let Some(image) = rnode::field_value_mut(c, "image") {
                            count += usize::from(self.update(image));
                        }
                    }
                }
            }
        }
        for fs in &self.additional_fields {
            let selected = [
                (&fs.group, &group),
                (&fs.version, &version),
                (&fs.kind, &meta.kind),
            ]
            .iter()
            .all(|(want, got)| want.is_empty() || want == got);
            if !selected {
                continue;
            }
            let parts = path_splitter(&fs.path, "/");
            let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
            visit_path(rnode::y_node_mut(item), &parts, &mut |n| {
                count += usize::from(self.update(n));
            });
        }
        count
    }

    /// Sets the new image on `node` if it matches.
    fn update(&self, node: &mut Node) -> bool {
        if node.kind != Kind::Scalar {
            return false;
        }
        let Some(new) = new_image(&self.image, &node.value) else {
            return false;
        };
        let (head, line, foot) = (
            node.take_head_comment(),
            node.take_line_comment(),
            node.take_foot_comment(),
        );
        *node = rnode::new_string(new);
        node.set_head_comment(head);
        node.set_line_comment(line);
        node.set_foot_comment(foot);
        true
    }
}

/// The new value for `value` if it matches `image.name`.
pub fn new_image(image: &Image, value: &str) -> Option<String> {
    let re = regex::Regex::new(&format!(
        "^{}(:[a-zA-Z0-9_.{{}}-]*)?(@sha256:[a-zA-Z0-9_.{{}}-]*)?$",
        image.name
    ))
    .ok()?;
    let caps = re.captures(value)?;
    let name_end = caps
        .get(1)
        .or_else(|| caps.get(2))
        .map_or(value.len(), |m| m.start());
    let (old_name, old_suffix) = value.split_at(name_end);
    let name = if image.new_name.is_empty() {
        old_name
    } else {
        &image.new_name
    };
    let suffix = if !image.digest.is_empty() {
        format!("@{}", image.digest)
    } else if !image.new_tag.is_empty() {
        format!(":{}", image.new_tag)
    } else {
        old_suffix.to_string()
    };
    Some(format!("{name}{suffix}"))
}

/// Calls `f` on every node at `parts` (`x[]` goes through every item of
/// list `x`).
fn visit_path(node: &mut Node, parts: &[&str], f: &mut impl FnMut(&mut Node)) {
    let Some((first, rest)) = parts.split_first() else {
        f(node);
        return;
    };
    let (name, each) = match first.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (*first, false),
    };
    if node.kind != Kind::Mapping {
        return;
    }
    let Some(value) = rnode::field_value_mut(node, name) else {
        return;
    };
    if !each {
        visit_path(value, rest, f);
    } else if value.kind == Kind::Sequence {
        for item in &mut value.content {
            visit_path(item, rest, f);
        }
    }
}

#[cfg(test)]
mod tests;
