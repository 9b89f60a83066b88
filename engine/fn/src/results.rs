//! Function results: what a function reports in its ResourceList's
//! `results`, how kpt records each executed function (`FunctionResultList`
//! in `results.yaml`), and the text kpt prints for them.

pub use krmgraph_yaml::gov2::go_string_node;
use krmgraph_yaml::{Kind, Node};

/// One result item a function reported (kyaml's `framework.ResultItem`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResultItem {
    /// Human-readable message.
    pub message: String,
    /// `error`, `warning`, `info` or empty.
    pub severity: String,
    /// The resource the result is about.
    pub resource_ref: Option<ResourceRef>,
    /// The field the result is about.
    pub field: Option<Field>,
    /// The file the result is about.
    pub file: Option<File>,
    /// Free-form tags, in document order.
    pub tags: Vec<(String, String)>,
}

/// kyaml's `ResourceIdentifier`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ResourceRef {
    /// `apiVersion`.
    pub api_version: String,
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
    /// `namespace`.
    pub namespace: String,
}

/// A field reference in a result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Field {
    /// Dotted field path.
    pub path: String,
    /// Current value, any YAML.
    pub current_value: Option<Node>,
    /// Proposed value, any YAML.
    pub proposed_value: Option<Node>,
}

/// A file reference in a result.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    /// Path of the file.
    pub path: String,
    /// Index of the document in the file.
    pub index: i64,
}

/// What kpt records for one executed function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FnResult {
    /// The resolved image, for container and built-in functions.
    pub image: String,
    /// The command line, for exec functions.
    pub exec: String,
    /// What the function wrote to stderr.
    pub stderr: String,
    /// The function's exit code (1 for failures that are not exit codes).
    pub exit_code: i32,
    /// Results the function reported.
    pub results: Vec<ResultItem>,
}

impl ResultItem {
    /// The one-line form kpt prints: `[error] v1/ConfigMap/ns/x data.k: msg`.
    pub fn line(&self) -> String {
        let severity = if self.severity.is_empty() {
            "info"
        } else {
            &self.severity
        };
        let mut out = format!("[{severity}]");
        if let Some(r) = &self.resource_ref {
            let ids: Vec<&str> = [&r.api_version, &r.kind, &r.namespace, &r.name]
                .into_iter()
                .filter(|s| !s.is_empty())
                .map(String::as_str)
                .collect();
            if !ids.is_empty() {
                out.push(' ');
                out.push_str(&ids.join("/"));
            }
        }
        if let Some(f) = &self.field {
            out.push(' ');
            out.push_str(&f.path);
        }
        out.push_str(": ");
        out.push_str(&self.message);
        out
    }
}

/// Reads the `results` value of a function's ResourceList. Accepts the
/// legacy shapes kpt accepts: a map with `items:`, `resourceRef.metadata`
/// holding name and namespace, and `field.suggestedValue`.
pub fn parse_results(results: &Node) -> Vec<ResultItem> {
    let items = match results.kind {
        Kind::Sequence => &results.content,
        Kind::Mapping => match field(results, "items") {
            Some(items) if items.kind == Kind::Sequence => &items.content,
            _ => return Vec::new(),
        },
        _ => return Vec::new(),
    };
    items
        .iter()
        .filter(|n| n.kind == Kind::Mapping)
        .map(parse_item)
        .collect()
}

fn parse_item(node: &Node) -> ResultItem {
    ResultItem {
        message: text(node, "message"),
        severity: text(node, "severity"),
        resource_ref: field(node, "resourceRef").map(|r| {
            let meta = field(r, "metadata");
            // kpt lifts the legacy `metadata` fields as their YAML text,
            // quotes included (`name: "abc"` becomes `'"abc"'`).
            let from_meta = |key: &str| {
                meta.and_then(|m| field(m, key))
                    .map(source_text)
                    .unwrap_or_default()
            };
            let or_meta = |key: &str| {
                let direct = text(r, key);
                if direct.is_empty() {
                    from_meta(key)
                } else {
                    direct
                }
            };
            ResourceRef {
                api_version: text(r, "apiVersion"),
                kind: text(r, "kind"),
                name: or_meta("name"),
                namespace: or_meta("namespace"),
            }
        }),
        field: field(node, "field").map(|f| Field {
            path: text(f, "path"),
            current_value: field(f, "currentValue").map(go_value),
            // A legacy `suggestedValue` reaches kpt's results as a kyaml
            // RNode struct, which go-yaml marshals as `match: []`.
            proposed_value: match field(f, "suggestedValue") {
                Some(_) => Some(rnode_struct()),
                None => field(f, "proposedValue").map(go_value),
            },
        }),
        file: field(node, "file").map(|f| File {
            path: text(f, "path"),
            index: text(f, "index").parse().unwrap_or(0),
        }),
        tags: field(node, "tags")
            .filter(|t| t.kind == Kind::Mapping)
            .map(|t| {
                t.content
                    .chunks(2)
                    .filter(|p| p.len() == 2)
                    .map(|p| (p[0].value.to_string(), p[1].value.to_string()))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// A scalar as its YAML text (kyaml's `RNode.String()`, trimmed).
fn source_text(node: &Node) -> String {
    if node.kind != Kind::Scalar || node.style == krmgraph_yaml::node::Style::NONE {
        return node.value.to_string();
    }
    let mut bare = node.clone();
    bare.set_head_comment("");
    bare.set_line_comment("");
    bare.set_foot_comment("");
    krmgraph_yaml::encode::to_string(&bare, 2, true)
        .map(|t| t.trim_end_matches('\n').to_string())
        .unwrap_or_else(|_| node.value.to_string())
}

/// `match: []`: how go-yaml marshals a `*yaml.RNode` struct.
fn rnode_struct() -> Node {
    let mut m = Node::mapping();
    let mut empty = Node::sequence();
    empty.style = krmgraph_yaml::node::Style::FLOW;
    push(&mut m, "match", empty);
    m
}

/// A YAML value as go-yaml unmarshals it into `interface{}` and marshals
/// it back: strings quoted as Go marshals them, numbers in Go's format,
/// maps with sorted keys, no comments, block style.
pub fn go_value(node: &Node) -> Node {
    use krmgraph_yaml::node::short_tag;
    use krmgraph_yaml::resolve::{resolve_plain, Resolved};
    match node.kind {
        Kind::Mapping => {
            let mut pairs: Vec<(&Node, &Node)> = node
                .content
                .chunks(2)
                .filter(|p| p.len() == 2)
                .map(|p| (&p[0], &p[1]))
                .collect();
            pairs.sort_by(|a, b| a.0.value.cmp(&b.0.value));
            let mut m = Node::mapping();
            for (k, v) in pairs {
                m.content.push(go_value(k));
                m.content.push(go_value(v));
            }
            m
        }
        Kind::Sequence => {
            let mut seq = Node::sequence();
            seq.content = node.content.iter().map(go_value).collect();
            seq
        }
        _ => {
            let tag = short_tag(&node.tag).into_owned();
            let plain = |text: String, tag: &str| {
                let mut n = Node::string(text);
                n.tag = tag.into();
                n
            };
            if tag != "!!str" && !node.style.is_non_plain_scalar() {
                match resolve_plain(&node.value) {
                    Resolved::Null => return plain("null".into(), "!!null"),
                    Resolved::Bool(b) => return plain(b.to_string(), "!!bool"),
                    Resolved::Int(i) => return plain(i.to_string(), "!!int"),
                    Resolved::Uint(u) => return plain(u.to_string(), "!!int"),
                    Resolved::Float(f) => return plain(go_format_float(f), "!!float"),
                    Resolved::Timestamp | Resolved::Str => {}
                }
            }
            go_string_node(&node.value)
        }
    }
}

/// go-yaml's float marshaling: `strconv.FormatFloat(f, 'g', -1, 64)`, and
/// `.inf`, `-.inf`, `.nan`.
fn go_format_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        };
    }
    krmgraph_yaml::gov2::format_float(f)
}

fn field<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    if node.kind != Kind::Mapping {
        return None;
    }
    node.content
        .chunks(2)
        .find(|p| p.len() == 2 && p[0].value == key)
        .map(|p| &p[1])
}

fn text(node: &Node, key: &str) -> String {
    field(node, key)
        .filter(|n| n.kind == Kind::Scalar)
        .map(|n| n.value.to_string())
        .unwrap_or_default()
}

/// The lines of a `Results:` or `Stderr:` block, truncated as kpt does:
/// at most 4 lines, then `...(N line(s) truncated, ...)`.
pub fn truncate_block(lines: Vec<String>, truncate: bool) -> Vec<String> {
    const MAX: usize = 4;
    if !truncate || lines.len() <= MAX {
        return lines;
    }
    let dropped = lines.len() - MAX;
    let mut kept: Vec<String> = lines.into_iter().take(MAX).collect();
    kept.push(format!(
        "    ...({dropped} line(s) truncated, use '--truncate-output=false' to disable)"
    ));
    kept
}

/// kpt's `Results:` block for a function's results (empty when none).
pub fn results_block(results: &[ResultItem], truncate: bool) -> String {
    if results.is_empty() {
        return String::new();
    }
    let lines = results
        .iter()
        .map(|r| format!("    {}", r.line().replace('\n', " ")))
        .collect();
    let mut out = String::from("  Results:\n");
    for line in truncate_block(lines, truncate) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// kpt's `Stderr:` block (empty when stderr is empty): each line `%q`.
pub fn stderr_block(stderr: &str, truncate: bool) -> String {
    if stderr.is_empty() {
        return String::new();
    }
    let lines = stderr
        .split('\n')
        .map(|l| format!("    {}", krmgraph_util::gostr::quote(l)))
        .collect();
    let mut out = String::from("  Stderr:\n");
    for line in truncate_block(lines, truncate) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn int_node(v: i64) -> Node {
    let mut n = Node::string(v.to_string());
    n.tag = krmgraph_yaml::node::tag::INT.into();
    n
}

fn push(map: &mut Node, key: &str, value: Node) {
    map.content.push(Node::string(key));
    map.content.push(value);
}

fn push_str(map: &mut Node, key: &str, value: &str) {
    if !value.is_empty() {
        push(map, key, go_string_node(value));
    }
}

fn result_item_node(item: &ResultItem) -> Node {
    let mut m = Node::mapping();
    push_str(&mut m, "message", &item.message);
    push_str(&mut m, "severity", &item.severity);
    if let Some(r) = &item.resource_ref {
        let mut rm = Node::mapping();
        push_str(&mut rm, "apiVersion", &r.api_version);
        push_str(&mut rm, "kind", &r.kind);
        push_str(&mut rm, "name", &r.name);
        push_str(&mut rm, "namespace", &r.namespace);
        push(&mut m, "resourceRef", rm);
    }
    if let Some(f) = &item.field {
        let mut fm = Node::mapping();
        push_str(&mut fm, "path", &f.path);
        if let Some(v) = &f.current_value {
            push(&mut fm, "currentValue", v.clone());
        }
        if let Some(v) = &f.proposed_value {
            push(&mut fm, "proposedValue", v.clone());
        }
        push(&mut m, "field", fm);
    }
    if let Some(f) = &item.file {
        let mut fm = Node::mapping();
        push_str(&mut fm, "path", &f.path);
        if f.index != 0 {
            push(&mut fm, "index", int_node(f.index));
        }
        push(&mut m, "file", fm);
    }
    if !item.tags.is_empty() {
        let mut tags = item.tags.clone();
        // go-yaml sorts map keys when it marshals a Go map.
        tags.sort();
        let mut tm = Node::mapping();
        for (k, v) in &tags {
            push(&mut tm, k, go_string_node(v));
        }
        push(&mut m, "tags", tm);
    }
    m
}

/// The `FunctionResultList` kpt writes to `results.yaml`, as a node tree
/// (encode it with wide sequence indentation).
pub fn result_list_node(items: &[FnResult], exit_code: i32) -> Node {
    let mut root = Node::mapping();
    push(&mut root, "apiVersion", Node::string("kpt.dev/v1"));
    push(&mut root, "kind", Node::string("FunctionResultList"));
    let mut meta = Node::mapping();
    push(&mut meta, "name", Node::string("fnresults"));
    push(&mut root, "metadata", meta);
    push(&mut root, "exitCode", int_node(exit_code as i64));
    let mut list = Node::sequence();
    for item in items {
        let mut m = Node::mapping();
        push_str(&mut m, "image", &item.image);
        push_str(&mut m, "exec", &item.exec);
        push_str(&mut m, "stderr", &item.stderr);
        push(&mut m, "exitCode", int_node(item.exit_code as i64));
        if !item.results.is_empty() {
            let mut rs = Node::sequence();
            rs.content = item.results.iter().map(result_item_node).collect();
            push(&mut m, "results", rs);
        }
        list.content.push(m);
    }
    // `items` is `omitempty` in kpt's FunctionResultList.
    if !list.content.is_empty() {
        push(&mut root, "items", list);
    }
    root
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_lines_read_like_kpt() {
        let r = ResultItem {
            message: "msg from fn".into(),
            severity: "error".into(),
            resource_ref: Some(ResourceRef {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                name: "x".into(),
                namespace: "ns".into(),
            }),
            field: Some(Field {
                path: "data.k".into(),
                ..Field::default()
            }),
            ..ResultItem::default()
        };
        assert_eq!(r.line(), "[error] v1/ConfigMap/ns/x data.k: msg from fn");
        let bare = ResultItem {
            message: "m".into(),
            ..ResultItem::default()
        };
        assert_eq!(bare.line(), "[info]: m");
    }

    #[test]
    fn floats_like_go_yaml() {
        for (f, want) in [
            (1.0, "1"),
            (1e3, "1000"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5, "1.5"),
        ] {
            assert_eq!(go_format_float(f), want, "{f}");
        }
    }

    #[test]
    fn blocks_truncate_after_four_lines() {
        let block = stderr_block("a\nb\nc\nd\ne\nf", true);
        assert_eq!(
            block,
            "  Stderr:\n    \"a\"\n    \"b\"\n    \"c\"\n    \"d\"\n    ...(2 line(s) truncated, use '--truncate-output=false' to disable)\n"
        );
        assert_eq!(
            stderr_block("a warning\n", true),
            "  Stderr:\n    \"a warning\"\n    \"\"\n"
        );
    }
}
