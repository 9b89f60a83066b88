//! The end of a render: paths made root-relative, attribution, and the
//! output — files written in place and files whose resources are gone
//! deleted, all or nothing ([`fsutil::commit`]), a ResourceList or plain
//! YAML on stdout, or a new directory — and `results.yaml`. Every byte is
//! computed, and every write and deletion checked, before anything is
//! written.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::blocks;
use super::hydrate::Hydrator;
use super::shortcut::Change;
use super::stepcache::{Part, StepCache};
use super::{Output, RenderError, RenderOptions};
use krmgraph_fn::results::result_list_node;
use krmgraph_fn::RunContext;
use krmgraph_kyaml::krm;
use krmgraph_kyaml::{byteio, gopath, kioutil, pkgio, rnode};
use krmgraph_package::kptfile::validate::clean_path;
use krmgraph_util::fsutil::{self, FileChange};
use krmgraph_yaml::Node;

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
    attribute(&mut resources, options.attribution);
    let output = &options.output;
    write_output(resources, output, root_dir, &hydrator.input_files, existing)
}

/// [`finish`] in place with a step cache, of the root's output in parts:
/// a block whose files the tree holds as they would be written is not
/// decoded ([`blocks::to_write`]), and the files of the blocks decoded
/// are recorded for the next render ([`blocks::learn_files`]).
pub(super) fn finish_in_place(
    parts: Vec<Part>,
    hydrator: &Hydrator,
    root_dir: &Path,
    existing: &pkgio::Existing,
    cache: &StepCache,
) -> Result<Written, RenderError> {
    let root = root_dir.to_string_lossy().into_owned();
    let to_write = blocks::to_write(cache, parts, |r| {
        rel_path(r, &root).ok().map(|p| gopath::clean(&p))
    })
    .ok_or_else(|| {
        RenderError::Message(
            "a record in the cache does not decode; `krmgraph cache clear` empties the cache"
                .into(),
        )
    })?;
    let blocks::ToWrite {
        mut nodes,
        files,
        kept,
        decoded,
    } = to_write;
    if existing.check {
        check_kept_files(cache, &kept, &files, root_dir)?;
    }
    adjust_rel_paths(&mut nodes, root_dir)?;
    attribute(&mut nodes, cache.attribution());
    let paths = if decoded.is_empty() {
        Vec::new()
    } else {
        krmgraph_util::par::map(&nodes, |r| gopath::clean(&krm::path_of(r)))
    };
    let written = write_output_unclassified(
        nodes,
        files,
        &Output::InPlace,
        root_dir,
        &hydrator.input_files,
        Some(existing),
    )
    .map_err(|e| classify(e, &Output::InPlace))?;
    if let Some(changes) = &written.files {
        let by_path: HashMap<&str, &[u8]> = changes
            .iter()
            .filter_map(|c| match c {
                Change::Write(path, bytes) => Some((path.as_str(), bytes.as_slice())),
                Change::Delete(_) => None,
            })
            .collect();
        blocks::learn_files(cache, &decoded, &paths, &by_path);
    }
    Ok(written)
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
    let read = |target: &Path| {
        let rel = target.strip_prefix(root_dir).ok()?;
        (existing.digest)(&rel.to_string_lossy().replace('\\', "/"))
    };
    for change in changes.iter_mut() {
        match &*change {
            FileChange::Write(target, bytes) => {
                if let Some(read) = read(target) {
                    *change = FileChange::WriteUnlessChanged(target.clone(), bytes, read);
                }
            }
            FileChange::Remove(target) => {
                if let Some(read) = read(target) {
                    *change = FileChange::RemoveUnlessChanged(target.clone(), read);
                }
            }
            _ => {}
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
    write_output_unclassified(
        resources,
        Vec::new(),
        output,
        root_dir,
        input_files,
        existing,
    )
    .map_err(|e| classify(e, output))
}

/// `KRMGRAPH_CHECK_DIRECT`: the `files` of the `kept` blocks are what
/// their resources are written as.
fn check_kept_files(
    cache: &StepCache,
    kept: &[std::sync::Arc<super::stepcache::Block>],
    files: &[(String, Vec<u8>)],
    root_dir: &Path,
) -> Result<(), RenderError> {
    let mut nodes = Vec::new();
    for block in kept {
        nodes.extend(
            cache
                .decode(block)
                .expect("KRMGRAPH_CHECK_DIRECT: a kept block does not decode"),
        );
    }
    adjust_rel_paths(&mut nodes, root_dir)?;
    attribute(&mut nodes, cache.attribution());
    let written = pkgio::render_files(nodes, &writer_options(root_dir), None)
        .expect("KRMGRAPH_CHECK_DIRECT: a kept block's files do not render");
    let kept_files: pkgio::RenderedFiles = files.iter().cloned().collect();
    assert!(
        written == kept_files,
        "KRMGRAPH_CHECK_DIRECT: the files of blocks kept on disk differ from their rendering: {:?}",
        written.keys().collect::<Vec<_>>()
    );
    Ok(())
}

/// A failure to write `output`, as kpt words it.
fn classify(e: RenderError, output: &Output) -> RenderError {
    let message = match e {
        RenderError::Delete(m) => return RenderError::Delete(m),
        RenderError::Message(m) => m,
        other => other.to_string(),
    };
    match output {
        Output::InPlace => RenderError::Save(message),
        _ => RenderError::Output(message),
    }
}

/// [`write_output`], in place also writing `known` files (root-relative
/// paths and bytes no resource of `resources` goes to).
fn write_output_unclassified(
    resources: Vec<Node>,
    known: Vec<(String, Vec<u8>)>,
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
            let mut files = pkgio::render_files(resources, &writer_options(root_dir), existing)
                .map_err(|e| RenderError::Message(e.to_string()))?;
            files.extend(known);
            // The files are keyed by each resource's cleaned path (every
            // resource has one here: `adjust_rel_paths` set them all).
            let output_files: BTreeSet<String> = files.keys().cloned().collect();
            check_writable(root_dir, files.keys())?;
            let stale: Vec<&String> = input_files.difference(&output_files).collect();
            let read_as_file = |path: &str| existing.is_some_and(|e| (e.digest)(path).is_some());
            let mut changes = pkgio::file_changes_knowing(root_dir, &files, read_as_file)
                .map_err(|e| RenderError::Message(e.to_string()))?;
            changes.extend(
                stale
                    .iter()
                    .map(|stale| FileChange::Remove(root_dir.join(stale))),
            );
            if let Some(existing) = existing {
                unless_changed(&mut changes, root_dir, existing);
            }
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
                .filter(|p| !kept.contains(p))
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
        Output::Check => {
            let files = pkgio::render_files(resources, &writer_options(root_dir), None)
                .map_err(|e| RenderError::Message(e.to_string()))?;
            Ok(Written {
                stdout: Vec::new(),
                files: Some(would_change(root_dir, files, input_files)),
                kept: Vec::new(),
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
                    krmgraph_util::gostr::quote(&dir.to_string_lossy()),
                    krmgraph_util::gostr::quote(&e.to_string())
                ))
            })?;
            pkgio::write_files(dir, &files).map_err(|e| RenderError::Message(e.to_string()))?;
            Ok(Written::default())
        }
    }
}

/// What writing `files` in place would change under `root_dir`: each
/// file whose bytes differ or that does not exist yet, and each of the
/// `input_files` no resource goes to any more (to be deleted).
fn would_change(
    root_dir: &Path,
    files: BTreeMap<String, Vec<u8>>,
    input_files: &BTreeSet<String>,
) -> Vec<Change> {
    let stale: Vec<Change> = input_files
        .iter()
        .filter(|path| !files.contains_key(*path))
        .map(|path| Change::Delete(path.clone()))
        .collect();
    let differs = |path: &str, bytes: &[u8]| match std::fs::read(root_dir.join(path)) {
        Ok(old) => old != bytes,
        Err(_) => true,
    };
    let writes: Vec<Change> = files
        .into_iter()
        .filter(|(path, bytes)| differs(path, bytes))
        .map(|(path, bytes)| Change::Write(path, bytes))
        .collect();
    writes.into_iter().chain(stale).collect()
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
    krmgraph_util::par::first_failure(&paths, |path| {
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
    krmgraph_util::par::each_mut(resources, |_, r| adjust_rel_path(r, &root))?;
    Ok(())
}

fn adjust_rel_path(r: &mut Node, root: &str) -> Result<(), RenderError> {
    let new_path = rel_path(r, root)?;
    krm::set_annotation(r, kioutil::PATH_ANNOTATION, &new_path);
    krm::set_annotation(r, kioutil::LEGACY_PATH_ANNOTATION, &new_path);
    krm::clear_annotation(r, kioutil::PACKAGE_PATH_ANNOTATION);
    Ok(())
}

/// The path, relative to the root at `root`, that `adjust_rel_path`
/// gives `r`.
fn rel_path(r: &Node, root: &str) -> Result<String, RenderError> {
    let pkg_path = krm::annotation(r, kioutil::PACKAGE_PATH_ANNOTATION).unwrap_or_default();
    let path = krm::path_of(r);
    let Some(rel_pkg) = pkg_path.strip_prefix(root) else {
        return Err(RenderError::Message(format!(
            "subpackage {} is not a descendant of {}",
            krmgraph_util::gostr::quote(&pkg_path),
            krmgraph_util::gostr::quote(root)
        )));
    };
    let joined = format!(".{}/{}", rel_pkg, clean_path(&path));
    Ok(clean_path(&joined))
}

const CNRM_ANNOTATION: &str = "cnrm.cloud.google.com/blueprint";

/// kpt's attribution: Config Connector resources record that kpt functions
/// touched them, unless `KPT_DISABLE_ATTRIBUTION` is set
/// ([`RenderOptions::attribution`]).
fn attribute(resources: &mut [Node], attribution: bool) {
    if !attribution {
        return;
    }
    krmgraph_util::par::for_each_mut(resources, |r| {
        // Most resources are not Config Connector's: their apiVersion is
        // read without copying their metadata.
        let cnrm = rnode::meta_view(r).is_ok_and(|m| m.api_version.contains(".cnrm."));
        if !cnrm || rnode::get_meta(r).is_err() {
            return;
        }
        let current = krm::annotation(r, CNRM_ANNOTATION).unwrap_or_default();
        let value = record_fn_action(&current);
        krm::set_annotation(r, CNRM_ANNOTATION, &value);
    });
}

/// kpt's `recordAction(value, "fn")`, as found by rendering with kpt
/// (`testdata/render/cnrm-attribution`): an empty value becomes `kpt-fn`;
/// a value without `kpt-` gets `,kpt-fn` appended; otherwise each
/// comma-separated element containing `kpt` (not `kpt-`: `kpt,kpt-fn`
/// becomes `kpt-fn,kpt-fn-fn`) is rewritten whole as `kpt-`
/// and the groups found so far, joined by `-`, where each such element
/// adds `pkg` if it contains `pkg`, then `fn`, then `live` if it contains
/// `live` — the list is not reset between elements, so `kpt-pkg,kpt-live`
/// becomes `kpt-pkg-fn,kpt-pkg-fn-fn-live`, and `kpt-pkg-fn-live` stays.
fn record_fn_action(current: &str) -> String {
    if current.is_empty() {
        return "kpt-fn".to_string();
    }
    if !current.contains("kpt-") {
        return format!("{current},kpt-fn");
    }
    let mut groups: Vec<&str> = Vec::new();
    let elements: Vec<String> = current
        .split(',')
        .map(|element| {
            if !element.contains("kpt") {
                return element.to_string();
            }
            if element.contains("pkg") {
                groups.push("pkg");
            }
            groups.push("fn");
            if element.contains("live") {
                groups.push("live");
            }
            format!("kpt-{}", groups.join("-"))
        })
        .collect();
    elements.join(",")
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
    let bytes = krmgraph_yaml::encode::to_string(&node, 2, false)
        .map_err(|e| RenderError::Message(e.to_string()))?
        .into_bytes();
    let path = dir.join("results.yaml");
    std::fs::create_dir_all(dir)
        .and_then(|_| krmgraph_util::fsutil::write_atomic(&path, &bytes))
        .map_err(|e| RenderError::Message(format!("{}: {e}", path.display())))?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    #[test]
    fn attribution_as_kpt_records_it() {
        // What kpt v1.0.0-beta.56 writes for each value, rendering with no
        // pipeline (values with several `kpt-` elements grow at every
        // render, so the data case `testdata/render/cnrm-attribution`
        // cannot hold them).
        for (before, after) in [
            ("", "kpt-fn"),
            ("kpt-pkg-fn-live", "kpt-pkg-fn-live"),
            ("foo,kpt-pkg-fn-live", "foo,kpt-pkg-fn-live"),
            ("kpt-live-pkg", "kpt-pkg-fn-live"),
            ("kpt-pkg,kpt-live", "kpt-pkg-fn,kpt-pkg-fn-fn-live"),
            ("kpt-live,kpt-pkg", "kpt-fn-live,kpt-fn-live-pkg-fn"),
            ("kpt-pkg,x,kpt-fn", "kpt-pkg-fn,x,kpt-pkg-fn-fn"),
            ("kpt-a,kpt-b,kpt-c", "kpt-fn,kpt-fn-fn,kpt-fn-fn-fn"),
            ("foo, kpt-pkg", "foo,kpt-pkg-fn"),
            ("kptfn", "kptfn,kpt-fn"),
            ("kpt", "kpt,kpt-fn"),
            ("kpt,kpt-fn", "kpt-fn,kpt-fn-fn"),
            ("kptfn,kpt-pkg", "kpt-fn,kpt-fn-pkg-fn"),
            ("k-p-t,kpt-pkg", "k-p-t,kpt-pkg-fn"),
            ("kpt-pkg,", "kpt-pkg-fn,"),
        ] {
            assert_eq!(super::record_fn_action(before), after, "{before:?}");
        }
    }
}
