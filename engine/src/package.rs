//! Packages on disk: finding a package's direct subpackages the way kpt does
//! (`Pkg.DirectSubpackages`), naming packages for output (display paths),
//! and checking a `configPath` functionConfig file.
//!
//! A subpackage is any directory below the package holding a `Kptfile`,
//! also inside plain directories (`dir/c-sub` is a direct subpackage of the
//! root); the walk does not descend into it, skips directories named `.git`,
//! does not follow directory symlinks, and ignores `.krmignore`. Direct
//! subpackages are returned sorted by display path in byte order.

use std::path::{Path, PathBuf};

use crate::kptfile::validate::{clean_path, ConfigFileError};
use crate::kptfile::{self, Kptfile, KptfileError, KPTFILE_NAME};

/// A package being rendered: its absolute directory, the name kpt prints
/// for it, and its decoded Kptfile.
#[derive(Clone, Debug)]
pub struct Package {
    /// Absolute, cleaned directory.
    pub dir: PathBuf,
    /// Slash path relative to the parent of the root package
    /// (`root/sub/db`); the root's display path is its directory name.
    pub display_path: String,
    /// The decoded Kptfile.
    pub kptfile: Kptfile,
}

/// Why package discovery failed.
#[derive(Debug, thiserror::Error)]
pub enum PackageError {
    /// A subpackage's Kptfile does not decode.
    #[error(transparent)]
    Kptfile(#[from] KptfileError),
    /// Walking the directory failed.
    #[error("{path}: {message}")]
    Walk {
        /// The directory or file that could not be read.
        path: PathBuf,
        /// The I/O error, as Go prints it.
        message: String,
    },
}

impl Package {
    /// Loads the package at `dir` (its Kptfile is read and validated).
    pub fn load(dir: &Path, root_parent: &Path) -> Result<Package, KptfileError> {
        let kptfile = kptfile::load(dir)?;
        Ok(Package {
            dir: dir.to_path_buf(),
            display_path: display_path(dir, root_parent),
            kptfile,
        })
    }
}

/// The display path of `dir`: slash path relative to `root_parent`.
pub fn display_path(dir: &Path, root_parent: &Path) -> String {
    let rel = dir.strip_prefix(root_parent).unwrap_or(dir);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The direct subpackages of the package at `dir`, sorted by display path.
/// Each subpackage's Kptfile is decoded (not validated) as it is found, as
/// kpt does, so a broken one stops the render before anything runs in it.
pub fn direct_subpackages(dir: &Path) -> Result<Vec<PathBuf>, PackageError> {
    let mut found = Vec::new();
    walk_for_subpackages(dir, &mut found)?;
    found.sort_by_key(|p| slash_rel(p, dir));
    Ok(found)
}

fn slash_rel(path: &Path, base: &Path) -> String {
    display_path(path, base)
}

fn walk_for_subpackages(dir: &Path, found: &mut Vec<PathBuf>) -> Result<(), PackageError> {
    let walk_error = |path: &Path, e: std::io::Error| PackageError::Walk {
        path: path.to_path_buf(),
        message: crate::fnruntime::exec::go_errno_text(&e),
    };
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| walk_error(dir, e))?
        .filter_map(|e| e.ok())
        .map(|e| e.file_name())
        .collect();
    names.sort();
    for name in names {
        let path = dir.join(&name);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_dir() || name == ".git" {
            continue;
        }
        if path.join(KPTFILE_NAME).exists() {
            let bytes = std::fs::read(path.join(KPTFILE_NAME)).map_err(|e| walk_error(&path, e))?;
            kptfile::parse(&path, &bytes)?;
            found.push(path);
        } else {
            walk_for_subpackages(&path, found)?;
        }
    }
    Ok(())
}

/// Where in a user's file an error is, for a source snippet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcePosition {
    /// The file.
    pub path: PathBuf,
    /// 0-based line.
    pub line: usize,
    /// 0-based column (in characters).
    pub column: usize,
}

/// kpt's `GetValidatedFnConfigFromPath` check at load time: the file at
/// `config_path` (relative to `dir`) must exist and hold exactly one KRM
/// resource. Returns kpt's reason text otherwise, and where a YAML syntax
/// error is.
pub fn check_function_config(dir: &Path, config_path: &str) -> Result<(), ConfigFileError> {
    let reason = |reason: String| ConfigFileError {
        reason,
        position: None,
    };
    let Ok(bytes) = std::fs::read(dir.join(config_path)) else {
        return Err(reason(
            "functionConfig must exist in the current package".to_string(),
        ));
    };
    let nodes = crate::kyaml::byteio::ByteReader {
        preserve_seq_indent: true,
        wrap_bare_seq_node: true,
        ..Default::default()
    }
    .read(&bytes)
    .map_err(|e| ConfigFileError {
        reason: format!(
            "failed to read functionConfig {}: {e}",
            crate::gostr::quote(config_path)
        ),
        position: match e {
            crate::kyaml::KyamlError::MalformedYaml { mark, .. } => Some(SourcePosition {
                path: dir.join(clean_path(config_path)),
                line: mark.0,
                column: mark.1,
            }),
            _ => None,
        },
    })?
    .nodes;
    if nodes.len() > 1 {
        return Err(reason(format!(
            "functionConfig {} must not contain more than one config, got {}",
            crate::gostr::quote(config_path),
            nodes.len()
        )));
    }
    let Some(node) = nodes.first() else {
        return Err(reason(
            "functionConfig must exist in the current package".to_string(),
        ));
    };
    crate::krm::check_krm(node).map_err(|e| {
        reason(format!(
            "functionConfig {}: {e}",
            crate::gostr::quote(config_path)
        ))
    })
}
