//! The conformance runner: executes kpt-style e2e cases against krmgraph,
//! exactly as kpt's own harness does (`../shared/conformance/README.md`):
//! copy the case to `<tmp>/<name>`, commit it to a fresh git repository,
//! render twice (the second run checks idempotency), and compare the exit
//! code, stderr/stdout substrings, `results.yaml` and `git diff` against the
//! case's `.expected/`. In `exec.sh`, `kpt fn render` means krmgraph (a `kpt`
//! shim on `PATH` forwards to it).
//!
//! The project's own cases under `testdata/render` always run; the corpus in
//! `KRMGRAPH_CONFORMANCE_DIR` runs when the variable is set (CI points it at
//! `../shared/conformance/kpt-fn-render`). Each run prints one line per case
//! and a total, and fails if a case listed as `pass` in
//! `testdata/conformance/<corpus>.expected` does not pass.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use krmgraph_yaml::{decode::parse_documents, Kind};

use crate::util::{copy_tree, docker_available, krmgraph_bin, repo_root};

/// What `.expected/config.yaml` asks for.
#[derive(Debug, Default)]
struct CaseConfig {
    exit_code: i32,
    std_err: String,
    std_err_regex: Option<String>,
    std_out: String,
    allow_exec: bool,
    image_pull_policy: Option<String>,
    disable_output_truncate: bool,
    skip: bool,
    test_type: String,
    /// eval cases: the function and its `key=value` arguments.
    image: String,
    exec_path: String,
    args: Vec<String>,
}

/// The result of one case.
#[derive(Debug, PartialEq)]
enum Outcome {
    Pass,
    Fail(String),
    Skip(String),
}

fn read_config(expected: &Path) -> Result<CaseConfig, String> {
    let mut config = CaseConfig::default();
    let Ok(bytes) = std::fs::read(expected.join("config.yaml")) else {
        return Ok(config);
    };
    let docs = parse_documents(&bytes).map_err(|e| format!("config.yaml: {e}"))?;
    let Some(root) = docs.first().and_then(|d| d.content.first()) else {
        return Ok(config);
    };
    if root.kind != Kind::Mapping {
        return Ok(config);
    }
    for pair in root.content.chunks(2) {
        if pair[0].value == "args" {
            config.args = pair[1]
                .content
                .chunks(2)
                .map(|kv| format!("{}={}", kv[0].value, kv[1].value))
                .collect();
            continue;
        }
        let (key, value) = (&pair[0].value, pair[1].value.to_string());
        let truthy = value == "true";
        match key.as_str() {
            "exitCode" => config.exit_code = value.parse().unwrap_or(0),
            "stdErr" => config.std_err = value,
            "stdErrRegEx" => config.std_err_regex = Some(value),
            "stdOut" => config.std_out = value,
            "allowExec" => config.allow_exec = truthy,
            "imagePullPolicy" => config.image_pull_policy = Some(value),
            "disableOutputTruncate" => config.disable_output_truncate = truthy,
            "skip" => config.skip = truthy,
            "testType" => config.test_type = value,
            "image" => config.image = value,
            "execPath" => config.exec_path = value,
            _ => {}
        }
    }
    Ok(config)
}

/// kpt's harness replaces the duration of `[PASS] "x" in 1.2s` lines with
/// `0s` before comparing stderr.
fn sanitize_stderr(stderr: &str) -> String {
    stderr
        .split('\n')
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if (line.starts_with("[PASS]") || line.starts_with("[FAIL]"))
                && fields.len() == 4
                && fields[2] == "in"
            {
                format!("{} {} in 0s", fields[0], fields[1])
            } else {
                line.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args([
            "-c",
            "user.name=none",
            "-c",
            "user.email=none",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_DIFF_OPTS", "")
        .output()
        .expect("git runs")
}

/// A directory holding a `kpt` shim that forwards `kpt fn render|eval` to
/// krmgraph (and anything else to the real kpt), for `exec.sh` scripts.
fn kpt_shim(tmp: &Path) -> PathBuf {
    let dir = tmp.join("shim");
    std::fs::create_dir_all(&dir).unwrap();
    let script = format!(
        "#!/usr/bin/env bash\nexport KRMGRAPH_NO_CACHE={no_cache}\nif [ \"$1\" = fn ] && [ \"$2\" = render ]; then shift 2; exec {bin} render \"$@\"; fi\n\
         if [ \"$1\" = fn ] && [ \"$2\" = eval ]; then shift 2; exec {bin} fn eval \"$@\"; fi\n\
         {fallback}",
        bin = krmgraph_bin().display(),
        no_cache = cache_off(),
        fallback = real_kpt_fallback()
    );
    let path = dir.join("kpt");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

/// `KRMGRAPH_NO_CACHE` for krmgraph: `1` (every render runs), unless the
/// runner is to exercise the cache (`KRMGRAPH_CONFORMANCE_CACHE=1`; the
/// cache directory is then the caller's `KRMGRAPH_CACHE_DIR`).
fn cache_off() -> &'static str {
    if std::env::var("KRMGRAPH_CONFORMANCE_CACHE").as_deref() == Ok("1") {
        "0"
    } else {
        "1"
    }
}

/// Commands other than `fn render|eval` (e.g. `kpt pkg init`) are kpt's
/// own: the shim hands them to the real kpt when it is installed.
fn real_kpt_fallback() -> String {
    let real = Command::new("sh")
        .args(["-c", "command -v kpt"])
        .output()
        .ok();
    match real.map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string()) {
        Some(path) if !path.is_empty() => format!("exec {path} \"$@\"\n"),
        _ => "echo \"kpt shim: kpt is not installed for: $*\" >&2; exit 2\n".to_string(),
    }
}

fn run_bash(script: &Path, cwd: &Path, shim: &Path) -> Output {
    let path = format!(
        "{}:{}",
        shim.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    Command::new("bash")
        .arg(script)
        .current_dir(cwd)
        .env("PATH", path)
        .output()
        .expect("bash runs")
}

/// Which tool renders: krmgraph, or the real kpt when blessing the
/// project's own cases (their expectations come from kpt, the oracle).
#[derive(Clone, Copy, PartialEq)]
enum Tool {
    Krmgraph,
    Kpt,
}

fn render_command(tool: Tool, pkg: &Path, config: &CaseConfig, results: Option<&Path>) -> Output {
    let mut cmd = match tool {
        Tool::Krmgraph => {
            let mut c = Command::new(krmgraph_bin());
            c.arg("render").env("KRMGRAPH_NO_CACHE", cache_off());
            c
        }
        Tool::Kpt => {
            let mut c = Command::new("kpt");
            c.args(["fn", "render"]);
            c
        }
    };
    if config.test_type == "eval" {
        cmd = match tool {
            Tool::Krmgraph => {
                let mut c = Command::new(krmgraph_bin());
                c.args(["fn", "eval"]);
                c
            }
            Tool::Kpt => {
                let mut c = Command::new("kpt");
                c.args(["fn", "eval"]);
                c
            }
        };
        cmd.arg(pkg);
        if !config.image.is_empty() {
            cmd.arg("--image").arg(&config.image);
        }
        if !config.exec_path.is_empty() {
            cmd.arg("--exec").arg(&config.exec_path);
        }
        if let Some(dir) = results {
            cmd.arg("--results-dir").arg(dir);
        }
        if !config.args.is_empty() {
            cmd.arg("--").args(&config.args);
        }
        cmd.current_dir(pkg.parent().unwrap());
        return cmd.output().expect("the tool runs");
    }
    cmd.arg(pkg);
    if let Some(dir) = results {
        cmd.arg("--results-dir").arg(dir);
    }
    if let Some(policy) = &config.image_pull_policy {
        cmd.arg("--image-pull-policy").arg(policy);
    }
    if config.allow_exec {
        cmd.arg("--allow-exec");
    }
    if config.disable_output_truncate {
        cmd.arg("--truncate-output=false");
    }
    // kpt's harness runs from its e2e directory; relative exec paths in the
    // corpus are relative to that, which the case directory's parent mimics.
    cmd.current_dir(pkg.parent().unwrap());
    cmd.output().expect("krmgraph runs")
}

fn first_difference(want: &str, got: &str) -> String {
    let (want, got) = (want.trim(), got.trim());
    for (i, (w, g)) in want.lines().zip(got.lines()).enumerate() {
        if w != g {
            return format!("line {}: want {w:?}, got {g:?}", i + 1);
        }
    }
    format!(
        "want {} lines, got {} lines",
        want.lines().count(),
        got.lines().count()
    )
}

/// Runs one case directory (the one holding `.expected/`).
fn run_case(case: &Path) -> Outcome {
    run_case_with(case, Tool::Krmgraph)
}

/// Runs `case` with `tool`; with [`Tool::Kpt`], writes what kpt produced as
/// the case's `diff.patch` (and `results.yaml` when the case has one).
fn run_case_with(case: &Path, tool: Tool) -> Outcome {
    let expected = case.join(".expected");
    let config = match read_config(&expected) {
        Ok(c) => c,
        Err(e) => return Outcome::Fail(e),
    };
    if config.skip {
        return Outcome::Skip("the case sets `skip: true`".into());
    }
    if !matches!(config.test_type.as_str(), "" | "render" | "eval") {
        return Outcome::Skip(format!("testType `{}` is not known", config.test_type));
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let pkg = tmp.path().join(case.file_name().unwrap());
    if let Err(e) = copy_tree(case, &pkg) {
        return Outcome::Fail(format!("copying the case: {e}"));
    }
    let shim = match tool {
        Tool::Krmgraph => kpt_shim(tmp.path()),
        Tool::Kpt => tmp.path().join("no-shim"),
    };
    git(&pkg, &["init", "-q"]);
    git(&pkg, &["add", "--all"]);
    git(&pkg, &["commit", "-qm", "first", "--allow-empty"]);
    let first =
        String::from_utf8_lossy(&git(&pkg, &["log", "-n", "1", "--pretty=format:%h"]).stdout)
            .to_string();
    let results_dir = expected
        .join("results.yaml")
        .exists()
        .then(|| tmp.path().join("results"));
    for run in 0..2 {
        if expected.join("setup.sh").exists() {
            run_bash(&expected.join("setup.sh"), &pkg, &shim);
        }
        let out = if expected.join("exec.sh").exists() {
            run_bash(&expected.join("exec.sh"), &pkg, &shim)
        } else {
            render_command(tool, &pkg, &config, results_dir.as_deref())
        };
        let stderr = sanitize_stderr(&String::from_utf8_lossy(&out.stderr));
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        let code = out.status.code().unwrap_or(-1);
        if let Some(skip) = unavailable_image(&stderr) {
            return skip;
        }
        if code != config.exit_code {
            return unavailable_image(&stderr).unwrap_or_else(|| {
                Outcome::Fail(format!(
                    "run {}: exit code {code}, want {}; stderr: {}",
                    run + 1,
                    config.exit_code,
                    stderr.trim()
                ))
            });
        }
        if tool == Tool::Kpt && run == 0 {
            bless(&expected, results_dir.as_deref());
        }
        if run == 0 {
            if let Some(failure) =
                check_first_run(&config, &stderr, &stdout, results_dir.as_deref(), &expected)
            {
                return Outcome::Fail(failure);
            }
        }
        git(&pkg, &["add", "--all"]);
        git(&pkg, &["commit", "-qm", "second", "--allow-empty"]);
        let diff =
            String::from_utf8_lossy(&git(&pkg, &["diff", &first, "HEAD"]).stdout).to_string();
        if tool == Tool::Kpt && run == 0 {
            std::fs::write(expected.join("diff.patch"), &diff).unwrap();
        }
        let want = std::fs::read_to_string(expected.join("diff.patch")).unwrap_or_default();
        if diff.trim() != want.trim() {
            return Outcome::Fail(format!(
                "run {}: diff.patch differs: {}",
                run + 1,
                first_difference(&want, &diff)
            ));
        }
        if expected.join("teardown.sh").exists() {
            run_bash(&expected.join("teardown.sh"), &pkg, &shim);
        }
        if code != 0 {
            break;
        }
    }
    Outcome::Pass
}

/// Writes kpt's `results.yaml` as the case's expectation.
fn bless(expected: &Path, results_dir: Option<&Path>) {
    if let Some(dir) = results_dir {
        if let Ok(results) = std::fs::read(dir.join("results.yaml")) {
            std::fs::write(expected.join("results.yaml"), results).unwrap();
        }
    }
}

/// A case that failed because it needs a function that cannot run here is
/// skipped, naming why: no container engine answers, or the image is in a
/// registry that cannot be reached (none is, from these machines).
fn unavailable_image(stderr: &str) -> Option<Outcome> {
    let lines: Vec<&str> = stderr.lines().collect();
    if let Some(line) = lines
        .iter()
        .find(|l| l.contains("no container engine answers at"))
    {
        return Some(Outcome::Skip(format!(
            "needs a container engine: {}",
            line.trim_start_matches("Error: ").trim()
        )));
    }
    // docker's text for a pull that cannot reach the registry, as kpt's
    // log quotes it.
    let at = lines
        .iter()
        .position(|l| l.contains(r#"docker: Error response from daemon: Get \"https://"#))?;
    let image = lines[..at]
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("[FAIL] "))
        .and_then(|l| l.rsplit_once(" in "))
        .map_or("", |(name, _)| name);
    Some(Outcome::Skip(format!(
        "needs {image} from a registry, which is not reachable here ({})",
        lines[at].trim()
    )))
}

fn check_first_run(
    config: &CaseConfig,
    stderr: &str,
    stdout: &str,
    results_dir: Option<&Path>,
    expected: &Path,
) -> Option<String> {
    if !stderr.contains(&config.std_err) {
        return Some(format!(
            "stderr does not contain {:?}; stderr: {:?}",
            config.std_err, stderr
        ));
    }
    if let Some(re) = &config.std_err_regex {
        if !regex::Regex::new(re).is_ok_and(|re| re.is_match(stderr)) {
            return Some(format!("stderr does not match /{re}/"));
        }
    }
    if !stdout.contains(&config.std_out) {
        return Some(format!(
            "stdout does not contain {:?}; stdout: {:?}",
            config.std_out, stdout
        ));
    }
    let dir = results_dir?;
    let got = std::fs::read_dir(dir)
        .ok()
        .and_then(|mut entries| entries.next())
        .and_then(|e| e.ok())
        .and_then(|e| std::fs::read_to_string(e.path()).ok())
        .unwrap_or_default();
    let want = std::fs::read_to_string(expected.join("results.yaml")).unwrap_or_default();
    (got.trim() != want.trim())
        .then(|| format!("results.yaml differs: {}", first_difference(&want, &got)))
}

/// Every case under `root` (a directory holding `.expected/`), sorted.
fn find_cases(root: &Path) -> Vec<PathBuf> {
    let mut cases = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if dir.join(".expected").is_dir() {
            cases.push(dir.clone());
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            if path.is_dir() && !path.is_symlink() && name != ".expected" && name != ".git" {
                stack.push(path);
            }
        }
    }
    cases.sort();
    cases
}

/// `<case> pass|docker|skip` lines: what CI holds the corpus to (`docker`:
/// must pass where a Docker engine answers, which CI requires).
fn read_expectations(file: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(file)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            Some((parts.next()?.to_string(), parts.next()?.to_string()))
        })
        .collect()
}

/// Runs every case under `root`, prints a line per case and the total, and
/// returns the names of cases expected to pass that did not.
fn run_corpus(label: &str, root: &Path, expectations: &BTreeMap<String, String>) -> Vec<String> {
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    // Asked once, for the first `docker` case.
    let engine = std::sync::OnceLock::new();
    let mut regressions = Vec::new();
    let mut report = String::new();
    let mut println = |line: String| {
        println!("{line}");
        report.push_str(&line);
        report.push('\n');
    };
    // `KRMGRAPH_CASES=a,b` runs only cases whose name contains one of the
    // words (to iterate on a few cases).
    let only: Vec<String> = std::env::var("KRMGRAPH_CASES")
        .map(|v| v.split(',').map(str::to_string).collect())
        .unwrap_or_default();
    for case in find_cases(root) {
        let name = case
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        if !only.is_empty() && !only.iter().any(|w| name.contains(w.as_str())) {
            continue;
        }
        let outcome = run_case(&case);
        match &outcome {
            Outcome::Pass => {
                passed += 1;
                println(format!("{label}: pass {name}"));
            }
            Outcome::Fail(why) => {
                failed += 1;
                println(format!("{label}: FAIL {name}: {why}"));
            }
            Outcome::Skip(why) => {
                skipped += 1;
                println(format!("{label}: skip {name}: {why}"));
            }
        }
        let expected_pass = match expectations.get(&name).map(String::as_str) {
            Some("pass") => true,
            Some("docker") => *engine.get_or_init(|| docker_available(&name)),
            _ => false,
        };
        if expected_pass && outcome != Outcome::Pass {
            regressions.push(name);
        }
    }
    println(format!(
        "{label}: {passed} passed, {failed} failed, {skipped} skipped"
    ));
    // Also kept as a file, so CI can show it without --nocapture.
    let dir = repo_root().join("target/conformance");
    let _ = std::fs::create_dir_all(&dir);
    let _ = std::fs::write(dir.join(format!("{}.txt", label.replace('/', "-"))), report);
    regressions
}

#[test]
fn project_cases() {
    let root = repo_root().join("testdata/render");
    if !root.is_dir() {
        return;
    }
    // Every project case must pass.
    let all: BTreeMap<String, String> = find_cases(&root)
        .iter()
        .map(|c| {
            (
                c.strip_prefix(&root).unwrap().to_string_lossy().to_string(),
                "pass".to_string(),
            )
        })
        .collect();
    if std::env::var("KRMGRAPH_BLESS").as_deref() == Ok("1") {
        // Expectations come from the real kpt: run each case with kpt and
        // keep what it wrote.
        for case in find_cases(&root) {
            let outcome = run_case_with(&case, Tool::Kpt);
            println!("blessed with kpt: {} ({outcome:?})", case.display());
        }
    }
    let regressions = run_corpus("testdata/render", &root, &all);
    assert!(
        regressions.is_empty(),
        "project cases failed: {regressions:?}"
    );
}

/// krmgraph's own cases of the built-in validators (kubeval, gatekeeper),
/// whose images kpt cannot pull here: the expectations are krmgraph's,
/// checked by hand, so they are not blessed with kpt.
#[test]
fn validator_cases() {
    let root = repo_root().join("testdata/validators");
    let all: BTreeMap<String, String> = find_cases(&root)
        .iter()
        .map(|c| {
            let name = c.strip_prefix(&root).unwrap().to_string_lossy();
            (name.to_string(), "pass".to_string())
        })
        .collect();
    assert!(!all.is_empty(), "no cases in {}", root.display());
    let regressions = run_corpus("testdata/validators", &root, &all);
    assert!(
        regressions.is_empty(),
        "validator cases failed: {regressions:?}"
    );
}

/// kpt's own e2e cases (`KRMGRAPH_CONFORMANCE_DIR`, CI:
/// `../shared/conformance/kpt-fn-render`).
#[test]
fn corpus_cases() {
    run_corpus_from_env("KRMGRAPH_CONFORMANCE_DIR");
}

/// The functions catalog's examples (`KRMGRAPH_CATALOG_DIR`, CI:
/// `../shared/conformance/catalog-examples`).
#[test]
fn catalog_cases() {
    run_corpus_from_env("KRMGRAPH_CATALOG_DIR");
}

/// Runs the corpus the variable names, held to
/// `testdata/conformance/<corpus dir name>.expected`.
fn run_corpus_from_env(var: &str) {
    let Ok(dir) = std::env::var(var) else {
        eprintln!("skipping the corpus in {var}: the variable is not set");
        return;
    };
    let root = PathBuf::from(dir);
    // Set but missing: the corpus would pass without running a case.
    assert!(
        root.is_dir(),
        "{var} is {}, which is not a directory: check out the conformance corpus there or unset {var}",
        root.display()
    );
    let corpus = root.file_name().unwrap().to_string_lossy().to_string();
    let expectations =
        read_expectations(&repo_root().join(format!("testdata/conformance/{corpus}.expected")));
    let regressions = run_corpus(&corpus, &root, &expectations);
    assert!(
        regressions.is_empty(),
        "cases expected to pass did not: {regressions:?}"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitizes_durations() {
        let s = "[PASS] \"gcr.io/x\" in 1.2s\n[RUNNING] \"y\"\n[FAIL] \"z\" in 300ms";
        assert_eq!(
            sanitize_stderr(s),
            "[PASS] \"gcr.io/x\" in 0s\n[RUNNING] \"y\"\n[FAIL] \"z\" in 0s"
        );
    }
}
