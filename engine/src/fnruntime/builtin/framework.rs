//! How a Go KRM function built on kyaml reads and writes its ResourceList
//! (`kio.ByteReadWriter` under kyaml's `framework`): the input parsed with
//! a `ByteReader` (a single `ResourceList` unwrapped), the items handed to
//! the function, and the output written with a `ByteWriter` wrapping the
//! items (and `results`) back into a `ResourceList`. Errors are reported as
//! kyaml's framework does: `[error] : <message>` on stderr, one error
//! result, exit code 1.

use crate::fnruntime::exec::ProcessOutput;
use crate::kyaml::byteio::{ByteReader, ByteWriter, RESOURCE_LIST_API_VERSION, RESOURCE_LIST_KIND};
use crate::yaml::Node;

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

/// A successful run: the written list on stdout.
pub fn success(list: &ResourceList) -> ProcessOutput {
    match write(list) {
        Ok(stdout) => ProcessOutput {
            stdout,
            stderr: Vec::new(),
            exit_code: Some(0),
        },
        Err(e) => failure(&e),
    }
}

/// A failed run as kyaml's framework reports it.
pub fn failure(message: &str) -> ProcessOutput {
    ProcessOutput {
        stdout: Vec::new(),
        stderr: format!("[error] : {message}\n").into_bytes(),
        exit_code: Some(1),
    }
}

/// Runs `transform` on the items of the ResourceList in `input`.
pub fn run_items(
    input: &[u8],
    transform: impl FnOnce(&mut ResourceList) -> Result<(), String>,
) -> ProcessOutput {
    let mut list = match read(input) {
        Ok(list) => list,
        Err(e) => return failure(&e),
    };
    match transform(&mut list) {
        Ok(()) => success(&list),
        Err(e) => failure(&e),
    }
}
