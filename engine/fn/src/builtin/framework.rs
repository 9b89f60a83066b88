//! How a Go KRM function built on kyaml reads and writes its ResourceList
//! (`kio.ByteReadWriter` under kyaml's `framework`): the input parsed with
//! a `ByteReader` (a single `ResourceList` unwrapped), the items handed to
//! the function, and the output written with a `ByteWriter` wrapping the
//! items (and `results`) back into a `ResourceList`. Errors are reported as
//! kyaml's framework does: `[error] : <message>` on stderr, one error
//! result, exit code 1.

use super::direct;
use crate::exec::ProcessOutput;
use krmgraph_kyaml::byteio::{
    ByteReader, ByteWriter, RESOURCE_LIST_API_VERSION, RESOURCE_LIST_KIND,
};
use krmgraph_yaml::Node;

/// A parsed ResourceList.
#[derive(Clone, Debug, Default)]
pub struct ResourceList {
    /// The resources.
    pub items: Vec<Node>,
    /// `functionConfig`, if any.
    pub function_config: Option<Node>,
    /// `results` to write back, if any.
    pub results: Option<Node>,
}

/// Reads stdin bytes as kyaml's `ByteReadWriter` does.
pub fn read(input: &[u8]) -> Result<ResourceList, String> {
    let out = ByteReader {
        omit_reader_annotations: true,
        ..Default::default()
    }
    .read(input)
    .map_err(|e| e.to_string())?;
    Ok(ResourceList {
        items: out.nodes,
        function_config: out.function_config,
        results: None,
    })
}

/// Writes a ResourceList as kyaml's `ByteReadWriter` does.
pub fn write(list: &ResourceList) -> Result<Vec<u8>, String> {
    ByteWriter {
        keep_reader_annotations: true,
        function_config: list.function_config.clone(),
        results: list.results.clone(),
        wrapping_kind: RESOURCE_LIST_KIND.into(),
        wrapping_api_version: RESOURCE_LIST_API_VERSION.into(),
        ..Default::default()
    }
    .write(&list.items)
    .map_err(|e| e.to_string())
}

/// A failed run as kyaml's framework reports it.
pub fn failure(message: &str) -> ProcessOutput {
    ProcessOutput {
        stdout: Vec::new(),
        stderr: format!("[error] : {message}\n").into_bytes(),
        exit_code: Some(1),
    }
}

/// How a run of a kyaml-based function ends. (One per function call: the
/// size of the written variant does not matter.)
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// It writes `list` (its items and results) to stdout, with `stderr`
    /// and `exit_code`. If writing fails, `unwritable` says what the
    /// process does instead (`None`: it prints nothing on stdout, the same
    /// stderr and exit code).
    Wrote {
        /// The list written.
        list: ResourceList,
        /// What it prints on stderr.
        stderr: Vec<u8>,
        /// Its exit code.
        exit_code: i32,
        /// How it fails when the list cannot be written.
        unwritable: Option<fn(&str) -> ProcessOutput>,
    },
    /// Any other ending (input it could not read, ...), as the process ends.
    Process(ProcessOutput),
}

impl Outcome {
    /// Success: `list` written, nothing on stderr.
    pub fn success(list: ResourceList) -> Outcome {
        Outcome::Wrote {
            list,
            stderr: Vec::new(),
            exit_code: 0,
            unwritable: Some(failure),
        }
    }

    /// What the process prints and returns.
    pub fn into_process(self) -> ProcessOutput {
        match self {
            Outcome::Process(output) => output,
            Outcome::Wrote {
                list,
                stderr,
                exit_code,
                unwritable,
            } => match (write(&list), unwritable) {
                (Ok(stdout), _) => ProcessOutput {
                    stdout,
                    stderr,
                    exit_code: Some(exit_code),
                },
                (Err(e), Some(unwritable)) => unwritable(&e),
                (Err(_), None) => ProcessOutput {
                    stdout: Vec::new(),
                    stderr,
                    exit_code: Some(exit_code),
                },
            },
        }
    }
}

/// Runs `f` on the ResourceList in `input`, as the function's process
/// does; `unreadable` is how it reports input it cannot read.
pub fn run_bytes(
    input: &[u8],
    unreadable: fn(&str) -> ProcessOutput,
    f: impl FnOnce(ResourceList) -> Outcome,
) -> ProcessOutput {
    match read(input) {
        Ok(list) => f(list).into_process(),
        Err(e) => unreadable(&e),
    }
}

/// Runs `f` on nodes ([`super::direct`]): the items and functionConfig as
/// the function would parse them from kpt's ResourceList, and, when it
/// succeeds, its items and results as kpt would read them back. `None`
/// where a model declines or the function fails: the run on the bytes
/// then gives the exact output.
pub fn run_nodes(
    items: &[Node],
    config: Option<&Node>,
    f: impl FnOnce(ResourceList) -> Outcome,
) -> Option<direct::Output> {
    let list = ResourceList {
        items: items
            .iter()
            .map(direct::as_read_keeping_comments)
            .collect::<Option<_>>()?,
        function_config: match config {
            Some(c) => Some(direct::config_as_read(c, true)?),
            None => None,
        },
        results: None,
    };
    let Outcome::Wrote {
        list,
        stderr,
        exit_code: 0,
        ..
    } = f(list)
    else {
        return None;
    };
    Some(direct::Output {
        items: list
            .items
            .into_iter()
            .map(direct::as_written_keeping_comments)
            .collect::<Option<_>>()?,
        results: match list.results {
            Some(results) => Some(direct::as_parsed(results)?),
            None => None,
        },
        stderr,
    })
}
