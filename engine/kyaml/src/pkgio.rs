//! kyaml's `LocalPackageReader` and `LocalPackageWriter`
//! (`kio/pkgio_reader.go`, `kio/pkgio_writer.go`, `ignorefilesmatcher.go`).
//!
//! Reading walks the package like Go's `filepath.Walk` (names in byte
//! order, symlinked directories not followed, symlinked files read, hidden
//! files and `.git` not skipped), skips what `.krmignore` ignores and, unless
//! asked to include them, subpackage directories (those holding the package
//! file), keeps files whose base name matches a glob, and reads each with a
//! [`ByteReader`] that annotates the resources with their slash path
//! relative to the package and their index in the file.
//!
//! Writing is two steps so a render can compute every byte before touching
//! the disk: [`render_files`] groups resources by path annotation, sorts
//! them by index and serializes each file; [`write_files`] checks every
//! target, then writes each file to a temporary file beside it and renames
//! them into place, all or nothing (a krmgraph requirement; kyaml writes in
//! place, one file after the other).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::byteio::{ByteReader, ByteWriter};
use super::file_memo;
use super::gitignore::GitIgnore;
use super::kioutil::{self, INDEX_ANNOTATION, LEGACY_PATH_ANNOTATION, PATH_ANNOTATION};
use super::{gopath, rnode, KyamlError, Result};
use krmgraph_yaml::Node;

/// kyaml's `DefaultMatch`.
pub const DEFAULT_MATCH: &[&str] = &["*.yaml", "*.yml"];
/// kpt's `MatchAllKRM`: what `kpt fn render` reads.
pub const MATCH_ALL_KRM: &[&str] = &["Kptfile", "*.yaml", "*.yml", "*.json"];
/// The ignore file (`ext.IgnoreFileName()`).
pub const IGNORE_FILE_NAME: &str = ".krmignore";

/// `LocalPackageReader`'s options.
#[derive(Clone, Debug, Default)]
pub struct LocalPackageReader {
    /// The package directory (or a single file).
    pub package_path: PathBuf,
    /// Name of the file that marks a (sub)package, e.g. `Kptfile`; empty to
    /// treat no directory as a subpackage.
    pub package_file_name: String,
    /// Globs matched against base names; empty means [`DEFAULT_MATCH`].
    pub match_files_glob: Vec<String>,
    /// Descend into subpackages (reading their `.krmignore`).
    pub include_subpackages: bool,
    /// Do not set the path, index and seqindent annotations.
    pub omit_reader_annotations: bool,
    /// Annotations set on every resource.
    pub set_annotations: BTreeMap<String, String>,
    /// Record each document's sequence indentation.
    pub preserve_seq_indent: bool,
    /// Wrap bare-sequence documents (see [`ByteReader`]).
    pub wrap_bare_seq_node: bool,
}

impl LocalPackageReader {
    /// kpt's reader for one package's own resources (`Pkg.LocalResources`):
    /// `Kptfile`, `*.yaml`, `*.yml`, `*.json`, subpackages skipped, with
    /// seqindent, bare sequences wrapped, and the package-path annotation.
    pub fn kpt(package_path: impl Into<PathBuf>, abs_package_path: &str) -> LocalPackageReader {
        let mut set_annotations = BTreeMap::new();
        set_annotations.insert(
            kioutil::PACKAGE_PATH_ANNOTATION.to_string(),
            abs_package_path.to_string(),
        );
        LocalPackageReader {
            package_path: package_path.into(),
            package_file_name: "Kptfile".into(),
            match_files_glob: MATCH_ALL_KRM.iter().map(|g| g.to_string()).collect(),
            preserve_seq_indent: true,
            wrap_bare_seq_node: true,
            set_annotations,
            ..LocalPackageReader::default()
        }
    }

    /// `LocalPackageReader.Read`.
    pub fn read(&self) -> Result<Vec<Node>> {
        let mut nodes = Vec::new();
        self.walk(&mut |path, rel| {
            nodes.extend(self.read_file(path, rel)?);
            Ok(())
        })?;
        Ok(nodes)
    }

    /// The files [`LocalPackageReader::read`] reads, in order, as
    /// (absolute path, slash path relative to the package).
    pub fn files(&self) -> Result<Vec<(String, String)>> {
        let mut files = Vec::new();
        self.walk(&mut |path, rel| {
            files.push((path.to_string(), rel.to_string()));
            Ok(())
        })?;
        Ok(files)
    }

    fn walk(&self, on_file: &mut dyn FnMut(&str, &str) -> Result<()>) -> Result<()> {
        if self.package_path.as_os_str().is_empty() {
            return Err(KyamlError::Package("must specify package path".into()));
        }
        let root = cleaned_abs(&self.package_path)?;
        let mut walk = PackageWalk {
            reader: self,
            globs: if self.match_files_glob.is_empty() {
                DEFAULT_MATCH.iter().map(|g| g.to_string()).collect()
            } else {
                self.match_files_glob.clone()
            },
            matchers: Vec::new(),
            relative_to: root.clone(),
            on_file,
        };
        let meta = fs::symlink_metadata(&root).map_err(|e| go_io_error("lstat", &root, e))?;
        if meta.is_dir() {
            walk.read_ignore_file(&root)?;
            walk.walk_dir(&root)
        } else {
            walk.relative_to = gopath::dir(&root);
            walk.visit_file(&root)
        }
    }

    /// Reads one file's resources with the path annotations of `rel`.
    fn read_file(&self, path: &str, rel: &str) -> Result<Vec<Node>> {
        let mut set_annotations = self.set_annotations.clone();
        if !self.omit_reader_annotations {
            set_annotations.insert(PATH_ANNOTATION.to_string(), rel.to_string());
            set_annotations.insert(LEGACY_PATH_ANNOTATION.to_string(), rel.to_string());
        }
        let wrap = |e: KyamlError| KyamlError::File {
            path: path.to_string(),
            source: Box::new(e),
        };
        let bytes = read_file(path).map_err(wrap)?;
        let mut reader = ByteReader {
            disable_unwrapping: true,
            omit_reader_annotations: self.omit_reader_annotations,
            set_annotations,
            preserve_seq_indent: self.preserve_seq_indent,
            wrap_bare_seq_node: self.wrap_bare_seq_node,
        };
        Ok(reader.read(&bytes).map_err(wrap)?.nodes)
    }
}

/// `fsOnDisk.CleanedAbs`: the absolute path with symlinks resolved.
fn cleaned_abs(path: &Path) -> Result<String> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()?.join(path)
    };
    let resolved = fs::canonicalize(&abs).map_err(|e| {
        KyamlError::Package(format!(
            "evalsymlink failure on '{}' : {}",
            path.display(),
            go_io_error("lstat", &abs.to_string_lossy(), e)
        ))
    })?;
    Ok(resolved.to_string_lossy().into_owned())
}

struct PackageWalk<'r> {
    reader: &'r LocalPackageReader,
    globs: Vec<String>,
    /// The `.krmignore` stack: (directory, patterns or none).
    matchers: Vec<(String, Option<GitIgnore>)>,
    relative_to: String,
    on_file: &'r mut dyn FnMut(&str, &str) -> Result<()>,
}

impl PackageWalk<'_> {
    /// `filepath.Walk` below `dir`: entries in byte order, directories not
    /// followed through symlinks.
    fn walk_dir(&mut self, dir: &str) -> Result<()> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .map_err(|e| go_io_error("open", dir, e))?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<_>>()
            .map_err(|e| go_io_error("readdirent", dir, e))?;
        names.sort();
        for name in names {
            if krmgraph_util::fsutil::temp_file_owner(&name).is_some() {
                // A render's temporary file, renamed or removed any moment
                // (or left by a killed render): never part of the package.
                continue;
            }
            let path = format!("{dir}/{name}");
            let meta = fs::symlink_metadata(&path).map_err(|e| go_io_error("lstat", &path, e))?;
            if meta.is_dir() {
                if !self.should_skip_dir(&path)? {
                    self.walk_dir(&path)?;
                }
            } else {
                self.visit_file(&path)?;
            }
        }
        Ok(())
    }

    /// `shouldSkipDir`.
    fn should_skip_dir(&mut self, path: &str) -> Result<bool> {
        if self.match_dir(path) {
            return Ok(true);
        }
        let package_file = &self.reader.package_file_name;
        if package_file.is_empty() || !Path::new(path).join(package_file).exists() {
            return Ok(false);
        }
        if !self.reader.include_subpackages {
            return Ok(true);
        }
        self.read_ignore_file(path)?;
        Ok(false)
    }

    fn visit_file(&mut self, path: &str) -> Result<()> {
        let rel = gopath::rel(&self.relative_to, path).unwrap_or_else(|| path.to_string());
        if self.should_skip_file(path)? {
            return Ok(());
        }
        (self.on_file)(path, &rel)
    }

    /// `shouldSkipFile`: ignored by `.krmignore`, or no glob matches the
    /// base name.
    fn should_skip_file(&mut self, path: &str) -> Result<bool> {
        if self.match_file(path) {
            return Ok(true);
        }
        let name = gopath::base(path);
        for glob in &self.globs {
            match gopath::matches(glob, &name) {
                Ok(true) => return Ok(false),
                Ok(false) => {}
                Err(e) => return Err(KyamlError::Package(e.to_string())),
            }
        }
        Ok(true)
    }

    /// `ignoreFilesMatcher.readIgnoreFile`.
    fn read_ignore_file(&mut self, dir: &str) -> Result<()> {
        self.verify_path(dir);
        let file = format!("{dir}/{IGNORE_FILE_NAME}");
        match fs::read(&file) {
            Ok(content) => self
                .matchers
                .push((dir.to_string(), Some(GitIgnore::parse(dir, &content)))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.matchers.push((dir.to_string(), None))
            }
            // Go opens a directory fine and then fails to read it: no patterns.
            Err(_) if Path::new(&file).is_dir() => {
                self.matchers
                    .push((dir.to_string(), Some(GitIgnore::parse(dir, b""))));
            }
            Err(e) => return Err(go_io_error("open", &file, e)),
        }
        Ok(())
    }

    /// `verifyPath`: pops matchers whose directory is not a prefix of
    /// `path` (a plain string prefix, as in kyaml).
    fn verify_path(&mut self, path: &str) {
        if let Some(j) = self
            .matchers
            .iter()
            .rposition(|(base, _)| path.starts_with(base.as_str()))
        {
            self.matchers.truncate(j + 1);
        }
    }

    fn match_file(&mut self, path: &str) -> bool {
        if self.matchers.is_empty() {
            return false;
        }
        self.verify_path(&gopath::dir(path));
        self.top_matches(path, false)
    }

    fn match_dir(&mut self, path: &str) -> bool {
        if self.matchers.is_empty() {
            return false;
        }
        self.verify_path(path);
        self.top_matches(path, true)
    }

    fn top_matches(&self, path: &str, is_dir: bool) -> bool {
        match self.matchers.last() {
            Some((_, Some(g))) => g.matches(path, is_dir),
            _ => false,
        }
    }
}

/// Opens and reads a file, with Go's wording for each failing step.
fn read_file(path: &str) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut file = fs::File::open(path).map_err(|e| go_io_error("open", path, e))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)
        .map_err(|e| go_io_error("read", path, e))?;
    Ok(bytes)
}

/// An I/O error worded as Go's `*PathError` (`open /p/x: permission
/// denied`).
fn go_io_error(op: &str, path: &str, e: std::io::Error) -> KyamlError {
    let text = match e.raw_os_error() {
        Some(code) => go_errno_text(code)
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string()),
        None => e.to_string(),
    };
    KyamlError::Package(format!("{op} {path}: {text}"))
}

fn go_errno_text(code: i32) -> Option<&'static str> {
    Some(match code {
        1 => "operation not permitted",
        2 => "no such file or directory",
        13 => "permission denied",
        20 => "not a directory",
        21 => "is a directory",
        40 => "too many levels of symbolic links",
        _ => return None,
    })
}

/// `LocalPackageWriter`'s options.
#[derive(Clone, Debug, Default)]
pub struct WriterOptions {
    /// The package directory, as named in error messages.
    pub package_path: String,
    /// Keep the reader's annotations (path, index, seqindent).
    pub keep_reader_annotations: bool,
    /// Annotations removed from every resource (kpt: the reader's
    /// `SetAnnotations` keys, i.e. the package path).
    pub clear_annotations: Vec<String>,
}

/// The content of each file, by slash path relative to the package.
pub type RenderedFiles = BTreeMap<String, Vec<u8>>;

/// The blake3 of the file at a slash path as the render read it.
pub type ReadDigest<'a> = dyn Fn(&str) -> Option<[u8; 32]> + Sync + 'a;
/// The bytes of the file at a slash path as the render read it.
pub type ReadBytes<'a> = dyn Fn(&str) -> Option<Vec<u8>> + Sync + 'a;

/// The files as the render read them (paths relative as the writer's
/// are): a file written from resources the file memo knows were written
/// as the bytes it was read with takes them instead of being encoded.
pub struct Existing<'a> {
    /// The file memo ([`super::file_memo`]).
    pub memo: &'a file_memo::FileMemo,
    /// A file's digest.
    pub digest: &'a ReadDigest<'a>,
    /// A file's bytes.
    pub bytes: &'a ReadBytes<'a>,
    /// Encode such files anyway and panic on a difference
    /// (`KRMGRAPH_CHECK_DIRECT`).
    pub check: bool,
}

/// `LocalPackageWriter.Write` without the disk: defaults missing paths and
/// indexes, checks the paths, groups by path, sorts each file by index,
/// and serializes each file as [`ByteWriter`] does — or, with `existing`,
/// takes the bytes a file already has when the file memo knows its
/// resources were written as those bytes.
pub fn render_files(
    mut nodes: Vec<Node>,
    options: &WriterOptions,
    existing: Option<&Existing>,
) -> Result<RenderedFiles> {
    kioutil::default_path_and_index_annotation("", &mut nodes)?;
    let paths = krmgraph_util::par::each(&nodes, |node| {
        for key in [INDEX_ANNOTATION, PATH_ANNOTATION] {
            if rnode::get_annotation(node, key)?.is_none_or(|v| v.value.is_empty()) {
                return Err(KyamlError::Package(format!(
                    "resources must be annotated with {key} to be written to files"
                )));
            }
        }
        Ok(rnode::get_annotation(node, PATH_ANNOTATION)?
            .map(|v| v.value.to_string())
            .unwrap_or_default())
    })?;
    let mut groups: BTreeMap<String, Vec<Node>> = BTreeMap::new();
    for (node, path) in nodes.into_iter().zip(paths) {
        if gopath::is_abs(&path) {
            return Err(KyamlError::Package(
                "package paths may not be absolute paths".into(),
            ));
        }
        let cleaned = gopath::clean(&path);
        if cleaned.contains("..") {
            return Err(KyamlError::Package(format!(
                "resource must be written under package {}: {cleaned}",
                options.package_path
            )));
        }
        groups.entry(path).or_default().push(node);
    }
    let mut clear = options.clear_annotations.clone();
    if !options.keep_reader_annotations {
        clear.push(PATH_ANNOTATION.to_string());
        clear.push(LEGACY_PATH_ANNOTATION.to_string());
    }
    let writer = ByteWriter {
        keep_reader_annotations: options.keep_reader_annotations,
        clear_annotations: clear,
        ..ByteWriter::default()
    };
    let memo_options = writer_description(&writer);
    // Files are serialized in parallel; the first failure in path order is
    // the one reported, as a file-by-file writer would meet it.
    let serialized: Vec<Result<(String, Vec<u8>)>> = groups
        .into_iter()
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|(path, mut group)| {
            kioutil::sort_nodes(&mut group)?;
            let path = gopath::clean(&path);
            let bytes = match existing {
                Some(existing) => write_remembered(&writer, group, &path, existing, &memo_options)?,
                None => writer.write_owned(group)?,
            };
            Ok((path, bytes))
        })
        .collect();
    let mut files = BTreeMap::new();
    for file in serialized {
        let (path, bytes) = file?;
        files.insert(path, bytes);
    }
    Ok(files)
}

/// A file's bytes: those `existing` has at `path` when the file memo knows
/// `group` was written as them, else its encoding (then remembered).
fn write_remembered(
    writer: &ByteWriter,
    group: Vec<Node>,
    path: &str,
    existing: &Existing,
    memo_options: &[u8],
) -> Result<Vec<u8>> {
    let key = file_memo::key(&group, memo_options);
    let remembered = existing
        .memo
        .known(&key)
        .filter(|digest| (existing.digest)(path).as_ref() == Some(digest))
        .and_then(|_| (existing.bytes)(path));
    if let Some(bytes) = remembered {
        if existing.check {
            let encoded = writer.write_owned(group)?;
            assert!(
                encoded == bytes,
                "the file memo gave {path} other bytes than its encoding"
            );
        }
        return Ok(bytes);
    }
    let bytes = writer.write_owned(group)?;
    existing.memo.learn(key, &bytes);
    Ok(bytes)
}

/// What of a file writer's options its output depends on, for the file
/// memo's key.
fn writer_description(writer: &ByteWriter) -> Vec<u8> {
    let mut out = vec![u8::from(writer.keep_reader_annotations)];
    for name in &writer.clear_annotations {
        out.extend_from_slice(&(name.len() as u64).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
    }
    out
}

/// Writes `files` under `root`, all or nothing ([`fsutil::commit`]): fails
/// before writing anything if `root` is missing, a target is a directory,
/// or a file or directory it must write cannot be written; creates parent
/// directories; writes each file to a temporary file in its directory and
/// renames it over the target (through a symlinked target to the file it
/// points at), keeping an existing file's permissions. Files that already
/// hold their bytes are not touched.
///
/// [`fsutil::commit`]: krmgraph_util::fsutil::commit
pub fn write_files(root: &Path, files: &RenderedFiles) -> Result<()> {
    let changes = file_changes(root, files)?;
    krmgraph_util::fsutil::commit(&changes)
        .map(|_| ())
        .map_err(|e| KyamlError::Package(e.message))
}

/// The changes [`write_files`] makes, for a caller that has more to
/// commit with them (files to delete); fails as [`write_files`] does if
/// `root` is missing or a target is a directory.
pub fn file_changes<'a>(
    root: &Path,
    files: &'a RenderedFiles,
) -> Result<Vec<krmgraph_util::fsutil::FileChange<'a>>> {
    file_changes_knowing(root, files, |_| false)
}

/// [`file_changes`] where `is_file` names paths known to be regular files
/// (read as such by this render): those are not looked up again to check
/// that they are not directories. One that became a directory since is
/// found by the commit, which reads every file it writes.
pub fn file_changes_knowing<'a>(
    root: &Path,
    files: &'a RenderedFiles,
    is_file: impl Fn(&str) -> bool,
) -> Result<Vec<krmgraph_util::fsutil::FileChange<'a>>> {
    if !root.exists() {
        return Err(KyamlError::Package(format!(
            "could not write to {:?}: file does not exist",
            root.display().to_string()
        )));
    }
    let root = if root.is_dir() {
        root.to_path_buf()
    } else {
        root.parent().unwrap_or(root).to_path_buf()
    };
    for path in files.keys().filter(|path| !is_file(path)) {
        if root.join(path).is_dir() {
            return Err(KyamlError::Package(format!(
                "config.kubernetes.io/path cannot be a directory: {path}"
            )));
        }
    }
    Ok(files
        .iter()
        .map(|(path, content)| krmgraph_util::fsutil::FileChange::Write(root.join(path), content))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn package(files: &[&str], krmignore: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, "a: b\n").unwrap();
        }
        fs::write(dir.path().join(IGNORE_FILE_NAME), krmignore).unwrap();
        dir
    }

    fn read_paths(reader: &LocalPackageReader) -> Vec<String> {
        reader
            .files()
            .unwrap()
            .into_iter()
            .map(|(_, rel)| rel)
            .collect()
    }

    /// The package and `.krmignore` of the kpt experiment recorded here:
    /// `kpt fn render -o stdout` read exactly `want`.
    #[test]
    fn krmignore_like_kpt() {
        let files = [
            "Kptfile",
            "foo.yaml",
            "foo/inner.yaml",
            "x/foo/a.yaml",
            "a/b.yaml",
            "x/a/b.yaml",
            "c.yaml",
            "sub/c.yaml",
            "dd/x.yaml",
            "q/dd/y.yaml",
            "z.yml",
            "keep.yml",
            "x/keep.yml",
            "#hash.yaml",
            "s/t.yaml",
            "x/s/t.yaml",
            "spaced.yaml",
            "g1/x.yaml",
            "h/g2/x.yaml",
            "w/sub2/v.yaml",
            "sub2/v.yaml",
            "fooz.yaml",
            ".hidden.yaml",
            ".git/g.yaml",
            "x/#c.yaml",
            "abs/d/e.yaml",
            "abs/e.yaml",
        ];
        let ignore = "# comment\nfoo\na/b.yaml\n/c.yaml\ndd/\n*.yml\n!keep.yml\n\\#hash.yaml\n/s/t.yaml\n   spaced.yaml   \ng*/x.yaml\nsub2/*.yaml\n/abs/d\n";
        let dir = package(&files, ignore);
        let reader = LocalPackageReader::kpt(dir.path(), "");
        let want = [
            ".git/g.yaml",
            ".hidden.yaml",
            "Kptfile",
            "abs/e.yaml",
            "foo.yaml",
            "fooz.yaml",
            "keep.yml",
            "sub/c.yaml",
            "x/#c.yaml",
            "x/keep.yml",
            "x/s/t.yaml",
        ];
        let mut got = read_paths(&reader);
        got.sort();
        assert_eq!(got, want);
    }

    /// A second kpt experiment: anchored directories, globs with `/`,
    /// `**`, negated directories, directory-only patterns naming files.
    #[test]
    fn krmignore_globs_like_kpt() {
        let files = [
            "Kptfile",
            "abs/d/e.yaml",
            "abs2/d/e.yaml",
            "x/d/e.yaml",
            "d/f.yaml",
            "m/e.yaml",
            "n/o/e.yaml",
            "e.yaml",
            "xfile.yaml",
            "aa.yaml",
            "b/aa.yaml",
            "q/r.yaml",
            "q/s/r.yaml",
            "t.yaml",
            "s/t.yaml",
            "a/b/t.yaml",
            "keepdir/k.yaml",
            "otherdir/k.yaml",
            "y/z.yaml",
        ];
        let ignore = "/abs/d/\nd/*\n*/e.yaml\nxfile.yaml/\n/a*\n/q/*.yaml\n**/t.yaml\n*dir/\n!keepdir/\ny/z.yaml/\n";
        let dir = package(&files, ignore);
        let mut got = read_paths(&LocalPackageReader::kpt(dir.path(), ""));
        got.sort();
        let want = [
            "Kptfile",
            "b/aa.yaml",
            "e.yaml",
            "keepdir/k.yaml",
            "q/s/r.yaml",
            "t.yaml",
            "xfile.yaml",
            "y/z.yaml",
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn walk_order_globs_and_subpackages() {
        let files = [
            "Kptfile",
            "b.yaml",
            "a.json",
            "B.yaml",
            "x.YAML",
            "y.yml.bak",
            "dir/plain.yaml",
            "sub/Kptfile",
            "sub/s.yaml",
            "dir-x/z.yml",
        ];
        let dir = package(&files, "");
        let reader = LocalPackageReader::kpt(dir.path(), "");
        assert_eq!(
            read_paths(&reader),
            [
                "B.yaml",
                "Kptfile",
                "a.json",
                "b.yaml",
                "dir/plain.yaml",
                "dir-x/z.yml"
            ]
        );
        let with_subpackages = LocalPackageReader {
            include_subpackages: true,
            ..reader
        };
        assert!(read_paths(&with_subpackages).contains(&"sub/s.yaml".to_string()));
    }

    #[test]
    fn symlinked_files_are_read_and_directories_are_not() {
        let dir = package(&["Kptfile", "real/r.yaml", "t.yaml"], "");
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("linkdir")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("t.yaml"), dir.path().join("u.yaml")).unwrap();
        let reader = LocalPackageReader::kpt(dir.path(), "");
        assert_eq!(
            read_paths(&reader),
            ["Kptfile", "real/r.yaml", "t.yaml", "u.yaml"]
        );
    }

    #[test]
    fn write_files_replaces_atomically_and_creates_dirs() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.yaml"), "old").unwrap();
        let mut files = RenderedFiles::new();
        files.insert("a.yaml".into(), b"new\n".to_vec());
        files.insert("d/e/b.yaml".into(), b"b\n".to_vec());
        write_files(dir.path(), &files).unwrap();
        assert_eq!(fs::read(dir.path().join("a.yaml")).unwrap(), b"new\n");
        assert_eq!(fs::read(dir.path().join("d/e/b.yaml")).unwrap(), b"b\n");
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 2);
        fs::create_dir(dir.path().join("c.yaml")).unwrap();
        files.insert("c.yaml".into(), b"c\n".to_vec());
        files.insert("a.yaml".into(), b"not written\n".to_vec());
        let err = write_files(dir.path(), &files).unwrap_err();
        assert_eq!(
            err.to_string(),
            "config.kubernetes.io/path cannot be a directory: c.yaml"
        );
        assert_eq!(fs::read(dir.path().join("a.yaml")).unwrap(), b"new\n");
    }

    /// Resources for `a.yaml` and `b.yaml`, as a reader annotates them.
    fn two_files(a_value: &str) -> Vec<Node> {
        let text = format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  annotations:\n    config.kubernetes.io/path: 'a.yaml'\n    config.kubernetes.io/index: '0'\ndata:\n  k: {a_value}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  annotations:\n    config.kubernetes.io/path: 'b.yaml'\n    config.kubernetes.io/index: '0'\n"
        );
        krmgraph_yaml::decode::parse_documents(text.as_bytes()).unwrap()
    }

    #[test]
    fn a_file_the_memo_knows_takes_the_bytes_it_has_unencoded() {
        let options = WriterOptions::default();
        let memo = file_memo::FileMemo::default();
        let no_digest = |_: &str| None;
        let no_bytes = |_: &str| None;
        let learning = Existing {
            memo: &memo,
            digest: &no_digest,
            bytes: &no_bytes,
            check: false,
        };
        let encoded =
            render_files(two_files("file memo test 1"), &options, Some(&learning)).unwrap();
        assert_eq!(
            encoded,
            render_files(two_files("file memo test 1"), &options, None).unwrap()
        );
        // Bytes are taken only from a file read with the digest of what was
        // encoded: a stand-in shows which files were not encoded.
        let a_digest = *blake3::hash(&encoded["a.yaml"]).as_bytes();
        let digest = |path: &str| (path == "a.yaml").then_some(a_digest);
        let stand_in = |path: &str| (path == "a.yaml").then(|| b"unencoded".to_vec());
        let existing = Existing {
            memo: &memo,
            digest: &digest,
            bytes: &stand_in,
            check: false,
        };
        let files = render_files(two_files("file memo test 1"), &options, Some(&existing)).unwrap();
        assert_eq!(files["a.yaml"], b"unencoded");
        assert_eq!(files["b.yaml"], encoded["b.yaml"]);
        // Another value is another file: encoded.
        let files = render_files(two_files("file memo test 2"), &options, Some(&existing)).unwrap();
        assert!(String::from_utf8_lossy(&files["a.yaml"]).contains("k: file memo test 2"));
        // A file read with other bytes: encoded.
        let other = |path: &str| (path == "a.yaml").then_some([0; 32]);
        let existing = Existing {
            memo: &memo,
            digest: &other,
            bytes: &stand_in,
            check: false,
        };
        let files = render_files(two_files("file memo test 1"), &options, Some(&existing)).unwrap();
        assert_eq!(files["a.yaml"], encoded["a.yaml"]);
    }

    #[test]
    #[should_panic(expected = "the file memo gave a.yaml other bytes")]
    fn checking_encodes_what_the_memo_gives_and_fails_on_a_difference() {
        let options = WriterOptions::default();
        let memo = file_memo::FileMemo::default();
        let no_digest = |_: &str| None;
        let no_bytes = |_: &str| None;
        let learning = Existing {
            memo: &memo,
            digest: &no_digest,
            bytes: &no_bytes,
            check: true,
        };
        let encoded =
            render_files(two_files("file memo test 3"), &options, Some(&learning)).unwrap();
        let a_digest = *blake3::hash(&encoded["a.yaml"]).as_bytes();
        let digest = |path: &str| (path == "a.yaml").then_some(a_digest);
        let wrong = |path: &str| (path == "a.yaml").then(|| b"wrong".to_vec());
        let existing = Existing {
            memo: &memo,
            digest: &digest,
            bytes: &wrong,
            check: true,
        };
        let _ = render_files(two_files("file memo test 3"), &options, Some(&existing));
    }
}
