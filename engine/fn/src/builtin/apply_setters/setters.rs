//! What apply-setters, create-setters and list-setters share (the catalog's
//! `applysetters`/`listsetters` packages): the `# kpt-set: <pattern>` line
//! comment, `${name}` references in a pattern, recovering setter values from
//! a field's current value, the setters a `ConfigMap` gives, and the
//! depth-first walk (kyaml `setters2`'s `accept`) with dotted field paths.

use krmgraph_kyaml::rnode;
use krmgraph_yaml::{Kind, Node};

/// The line comment that marks a setter field.
pub const SETTER_COMMENT: &str = "# kpt-set: ";

/// `extractSetterPattern`: the pattern of a `# kpt-set: ` line comment,
/// trimmed; `None` when the comment is not one (or the pattern is empty).
pub fn extract_setter_pattern(line_comment: &str) -> Option<&str> {
    let pattern = line_comment.strip_prefix(SETTER_COMMENT)?.trim();
    (!pattern.is_empty()).then_some(pattern)
}

/// `unresolvedSetters`: every `${...}` in `pattern`, in order.
pub fn unresolved_setters(pattern: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = pattern;
    let mut offset = 0;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                let whole = &pattern[offset + start..offset + start + 2 + end + 1];
                out.push(whole);
                let consumed = start + 2 + end + 1;
                offset += consumed;
                rest = &rest[consumed..];
            }
            None => break,
        }
    }
    out
}

/// `clean`: the name inside `${...}`.
pub fn clean(input: &str) -> &str {
    let input = input.trim();
    let input = input.strip_prefix("${").unwrap_or(input);
    input.strip_suffix('}').unwrap_or(input)
}

/// `currentSetterValues`: the values of the setters of `pattern` recovered
/// from `value` (`my-app.${stage}.${tld}` and `my-app.dev.com` give
/// `stage=dev`, `tld=com`). Empty when the value does not match, or any
/// recovered value is empty. Later occurrences of a name win.
pub fn current_setter_values(pattern: &str, value: &str) -> Vec<(String, String)> {
    let urs = unresolved_setters(pattern);
    // Go quotes the pattern and replaces each quoted `${name}` by a group.
    let mut re = regex::escape(pattern);
    for name in &urs {
        re = re.replace(&regex::escape(name), "(.*)");
    }
    let Ok(re) = regex::Regex::new(&re) else {
        return Vec::new();
    };
    let Some(caps) = re.captures(value) else {
        return Vec::new();
    };
    let values: Vec<&str> = caps
        .iter()
        .skip(1)
        .map(|m| m.map_or("", |m| m.as_str()))
        .collect();
    if values.len() != urs.len() {
        return Vec::new();
    }
    let mut out: Vec<(String, String)> = Vec::new();
    for (name, v) in urs.iter().zip(values) {
        if v.is_empty() {
            return Vec::new();
        }
        let name = clean(name).to_string();
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some(slot) => slot.1 = v.to_string(),
            None => out.push((name, v.to_string())),
        }
    }
    out
}

/// `RNode.GetDataMap()` of the functionConfig: `data` keys and their scalar
/// values (`""` for non-scalars), in document order; a repeated key keeps
/// its first position and takes its last value, as a Go map would.
pub fn data_map(config: Option<&Node>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let Some(data) = config.and_then(|c| rnode::field_value(c, "data")) else {
        return out;
    };
    let data = rnode::y_node(data);
    if data.kind != Kind::Mapping {
        return out;
    }
    for (k, v) in rnode::pairs(data) {
        let key = rnode::get_value(Some(k)).to_string();
        let value = rnode::get_value(Some(v)).to_string();
        match out.iter_mut().find(|(n, _)| *n == key) {
            Some(slot) => slot.1 = value,
            None => out.push((key, value)),
        }
    }
    out
}

/// A visitor of the setters walk.
pub trait Visitor {
    /// Called for every mapping before its fields are walked.
    fn visit_mapping(&mut self, node: &mut Node, path: &str) -> Result<(), String>;
    /// Called for every scalar (field values and list items).
    fn visit_scalar(&mut self, node: &mut Node, path: &str) -> Result<(), String>;
}

/// `accept`: walks `node` depth first. Field values get the path
/// `<parent>.<key>`; list items keep their list's path. Paths start with a
/// `.` (callers trim it).
pub fn accept(v: &mut impl Visitor, node: &mut Node, path: &str) -> Result<(), String> {
    match node.kind {
        Kind::Document => {
            if let Some(root) = node.content.first_mut() {
                accept(v, root, "")?;
            }
            Ok(())
        }
        Kind::Mapping => {
            v.visit_mapping(node, path)?;
            let mut i = 1;
            while i < node.content.len() {
                let key = node.content[i - 1].value.clone();
                accept(v, &mut node.content[i], &format!("{path}.{key}"))?;
                i += 2;
            }
            Ok(())
        }
        Kind::Sequence => {
            for item in &mut node.content {
                accept(v, item, path)?;
            }
            Ok(())
        }
        Kind::Scalar => v.visit_scalar(node, path),
        Kind::Alias => Ok(()),
    }
}

/// The string a Go slice of strings prints as with `%v`: `[a b]`.
pub fn go_string_slice(items: &[&str]) -> String {
    format!("[{}]", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert_eq!(extract_setter_pattern("# kpt-set: ${a}"), Some("${a}"));
        assert_eq!(extract_setter_pattern("# kpt-set:${a}"), None);
        assert_eq!(extract_setter_pattern("#kpt-set: ${a}"), None);
        assert_eq!(extract_setter_pattern("# kpt-set: "), None);
        assert_eq!(
            unresolved_setters("foo-${image}:${tag}-bar${"),
            vec!["${image}", "${tag}"]
        );
        assert_eq!(clean(" ${tag} "), "tag");
    }

    #[test]
    fn current_values() {
        assert_eq!(
            current_setter_values(
                "my-app-layer.${stage}.${domain}.${tld}",
                "my-app-layer.dev.example.com"
            ),
            vec![
                ("stage".to_string(), "dev".to_string()),
                ("domain".to_string(), "example".to_string()),
                ("tld".to_string(), "com".to_string())
            ]
        );
        assert_eq!(
            current_setter_values("nginx:${tag}", "nginx:1.16.2"),
            vec![("tag".to_string(), "1.16.2".to_string())]
        );
        assert!(current_setter_values("nginx:${tag}", "nginx:").is_empty());
        assert!(current_setter_values("nginx:${tag}", "redis").is_empty());
        // Not anchored, like Go's FindStringSubmatch.
        assert_eq!(
            current_setter_values("a-${x}", "za-b"),
            vec![("x".to_string(), "b".to_string())]
        );
    }
}
