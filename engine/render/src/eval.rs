//! `fn eval`: runs one function on a package (all of it, subpackages
//! included) or on resources from stdin, as `kpt fn eval` does — the
//! imperative counterpart of [`crate`]. The functionConfig is a
//! `ConfigMap` built from `key=value` arguments.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::finish::{save_results, write_output, Written};
use crate::{Output, RenderError, RenderFailure, RenderOutcome};
use krmgraph_fn::event::Reporter;
use krmgraph_fn::{run_in_pipeline, ConfigSource, FunctionRunner, RunContext, RunnerOptions};
use krmgraph_kyaml::{byteio, pkgio};
use krmgraph_package::kptfile::validate::clean_path;
use krmgraph_package::kptfile::Function;
use krmgraph_yaml::node::Style;
use krmgraph_yaml::Node;

/// Where `fn eval` reads resources from.
#[derive(Clone, Debug)]
pub enum EvalInput {
    /// A package directory (subpackages included).
    Dir(PathBuf),
    /// Bytes read from stdin: a ResourceList or YAML documents.
    Stdin(Vec<u8>),
}

/// How to evaluate.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// The resources.
    pub input: EvalInput,
    /// The function (`image` or `exec`).
    pub function: Function,
    /// The arguments after `--`, in order: `key=value` pairs become the
    /// functionConfig's data; a bare word sets its `kind` (as kpt does).
    pub args: Vec<String>,
    /// Where the result goes; `None` means in place for a directory and a
    /// ResourceList on stdout for stdin.
    pub output: Option<Output>,
    /// `--results-dir`.
    pub results_dir: Option<PathBuf>,
    /// Which functions may run.
    pub runner: RunnerOptions,
}

/// Runs the function once over the input.
// A render returns once, and its failure is read once: boxing it would
// buy nothing.
#[allow(clippy::result_large_err)]
pub fn eval(
    options: &EvalOptions,
    reporter: &mut dyn Reporter,
) -> Result<RenderOutcome, RenderFailure> {
    let mut ctx = RunContext {
        reporter,
        results: Vec::new(),
        exit_code: 0,
    };
    let result = run(options, &mut ctx);
    let results_file =
        save_results(options.results_dir.as_deref(), &ctx).map_err(RenderFailure::from)?;
    match result {
        Ok(written) => Ok(RenderOutcome {
            functions: 1,
            packages: 0,
            stdout: written.stdout,
            results_file,
            files: written.files,
            kept: written.kept,
            verify_mismatch: None,
        }),
        Err(error) => Err(RenderFailure {
            error,
            results_file,
        }),
    }
}

fn run(options: &EvalOptions, ctx: &mut RunContext) -> Result<Written, RenderError> {
    let (dir, mut input, input_files) = read_input(&options.input)?;
    let mut runner = FunctionRunner::new(&options.function, &dir, &options.runner)?;
    runner.set_package_path = false;
    let config = args_config(&options.args);
    let output = run_in_pipeline(&runner, &mut input, ConfigSource::Node(config), ctx)?;
    let destination = options.output.clone().unwrap_or(match options.input {
        EvalInput::Dir(_) => Output::InPlace,
        EvalInput::Stdin(_) => Output::Stdout,
    });
    write_output(output, &destination, &dir, &input_files, None)
}

/// The resources, the directory they are relative to, and the files read.
fn read_input(input: &EvalInput) -> Result<(PathBuf, Vec<Node>, BTreeSet<String>), RenderError> {
    match input {
        EvalInput::Dir(dir) => {
            let reader = pkgio::LocalPackageReader {
                package_path: dir.clone(),
                package_file_name: "Kptfile".into(),
                match_files_glob: pkgio::MATCH_ALL_KRM.iter().map(|g| g.to_string()).collect(),
                include_subpackages: true,
                preserve_seq_indent: true,
                wrap_bare_seq_node: true,
                ..Default::default()
            };
            let nodes = reader.read()?;
            let files = reader
                .files()?
                .into_iter()
                .map(|(_, rel)| clean_path(&rel))
                .collect();
            Ok((dir.clone(), nodes, files))
        }
        EvalInput::Stdin(bytes) => {
            let nodes = byteio::ByteReader {
                preserve_seq_indent: true,
                wrap_bare_seq_node: true,
                ..Default::default()
            }
            .read(bytes)?
            .nodes;
            Ok((Path::new(".").to_path_buf(), nodes, BTreeSet::new()))
        }
    }
}

/// kpt's functionConfig for `-- key=value` arguments: a `ConfigMap` named
/// `function-input` (fields in kpt's order: metadata, data, kind,
/// apiVersion) whose flow-style `data` keeps the arguments' order.
fn args_config(args: &[String]) -> Node {
    let mut kind = "ConfigMap".to_string();
    let mut meta = Node::mapping();
    meta.content
        .extend([Node::string("name"), Node::string("function-input")]);
    let mut data = Node::mapping();
    data.style = Style::FLOW;
    for arg in args {
        match arg.split_once('=') {
            Some((k, v)) => data.content.extend([Node::string(k), Node::string(v)]),
            None => kind = arg.clone(),
        }
    }
    let mut config = Node::mapping();
    config.content.extend([
        Node::string("metadata"),
        meta,
        Node::string("data"),
        data,
        Node::string("kind"),
        Node::string(kind),
        Node::string("apiVersion"),
        Node::string("v1"),
    ]);
    config
}
