//! `gcr.io/kpt-fn/apply-replacements`: kustomize's replacement filter
//! (`api/filters/replacement`) driven by a `fn.kpt.dev/v1alpha1
//! ApplyReplacements` config holding kustomize `replacements`
//! (kyaml framework; no results on success).
//!
//! Two generations of the filter:
//! - v0.1 (kustomize api ~v0.10): targets are selected by exact
//!   `ResId.IsSelectedBy` (empty selector fields match anything; namespaces
//!   compared as effective namespaces, `""` being `default`), target fields
//!   are looked up with `Lookup`/`LookupCreate`, a missing field is skipped
//!   silently, and the whole target node is replaced by the value
//!   (`SetYNode`).
//! - latest: selector fields are anchored regular expressions
//!   (`NewTargetSelectorRegex`), target fields are found with kyaml's
//!   `PathMatcher` (`*`, `[name=regex]`, indexes), a missing field is an
//!   error (`unable to find field "<path>" in replacement target`), and a
//!   scalar target only takes the value, keeping its tag and style. (The
//!   newest kustomize also descends into JSON/YAML held in a scalar; that is
//!   not implemented.)

use super::apply_setters::report;
use super::framework::{self, Outcome, ResourceList};
use super::Builtin;
use crate::exec::ProcessOutput;
use krmgraph_kyaml::{node_to_string, rnode};
use krmgraph_yaml::{Kind, Node};

/// The apply-replacements images krmgraph runs in process.
pub static BUILTINS: &[Builtin] = &[
    Builtin {
        name: "apply-replacements",
        registry: "gcr.io/kpt-fn/",
        tags: &["v0.1", "v0.1.0", "v0.1.1"],
        version: "1",
        config_kinds: &["ApplyReplacements"],
        run: run_v0_1,
        direct: None,
        per_item: None,
    },
    Builtin {
        name: "apply-replacements",
        registry: "gcr.io/kpt-fn/",
        tags: &["unstable", "latest"],
        version: "1",
        config_kinds: &["ApplyReplacements"],
        run,
        direct: None,
        per_item: None,
    },
];

const CONFIG_KIND: &str = "ApplyReplacements";
const CONFIG_API_VERSION: &str = "fn.kpt.dev/v1alpha1";
const DEFAULT_FIELD_PATH: &str = "metadata.name";

/// Runs the latest version.
pub fn run(input: &[u8]) -> ProcessOutput {
    run_version(input, Generation::Latest)
}

/// Runs v0.1.
pub fn run_v0_1(input: &[u8]) -> ProcessOutput {
    run_version(input, Generation::V0_1)
}

/// Which replacement filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Generation {
    /// kustomize api ~v0.10 (apply-replacements v0.1).
    V0_1,
    /// Current kustomize.
    Latest,
}

fn run_version(input: &[u8], generation: Generation) -> ProcessOutput {
    framework::run_bytes(input, framework::failure, |list| run_list(list, generation))
}

fn run_list(mut list: ResourceList, generation: Generation) -> Outcome {
    let replacements = match decode(list.function_config.as_ref()) {
        Ok(r) => r,
        Err(e) => {
            return report::kyaml_failure(list, &format!("failed to configure function: {e}"))
        }
    };
    match filter(&replacements, &mut list.items, generation) {
        Ok(()) => report::kyaml_success(list, &[]),
        Err(e) => report::kyaml_failure(list, &format!("failed to transform resources: {e}")),
    }
}

// ---------------------------------------------------------------------------
// Types (kustomize `api/types/replacement.go`, `selector.go`, kyaml `resid`).

/// `resid.ResId` (with its `Gvk` inline).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResId {
    /// `group`.
    pub group: String,
    /// `version`.
    pub version: String,
    /// `kind`.
    pub kind: String,
    /// `name`.
    pub name: String,
    /// `namespace`.
    pub namespace: String,
}

impl ResId {
    /// The id of a resource (`MakeResIds` without previous names).
    pub fn of(node: &Node) -> ResId {
        let meta = rnode::get_meta(node).unwrap_or_default();
        let (group, version) = match meta.api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), meta.api_version),
        };
        ResId {
            group,
            version,
            kind: meta.kind,
            name: meta.name,
            namespace: meta.namespace,
        }
    }

    fn is_empty(&self) -> bool {
        *self == ResId::default()
    }

    /// `EffectiveNamespace` (the ids here are never cluster scoped: kustomize
    /// builds them from a `Gvk` literal).
    fn effective_namespace(&self) -> &str {
        if self.namespace.is_empty() {
            "default"
        } else {
            &self.namespace
        }
    }

    /// `IsSelectedBy`.
    pub fn is_selected_by(&self, selector: &ResId) -> bool {
        (selector.name.is_empty() || selector.name == self.name)
            && (selector.namespace.is_empty()
                || selector.effective_namespace() == self.effective_namespace())
            && (selector.group.is_empty() || selector.group == self.group)
            && (selector.version.is_empty() || selector.version == self.version)
            && (selector.kind.is_empty() || selector.kind == self.kind)
    }
}

impl std::fmt::Display for ResId {
    /// `ResId.String()`: `Kind.version.group/name.namespace` with
    /// placeholders for empty parts.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let or = |s: &str, d: &'static str| {
            if s.is_empty() {
                d.to_string()
            } else {
                s.to_string()
            }
        };
        write!(
            f,
            "{}.{}.{}/{}.{}",
            or(&self.kind, "[noKind]"),
            or(&self.version, "[noVer]"),
            or(&self.group, "[noGrp]"),
            or(&self.name, "[noName]"),
            or(&self.namespace, "[noNs]")
        )
    }
}

/// `FieldOptions`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldOptions {
    /// `delimiter`.
    pub delimiter: String,
    /// `index`.
    pub index: i64,
    /// `create`.
    pub create: bool,
}

impl std::fmt::Display for FieldOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.delimiter.is_empty() && !self.create {
            return Ok(());
        }
        write!(
            f,
            "{}({}), create={}",
            self.delimiter, self.index, self.create
        )
    }
}

/// `SourceSelector`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceSelector {
    /// The resource.
    pub id: ResId,
    /// `fieldPath`.
    pub field_path: String,
    /// `options`.
    pub options: Option<FieldOptions>,
}

impl std::fmt::Display for SourceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.id)?;
        if !self.field_path.is_empty() {
            write!(f, ":{}", self.field_path)?;
        }
        if let Some(o) = &self.options {
            let o = o.to_string();
            if !o.is_empty() {
                write!(f, ":{o}")?;
            }
        }
        Ok(())
    }
}

/// `Selector`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    /// The resource id fields.
    pub id: ResId,
    /// `annotationSelector`.
    pub annotation_selector: String,
    /// `labelSelector`.
    pub label_selector: String,
}

/// `TargetSelector`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetSelector {
    /// `select`.
    pub select: Option<Selector>,
    /// `reject`.
    pub reject: Vec<Selector>,
    /// `fieldPaths`.
    pub field_paths: Vec<String>,
    /// `options`.
    pub options: Option<FieldOptions>,
}

/// `Replacement`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Replacement {
    /// `source`.
    pub source: Option<SourceSelector>,
    /// `sourceValue`.
    pub source_value: Option<String>,
    /// `targets` (`None` when absent).
    pub targets: Option<Vec<TargetSelector>>,
}

// ---------------------------------------------------------------------------
// Config.

fn text(node: &Node, name: &str) -> String {
    rnode::get_value(rnode::field_value(node, name)).to_string()
}

fn res_id(node: &Node) -> ResId {
    ResId {
        group: text(node, "group"),
        version: text(node, "version"),
        kind: text(node, "kind"),
        name: text(node, "name"),
        namespace: text(node, "namespace"),
    }
}

fn options(node: &Node) -> Result<Option<FieldOptions>, String> {
    let Some(o) = rnode::field_value(node, "options").filter(|o| o.kind == Kind::Mapping) else {
        return Ok(None);
    };
    let index = match rnode::field_value(o, "index") {
        Some(i) => rnode::go_atoi(&i.value).ok_or_else(|| {
            format!(
                "yaml: unmarshal errors:\n  line {}: cannot unmarshal {} `{}` into int",
                i.line, i.tag, i.value
            )
        })?,
        None => 0,
    };
    Ok(Some(FieldOptions {
        delimiter: text(o, "delimiter"),
        index,
        create: text(o, "create") == "true",
    }))
}

fn selector(node: &Node) -> Selector {
    Selector {
        id: res_id(node),
        annotation_selector: text(node, "annotationSelector"),
        label_selector: text(node, "labelSelector"),
    }
}

fn items(node: Option<&Node>) -> &[Node] {
    match node {
        Some(n) if n.kind == Kind::Sequence => &n.content,
        _ => &[],
    }
}

/// Reads the `ApplyReplacements` config.
pub fn decode(config: Option<&Node>) -> Result<Vec<Replacement>, String> {
    let meta = config
        .and_then(|c| rnode::get_meta(c).ok())
        .unwrap_or_default();
    if meta.kind != CONFIG_KIND || meta.api_version != CONFIG_API_VERSION {
        return Err(format!(
            "received functionConfig of kind {} and apiVersion {}, only functionConfig of kind {CONFIG_KIND} and apiVersion {CONFIG_API_VERSION} is supported",
            meta.kind, meta.api_version
        ));
    }
    let config = rnode::y_node(config.expect("a config"));
    let mut out = Vec::new();
    for r in items(rnode::field_value(config, "replacements")) {
        let source = match rnode::field_value(r, "source").filter(|s| s.kind == Kind::Mapping) {
            Some(s) => Some(SourceSelector {
                id: res_id(s),
                field_path: text(s, "fieldPath"),
                options: options(s)?,
            }),
            None => None,
        };
        let source_value = rnode::field_value(r, "sourceValue")
            .filter(|v| v.kind == Kind::Scalar && v.tag != krmgraph_yaml::node::tag::NULL)
            .map(|v| v.value.to_string());
        let targets = match rnode::field_value(r, "targets") {
            Some(t) if t.kind == Kind::Sequence => {
                let mut targets = Vec::new();
                for t in &t.content {
                    targets.push(TargetSelector {
                        select: rnode::field_value(t, "select")
                            .filter(|s| s.kind == Kind::Mapping)
                            .map(selector),
                        reject: items(rnode::field_value(t, "reject"))
                            .iter()
                            .map(selector)
                            .collect(),
                        field_paths: items(rnode::field_value(t, "fieldPaths"))
                            .iter()
                            .map(|p| p.value.to_string())
                            .collect(),
                        options: options(t)?,
                    });
                }
                Some(targets)
            }
            _ => None,
        };
        out.push(Replacement {
            source,
            source_value,
            targets,
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// Paths (kustomize `kyaml/utils/pathsplitter.go`).

/// `PathSplitter`: splits at `delimiter`, `\` escaping it; a leading
/// delimiter is dropped.
pub fn path_splitter(path: &str, delimiter: &str) -> Vec<String> {
    let mut parts: Vec<&str> = path.split(delimiter).collect();
    if parts.len() > 1 && parts[0].is_empty() {
        parts.remove(0);
    }
    let mut out: Vec<String> = vec![parts[0].to_string()];
    for part in &parts[1..] {
        let last = out.last_mut().expect("one part");
        if let Some(stripped) = last.strip_suffix('\\') {
            *last = format!("{stripped}{delimiter}{part}");
        } else {
            out.push(part.to_string());
        }
    }
    out
}

/// `SmarterPathSplitter`: [`path_splitter`], keeping `[...]` parts whole;
/// `[a.b]` becomes the key `a.b`, `[name=x.y]` stays a list matcher.
pub fn smarter_path_splitter(path: &str, delimiter: &str) -> Vec<String> {
    let split = path_splitter(path, delimiter);
    let mut out = Vec::new();
    let mut i = 0;
    while i < split.len() {
        let elem = &split[i];
        if elem.starts_with('[') && !elem.ends_with(']') {
            let mut bracketed = vec![elem.clone()];
            while i < split.len() - 1 {
                i += 1;
                bracketed.push(split[i].clone());
                if split[i].ends_with(']') {
                    break;
                }
            }
            let joined = bracketed.join(delimiter);
            if joined.contains('=') {
                out.push(joined);
            } else {
                out.push(joined.trim_matches(|c| c == '[' || c == ']').to_string());
            }
        } else {
            out.push(elem.clone());
        }
        i += 1;
    }
    out
}

// ---------------------------------------------------------------------------
// The filter.

/// `Filter.Filter`: applies every replacement in order.
pub fn filter(
    replacements: &[Replacement],
    nodes: &mut [Node],
    generation: Generation,
) -> Result<(), String> {
    for r in replacements {
        let Some(targets) = r
            .targets
            .as_ref()
            .filter(|_| r.source.is_some() || r.source_value.is_some())
        else {
            return Err("replacements must specify a source and at least one target".into());
        };
        let value = get_replacement(nodes, r)?;
        apply_replacement(nodes, &value, targets, generation)?;
    }
    Ok(())
}

fn get_replacement(nodes: &[Node], r: &Replacement) -> Result<Node, String> {
    if r.source.is_some() && r.source_value.is_some() {
        return Err("value and resource selectors are mutually exclusive".into());
    }
    if let Some(v) = &r.source_value {
        return Ok(rnode::new_scalar(v.clone()));
    }
    let source = r.source.as_ref().expect("a source");
    let node = select_source_node(nodes, source)?;
    let field_path = if source.field_path.is_empty() {
        DEFAULT_FIELD_PATH
    } else {
        &source.field_path
    };
    let parts = smarter_path_splitter(field_path, ".");
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    let found = rnode::lookup(node, &parts)
        .map_err(|e| format!("error looking up replacement source: {e}"))?;
    if rnode::is_nil_or_empty(found) {
        return Err(format!(
            "fieldPath `{field_path}` is missing for replacement source {}",
            source.id
        ));
    }
    let mut value = found.expect("a value").clone();
    if let Some(o) = source.options.as_ref().filter(|o| !o.delimiter.is_empty()) {
        if value.kind != Kind::Scalar {
            return Err("delimiter option can only be used with scalar nodes".into());
        }
        let parts: Vec<&str> = value.value.split(o.delimiter.as_str()).collect();
        let Some(part) = usize::try_from(o.index).ok().and_then(|i| parts.get(i)) else {
            return Err(format!(
                "options.index {} is out of bounds for value {}",
                o.index, value.value
            ));
        };
        value.value = (*part).into();
    }
    Ok(value)
}

fn select_source_node<'a>(
    nodes: &'a [Node],
    selector: &SourceSelector,
) -> Result<&'a Node, String> {
    let mut found = None;
    for node in nodes {
        if ResId::of(node).is_selected_by(&selector.id) {
            if found.is_some() {
                return Err(format!("multiple matches for selector {selector}"));
            }
            found = Some(node);
        }
    }
    found.ok_or_else(|| format!("nothing selected by {selector}"))
}

fn apply_replacement(
    nodes: &mut [Node],
    value: &Node,
    targets: &[TargetSelector],
    generation: Generation,
) -> Result<(), String> {
    for target in targets {
        let Some(select) = &target.select else {
            return Err("target must specify resources to select".into());
        };
        let field_paths = if target.field_paths.is_empty() {
            vec![DEFAULT_FIELD_PATH.to_string()]
        } else {
            target.field_paths.clone()
        };
        let regexes = match generation {
            Generation::Latest => Some(
                TargetRegex::new(select, &target.reject)
                    .map_err(|e| format!("error creating target selector: {e}"))?,
            ),
            Generation::V0_1 => None,
        };
        for node in nodes.iter_mut() {
            let id = ResId::of(node);
            if !select_by_anno_and_label(node, target)? {
                continue;
            }
            let selected = match &regexes {
                Some(re) => !re.rejects(&id) && re.selects(&id),
                None => {
                    id.is_selected_by(&select.id)
                        && !target
                            .reject
                            .iter()
                            .any(|r| !r.id.is_empty() && id.is_selected_by(&r.id))
                }
            };
            if !selected {
                continue;
            }
            match generation {
                Generation::Latest => copy_value_to_target(node, value, target, &field_paths)?,
                Generation::V0_1 => apply_to_node_v0_1(node, value, target, &field_paths)?,
            }
        }
    }
    Ok(())
}

fn select_by_anno_and_label(node: &Node, target: &TargetSelector) -> Result<bool, String> {
    let select = target.select.as_ref().expect("a select");
    if !matches_anno_and_label(node, select)? {
        return Ok(false);
    }
    for reject in &target.reject {
        if reject.annotation_selector.is_empty() && reject.label_selector.is_empty() {
            continue;
        }
        if matches_anno_and_label(node, reject)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn matches_anno_and_label(node: &Node, selector: &Selector) -> Result<bool, String> {
    let meta = rnode::get_meta(node).unwrap_or_default();
    Ok(
        label_selector::matches(&selector.annotation_selector, &meta.annotations)?
            && label_selector::matches(&selector.label_selector, &meta.labels)?,
    )
}

/// `TargetSelectorRegex`.
struct TargetRegex {
    select: SelectorRegex,
    reject: Vec<(bool, SelectorRegex)>,
}

struct SelectorRegex([Option<regex::Regex>; 5]);

impl SelectorRegex {
    fn new(id: &ResId) -> Result<SelectorRegex, regex::Error> {
        let compile = |p: &str| -> Result<Option<regex::Regex>, regex::Error> {
            if p.is_empty() {
                return Ok(None);
            }
            regex::Regex::new(&format!("^(?:{p})$")).map(Some)
        };
        Ok(SelectorRegex([
            compile(&id.group)?,
            compile(&id.version)?,
            compile(&id.kind)?,
            compile(&id.name)?,
            compile(&id.namespace)?,
        ]))
    }

    fn matches(&self, id: &ResId) -> bool {
        let values = [&id.group, &id.version, &id.kind, &id.name, &id.namespace];
        self.0
            .iter()
            .zip(values)
            .all(|(re, v)| re.as_ref().is_none_or(|re| re.is_match(v)))
    }
}

impl TargetRegex {
    fn new(select: &Selector, reject: &[Selector]) -> Result<TargetRegex, regex::Error> {
        Ok(TargetRegex {
            select: SelectorRegex::new(&select.id)?,
            reject: reject
                .iter()
                .map(|r| Ok((r.id.is_empty(), SelectorRegex::new(&r.id)?)))
                .collect::<Result<_, regex::Error>>()?,
        })
    }

    fn selects(&self, id: &ResId) -> bool {
        self.select.matches(id)
    }

    fn rejects(&self, id: &ResId) -> bool {
        self.reject
            .iter()
            .any(|(empty, re)| !empty && re.matches(id))
    }
}

fn field_retrieval_error(field_path: &str, create: bool) -> String {
    if create {
        format!(
            "unable to find or create field {} in replacement target",
            krmgraph_util::gostr::quote(field_path)
        )
    } else {
        format!(
            "unable to find field {} in replacement target",
            krmgraph_util::gostr::quote(field_path)
        )
    }
}

/// Latest `copyValueToTarget`.
fn copy_value_to_target(
    node: &mut Node,
    value: &Node,
    target: &TargetSelector,
    field_paths: &[String],
) -> Result<(), String> {
    let create = target
        .options
        .as_ref()
        .filter(|o| o.create)
        .map(|_| value.kind);
    for fp in field_paths {
        let parts = smarter_path_splitter(fp, ".");
        let mut found = 0;
        let mut set_err = None;
        path_matcher(rnode::y_node_mut(node), &parts, create, &mut |t| {
            found += 1;
            if set_err.is_none() {
                if let Err(e) =
                    set_field_value(target.options.as_ref(), t, value, Generation::Latest)
                {
                    set_err = Some(e);
                }
            }
        })
        .map_err(|e| format!("{}: {e}", field_retrieval_error(fp, create.is_some())))?;
        if let Some(e) = set_err {
            return Err(e);
        }
        if found == 0 {
            return Err(field_retrieval_error(fp, create.is_some()));
        }
    }
    Ok(())
}

/// v0.1 `applyToNode`.
fn apply_to_node_v0_1(
    node: &mut Node,
    value: &Node,
    target: &TargetSelector,
    field_paths: &[String],
) -> Result<(), String> {
    let create = target.options.as_ref().is_some_and(|o| o.create);
    for fp in field_paths {
        let parts = smarter_path_splitter(fp, ".");
        let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
        let found = if create {
            rnode::lookup_create(node, value.kind, &parts)
        } else {
            rnode::lookup_mut(node, &parts)
        }
        .map_err(|e| e.to_string())?;
        if let Some(t) = found {
            set_field_value(target.options.as_ref(), t, value, Generation::V0_1)?;
        }
    }
    Ok(())
}

fn set_field_value(
    options: Option<&FieldOptions>,
    target: &mut Node,
    value: &Node,
    generation: Generation,
) -> Result<(), String> {
    let mut value = value.clone();
    if let Some(o) = options.filter(|o| !o.delimiter.is_empty()) {
        if target.kind != Kind::Scalar {
            return Err("delimiter option can only be used with scalar nodes".into());
        }
        let mut parts: Vec<String> = target
            .value
            .split(o.delimiter.as_str())
            .map(str::to_string)
            .collect();
        let v = rnode::get_value(Some(&value)).to_string();
        if o.index < 0 {
            parts.insert(0, v);
        } else if o.index as usize >= parts.len() {
            parts.push(v);
        } else {
            parts[o.index as usize] = v;
        }
        value.value = parts.join(&o.delimiter).into();
    }
    if generation == Generation::Latest && target.kind == Kind::Scalar {
        target.value = value.value;
    } else {
        *target = value;
    }
    Ok(())
}

/// kyaml's `PathMatcher` with `Create`: calls `f` on every node matching
/// `path`, creating missing parts when `create` is set.
fn path_matcher(
    node: &mut Node,
    path: &[String],
    create: Option<Kind>,
    f: &mut dyn FnMut(&mut Node),
) -> Result<(), String> {
    let Some((first, rest)) = path.split_first() else {
        f(node);
        return Ok(());
    };
    let next = rest.first().map_or("", String::as_str);
    if let Some(idx) = rnode::go_atoi(first).filter(|&i| i >= 0) {
        let idx = idx as usize;
        rnode::elements(node).map_err(|e| e.to_string())?;
        let len = rnode::y_node(node).content.len();
        if len == idx {
            if let Some(kind) = create {
                rnode::y_node_mut(node)
                    .content
                    .push(Node::new(part_kind(next, kind)));
            }
        }
        let len = rnode::y_node(node).content.len();
        if len < idx + 1 {
            return Err(format!(
                "index {idx} specified but only {len} elements found"
            ));
        }
        return path_matcher(&mut rnode::y_node_mut(node).content[idx], rest, create, f);
    }
    if rnode::is_list_index(first) {
        let (field, pattern) = rnode::split_index_name_value(first).map_err(|e| e.to_string())?;
        let re = regex::Regex::new(pattern).map_err(|e| e.to_string())?;
        let matched = |elem: &Node| -> bool {
            let target = if field.is_empty() {
                Some(elem)
            } else {
                rnode::field_value(elem, field)
            };
            target
                .and_then(|t| node_to_string(t).ok())
                .is_some_and(|s| re.is_match(s.trim()))
        };
        rnode::elements(node).map_err(|e| e.to_string())?;
        let any = rnode::y_node(node).content.iter().any(&matched);
        if !any {
            let Some(_) = create else {
                return Ok(());
            };
            let value = rnode::new_scalar(pattern);
            let elem = if field.is_empty() {
                value
            } else {
                let mut m = Node::new(Kind::Mapping);
                m.content = vec![
                    Node {
                        kind: Kind::Scalar,
                        value: field.into(),
                        ..Node::default()
                    },
                    value,
                ];
                m
            };
            rnode::y_node_mut(node).content.push(elem);
        }
        for elem in &mut rnode::y_node_mut(node).content {
            if !matched(elem) {
                continue;
            }
            if field.is_empty() {
                f(elem);
            } else {
                path_matcher(elem, rest, create, f)?;
            }
        }
        return Ok(());
    }
    if first == "*" {
        rnode::elements(node).map_err(|e| e.to_string())?;
        for elem in &mut rnode::y_node_mut(node).content {
            path_matcher(elem, rest, create, f)?;
        }
        return Ok(());
    }
    let exists =
        rnode::y_node(node).kind == Kind::Mapping && rnode::field_value(node, first).is_some();
    if !exists {
        let Some(kind) = create else {
            return Ok(());
        };
        rnode::set_field(node, first, Node::new(part_kind(next, kind)))
            .map_err(|e| e.to_string())?;
    }
    let Some(child) = rnode::field_value_mut(node, first) else {
        return Ok(());
    };
    path_matcher(child, rest, create, f)
}

/// `getPathPartKind`.
fn part_kind(next: &str, default: Kind) -> Kind {
    if rnode::is_list_index(next) || rnode::go_atoi(next).is_some_and(|i| i >= 0) {
        Kind::Sequence
    } else if next.is_empty() {
        default
    } else {
        Kind::Mapping
    }
}

pub mod label_selector;

#[cfg(test)]
mod tests;
