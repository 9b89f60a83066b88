//! The harness the `builtins_*` tests share: kpt renders a one-package
//! tree whose pipeline calls `exec: <krmgraph> fn run <image>`, krmgraph
//! renders the same tree with `image: <image>`, and the trees, stdout,
//! stderr and `results.yaml` must be identical once the exec command is
//! spelled as the image. That checks a built-in crosses the function
//! boundary exactly as a process does; its own behaviour is checked by
//! unit tests and the conformance corpora.

use std::path::Path;

use crate::kpt_diff::{describe_difference, render_with, Rendered};
use crate::util::{kpt_available, krmgraph_bin};

/// One case: the image, the pipeline entry's config (a `configMap:` block
/// or a `configPath:` line), extra files, and whether the function fails.
pub struct Case {
    pub image: &'static str,
    pub config: &'static str,
    pub files: &'static [(&'static str, &'static str)],
    pub must_fail: bool,
}

/// Runs every case over `resources` (as `resources.yaml`); skips with a
/// printed reason without kpt (fails under `KRMGRAPH_REQUIRE_KPT=1`).
pub fn run_cases(test: &str, resources: &str, cases: &[Case]) {
    if !kpt_available(test) {
        return;
    }
    let failures: Vec<String> = cases
        .iter()
        .enumerate()
        .flat_map(|(i, c)| compare(i, resources, c.image, c.config, c.files, c.must_fail))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Renders one case with both tools; returns what differs.
pub fn compare(
    i: usize,
    resources: &str,
    image: &str,
    config: &str,
    files: &[(&str, &str)],
    must_fail: bool,
) -> Vec<String> {
    let work = tempfile::tempdir().unwrap();
    let exec = format!("{} fn run {image}", krmgraph_bin().display());
    let write = |dir: &Path, function: &str| {
        std::fs::create_dir_all(dir).unwrap();
        let mut kptfile = format!(
            "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg\npipeline:\n  mutators:\n    - {function}\n"
        );
        if !config.is_empty() {
            kptfile.push_str(&format!("      {config}\n"));
        }
        std::fs::write(dir.join("Kptfile"), kptfile).unwrap();
        std::fs::write(dir.join("resources.yaml"), resources).unwrap();
        for (name, text) in files {
            std::fs::write(dir.join(name), text).unwrap();
        }
    };
    let kpt_src = work.path().join("src-kpt").join("pkg");
    let our_src = work.path().join("src-krmgraph").join("pkg");
    write(&kpt_src, &format!("exec: {exec}"));
    write(&our_src, &format!("image: {image}"));
    let args = ["--allow-exec", "--results-dir", "<RESULTS>"];
    let kpt = as_image(
        render_with("kpt", work.path(), &kpt_src, &args),
        &exec,
        image,
    );
    let ours = render_with("krmgraph", work.path(), &our_src, &args);
    let mut failures = Vec::new();
    let want_exit = if must_fail { 1 } else { 0 };
    if kpt.exit_code != want_exit {
        failures.push(format!(
            "case {i} ({image}): kpt exited {}: {}",
            kpt.exit_code, kpt.stderr
        ));
    }
    if let Some(d) = describe_difference(&kpt, &ours) {
        failures.push(format!("case {i} ({image}): {d}"));
    }
    failures
}

/// A nested tree: a package at each of `packages` (directories below the
/// root, `""` the root itself), each with `resources` and a Kptfile whose
/// pipeline runs `functions` (image, `configMap:` block) in order; kpt
/// runs them as `exec: <krmgraph> fn run <image>`. Returns what differs.
/// Run by each ancestor in turn, a resource meets the same steps again
/// and again, which is where krmgraph's per-item fixed points apply.
pub fn compare_nested(
    packages: &[&str],
    resources: &str,
    functions: &[(&str, &str)],
) -> Vec<String> {
    let work = tempfile::tempdir().unwrap();
    let exec = |image: &str| format!("{} fn run {image}", krmgraph_bin().display());
    let write = |root: &Path, spell: &dyn Fn(&str) -> String| {
        for (depth, dir) in packages.iter().enumerate() {
            let dir = root.join(dir);
            std::fs::create_dir_all(&dir).unwrap();
            let mut kptfile = format!(
                "apiVersion: kpt.dev/v1\nkind: Kptfile\nmetadata:\n  name: pkg{depth}\npipeline:\n  mutators:\n"
            );
            for (image, config) in functions {
                kptfile.push_str(&format!("    - {}\n      {config}\n", spell(image)));
            }
            std::fs::write(dir.join("Kptfile"), kptfile).unwrap();
            std::fs::write(dir.join("resources.yaml"), resources).unwrap();
        }
    };
    let kpt_src = work.path().join("src-kpt").join("pkg");
    let our_src = work.path().join("src-krmgraph").join("pkg");
    write(&kpt_src, &|image| format!("exec: {}", exec(image)));
    write(&our_src, &|image| format!("image: {image}"));
    let args = ["--allow-exec", "--results-dir", "<RESULTS>"];
    let mut kpt = render_with("kpt", work.path(), &kpt_src, &args);
    for (image, _) in functions {
        kpt = as_image(kpt, &exec(image), image);
    }
    let ours = render_with("krmgraph", work.path(), &our_src, &args);
    let mut failures = Vec::new();
    if kpt.exit_code != 0 {
        failures.push(format!("kpt exited {}: {}", kpt.exit_code, kpt.stderr));
    }
    failures.extend(describe_difference(&kpt, &ours));
    failures
}

/// kpt's output with the exec command spelled as the image: as written in
/// the Kptfile, and as kpt reports it (a short name expanded to
/// `gcr.io/kpt-fn/`) in progress lines and `results.yaml`.
fn as_image(mut r: Rendered, exec: &str, image: &str) -> Rendered {
    let reported = if image.contains('/') {
        image.to_string()
    } else {
        format!("gcr.io/kpt-fn/{image}")
    };
    let fix = |s: &str, image: &str| {
        s.replace(&format!("exec: {exec}"), &format!("image: {image}"))
            .replace(&format!("\"{exec}\""), &format!("\"{image}\""))
    };
    r.stdout = fix(&r.stdout, image);
    r.stderr = fix(&r.stderr, &reported);
    for (name, bytes) in r.files.iter_mut() {
        let image = if name.contains("results.yaml") {
            &reported
        } else {
            image
        };
        *bytes = fix(&String::from_utf8_lossy(bytes), image).into_bytes();
    }
    r
}
