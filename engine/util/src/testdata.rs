//! The project's test fixtures, for the engine crates' unit tests: the
//! files of `testdata/` and of the conformance corpus checked out beside
//! the repository.

use std::path::{Path, PathBuf};

/// The files under the project's `testdata/` and, where it is checked out
/// beside the repository, the conformance corpus, whose extension is one
/// of `extensions`; sorted.
pub fn fixture_files(extensions: &[&str]) -> Vec<PathBuf> {
    fn walk(dir: &Path, extensions: &[&str], out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, extensions, out);
            } else if path
                .extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
            {
                out.push(path);
            }
        }
    }
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    walk(&repo.join("testdata"), extensions, &mut files);
    walk(&repo.join("../shared/conformance"), extensions, &mut files);
    files.sort();
    files
}
