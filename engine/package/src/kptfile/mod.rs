//! The Kptfile: loading, strict decoding and validation, with kpt's error
//! messages. A package is a directory with a `Kptfile`; its `pipeline` lists
//! the mutators and validators a render runs.
//!
//! Loading follows kpt v1.0.0-beta.56: first the document's `apiVersion` and
//! `kind` are checked (old `v1alpha1`/`v1alpha2` Kptfiles get migration
//! hints), then the document is decoded strictly ([`decode`], go-yaml's
//! `KnownFields(true)` messages), then the pipeline is validated
//! ([`validate`]). [`locate`] finds a pipeline function in the file again
//! for messages that point at it.

pub mod decode;
pub mod locate;
pub mod resolver;
pub mod schema;
pub mod validate;

use std::path::{Path, PathBuf};

use decode::Value;

use crate::{Hint, SourcePosition};

use krmgraph_yaml::decode::Decoder;
use krmgraph_yaml::node::{short_tag, tag};
use krmgraph_yaml::{Kind, Node};

/// The Kptfile's file name.
pub const KPTFILE_NAME: &str = "Kptfile";

/// A decoded Kptfile v1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kptfile {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.annotations`, in document order.
    pub annotations: Vec<(String, String)>,
    /// The package's pipeline (empty when the Kptfile has none).
    pub pipeline: Pipeline,
}

/// The mutators and validators of one package.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pipeline {
    /// Functions whose output replaces their input, in order.
    pub mutators: Vec<Function>,
    /// Functions that only check; their output is discarded.
    pub validators: Vec<Function>,
}

impl Pipeline {
    /// Whether the pipeline runs no function.
    pub fn is_empty(&self) -> bool {
        self.mutators.is_empty() && self.validators.is_empty()
    }
}

/// One pipeline entry (kpt's `v1.Function`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Function {
    /// Container image (`image:`), empty for exec functions.
    pub image: String,
    /// Command line of a local executable (`exec:`).
    pub exec: String,
    /// Package-relative path of the functionConfig file.
    pub config_path: String,
    /// Inline `configMap:` data, `None` when absent.
    pub config_map: Option<Vec<(String, String)>>,
    /// Informational name.
    pub name: String,
    /// Resources the function sees (any selector matches).
    pub selectors: Vec<Selector>,
    /// Resources the function does not see.
    pub exclusions: Vec<Selector>,
}

/// A resource selector: every non-empty field must match exactly.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Selector {
    /// `apiVersion` to match.
    pub api_version: String,
    /// `kind` to match.
    pub kind: String,
    /// `metadata.name` to match.
    pub name: String,
    /// `metadata.namespace` to match.
    pub namespace: String,
    /// Labels that must all be present with these values.
    pub labels: Vec<(String, String)>,
    /// Annotations that must all be present with these values.
    pub annotations: Vec<(String, String)>,
}

impl Selector {
    /// Whether the selector sets no field (kpt ignores empty exclusions).
    pub fn is_empty(&self) -> bool {
        self.api_version.is_empty()
            && self.kind.is_empty()
            && self.name.is_empty()
            && self.namespace.is_empty()
            && self.labels.is_empty()
            && self.annotations.is_empty()
    }
}

/// Why a Kptfile could not be loaded. The messages are kpt's.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum KptfileError {
    /// The package directory has no Kptfile.
    #[error("No Kptfile found at {}.", go_quote_path(.0))]
    NotFound(PathBuf),
    /// The Kptfile is not valid YAML or does not decode.
    #[error("Kptfile at {} can't be read.\n\nDetails:\n{details}", go_quote_path(.dir))]
    Unreadable {
        /// The package directory.
        dir: PathBuf,
        /// The YAML or decoding error.
        details: String,
        /// 0-based line and column of a YAML syntax error in the Kptfile.
        mark: Option<(usize, usize)>,
        /// krmgraph's account of each decoding error (where it is, the
        /// nearest known field), shown after kpt's text.
        hints: Vec<Hint>,
    },
    /// A `v1alpha1` or `v1alpha2` Kptfile.
    #[error("Kptfile at {} has an old version ({}) of the Kptfile schema.\n{}", go_quote_path(.dir), decode::go_quote(.version), old_version_hint(.version))]
    OldVersion {
        /// The package directory.
        dir: PathBuf,
        /// The old version.
        version: String,
    },
    /// Not a `kpt.dev/v1` `Kptfile`.
    #[error("Kptfile at {} has an unknown resource type ({}).", go_quote_path(.dir), decode::go_quote(.gvk))]
    UnknownType {
        /// The package directory.
        dir: PathBuf,
        /// Group, version and kind as Kubernetes prints them.
        gvk: String,
    },
    /// The pipeline breaks a rule of [`validate`].
    #[error("{0}")]
    Invalid(validate::ValidateError),
    /// A function catalog could not resolve or verify a function
    /// ([`resolver`]).
    #[error("Kptfile at {}: {message}", go_quote_path(.dir))]
    Catalog {
        /// The package directory.
        dir: PathBuf,
        /// The catalog's message.
        message: String,
    },
}

impl KptfileError {
    /// What krmgraph adds after kpt's text: one [`Hint`] per decoding
    /// error (none for a syntax error, which the caller shows from `mark`).
    pub fn hints(&self) -> &[Hint] {
        match self {
            KptfileError::Unreadable { hints, .. } => hints,
            _ => &[],
        }
    }
}

fn old_version_hint(version: &str) -> &'static str {
    if version == "v1alpha1" {
        "Please update the package to the latest format by following https://kpt.dev/installation/migration."
    } else {
        "Please run \"kpt fn eval <PKG_PATH> -i gcr.io/kpt-fn/fix:v0.2 --include-meta-resources\" to upgrade the package and retry."
    }
}

fn go_quote_path(path: &Path) -> String {
    decode::go_quote(&path.to_string_lossy())
}

/// Reads and validates the Kptfile of the package at `dir`.
pub fn load(dir: &Path) -> Result<Kptfile, KptfileError> {
    let path = dir.join(KPTFILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(KptfileError::NotFound(dir.to_path_buf()))
        }
        Err(e) => {
            return Err(KptfileError::Unreadable {
                dir: dir.to_path_buf(),
                details: e.to_string(),
                mark: None,
                hints: Vec::new(),
            })
        }
    };
    let mut kptfile = parse(dir, &bytes)?;
    resolver::resolve_all(dir, &mut kptfile).map_err(|message| KptfileError::Catalog {
        dir: dir.to_path_buf(),
        message,
    })?;
    let check = |config_path: &str| validate::check_function_config(dir, config_path);
    validate::validate(&kptfile, &check).map_err(KptfileError::Invalid)?;
    Ok(kptfile)
}

/// Decodes Kptfile bytes; `dir` only names the package in errors.
pub fn parse(dir: &Path, bytes: &[u8]) -> Result<Kptfile, KptfileError> {
    let unreadable = |details: String| KptfileError::Unreadable {
        dir: dir.to_path_buf(),
        details,
        mark: None,
        hints: Vec::new(),
    };
    let doc = match Decoder::new(bytes).next_document() {
        Ok(Some(doc)) => doc,
        Ok(None) => return Err(unreadable("EOF".to_string())),
        Err(e) => {
            return Err(KptfileError::Unreadable {
                dir: dir.to_path_buf(),
                details: e.to_string(),
                mark: Some(e.position_in(bytes)),
                hints: Vec::new(),
            })
        }
    };
    let root = doc.content.first().cloned().unwrap_or_default();
    check_version(dir, &root).map_err(|e| match e {
        VersionCheck::Missing => unreadable("missing Resource metadata".to_string()),
        VersionCheck::Error(e) => e,
    })?;
    let (value, errors) = decode::decode(&root, &schema::KPTFILE);
    if !errors.is_empty() {
        let lines: Vec<&str> = errors.iter().map(|e| e.text.as_str()).collect();
        let path = dir.join(KPTFILE_NAME);
        return Err(KptfileError::Unreadable {
            dir: dir.to_path_buf(),
            details: format!("yaml: unmarshal errors:\n  {}", lines.join("\n  ")),
            mark: None,
            hints: errors.iter().map(|e| schema_hint(e, &path)).collect(),
        });
    }
    Ok(from_value(&value))
}

/// krmgraph's account of a decoding error in the Kptfile at `path`.
fn schema_hint(error: &decode::SchemaError, path: &Path) -> Hint {
    Hint {
        message: error.message.clone(),
        position: (error.line > 0).then(|| SourcePosition {
            path: path.to_path_buf(),
            line: error.line - 1,
            column: error.column.saturating_sub(1),
        }),
        length: error.width,
        label: error.label.clone(),
        help: error.help.clone(),
    }
}

enum VersionCheck {
    Missing,
    Error(KptfileError),
}

/// kpt's `CheckKptfileVersion`: the GVK must be `kpt.dev/v1, Kind=Kptfile`.
fn check_version(dir: &Path, root: &Node) -> Result<(), VersionCheck> {
    if root.kind == Kind::Scalar && short_tag(&root.tag) == tag::NULL {
        return Ok(());
    }
    let field = |name: &str| scalar_field(root, name);
    let api_version = field("apiVersion");
    let kind = field("kind");
    if api_version.is_none() && kind.is_none() && !has_meta(root) {
        return Err(VersionCheck::Missing);
    }
    let api_version = api_version.unwrap_or_default();
    let kind = kind.unwrap_or_default();
    let (group, version) = match api_version.split('/').collect::<Vec<_>>()[..] {
        [v] => ("", v),
        [g, v] => (g, v),
        _ => {
            return Err(VersionCheck::Error(KptfileError::Unreadable {
                dir: dir.to_path_buf(),
                details: format!("unexpected GroupVersion string: {api_version}"),
                mark: None,
                hints: Vec::new(),
            }))
        }
    };
    if kind == KPTFILE_NAME && group == "kpt.dev" && version == "v1" {
        return Ok(());
    }
    if kind == KPTFILE_NAME
        && group == "kpt.dev"
        && (version == "v1alpha1" || version == "v1alpha2")
    {
        return Err(VersionCheck::Error(KptfileError::OldVersion {
            dir: dir.to_path_buf(),
            version: version.to_string(),
        }));
    }
    Err(VersionCheck::Error(KptfileError::UnknownType {
        dir: dir.to_path_buf(),
        gvk: format!("{group}/{version}, Kind={kind}"),
    }))
}

/// kyaml's `GetMeta` counts metadata as present when `metadata` has a
/// non-empty name, namespace, labels or annotations.
fn has_meta(root: &Node) -> bool {
    let Some(meta) = mapping_value(root, "metadata") else {
        return false;
    };
    ["name", "namespace", "labels", "annotations"]
        .iter()
        .any(|k| mapping_value(meta, k).is_some_and(|v| !is_nil_or_empty(v)))
}

fn mapping_value<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    if node.kind != Kind::Mapping {
        return None;
    }
    node.content
        .chunks(2)
        .find(|pair| pair.len() == 2 && pair[0].value == key)
        .map(|pair| &pair[1])
}

fn is_nil_or_empty(node: &Node) -> bool {
    match node.kind {
        Kind::Scalar => short_tag(&node.tag) == tag::NULL,
        Kind::Mapping | Kind::Sequence => node.content.is_empty(),
        _ => false,
    }
}

fn scalar_field(root: &Node, name: &str) -> Option<String> {
    mapping_value(root, name)
        .filter(|v| !is_nil_or_empty(v))
        .map(|v| v.value.to_string())
}

fn from_value(v: &Value) -> Kptfile {
    let meta = v.field("metadata");
    let pipeline = v.field("pipeline");
    Kptfile {
        name: meta.field("name").str(),
        annotations: str_map(meta.field("annotations")).unwrap_or_default(),
        pipeline: Pipeline {
            mutators: pipeline
                .field("mutators")
                .items()
                .iter()
                .map(function)
                .collect(),
            validators: pipeline
                .field("validators")
                .items()
                .iter()
                .map(function)
                .collect(),
        },
    }
}

fn function(v: &Value) -> Function {
    Function {
        image: v.field("image").str(),
        exec: v.field("exec").str(),
        config_path: v.field("configPath").str(),
        config_map: str_map(v.field("configMap")),
        name: v.field("name").str(),
        selectors: v.field("selectors").items().iter().map(selector).collect(),
        exclusions: v.field("exclude").items().iter().map(selector).collect(),
    }
}

fn selector(v: &Value) -> Selector {
    Selector {
        api_version: v.field("apiVersion").str(),
        kind: v.field("kind").str(),
        name: v.field("name").str(),
        namespace: v.field("namespace").str(),
        labels: str_map(v.field("labels")).unwrap_or_default(),
        annotations: str_map(v.field("annotations")).unwrap_or_default(),
    }
}

fn str_map(v: &Value) -> Option<Vec<(String, String)>> {
    match v {
        Value::StrMap(entries) => Some(entries.clone()),
        _ => None,
    }
}
