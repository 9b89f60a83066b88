//! `gcr.io/kpt-fn/search-replace`: finds scalar fields by value and/or path
//! and optionally sets their value or line comment (kyaml framework).
//!
//! Config (`ConfigMap` data): matchers `by-value`, `by-value-regex` (RE2,
//! matching the whole value), `by-path` (dotted path; `*` one field, `**`
//! any number; list items share their list's path) and, from v0.2,
//! `by-file-path` (slash-separated `path.Match` segments, `**` any number of
//! directories, against the `config.kubernetes.io/path` annotation);
//! mutators `put-value` and `put-comment`, where `${1}`-style references
//! expand to the regex's capture groups (only those: [`expand_groups`]). The given
//! matchers must all match.
//!
//! Results (no severity): `Mutated field value to "<value>"` (or
//! `Matched field value "<value>"` without a mutator) with the field path
//! and file.

use super::apply_setters::report::{self, Item};
use super::apply_setters::setters::{self, Visitor};
use super::framework::{self, Outcome, ResourceList};
use super::{direct, Builtin};
use crate::exec::ProcessOutput;
use krmgraph_util::gostr::quote;
use krmgraph_yaml::{Kind, Node};

/// The search-replace images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "search-replace",
        registry: "gcr.io/kpt-fn/",
        tags: &["v0.1", "v0.1.0", "v0.1.1", "v0.1.2"],
        version: "2",
        config_kinds: &["ConfigMap"],
        run: run_v0_1,
        direct: Some(run_direct_v0_1),
        per_item: None,
    },
    Builtin {
        name: "search-replace",
        registry: "gcr.io/kpt-fn/",
        tags: &["v0.2", "v0.2.0", "unstable", "latest"],
        version: "2",
        config_kinds: &["ConfigMap"],
        run,
        direct: Some(run_direct),
        per_item: None,
    },
];

/// `by-value`.
pub const BY_VALUE: &str = "by-value";
/// `by-value-regex`.
pub const BY_VALUE_REGEX: &str = "by-value-regex";
/// `by-path`.
pub const BY_PATH: &str = "by-path";
/// `by-file-path`.
pub const BY_FILE_PATH: &str = "by-file-path";
/// `put-value`.
pub const PUT_VALUE: &str = "put-value";
/// `put-comment`.
pub const PUT_COMMENT: &str = "put-comment";

/// Runs the latest version.
pub fn run(input: &[u8]) -> ProcessOutput {
    run_version(input, true)
}

/// Runs v0.1 (no `by-file-path`).
pub fn run_v0_1(input: &[u8]) -> ProcessOutput {
    run_version(input, false)
}

fn run_version(input: &[u8], latest: bool) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, |list| run_list(list, latest))
}

/// [`run`] on nodes ([`super::direct`]).
pub fn run_direct(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, |list| run_list(list, true))
}

/// [`run_v0_1`] on nodes ([`super::direct`]).
pub fn run_direct_v0_1(items: &[Node], config: Option<&Node>) -> Option<direct::Output> {
    framework::run_nodes(items, config, |list| run_list(list, false))
}

fn run_list(mut list: ResourceList, latest: bool) -> Outcome {
    let result = SearchReplace::decode(list.function_config.as_ref(), latest)
        .and_then(|mut sr| sr.filter(&mut list.items).map(|()| sr.results));
    match result {
        Ok(results) => report::kyaml_success(list, &results),
        Err(e) => report::kyaml_failure(
            list,
            &format!("failed to perform search-replace operation: {e}"),
        ),
    }
}

/// The catalog's `searchreplace.SearchReplace`.
#[derive(Debug, Default)]
pub struct SearchReplace {
    /// `by-value`.
    pub by_value: String,
    /// `by-value-regex`.
    pub by_value_regex: String,
    /// `by-path`.
    pub by_path: String,
    /// `by-file-path`.
    pub by_file_path: String,
    /// `put-value`.
    pub put_value: String,
    /// `put-comment`.
    pub put_comment: String,
    /// One result per matched field.
    pub results: Vec<Item>,
    regex: Option<regex::Regex>,
    file_path: String,
}

impl SearchReplace {
    /// Reads and validates the config.
    pub fn decode(config: Option<&Node>, latest: bool) -> Result<SearchReplace, String> {
        let mut sr = SearchReplace::default();
        for (key, value) in setters::data_map(config) {
            match key.as_str() {
                BY_VALUE => sr.by_value = value,
                BY_VALUE_REGEX => sr.by_value_regex = value,
                BY_PATH => sr.by_path = value,
                BY_FILE_PATH if latest => sr.by_file_path = value,
                PUT_VALUE => sr.put_value = value,
                PUT_COMMENT => sr.put_comment = value,
                _ => {}
            }
        }
        if !sr.by_value.is_empty() && !sr.by_value_regex.is_empty() {
            return Err(format!(
                r#"only one of ["{BY_VALUE}", "{BY_VALUE_REGEX}"] can be provided"#
            ));
        }
        if sr.by_value.is_empty()
            && sr.by_value_regex.is_empty()
            && sr.by_path.is_empty()
            && sr.by_file_path.is_empty()
        {
            return Err(if latest {
                format!(
                    r#"at least one of ["{BY_VALUE}", "{BY_VALUE_REGEX}", "{BY_PATH}", "{BY_FILE_PATH}"] must be provided"#
                )
            } else {
                format!(
                    r#"at least one of ["{BY_VALUE}", "{BY_VALUE_REGEX}", "{BY_PATH}"] must be provided"#
                )
            });
        }
        if !sr.by_value_regex.is_empty() {
            let re = regex::Regex::new(&format!("^{}$", sr.by_value_regex)).map_err(|e| {
                format!(
                    "failed to compile input pattern {}: {e}",
                    quote(&sr.by_value_regex)
                )
            })?;
            sr.regex = Some(re);
        }
        Ok(sr)
    }

    /// `Filter`: searches (and replaces) in every resource.
    pub fn filter(&mut self, nodes: &mut [Node]) -> Result<(), String> {
        for node in nodes {
            self.file_path = report::file_path(node);
            if !self.by_file_path.is_empty()
                && !file_path_match(&self.by_file_path, &self.file_path)
            {
                continue;
            }
            setters::accept(self, node, "")?;
        }
        Ok(())
    }

    fn path_match(&self, path: &str) -> bool {
        if self.by_path.is_empty() {
            return false;
        }
        let want: Vec<&str> = self.by_path.split('.').collect();
        let got: Vec<&str> = path.trim_matches('.').split('.').collect();
        wildcard_match(&want, &got, |w, g| w == g)
    }
}

/// `*` matches one element, `**` any number; others go to `eq`.
fn wildcard_match(want: &[&str], got: &[&str], eq: impl Fn(&str, &str) -> bool + Copy) -> bool {
    match want.split_first() {
        None => got.is_empty(),
        Some((&"**", rest)) => {
            wildcard_match(rest, got, eq)
                || (!got.is_empty() && wildcard_match(want, &got[1..], eq))
        }
        Some((&"*", rest)) => !got.is_empty() && wildcard_match(rest, &got[1..], eq),
        Some((w, rest)) => !got.is_empty() && eq(w, got[0]) && wildcard_match(rest, &got[1..], eq),
    }
}

/// `by-file-path` matching: slash-separated, `**` for any number of
/// directories, other segments as `path.Match` patterns.
pub fn file_path_match(pattern: &str, path: &str) -> bool {
    let want: Vec<&str> = pattern.trim_start_matches("./").split('/').collect();
    let got: Vec<&str> = path.trim_start_matches("./").split('/').collect();
    wildcard_match(&want, &got, |w, g| {
        krmgraph_kyaml::gopath::matches(w, g).unwrap_or(false)
    })
}

/// The catalog function's expansion of `template` with the groups of
/// `caps`: each `${N}`, for N from 0 to the number of groups, replaced in
/// turn (`strings.ReplaceAll`) by group N's text (empty when it took no
/// part). Nothing else is a reference: `$1`, `$$` and `${name}` — setter
/// names such as `${host}` in a `kpt-set:` comment — stay as they are, as
/// does a number past the last group. (Not Go's `Regexp.Expand`, which
/// would drop `${host}`: what the catalog's function was seen doing.)
pub fn expand_groups(template: &str, caps: &regex::Captures<'_>) -> String {
    let mut out = template.to_string();
    for i in 0..caps.len() {
        let text = caps.get(i).map_or("", |m| m.as_str());
        out = out.replace(&format!("${{{i}}}"), text);
    }
    out
}

impl Visitor for SearchReplace {
    fn visit_mapping(&mut self, _node: &mut Node, _path: &str) -> Result<(), String> {
        Ok(())
    }

    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), String> {
        if node.kind != Kind::Scalar {
            return Ok(());
        }
        let path_match = self.path_match(path);
        let regex_match = self
            .regex
            .as_ref()
            .and_then(|re| re.captures(&node.value).map(|c| (re, c)));
        let value_match =
            (!self.by_value.is_empty() && node.value == self.by_value) || regex_match.is_some();
        let no_value_matcher = self.by_value.is_empty() && self.by_value_regex.is_empty();
        // The catalog's condition: `(valueMatch && pathMatch) ||
        // (valueMatch && ByPath == "") || (pathMatch && no value matcher)`.
        let matched = (value_match && (path_match || self.by_path.is_empty()))
            || (path_match && no_value_matcher);
        if !matched {
            return Ok(());
        }
        let expand = |template: &str| match &regex_match {
            Some((_, caps)) => expand_groups(template, caps),
            None => template.to_string(),
        };
        let new_value = (!self.put_value.is_empty()).then(|| expand(&self.put_value));
        let new_comment = (!self.put_comment.is_empty()).then(|| expand(&self.put_comment));
        if let Some(v) = new_value {
            node.value = v.into();
        }
        if let Some(c) = new_comment {
            node.set_line_comment(if c.starts_with('#') {
                c
            } else {
                format!("# {c}")
            });
        }
        let message = if self.put_value.is_empty() && self.put_comment.is_empty() {
            format!("Matched field value {}", quote(&node.value))
        } else {
            format!("Mutated field value to {}", quote(&node.value))
        };
        self.results.push(Item {
            message,
            field_path: path.trim_start_matches('.').to_string(),
            file_path: self.file_path.clone(),
            ..Item::default()
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests;
