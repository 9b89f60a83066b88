//! kpt packages on disk: a package is a directory with a [`kptfile`]; this
//! crate finds a package's direct subpackages the way kpt does
//! (`Pkg.DirectSubpackages`) and names packages for output (display paths).
//!
//! A subpackage is any directory below the package holding a `Kptfile`,
//! also inside plain directories (`dir/c-sub` is a direct subpackage of the
//! root); the walk does not descend into it, skips directories named `.git`,
//! does not follow directory symlinks, and ignores `.krmignore`. Direct
//! subpackages are returned sorted by display path in byte order.

#![deny(missing_docs)]

pub mod hint;
pub mod kptfile;

use std::path::{Path, PathBuf};

pub use hint::Hint;
pub use kptfile::validate::SourcePosition;

use crate::kptfile::{Kptfile, KptfileError, KPTFILE_NAME};

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

impl PackageError {
    /// What krmgraph adds after kpt's text ([`KptfileError::hints`]).
    pub fn hints(&self) -> &[Hint] {
        match self {
            PackageError::Kptfile(e) => e.hints(),
            PackageError::Walk { .. } => &[],
        }
    }
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
        message: krmgraph_util::gostr::go_errno_text(&e),
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
