//! The end of a render: paths made root-relative, attribution, and the
//! output — files written in place and files whose resources are gone
//! deleted, all or nothing ([`fsutil::commit`]), a ResourceList or plain
//! YAML on stdout, or a new directory — and `results.yaml`. Every byte is
//! computed, and every write and deletion checked, before anything is
//! written.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::hydrate::Hydrator;
use super::shortcut::Change;
use super::{Output, RenderError, RenderOptions};
use crate::fnruntime::results::result_list_node;
use crate::fnruntime::RunContext;
use crate::fsutil::{self, FileChange};
use crate::kptfile::validate::clean_path;
use crate::krm;
use crate::kyaml::{byteio, kioutil, pkgio, rnode};
use crate::yaml::Node;

/// Writes the rendered `resources` as `options.output` asks; in place,
/// files the render read may keep their bytes unencoded (`existing`).
pub fn finish(
    mut resources: Vec<Node>,
    hydrator: &Hydrator,
    root_dir: &Path,
    options: &RenderOptions,
    existing: Option<&pkgio::Existing>,
) -> Result<Written, RenderError> {
    adjust_rel_paths(&mut resources, root_dir)?;
    attribute(&mut resources);
    let output = &options.output;
    write_output(resources, output, root_dir, &hydrator.input_files, existing)
}

/// What [`write_output`] wrote.
#[derive(Debug, Default)]
pub struct Written {
    /// The bytes for stdout (empty for file outputs).
    pub stdout: Vec<u8>,
    /// In place: every file of the output, by slash path relative to the
    /// root, with its bytes (written, or already holding them), and every
    /// input file deleted — what the tree now is, without reading it again.
    pub files: Option<Vec<Change>>,
    /// In place: output files left as they were because they changed
    /// while the render ran (slash paths relative to the root).
    pub kept: Vec<String>,
}

/// Makes each write of a file the render read conditional on the file
/// still holding what it read: a file saved meanwhile keeps its new
/// content, so an edit made during a render is not lost.
fn unless_changed(changes: &mut [FileChange], root_dir: &Path, existing: &pkgio::Existing) {
    for change in changes.iter_mut() {
        let FileChange::Write(target, bytes) = &*change else {
            continue;
        };
        let Ok(rel) = target.strip_prefix(root_dir) else {
            continue;
        };
        if let Some(read) = (existing.digest)(&rel.to_string_lossy().replace('\\', "/")) {
            *change = FileChange::WriteUnlessChanged(target.clone(), bytes, read);
        }
    }
}

/// Writes `resources` (paths relative to `root_dir`) as `output` asks:
/// in place (then deleting the `input_files` no resource is written to),
/// as a ResourceList or plain YAML for stdout, or into a new directory.
/// Shared by `render` and `fn eval`.
pub(crate) fn write_output(
    resources: Vec<Node>,
    output: &Output,
    root_dir: &Path,
    input_files: &BTreeSet<String>,
    existing: Option<&pkgio::Existing>,
) -> Result<Written, RenderError> {
    write_output_unclassified(resources, output, root_dir, input_files, existing).map_err(|e| {
        let message = match e {
            RenderError::Delete(m) => return RenderError::Delete(m),
            RenderError::Message(m) => m,
            other => other.to_string(),
        };
        match output {
            Output::InPlace => RenderError::Save(message),
            _ => RenderError::Output(message),
        }
    })
}

fn write_output_unclassified(
    resources: Vec<Node>,
    output: &Output,
    root_dir: &Path,
    input_files: &BTreeSet<String>,
    existing: Option<&pkgio::Existing>,
) -> Result<Written, RenderError> {
    let stdout = |bytes| Written {
        stdout: bytes,
        ..Written::default()
    };
    match output {
        Output::InPlace => {
            let files = pkgio::render_files(resources, &writer_options(root_dir), existing)
                .map_err(|e| RenderError::Message(e.to_string()))?;
            // The files are keyed by each resource's cleaned path (every
            // resource has one here: `adjust_rel_paths` set them all).
            let output_files: BTreeSet<String> = files.keys().cloned().collect();
            check_writable(root_dir, files.keys())?;
            let stale: Vec<&String> = input_files.difference(&output_files).collect();
            let read_as_file = |path: &str| existing.is_some_and(|e| (e.digest)(path).is_some());
            let mut changes = pkgio::file_changes_knowing(root_dir, &files, read_as_file)
                .map_err(|e| RenderError::Message(e.to_string()))?;
            if let Some(existing) = existing {
                unless_changed(&mut changes, root_dir, existing);
            }
            changes.extend(
                stale
                    .iter()
                    .map(|stale| FileChange::Remove(root_dir.join(stale))),
            );
            let kept = fsutil::commit(&changes).map_err(|e| {
                if e.removing {
                    RenderError::Delete(e.message)
                } else {
                    RenderError::Message(e.message)
                }
            })?;
            let kept: Vec<String> = kept
                .iter()
                .filter_map(|path| path.strip_prefix(root_dir).ok())
                .map(|rel| rel.to_string_lossy().replace('\\', "/"))
                .collect();
            let deleted: Vec<Change> = stale
                .into_iter()
                .map(|p| Change::Delete(p.clone()))
                .collect();
            drop(changes);
            let written = files
                .into_iter()
                .filter(|(path, _)| !kept.contains(path))
                .map(|(path, bytes)| Change::Write(path, bytes));
            Ok(Written {
                stdout: Vec::new(),
                files: Some(written.chain(deleted).collect()),
                kept,
            })
        }
        Output::Stdout => wrapped(resources).map(stdout),
        Output::Unwrap => {
            let nodes = reread(&wrapped(resources)?)?;
            byteio::ByteWriter {
                clear_annotations: vec![
                    kioutil::INDEX_ANNOTATION.into(),
                    kioutil::PATH_ANNOTATION.into(),
                    kioutil::LEGACY_INDEX_ANNOTATION.into(),
                    kioutil::LEGACY_PATH_ANNOTATION.into(),
                ],
                ..Default::default()
            }
            .write_owned(nodes)
            .map(stdout)
            .map_err(|e| RenderError::Message(e.to_string()))
        }
        Output::Dir(dir) => {
            let nodes = reread(&wrapped(resources)?)?;
            let files = pkgio::render_files(nodes, &writer_options(dir), None)
                .map_err(|e| RenderError::Message(e.to_string()))?;
            std::fs::create_dir_all(dir).map_err(|e| {
                RenderError::Message(format!(
                    "failed to create output directory {}: {}",
                    crate::gostr::quote(&dir.to_string_lossy()),
                    crate::gostr::quote(&e.to_string())
                ))
            })?;
            pkgio::write_files(dir, &files).map_err(|e| RenderError::Message(e.to_string()))?;
            Ok(Written::default())
        }
    }
}

/// Fails, naming the file, if an existing file the render writes cannot
/// be opened for writing — also one whose bytes do not change, which
/// krmgraph leaves alone but kpt rewrites (and fails on). kpt finds this
/// out mid-write (leaving a half-rendered package); krmgraph checks every
/// target before it writes any ([`fsutil::commit`] then checks the
/// directories), and renaming a temp file over a read-only file would
/// otherwise silently succeed.
fn check_writable<'a>(
    root: &Path,
    paths: impl Iterator<Item = &'a String>,
) -> Result<(), RenderError> {
    // A stat and an open per file, on the pool (the first failure in path
    // order is the one reported): a tree has thousands.
    let paths: Vec<&String> = paths.collect();
    crate::par::first_failure(&paths, |path| {
        // Most files exist and open: that settles it without a stat first.
        // A file that does not exist is created: nothing to check.
        let full = root.join(path);
        match std::fs::OpenOptions::new().write(true).open(&full) {
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(_) if full.exists() => {
                fsutil::check_file_writable(&full).map_err(|e| RenderError::Message(e.message))
            }
            Err(_) => Ok(()),
        }
    })
}

/// The resources as one `ResourceList`, reader annotations kept.
fn wrapped(resources: Vec<Node>) -> Result<Vec<u8>, RenderError> {
    byteio::ByteWriter {
        keep_reader_annotations: true,
        wrapping_kind: "ResourceList".into(),
        wrapping_api_version: "config.kubernetes.io/v1".into(),
        ..Default::default()
    }
    .write_owned(resources)
    .map_err(|e| RenderError::Message(e.to_string()))
}

/// kpt's `WriteToOutput` reads the wrapped list back before writing it.
fn reread(bytes: &[u8]) -> Result<Vec<Node>, RenderError> {
    byteio::ByteReader {
        preserve_seq_indent: true,
        wrap_bare_seq_node: true,
        ..Default::default()
    }
    .read(bytes)
    .map(|out| out.nodes)
    .map_err(|e| RenderError::Message(e.to_string()))
}

fn writer_options(dir: &Path) -> pkgio::WriterOptions {
    pkgio::WriterOptions {
        package_path: dir.to_string_lossy().into_owned(),
        ..Default::default()
    }
}

/// kpt's `adjustRelPath`: each resource's path becomes relative to the root
/// package and the package-path annotation goes away.
fn adjust_rel_paths(resources: &mut [Node], root_dir: &Path) -> Result<(), RenderError> {
    let root = root_dir.to_string_lossy().into_owned();
    crate::par::each_mut(resources, |_, r| adjust_rel_path(r, &root))?;
    Ok(())
}

fn adjust_rel_path(r: &mut Node, root: &str) -> Result<(), RenderError> {
    let pkg_path = krm::annotation(r, kioutil::PACKAGE_PATH_ANNOTATION).unwrap_or_default();
    let path = krm::path_of(r);
    let Some(rel_pkg) = pkg_path.strip_prefix(root) else {
        return Err(RenderError::Message(format!(
            "subpackage {} is not a descendant of {}",
            crate::gostr::quote(&pkg_path),
            crate::gostr::quote(root)
        )));
    };
    let joined = format!(".{}/{}", rel_pkg, clean_path(&path));
    let new_path = clean_path(&joined);
    krm::set_annotation(r, kioutil::PATH_ANNOTATION, &new_path);
    krm::set_annotation(r, kioutil::LEGACY_PATH_ANNOTATION, &new_path);
    krm::clear_annotation(r, kioutil::PACKAGE_PATH_ANNOTATION);
    Ok(())
}

const CNRM_ANNOTATION: &str = "cnrm.cloud.google.com/blueprint";

/// kpt's attribution: Config Connector resources record that kpt functions
/// touched them, unless `KPT_DISABLE_ATTRIBUTION` is set.
fn attribute(resources: &mut [Node]) {
    if std::env::var_os("KPT_DISABLE_ATTRIBUTION").is_some() {
        return;
    }
    crate::par::for_each_mut(resources, |r| {
        // Most resources are not Config Connector's: their apiVersion is
        // read without copying their metadata.
        let cnrm = rnode::meta_view(r).is_ok_and(|m| m.api_version.contains(".cnrm."));
        if !cnrm || rnode::get_meta(r).is_err() {
            return;
        }
        let current = krm::annotation(r, CNRM_ANNOTATION).unwrap_or_default();
        let value = if current.is_empty() {
            "kpt-fn".to_string()
        } else if current.contains("kpt-fn") || current.ends_with("-fn") {
            current
        } else if current.starts_with("kpt") {
            format!("{current}-fn")
        } else {
            format!("{current},kpt-fn")
        };
        krm::set_annotation(r, CNRM_ANNOTATION, &value);
    });
}

/// Writes `results.yaml` into `results_dir` (`--results-dir`), if set.
pub fn save_results(
    results_dir: Option<&Path>,
    ctx: &RunContext,
) -> Result<Option<PathBuf>, RenderError> {
    let Some(dir) = results_dir else {
        return Ok(None);
    };
    let node = result_list_node(&ctx.results, ctx.exit_code);
    let bytes = crate::yaml::encode::to_string(&node, 2, false)
        .map_err(|e| RenderError::Message(e.to_string()))?
        .into_bytes();
    let path = dir.join("results.yaml");
    std::fs::create_dir_all(dir)
        .and_then(|_| crate::fsutil::write_atomic(&path, &bytes))
        .map_err(|e| RenderError::Message(format!("{}: {e}", path.display())))?;
    Ok(Some(path))
}
