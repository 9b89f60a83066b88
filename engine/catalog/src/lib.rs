//! Function catalogs (Kustomize KEP-2906): a pipeline step names *what* it
//! wants (its functionConfig's `apiVersion`/`kind`) and a trusted catalog
//! says *how* to run it — a container image pinned by sha256, per-platform
//! executables with their sha256, or a krmgraph built-in.
//!
//! [`Catalogs::load`] reads the catalogs the user named, in order
//! ([`parse`]); [`Catalogs::resolve`] finds the first entry for a config's
//! group, version and kind (first match wins, across and inside catalogs)
//! and [`verify`] checks the runtime's digest before anything runs. Installed
//! as the Kptfile [`FunctionResolver`], it rewrites a step that names no
//! runtime into one that does (`image:` or `exec:`), so the runner and the
//! step key see the resolved, verified function.

#![deny(missing_docs)]

pub mod builtins;
mod fetch;
mod node;
pub mod parse;
pub mod schema;
pub mod verify;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use krmgraph_package::kptfile::resolver::{unresolved, FunctionResolver};
use krmgraph_package::kptfile::Function;
use krmgraph_yaml::Node;

/// Why a catalog could not be read or used.
#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CatalogError {
    /// Something at a position of a file.
    #[error("{}:{line}:{column}: {message}", file.display())]
    At {
        /// The catalog (or config) file.
        file: PathBuf,
        /// 1-based line.
        line: u32,
        /// 1-based column.
        column: u32,
        /// What is wrong.
        message: String,
    },
    /// Something about a whole file.
    #[error("{}: {message}", file.display())]
    File {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// One version of one catalog function.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    /// `group` (empty for the core group).
    pub group: String,
    /// `names.kind`.
    pub kind: String,
    /// `versions[].name`.
    pub version: String,
    /// How it runs.
    pub runtime: Runtime,
    /// `schema.openAPIV3Schema`, if any.
    pub schema: Option<Node>,
    /// The catalog file.
    pub file: PathBuf,
    /// Position of the version in the file.
    pub line: u32,
    /// Column of the version in the file.
    pub column: u32,
}

impl Entry {
    /// `file:line:col` of the entry.
    pub fn origin(&self) -> String {
        format!("{}:{}:{}", self.file.display(), self.line, self.column)
    }

    /// The functionConfig `apiVersion` the entry answers for.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

/// A catalog function's runtime.
#[derive(Clone, Debug, PartialEq)]
pub enum Runtime {
    /// A container image and the digest it must have.
    Container(Container),
    /// Executables, one per platform.
    Exec(Vec<Platform>),
    /// A krmgraph built-in, by name.
    Builtin(String),
}

/// `runtime.container`.
#[derive(Clone, Debug, PartialEq)]
pub struct Container {
    /// The image reference.
    pub image: String,
    /// The image ID or repo digest it must have (64 hex digits).
    pub sha256: String,
    /// `requireNetwork`: runs only with `--allow-network`.
    pub require_network: bool,
    /// `requireStorageMount`: render has no mount flag, so it is refused.
    pub require_storage_mount: bool,
}

/// One `runtime.exec.platforms[]` item.
#[derive(Clone, Debug, PartialEq)]
pub struct Platform {
    /// The binary's path (relative to the catalog file), if no `uri`.
    pub bin: String,
    /// `linux`, `darwin`, `windows`; empty: any.
    pub os: String,
    /// `amd64`, `arm64`; empty: any.
    pub arch: String,
    /// `file://` or relative location of the binary.
    pub uri: String,
    /// Its sha256 (64 hex digits).
    pub sha256: String,
}

/// The root Kptfile annotation listing catalog paths (comma-separated,
/// relative to the package).
pub const CATALOGS_ANNOTATION: &str = "krmgraph.dev/fn-catalogs";

/// The catalog paths `kptfile`'s [`CATALOGS_ANNOTATION`] lists, joined to
/// the package directory `dir`.
pub fn annotated_paths(dir: &Path, kptfile: &krmgraph_package::kptfile::Kptfile) -> Vec<PathBuf> {
    kptfile
        .annotations
        .iter()
        .filter(|(k, _)| k == CATALOGS_ANNOTATION)
        .flat_map(|(_, v)| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|p| dir.join(p))
        .collect()
}

/// The catalogs of one run, searched in order.
#[derive(Debug, Default)]
pub struct Catalogs {
    entries: Vec<Entry>,
    /// Canonical paths of every catalog loaded (all trusted).
    trusted: Vec<PathBuf>,
    /// Canonical directory of the root package, whose annotation is
    /// trusted.
    root: Option<PathBuf>,
    /// blake3 over the files' paths and bytes.
    identity: Vec<u8>,
    /// `--allow-network`.
    allow_network: bool,
    /// Where `http(s)` executables are fetched to, by digest.
    fetch_dir: Option<PathBuf>,
    /// `--explain`'s lines, each once, in the order first made.
    explained: Mutex<Vec<String>>,
    /// Verified resolutions, by entry index: the image or exec to run.
    verified: Mutex<HashMap<usize, Result<Resolved, String>>>,
}

/// What a step resolves to: the fields a Kptfile step would have.
#[derive(Clone, Debug, PartialEq)]
pub enum Resolved {
    /// `image:` (a container or a built-in's image).
    Image(String),
    /// `exec:` (the verified binary's absolute path).
    Exec(String),
}

impl Catalogs {
    /// Reads the catalogs at `paths` (files or directories), in order.
    pub fn load(paths: &[PathBuf], allow_network: bool) -> Result<Catalogs, CatalogError> {
        let mut entries = Vec::new();
        let mut h = blake3::Hasher::new();
        for path in paths {
            for file in parse::files_of(path)? {
                let bytes = std::fs::read(&file).map_err(|e| CatalogError::File {
                    file: file.clone(),
                    message: e.to_string(),
                })?;
                h.update(file.to_string_lossy().as_bytes());
                h.update(&(bytes.len() as u64).to_le_bytes());
                h.update(&bytes);
                entries.extend(parse::parse_file(&file, &bytes)?);
            }
        }
        for e in &entries {
            if let Runtime::Builtin(name) = &e.runtime {
                let image = verify::builtin_image(name).unwrap_or_default();
                if let Some(b) = krmgraph_fn::builtin::lookup(&image) {
                    h.update(format!("builtin {image} {}", b.version).as_bytes());
                }
            }
        }
        Ok(Catalogs {
            entries,
            trusted: trusted_files(paths),
            root: None,
            identity: h.finalize().as_bytes().to_vec(),
            allow_network,
            fetch_dir: None,
            explained: Mutex::default(),
            verified: Mutex::default(),
        })
    }

    /// The same catalogs, the package at `root` being the render's root.
    pub fn with_root(mut self, root: &Path) -> Catalogs {
        self.root = root.canonicalize().ok();
        self
    }

    /// The same catalogs, fetching `http(s)` executables into `dir` (each
    /// once, named by its sha256).
    pub fn with_fetch_dir(mut self, dir: PathBuf) -> Catalogs {
        self.fetch_dir = Some(dir);
        self
    }

    /// Every entry, in search order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The first entry for a functionConfig of `api_version` and `kind`.
    pub fn resolve(&self, api_version: &str, kind: &str) -> Option<(usize, &Entry)> {
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        self.entries
            .iter()
            .enumerate()
            .find(|(_, e)| e.group == group && e.version == version && e.kind == kind)
    }

    /// The first container entry whose image, without tag, is `untagged`.
    fn pinning(&self, untagged: &str) -> Option<(usize, &Entry)> {
        self.entries
            .iter()
            .enumerate()
            .find(|(_, e)| match &e.runtime {
                Runtime::Container(c) => {
                    krmgraph_fn::builtin::split_image(&krmgraph_fn::resolve_image(&c.image)).0
                        == untagged
                }
                _ => false,
            })
    }

    /// The entry's runtime, verified once per run.
    pub fn verified(&self, index: usize) -> Result<Resolved, String> {
        let mut known = self.verified.lock().unwrap_or_else(|p| p.into_inner());
        known
            .entry(index)
            .or_insert_with(|| {
                let fetch_dir = self.fetch_dir.as_deref();
                verify::verify(&self.entries[index], self.allow_network, fetch_dir)
            })
            .clone()
    }

    /// Resolves the step `f` of the package at `dir` (see
    /// [`FunctionResolver::resolve`]).
    pub fn resolve_step(&self, dir: &Path, f: &mut Function) -> Result<bool, String> {
        if unresolved(f) {
            return self.resolve_by_kind(dir, f);
        }
        if !f.image.is_empty() && !f.image.contains('@') {
            let image = krmgraph_fn::resolve_image(&f.image);
            let (untagged, tag) = krmgraph_fn::builtin::split_image(&image);
            if tag.is_empty() {
                if let Some((index, entry)) = self.pinning(untagged) {
                    let resolved = self.verified(index)?;
                    self.note(format!("image {} is pinned", f.image), entry, &resolved);
                    apply(f, resolved);
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    fn resolve_by_kind(&self, dir: &Path, f: &mut Function) -> Result<bool, String> {
        if self.entries.is_empty() {
            // No catalog: kpt's own validation error stands.
            return Ok(false);
        }
        if f.config_path.is_empty() {
            return self.resolve_config_map(f);
        }
        let config_file = dir.join(&f.config_path);
        let config = schema::read_config(&config_file).map_err(|e| e.to_string())?;
        let Some((index, entry)) = self.resolve(&config.api_version, &config.kind) else {
            return Err(format!(
                "{}: no function catalog has {} {} (searched {} entries)",
                config_file.display(),
                config.api_version,
                config.kind,
                self.entries.len()
            ));
        };
        if let Some(schema) = &entry.schema {
            schema::validate(&config, schema, entry).map_err(|e| e.to_string())?;
        }
        let resolved = self.verified(index)?;
        let what = format!(
            "{} ({} {})",
            config_file.display(),
            config.api_version,
            config.kind
        );
        self.note(what, entry, &resolved);
        apply(f, resolved);
        Ok(true)
    }

    /// A `configMap:` step's config is a `v1` `ConfigMap`: resolved by that
    /// kind like any other (a catalog may name one function for it).
    fn resolve_config_map(&self, f: &mut Function) -> Result<bool, String> {
        if f.config_map.is_none() {
            return Err("a function with no `image` or `exec` needs a `configPath` or `configMap` whose apiVersion and kind a function catalog resolves".into());
        }
        let Some((index, entry)) = self.resolve("v1", "ConfigMap") else {
            return Err("no function catalog has v1 ConfigMap (the config of a `configMap:` step with no `image` or `exec`)".into());
        };
        let resolved = self.verified(index)?;
        self.note("configMap (v1 ConfigMap)".into(), entry, &resolved);
        apply(f, resolved);
        Ok(true)
    }

    /// Records `what` resolved through `entry` to `resolved`.
    fn note(&self, what: String, entry: &Entry, resolved: &Resolved) {
        let to = match resolved {
            Resolved::Image(image) => format!("image {image}"),
            Resolved::Exec(exec) => format!("exec {exec}"),
        };
        let how = match &entry.runtime {
            Runtime::Builtin(name) => format!("builtin {name}"),
            Runtime::Container(c) => format!("sha256:{} verified", c.sha256),
            Runtime::Exec(_) => "sha256 verified".to_string(),
        };
        let line = format!(
            "[EXPLAIN] catalog: {what} runs {to} ({how}; {})",
            entry.origin()
        );
        let mut explained = self.explained.lock().unwrap_or_else(|p| p.into_inner());
        if !explained.contains(&line) {
            explained.push(line);
        }
    }
}

/// Canonical paths of `paths` and of the files in those that are
/// directories.
fn trusted_files(paths: &[PathBuf]) -> Vec<PathBuf> {
    let files = paths
        .iter()
        .flat_map(|p| parse::files_of(p).unwrap_or_default());
    paths
        .iter()
        .cloned()
        .chain(files)
        .filter_map(|p| p.canonicalize().ok())
        .collect()
}

fn apply(f: &mut Function, resolved: Resolved) {
    match resolved {
        Resolved::Image(image) => f.image = image,
        Resolved::Exec(exec) => f.exec = exec,
    }
}

impl FunctionResolver for Catalogs {
    fn resolve(&self, dir: &Path, f: &mut Function) -> Result<bool, String> {
        self.resolve_step(dir, f)
    }

    fn check(
        &self,
        dir: &Path,
        kptfile: &krmgraph_package::kptfile::Kptfile,
    ) -> Result<(), String> {
        let is_root = self.root.is_some() && dir.canonicalize().ok() == self.root;
        if is_root {
            return Ok(());
        }
        for path in annotated_paths(dir, kptfile) {
            let trusted = path.canonicalize().is_ok_and(|p| self.trusted.contains(&p));
            if !trusted {
                return Err(format!(
                    "the subpackage names the function catalog {} ({CATALOGS_ANNOTATION}), which is not trusted: only catalogs given by the user or the root package are; pass --trust-catalog {} to trust it",
                    path.display(),
                    path.display()
                ));
            }
        }
        Ok(())
    }

    fn begin_render(&self) {
        self.verified
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        self.explained
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    fn explain(&self) -> Vec<String> {
        self.explained
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn identity(&self) -> Vec<u8> {
        self.identity.clone()
    }
}
