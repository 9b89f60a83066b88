//! kustomize's field specs and the filters that walk them
//! (`api/filters/fieldspec` and `fsslice`, api v0.8): a [`FieldSpec`]
//! names the resources it applies to (group, version, kind; empty matches
//! any) and a `/`-separated path to a field. [`apply`] follows the path,
//! going through every item of a list it meets on the way, creating the
//! missing mappings when the spec says `create`, and calls a setter on the
//! field at the end.

use compact_str::CompactString;

use super::error::{FieldError, RunError};
use krmgraph_kyaml::rnode::{self, FieldSetter};
use krmgraph_yaml::node::tag;
use krmgraph_yaml::{Kind, Node};

/// One kustomize `FieldSpec`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSpec {
    /// API group; empty matches any.
    pub group: String,
    /// API version; empty matches any.
    pub version: String,
    /// Kind; empty matches any.
    pub kind: String,
    /// `/`-separated path (`\/` for a slash inside a name, `x[]` to say
    /// that `x` is a list).
    pub path: String,
    /// Whether the missing fields along the path are created.
    pub create: bool,
    /// `path` split into field names, once: every item walks it.
    parts: Vec<String>,
}

impl FieldSpec {
    /// A spec for `path` on kinds matching `group`/`version`/`kind`.
    pub fn new(group: &str, version: &str, kind: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            path: path.into(),
            create,
            parts: split_path(path),
        }
    }

    /// Reads a spec from a config's `fieldSpecs` item.
    pub fn decode(node: &Node) -> FieldSpec {
        let text = |name: &str| rnode::get_value(rnode::field_value(node, name)).to_string();
        let path = text("path");
        FieldSpec {
            group: text("group"),
            version: text("version"),
            kind: text("kind"),
            parts: split_path(&path),
            path,
            create: is_true(&text("create")),
        }
    }

    /// `isMatchGVK`: whether the spec applies to a resource of this type.
    #[cfg(test)]
    pub fn matches(&self, api_version: &str, kind: &str) -> bool {
        self.matches_type(&TypeMeta::new(api_version, kind))
    }

    /// `isMatchGVK` of a type split once (every spec of a config
    /// is matched against every item).
    fn matches_type(&self, t: &TypeMeta) -> bool {
        (self.kind.is_empty() || self.kind == t.kind)
            && (self.group.is_empty() || self.group == t.group)
            && (self.version.is_empty() || self.version == t.version)
    }
}

/// A resource's type as field specs match it: `apiVersion` split into
/// group and version.
struct TypeMeta {
    group: CompactString,
    version: CompactString,
    kind: CompactString,
}

impl TypeMeta {
    fn new(api_version: &str, kind: &str) -> TypeMeta {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        TypeMeta {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    fn of(item: &Node) -> TypeMeta {
        let (api_version, kind) = rnode::type_meta(rnode::y_node(item));
        TypeMeta::new(api_version, kind)
    }
}

/// go-yaml v3 decoding a scalar into a `bool` field: YAML 1.2 `true`, and
/// for compatibility YAML 1.1's `yes`, `on`, `y`.
fn is_true(value: &str) -> bool {
    matches!(
        value,
        "true" | "True" | "TRUE" | "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON"
    )
}

/// The specs of a config's `fieldSpecs` list (none when absent).
pub fn decode_list(node: Option<&Node>) -> Vec<FieldSpec> {
    node.map(rnode::y_node)
        .filter(|n| n.kind == Kind::Sequence)
        .map(|n| n.content.iter().map(FieldSpec::decode).collect())
        .unwrap_or_default()
}

/// What to create at the end of the path when it is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Create {
    /// A scalar (a namespace).
    Scalar,
    /// A mapping (labels, annotations).
    Mapping,
}

impl Create {
    fn kind(self) -> Kind {
        match self {
            Create::Scalar => Kind::Scalar,
            Create::Mapping => Kind::Mapping,
        }
    }
}

/// How the field at the end of a path is set.
pub type Setter<'a> = &'a dyn Fn(&mut Node) -> Result<(), FieldError>;

/// `SetScalar(value)`: replaces the scalar, keeping its style.
pub fn set_scalar(value: &str) -> impl Fn(&mut Node) -> Result<(), FieldError> + '_ {
    move |node| {
        FieldSetter {
            value: Some(rnode::new_scalar(value)),
            ..FieldSetter::default()
        }
        .filter(node)
        .map(|_| ())
        .map_err(FieldError::Set)
    }
}

/// `SetEntry(key, value, !!str)`: sets one entry of a mapping.
pub fn set_entry<'a>(
    key: &'a str,
    value: &'a str,
) -> impl Fn(&mut Node) -> Result<(), FieldError> + 'a {
    move |node| {
        FieldSetter::new(key, Node::string(value))
            .filter(node)
            .map(|_| ())
            .map_err(FieldError::Set)
    }
}

/// `fsslice.Filter`: applies `set` through every spec that matches the
/// resource `item`.
pub fn apply(
    specs: &[FieldSpec],
    item: &mut Node,
    create: Create,
    set: Setter,
) -> Result<(), RunError> {
    // Read again after each spec that applies, which could have changed it.
    let mut type_meta = TypeMeta::of(item);
    for spec in specs {
        if !spec.matches_type(&type_meta) {
            continue;
        }
        let walk = Walk { spec, create, set };
        if let Err(cause) = walk.filter(rnode::y_node_mut(item), &spec.parts) {
            return Err(RunError::Field {
                path: spec.path.clone(),
                object: krmgraph_kyaml::node_to_string(item).unwrap_or_default(),
                cause,
            });
        }
        type_meta = TypeMeta::of(item);
    }
    Ok(())
}

/// `splitPath`: splits on `/`, except where the slash is escaped.
fn split_path(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for piece in path.split('/') {
        match parts.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('/');
                last.push_str(piece);
            }
            _ => parts.push(piece.to_string()),
        }
    }
    parts
}

/// One spec being followed (`fieldspec.Filter`).
struct Walk<'a> {
    spec: &'a FieldSpec,
    create: Create,
    set: Setter<'a>,
}

impl Walk<'_> {
    fn filter(&self, node: &mut Node, path: &[String]) -> Result<(), FieldError> {
        let Some((first, rest)) = path.split_first() else {
            return (self.set)(node);
        };
        if node.tag == tag::NULL {
            return Ok(());
        }
        match node.kind {
            // The path has no part for list items: every item follows it.
            Kind::Sequence => {
                for item in &mut node.content {
                    self.filter(item, path)
                        .map_err(|cause| FieldError::Traversal {
                            path: path.join(" "),
                            cause: Box::new(cause),
                        })?;
                }
                Ok(())
            }
            Kind::Mapping => self.field(node, first, rest),
            // kustomize follows aliases; the nodes kpt hands over have none
            // that a field spec could reach usefully, so they are left alone.
            Kind::Alias => Ok(()),
            _ => Err(FieldError::NotACollection),
        }
    }

    /// `handleMap`: finds (or creates) the field named by `first`.
    fn field(&self, node: &mut Node, first: &str, rest: &[String]) -> Result<(), FieldError> {
        let (name, is_seq) = match first.strip_suffix("[]") {
            Some(n) => (n, true),
            None => (first, false),
        };
        if name.is_empty() {
            return Err(FieldError::EmptyFieldName);
        }
        // The kind (and tag) a missing or null field turns into; `None`
        // when the spec does not create.
        let create = if !self.spec.create || is_seq {
            None
        } else if rest.is_empty() {
            Some((self.create.kind(), self.create_tag()))
        } else {
            Some((Kind::Mapping, tag::MAP))
        };
        let index = match (rnode::key_index(node, name), create) {
            (Some(i), _) => i + 1,
            (None, Some((kind, _))) => {
                node.content.push(Node::string(name));
                node.content.push(rnode::new_node(kind));
                node.content.len() - 1
            }
            (None, None) => return Ok(()),
        };
        let value = &mut node.content[index];
        // A null value becomes the kind the spec would create (a list hint
        // from `x[]` only changes a null that is then skipped anyway).
        let null_kind = create.or(is_seq.then_some((Kind::Sequence, "")));
        if let (true, Some((kind, tag))) = (value.tag == tag::NULL, null_kind) {
            value.kind = kind;
            value.tag = tag.into();
        }
        self.filter(value, rest)
    }

    fn create_tag(&self) -> &'static str {
        match self.create {
            Create::Scalar => tag::STR,
            Create::Mapping => tag::MAP,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_paths_like_kustomize() {
        assert_eq!(
            split_path("spec/template/metadata"),
            ["spec", "template", "metadata"]
        );
        assert_eq!(
            split_path(r"metadata/annotations/a.b\/c"),
            ["metadata", "annotations", "a.b/c"]
        );
    }

    #[test]
    fn matches_group_version_kind() {
        let spec = FieldSpec::new("apps", "", "Deployment", "spec", false);
        assert!(spec.matches("apps/v1", "Deployment"));
        assert!(!spec.matches("v1", "Deployment"));
        assert!(!spec.matches("apps/v1", "StatefulSet"));
        let core = FieldSpec::new("", "v1", "Service", "spec", false);
        assert!(core.matches("v1", "Service"));
        assert!(!core.matches("apps/v2", "Service"));
    }
}
