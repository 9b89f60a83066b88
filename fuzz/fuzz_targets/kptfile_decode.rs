//! Arbitrary bytes as a Kptfile, through everything a render does with a
//! package's Kptfile before it runs a function:
//!
//! - [`kptfile::parse`]: the YAML document, kpt's `apiVersion`/`kind`
//!   check (with the old-version hints), the strict decoding of the
//!   `kpt.dev/v1` schema (go-yaml's `KnownFields(true)` messages), and
//!   every error's text;
//! - [`validate::validate`] of the pipeline (one function per entry, image
//!   reference grammar, `configPath` syntax), once with a `configPath`
//!   check that accepts every file and once with one that refuses them;
//! - [`FunctionRunner::new`] for each pipeline entry, valid or not (the
//!   `configMap:` made into a `ConfigMap` functionConfig), without touching
//!   the file system: a `configPath` is dropped first, since reading it
//!   would read whatever file the fuzzer names;
//! - the entry's `selectors:`/`exclude:` applied to the Kptfile itself, read
//!   as a package reader reads it (kpt passes the Kptfile to functions as a
//!   resource).
//!
//! Nothing may panic. Invariants asserted:
//!
//! - `dir` only names the package in errors: parsing with another `dir`
//!   gives the same Kptfile, or the same error apart from the directory;
//! - a `configMap:` functionConfig, sent to a function as kpt sends it (a
//!   `ResourceList` with that `functionConfig`), reads back with the same
//!   keys and values in the same order;
//! - [`select::select`] gives indices of the resources it was given, in
//!   order.
#![no_main]

use std::path::{Path, PathBuf};

use krmgraph_fn::{select, FunctionRunner, RunnerOptions};
use krmgraph_package::kptfile::validate::{self, ConfigFileError};
use krmgraph_package::kptfile::{self, Function, KptfileError};
use krmgraph_kyaml::byteio::ByteReader;
use krmgraph_kyaml::kio_pipeline;
use krmgraph_yaml::{Kind, Node};
use libfuzzer_sys::fuzz_target;

/// `error` with its directory blanked, so errors for two directories
/// compare.
fn without_dir(error: &KptfileError) -> KptfileError {
    let none = PathBuf::new();
    match error.clone() {
        KptfileError::NotFound(_) => KptfileError::NotFound(none),
        KptfileError::Unreadable {
            details,
            mark,
            hints,
            ..
        } => KptfileError::Unreadable {
            dir: none,
            details,
            mark,
            // Hints name the Kptfile's path.
            hints: hints
                .into_iter()
                .map(|h| krmgraph_package::Hint { position: None, ..h })
                .collect(),
        },
        KptfileError::OldVersion { version, .. } => KptfileError::OldVersion { dir: none, version },
        KptfileError::UnknownType { gvk, .. } => KptfileError::UnknownType { dir: none, gvk },
        e @ KptfileError::Invalid(_) => e,
    }
}

/// The `data:` of a functionConfig as (key, value) strings.
fn config_map_data(config: &Node) -> Option<Vec<(String, String)>> {
    let root = if config.kind == Kind::Document {
        config.content.first()?
    } else {
        config
    };
    let data = root
        .content
        .chunks(2)
        .find(|p| p.len() == 2 && p[0].value == "data")
        .map(|p| &p[1])?;
    Some(
        data.content
            .chunks(2)
            .map(|p| (p[0].value.to_string(), p[1].value.to_string()))
            .collect(),
    )
}

/// Builds the runner for `f` (less its `configPath`) and checks that its
/// functionConfig crosses the function boundary intact.
fn runner(f: &Function) {
    let mut f = f.clone();
    f.config_path.clear();
    let options = RunnerOptions {
        allow_exec: true,
        ..RunnerOptions::default()
    };
    let Ok(runner) = FunctionRunner::new(&f, Path::new("/nonexistent/krmgraph-fuzz/pkg"), &options)
    else {
        return;
    };
    let _ = runner.runs_on_bytes();
    let Some(config) = &runner.config else {
        assert!(
            f.config_map.as_ref().is_none_or(|m| m.is_empty()),
            "a non-empty configMap gave no functionConfig"
        );
        return;
    };
    let stdin = kio_pipeline::function_input(&mut [], Some(config))
        .expect("a configMap functionConfig encodes");
    let read = kio_pipeline::read_function_output(&stdin).unwrap_or_else(|e| {
        panic!(
            "the ResourceList sent with a configMap functionConfig does not read back: {e}\n{}",
            String::from_utf8_lossy(&stdin)
        )
    });
    let sent = f.config_map.clone().unwrap_or_default();
    let got = read
        .function_config
        .as_ref()
        .and_then(config_map_data)
        .expect("the functionConfig read back has data");
    assert_eq!(
        sent,
        got,
        "configMap data changed on the way to the function:\n{}",
        String::from_utf8_lossy(&stdin)
    );
}

// The CLI's threads: stacks deep enough for the deepest tree the parser
// gives (`par::STACK_SIZE`), so the fuzzer finds what a render would.
fuzz_target!(
    init: krmgraph_util::par::init_global_pool(),
    |data: &[u8]| {
        krmgraph_util::par::with_stack(|| run(data));
    }
);

fn run(data: &[u8]) {
    let parsed = kptfile::parse(Path::new("pkg"), data);
    let elsewhere = kptfile::parse(Path::new("some/other/dir"), data);
    match (&parsed, &elsewhere) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "the Kptfile depends on its directory"),
        (Err(a), Err(b)) => {
            assert_eq!(
                without_dir(a),
                without_dir(b),
                "the error depends on the directory"
            )
        }
        _ => panic!("parsing depends on the directory: {parsed:?} / {elsewhere:?}"),
    }
    let kptfile = match parsed {
        Ok(k) => k,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };

    let accept = |_: &str| Ok(());
    let refuse = |path: &str| {
        Err(ConfigFileError {
            reason: format!("no file {path}"),
            position: None,
        })
    };
    let valid = validate::validate(&kptfile, &accept);
    if let Err(e) = &valid {
        let _ = e.to_string();
    }
    if let Err(e) = validate::validate(&kptfile, &refuse) {
        let _ = e.to_string();
    }

    // The Kptfile as the package reader gives it to functions.
    let resources = ByteReader {
        preserve_seq_indent: true,
        wrap_bare_seq_node: true,
        ..ByteReader::default()
    }
    .read(data)
    .map(|r| r.nodes)
    .unwrap_or_default();

    let pipeline = &kptfile.pipeline;
    for f in pipeline.mutators.iter().chain(&pipeline.validators) {
        let _ = validate::is_valid_image(&f.image);
        let _ = validate::check_config_path_syntax(&f.config_path);
        let selected = select::select(&resources, &f.selectors, &f.exclusions);
        assert!(
            selected.windows(2).all(|w| w[0] <= w[1])
                && selected.iter().all(|&i| i < resources.len()),
            "select gave {selected:?} of {} resources",
            resources.len()
        );
        // kpt builds runners only for a valid pipeline; the constructor
        // takes any entry, so every one is tried.
        runner(f);
    }
}
