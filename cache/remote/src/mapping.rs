//! How a krmgraph record is laid out on a REAPI or Bazel HTTP cache; both
//! protocols store the same bytes.
//!
//! * **Action cache key:** the digest of a REAPI `Action` whose `Command`
//!   is `krmgraph-record v1 <record key hex>`, so any server takes it (an
//!   opaque key of the server's own digest function).
//! * **Action result:** a REAPI `ActionResult` whose output files are the
//!   record (`record`: [`StepRecord::encode`]'s bytes) and each output
//!   blob it names (`blob/<blake3 hex>`), every one a CAS blob under the
//!   server's digest (SHA-256, or BLAKE3 where the server offers it). The
//!   result thus says which SHA-256 each blake3-named blob has, and servers
//!   that check an action result's blobs exist (bazel-remote, BuildGrid)
//!   see them all. `execution_metadata.worker` is `krmgraph/<version>`.
//!
//! Every blob read back is checked against the digest the result names,
//! and each output again against the blake3 and size the record gives it.

use krmgraph_cache::{Digest, Hit, RemoteError, StepRecord, Upload};
use prost::Message;
use sha2::Digest as _;

use crate::proto;

/// The digest function the server and krmgraph agree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestFn {
    /// SHA-256: what every server offers.
    Sha256,
    /// BLAKE3: krmgraph's own, where the server offers it.
    Blake3,
}

impl DigestFn {
    /// REAPI's `DigestFunction.Value`.
    pub fn value(self) -> i32 {
        match self {
            DigestFn::Sha256 => proto::SHA256,
            DigestFn::Blake3 => proto::BLAKE3,
        }
    }

    /// The digest of `bytes`.
    pub fn digest(self, bytes: &[u8]) -> proto::Digest {
        let hash = match self {
            DigestFn::Sha256 => hex(&sha2::Sha256::digest(bytes)),
            DigestFn::Blake3 => blake3::hash(bytes).to_hex().to_string(),
        };
        proto::Digest {
            hash,
            size_bytes: bytes.len() as i64,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const RECORD: &str = "record";
const BLOB_PREFIX: &str = "blob/";

/// The action cache key of the record under `key`.
pub fn action_key(f: DigestFn, key: &Digest) -> proto::Digest {
    let command = proto::Command {
        arguments: vec!["krmgraph-record".into(), "v1".into(), key.to_hex()],
        output_paths: vec![RECORD.into()],
    };
    let action = proto::Action {
        command_digest: Some(f.digest(&command.encode_to_vec())),
        input_root_digest: Some(f.digest(b"")),
    };
    f.digest(&action.encode_to_vec())
}

/// A blob of an upload: its digest and bytes.
pub struct Blob<'a> {
    /// The digest under the agreed function.
    pub digest: proto::Digest,
    /// The bytes.
    pub data: &'a [u8],
}

/// The action result of `upload`, and the blobs it names (the record's
/// bytes are the first).
pub fn action_result<'a>(
    f: DigestFn,
    upload: &'a Upload,
    record: &'a [u8],
) -> (proto::ActionResult, Vec<Blob<'a>>) {
    let mut files = vec![proto::OutputFile {
        path: RECORD.into(),
        digest: Some(f.digest(record)),
    }];
    let mut blobs = vec![Blob {
        digest: f.digest(record),
        data: record,
    }];
    for (output, bytes) in upload.record.outputs.iter().zip(&upload.outputs) {
        let digest = f.digest(bytes);
        files.push(proto::OutputFile {
            path: format!("{BLOB_PREFIX}{}", output.digest),
            digest: Some(digest.clone()),
        });
        blobs.push(Blob {
            digest,
            data: bytes,
        });
    }
    let result = proto::ActionResult {
        output_files: files,
        exit_code: 0,
        execution_metadata: Some(proto::ExecutedActionMetadata {
            worker: format!("krmgraph/{}", env!("CARGO_PKG_VERSION")),
        }),
    };
    (result, blobs)
}

/// The digests of the blobs `result` names, in its order.
pub fn named_blobs(result: &proto::ActionResult) -> Vec<proto::Digest> {
    result
        .output_files
        .iter()
        .filter_map(|f| f.digest.clone())
        .collect()
}

/// The record an action result holds, from the blobs it names (`blobs`,
/// in [`named_blobs`] order, `None` where the server had none). `Ok(None)`
/// is a miss (a blob is gone); bytes that do not match their digest, or a
/// result or record that does not decode, are errors.
pub fn read_record(
    f: DigestFn,
    result: &proto::ActionResult,
    blobs: Vec<Option<Vec<u8>>>,
) -> Result<Option<Hit>, RemoteError> {
    let files: Vec<&proto::OutputFile> = result
        .output_files
        .iter()
        .filter(|f| f.digest.is_some())
        .collect();
    let mut by_path = std::collections::HashMap::new();
    for (file, bytes) in files.iter().zip(blobs) {
        let Some(bytes) = bytes else {
            return Ok(None);
        };
        let want = file.digest.as_ref().expect("filtered");
        if f.digest(&bytes) != *want {
            return Err(RemoteError::new(format!(
                "blob {}/{} has other bytes than its digest says",
                want.hash, want.size_bytes
            )));
        }
        by_path.insert(file.path.as_str(), bytes);
    }
    let bad = |what: &str| RemoteError::new(format!("the action result {what}"));
    let record = by_path.get(RECORD).ok_or_else(|| bad("names no record"))?;
    let record =
        StepRecord::decode(record).map_err(|e| bad(&format!("holds a bad record: {e}")))?;
    let mut outputs = Vec::with_capacity(record.outputs.len());
    for output in &record.outputs {
        let path = format!("{BLOB_PREFIX}{}", output.digest);
        let bytes = by_path
            .remove(path.as_str())
            .ok_or_else(|| bad("lacks a blob its record names"))?;
        if bytes.len() as u64 != output.size || Digest::of(&bytes) != output.digest {
            return Err(bad("has a blob that is not the one its record names"));
        }
        outputs.push(bytes);
    }
    Ok(Some(Hit { record, outputs }))
}

/// Decodes an action result, as an error if it is not one.
pub fn decode_result(bytes: &[u8]) -> Result<proto::ActionResult, RemoteError> {
    proto::ActionResult::decode(bytes)
        .map_err(|e| RemoteError::new(format!("an action cache entry does not decode: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use krmgraph_cache::{Output, RecordKind};

    fn upload() -> Upload {
        let out = b"kind: ConfigMap\n".to_vec();
        Upload {
            key: Digest::of(b"key"),
            record: StepRecord::new(
                RecordKind::new("step", 1),
                vec![Output {
                    name: "nodes".into(),
                    digest: Digest::of(&out),
                    size: out.len() as u64,
                }],
                vec![],
            ),
            outputs: vec![out],
        }
    }

    #[test]
    fn a_record_reads_back_from_its_blobs_and_bad_bytes_are_an_error() {
        for f in [DigestFn::Sha256, DigestFn::Blake3] {
            let upload = upload();
            let bytes = upload.record.encode();
            let (result, blobs) = action_result(f, &upload, &bytes);
            let result = decode_result(&result.encode_to_vec()).unwrap();
            let data = || blobs.iter().map(|b| Some(b.data.to_vec())).collect();
            let hit = read_record(f, &result, data()).unwrap().unwrap();
            assert_eq!(hit.outputs, upload.outputs);
            let mut missing: Vec<_> = data();
            missing[1] = None;
            assert_eq!(read_record(f, &result, missing), Ok(None));
            let mut wrong: Vec<_> = data();
            wrong[1] = Some(b"kind: Secret\n".to_vec());
            assert!(read_record(f, &result, wrong).is_err());
        }
    }

    #[test]
    fn sha256_keys_are_64_hex_and_differ_by_record_key() {
        let a = action_key(DigestFn::Sha256, &Digest::of(b"a"));
        let b = action_key(DigestFn::Sha256, &Digest::of(b"b"));
        assert_eq!(a.hash.len(), 64);
        assert_ne!(a, b);
        assert_eq!(
            DigestFn::Sha256.digest(b"").hash,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
