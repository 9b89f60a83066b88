//! Reading catalog files into [`Entry`]s: one per function version, in
//! document order (the order first-match-wins searches).
//!
//! Accepted shapes (docs/catalogs.md says why):
//! * `kind: Catalog` or `kind: KRMFunctionCatalog` with `spec.krmFunctions[]`;
//! * `kind: KRMFunctionDefinition` with the function as `spec`;
//! * all of `apiVersion: config.kubernetes.io/v1alpha1`;
//! * `runtime` inside each `versions[]` item or once at the function level
//!   (the KEP's early examples), the version's winning;
//! * the function's kind as `names.kind`, or `kind` directly (one KEP
//!   example);
//! * runtimes `container: {image, sha256, requireNetwork,
//!   requireStorageMount}` (kyaml's `network` too), `exec: {platforms:
//!   [{bin, os, arch, uri, sha256}]}` or `exec: {path, sha256}`, and
//!   krmgraph's `builtin: NAME`.

use std::path::{Path, PathBuf};

use krmgraph_yaml::{Kind, Node};

use crate::node::{entries, get, root, scalar};
use crate::{CatalogError, Container, Entry, Platform, Runtime};

/// The only apiVersion a catalog document may have.
pub const API_VERSION: &str = "config.kubernetes.io/v1alpha1";

/// Where something is, for errors.
struct At<'f> {
    file: &'f Path,
}

impl At<'_> {
    fn err(&self, node: &Node, message: impl Into<String>) -> CatalogError {
        CatalogError::At {
            file: self.file.to_path_buf(),
            line: node.line,
            column: node.column,
            message: message.into(),
        }
    }

    fn string(&self, parent: &Node, key: &str) -> Result<Option<String>, CatalogError> {
        match get(parent, key) {
            None => Ok(None),
            Some(n) => match scalar(n) {
                Some(s) => Ok(Some(s.to_string())),
                None => Err(self.err(n, format!("`{key}` must be a string"))),
            },
        }
    }

    fn required(&self, parent: &Node, key: &str, what: &str) -> Result<String, CatalogError> {
        match self.string(parent, key)? {
            Some(s) if !s.is_empty() => Ok(s),
            _ => Err(self.err(parent, format!("{what} has no `{key}`"))),
        }
    }

    fn boolean(&self, parent: &Node, key: &str) -> Result<bool, CatalogError> {
        match get(parent, key) {
            None => Ok(false),
            Some(n) => match scalar(n) {
                Some("true") => Ok(true),
                Some("false") => Ok(false),
                _ => Err(self.err(n, format!("`{key}` must be true or false"))),
            },
        }
    }
}

/// Every entry of the catalog file `file`, whose bytes are `bytes`.
pub fn parse_file(file: &Path, bytes: &[u8]) -> Result<Vec<Entry>, CatalogError> {
    let docs = krmgraph_yaml::parse_documents(bytes).map_err(|e| CatalogError::File {
        file: file.to_path_buf(),
        message: format!("not YAML: {e}"),
    })?;
    let at = At { file };
    let mut out = Vec::new();
    for doc in &docs {
        let doc = root(doc);
        if doc.kind == Kind::Scalar && doc.value.is_empty() {
            continue;
        }
        parse_document(&at, doc, &mut out)?;
    }
    Ok(out)
}

fn parse_document(at: &At, doc: &Node, out: &mut Vec<Entry>) -> Result<(), CatalogError> {
    let api_version = at.required(doc, "apiVersion", "the document")?;
    if api_version != API_VERSION {
        let node = get(doc, "apiVersion").unwrap_or(doc);
        return Err(at.err(
            node,
            format!("apiVersion {api_version:?} is not {API_VERSION:?}"),
        ));
    }
    let kind = at.required(doc, "kind", "the document")?;
    let spec = get(doc, "spec").ok_or_else(|| at.err(doc, "the document has no `spec`"))?;
    match kind.as_str() {
        "Catalog" | "KRMFunctionCatalog" => {
            let functions = get(spec, "krmFunctions")
                .filter(|n| n.kind == Kind::Sequence)
                .ok_or_else(|| at.err(spec, "`spec.krmFunctions` must be a list"))?;
            for function in &functions.content {
                parse_function(at, function, out)?;
            }
            Ok(())
        }
        "KRMFunctionDefinition" => parse_function(at, spec, out),
        other => {
            let node = get(doc, "kind").unwrap_or(doc);
            Err(at.err(
                node,
                format!(
                    "kind {other:?} is not Catalog, KRMFunctionCatalog or KRMFunctionDefinition"
                ),
            ))
        }
    }
}

fn parse_function(at: &At, f: &Node, out: &mut Vec<Entry>) -> Result<(), CatalogError> {
    if f.kind != Kind::Mapping {
        return Err(at.err(f, "a function must be a mapping"));
    }
    let group = at.string(f, "group")?.unwrap_or_default();
    let kind = match get(f, "names") {
        Some(names) => at.required(names, "kind", "`names`")?,
        None => at.required(f, "kind", "a function with no `names`")?,
    };
    let shared = get(f, "runtime")
        .map(|r| parse_runtime(at, r))
        .transpose()?;
    let versions = get(f, "versions")
        .filter(|n| n.kind == Kind::Sequence && !n.content.is_empty())
        .ok_or_else(|| at.err(f, format!("function {kind} has no `versions`")))?;
    for v in &versions.content {
        let name = at.required(v, "name", "a version")?;
        let runtime = match get(v, "runtime") {
            Some(r) => parse_runtime(at, r)?,
            None => shared
                .clone()
                .ok_or_else(|| at.err(v, format!("version {name} of {kind} has no `runtime`")))?,
        };
        let schema = get(v, "schema")
            .and_then(|s| get(s, "openAPIV3Schema"))
            .cloned();
        out.push(Entry {
            group: group.clone(),
            kind: kind.clone(),
            version: name,
            runtime,
            schema,
            file: at.file.to_path_buf(),
            line: v.line,
            column: v.column,
        });
    }
    Ok(())
}

fn parse_runtime(at: &At, r: &Node) -> Result<Runtime, CatalogError> {
    let keys: Vec<(&Node, &Node)> = entries(r).collect();
    let [(key, value)] = keys.as_slice() else {
        return Err(at.err(
            r,
            "`runtime` must name exactly one of container, exec or builtin",
        ));
    };
    match key.value.as_str() {
        "container" => parse_container(at, value),
        "exec" => parse_exec(at, value),
        "builtin" => match scalar(value) {
            Some(name) if crate::verify::builtin_image(name).is_some() => {
                Ok(Runtime::Builtin(name.to_string()))
            }
            _ => Err(at.err(
                value,
                format!(
                    "no built-in function is named {:?} (`krmgraph fn catalog` lists them)",
                    value.value
                ),
            )),
        },
        "starlark" => Err(at.err(
            key,
            "the starlark runtime is not supported (kyaml removed it in v0.18.0)",
        )),
        other => Err(at.err(
            key,
            format!("unknown runtime {other:?}: expected container, exec or builtin"),
        )),
    }
}

fn parse_container(at: &At, c: &Node) -> Result<Runtime, CatalogError> {
    let image = at.required(c, "image", "the container runtime")?;
    let sha256 = digest(at, c, "the container runtime")?;
    Ok(Runtime::Container(Container {
        image,
        sha256,
        require_network: at.boolean(c, "requireNetwork")? || at.boolean(c, "network")?,
        require_storage_mount: at.boolean(c, "requireStorageMount")?
            || get(c, "mounts").is_some_and(|m| !m.content.is_empty()),
    }))
}

fn parse_exec(at: &At, e: &Node) -> Result<Runtime, CatalogError> {
    let Some(platforms) = get(e, "platforms") else {
        // kyaml's FunctionSpec shape, with the digest the KEP requires.
        let path = at.required(e, "path", "the exec runtime (no `platforms`)")?;
        let sha256 = digest(at, e, "the exec runtime")?;
        return Ok(Runtime::Exec(vec![Platform {
            bin: path,
            os: String::new(),
            arch: String::new(),
            uri: String::new(),
            sha256,
        }]));
    };
    if platforms.kind != Kind::Sequence || platforms.content.is_empty() {
        return Err(at.err(platforms, "`platforms` must be a non-empty list"));
    }
    let mut out = Vec::new();
    for p in &platforms.content {
        let bin = at.string(p, "bin")?.unwrap_or_default();
        let uri = at.string(p, "uri")?.unwrap_or_default();
        if bin.is_empty() && uri.is_empty() {
            return Err(at.err(p, "a platform needs `bin` or `uri`"));
        }
        out.push(Platform {
            bin,
            os: at.required(p, "os", "a platform")?,
            arch: at.required(p, "arch", "a platform")?,
            uri,
            sha256: digest(at, p, "a platform")?,
        });
    }
    Ok(Runtime::Exec(out))
}

/// The `sha256` of `parent`: 64 hex digits, `sha256:` prefix optional.
fn digest(at: &At, parent: &Node, what: &str) -> Result<String, CatalogError> {
    let value = at.string(parent, "sha256")?;
    let Some(value) = value else {
        return Err(at.err(
            parent,
            format!("{what} has no `sha256`: catalog functions are pinned by digest"),
        ));
    };
    let hex = value
        .strip_prefix("sha256:")
        .unwrap_or(&value)
        .to_ascii_lowercase();
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        let node = get(parent, "sha256").unwrap_or(parent);
        return Err(at.err(node, format!("sha256 {value:?} is not 64 hex digits")));
    }
    Ok(hex)
}

/// The catalog files a path names: the file, or a directory's `*.yaml` and
/// `*.yml` files in name order (not recursive).
pub fn files_of(path: &Path) -> Result<Vec<PathBuf>, CatalogError> {
    let io = |e: std::io::Error| CatalogError::File {
        file: path.to_path_buf(),
        message: e.to_string(),
    };
    if !path.is_dir() {
        std::fs::metadata(path).map_err(io)?;
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    Ok(files)
}
