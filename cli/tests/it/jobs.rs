//! Parallel rendering changes nothing a user sees: generated trees (the
//! differential suite's, with its exec functions), the project's render
//! cases and the BFS cases, rendered with `--jobs 1` and `--jobs 4` in
//! every output mode, leave identical files, stdout, stderr (the progress
//! log), `results.yaml` and exit codes.

use std::path::Path;

use crate::differential::{generate, python_dir, root_relative, write_case, MODES};
use crate::kpt_diff::{describe_difference, render_with_env, Rendered};
use crate::util::{copy_tree, repo_root};

/// Renders `src` with `jobs` under `<work>/j<jobs>`.
fn render(work: &Path, src: &Path, args: &[&str], jobs: &str, path: &str) -> Rendered {
    let work = work.join(format!("j{jobs}"));
    let mut args = args.to_vec();
    args.extend(["--jobs", jobs]);
    let rendered = render_with_env("krmgraph", &work, src, &args, &[("PATH", path)]);
    root_relative(rendered, &work.join("krmgraph"))
}

fn compare_jobs(label: &str, src: &Path, work: &Path, path: &str, failures: &mut Vec<String>) {
    for (mode, mode_args) in MODES.iter().filter(|(m, _)| *m != "re-render") {
        let mut args = vec!["--allow-exec"];
        args.extend_from_slice(mode_args);
        let one = render(work, src, &args, "1", path);
        let four = render(work, src, &args, "4", path);
        if let Some(d) = describe_difference(&one, &four) {
            failures.push(format!("{label} ({mode}): --jobs 1 vs 4: {d}"));
        }
    }
}

#[test]
fn parallel_renders_equal_sequential() {
    let python = match python_dir() {
        Ok(dir) => dir,
        Err(why) => {
            eprintln!("skipping parallel_renders_equal_sequential: {why}");
            return;
        }
    };
    let path = format!(
        "{}:{}",
        python.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let fns = repo_root().join("testdata/functions");
    let mut failures = Vec::new();
    for seed in 0..12 {
        let work = tempfile::tempdir().unwrap();
        let src = work.path().join("src").join("pkg");
        write_case(&generate(seed, &fns.to_string_lossy()), &src);
        compare_jobs(
            &format!("seed {seed}"),
            &src,
            work.path(),
            &path,
            &mut failures,
        );
    }
    for dir in ["testdata/render", "testdata/bfs"] {
        for entry in std::fs::read_dir(repo_root().join(dir)).unwrap() {
            let case = entry.unwrap().path();
            let pkg = if case.join("pkg").is_dir() {
                case.join("pkg")
            } else {
                case.clone()
            };
            let work = tempfile::tempdir().unwrap();
            let src = work.path().join("src").join("pkg");
            copy_tree(&pkg, &src).unwrap();
            for kptfile in walk_kptfiles(&src) {
                let text = std::fs::read_to_string(&kptfile).unwrap();
                let resolved = text.replace("FUNCTIONS/", &format!("{}/", fns.display()));
                std::fs::write(&kptfile, resolved).unwrap();
            }
            compare_jobs(
                &case.display().to_string(),
                &src,
                work.path(),
                &path,
                &mut failures,
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

fn walk_kptfiles(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk_kptfiles(&path));
        } else if path.file_name().is_some_and(|n| n == "Kptfile") {
            out.push(path);
        }
    }
    out
}
