//! How a krmgraph record is laid out on a REAPI or Bazel HTTP cache; both
//! protocols store the same bytes.
//!
//! * **Action cache key:** the digest of a REAPI `Action` whose `Command`
//!   is `krmgraph-record v1 <record key hex>`, so any server takes it (an
//!   opaque key of the server's own digest function).
//! * **Action result:** a REAPI `ActionResult` whose output files are the
//!   record (`record`: [`StepRecord::encode`]'s bytes) and each output
//!   blob it names: a small one as itself (`blob/<blake3 hex>`), a larger
//!   one as the manifest of its content-defined chunks
//!   (`chunks/<blake3 hex>`, [`crate::chunks`]), so that the server holds
//!   each run of resources once however many records repeat it; a large
//!   one of a record kept whole (the whole-render record) deflated
//!   (`deflate/<blake3 hex>`, raw deflate). Every one
//!   is a CAS blob under the server's digest (SHA-256, or BLAKE3 where the
//!   server offers it); servers that check an action result's blobs exist
//!   (bazel-remote, BuildGrid) see the record, blobs and manifests, and a
//!   chunk gone from the server is a miss when it is read.
//!   `execution_metadata.worker` is `krmgraph/<version>`.
//!
//! Every blob and chunk read back is checked against its digest, and each
//! output again against the blake3 and size the record gives it.

use std::borrow::Cow;
use std::collections::HashMap;

use krmgraph_cache::{Digest, Hit, RemoteError, StepRecord, Upload};
use prost::Message;
use sha2::Digest as _;

use crate::{chunks, proto};

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
const CHUNKS_PREFIX: &str = "chunks/";
const DEFLATE_PREFIX: &str = "deflate/";
/// A blob kept whole from this size on is stored deflated, when that
/// saves an eighth: the whole-render record's files (YAML) shrink 5× to
/// 30×, and a fresh checkout reads them in one round trip either way.
const DEFLATE_FROM: usize = 16 << 10;

/// `bytes` deflated, if that is worth it.
fn deflated(bytes: &[u8]) -> Option<Vec<u8>> {
    if bytes.len() < DEFLATE_FROM {
        return None;
    }
    let packed = miniz_oxide::deflate::compress_to_vec(bytes, 1);
    (packed.len() < bytes.len() - bytes.len() / 8).then_some(packed)
}

/// `packed` inflated, to at most `size` bytes; `None` when it is not a
/// deflate stream of at most that many bytes.
fn inflated(packed: &[u8], size: u64) -> Option<Vec<u8>> {
    let limit = usize::try_from(size).ok()?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(packed, limit).ok()
}

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
    pub data: Cow<'a, [u8]>,
}

/// The action result of `upload`, and the blobs it names (the record's
/// bytes are the first). An output large enough to chunk
/// ([`chunks::worth_it`]), unless the upload is to stay whole, is named as its manifest (`chunks/<blake3>`),
/// and its chunks follow the manifest in the blobs; others are named as
/// one blob (`blob/<blake3>`).
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
        data: Cow::Borrowed(record),
    }];
    for (output, bytes) in upload.record.outputs.iter().zip(&upload.outputs) {
        let chunked = (!upload.whole && chunks::worth_it(bytes))
            .then(|| chunks::manifest(f, bytes))
            .flatten();
        let (path, digest) = if let Some((manifest, parts)) = chunked {
            let digest = f.digest(&manifest);
            blobs.push(Blob {
                digest: digest.clone(),
                data: Cow::Owned(manifest),
            });
            blobs.extend(parts.into_iter().map(|(digest, data)| Blob {
                digest,
                data: Cow::Borrowed(data),
            }));
            (format!("{CHUNKS_PREFIX}{}", output.digest), digest)
        } else if let Some(packed) = deflated(bytes) {
            let digest = f.digest(&packed);
            blobs.push(Blob {
                digest: digest.clone(),
                data: Cow::Owned(packed),
            });
            (format!("{DEFLATE_PREFIX}{}", output.digest), digest)
        } else {
            let digest = f.digest(bytes);
            blobs.push(Blob {
                digest: digest.clone(),
                data: Cow::Borrowed(bytes),
            });
            (format!("{BLOB_PREFIX}{}", output.digest), digest)
        };
        files.push(proto::OutputFile {
            path,
            digest: Some(digest),
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

/// Reads blobs by digest, in order, `None` for those the server lacks.
pub type Fetch<'f> = dyn FnMut(&[proto::Digest]) -> Result<Vec<Option<Vec<u8>>>, RemoteError> + 'f;

/// The record an action result holds, reading the blobs it names with
/// `fetch`: first the record and the outputs' blobs or manifests, then
/// the manifests' chunks. `Ok(None)` is a miss (a blob is gone); bytes
/// that do not match their digest, or a result, manifest or record that
/// does not decode, are errors.
pub fn read_record(
    f: DigestFn,
    result: &proto::ActionResult,
    fetch: &mut Fetch<'_>,
) -> Result<Option<Hit>, RemoteError> {
    let files: Vec<(&str, &proto::Digest)> = result
        .output_files
        .iter()
        .filter_map(|file| Some((file.path.as_str(), file.digest.as_ref()?)))
        .collect();
    let digests: Vec<proto::Digest> = files.iter().map(|(_, d)| (*d).clone()).collect();
    let Some(named) = checked(f, &digests, fetch(&digests)?)? else {
        return Ok(None);
    };
    let mut by_path: HashMap<&str, Vec<u8>> =
        files.iter().map(|(path, _)| *path).zip(named).collect();
    let bad = |what: &str| RemoteError::new(format!("the action result {what}"));
    let record = by_path.get(RECORD).ok_or_else(|| bad("names no record"))?;
    let record =
        StepRecord::decode(record).map_err(|e| bad(&format!("holds a bad record: {e}")))?;
    let Some(mut chunked) = read_chunks(f, &by_path, fetch)? else {
        return Ok(None);
    };
    let mut outputs = Vec::with_capacity(record.outputs.len());
    for output in &record.outputs {
        let name = |prefix: &str| format!("{prefix}{}", output.digest);
        let packed = match by_path.remove(name(DEFLATE_PREFIX).as_str()) {
            Some(packed) => Some(
                inflated(&packed, output.size)
                    .ok_or_else(|| bad("has a deflated blob that does not inflate"))?,
            ),
            None => None,
        };
        let bytes = packed
            .or_else(|| by_path.remove(name(BLOB_PREFIX).as_str()))
            .or_else(|| chunked.remove(&name(CHUNKS_PREFIX)))
            .ok_or_else(|| bad("lacks a blob its record names"))?;
        if bytes.len() as u64 != output.size || Digest::of(&bytes) != output.digest {
            return Err(bad("has a blob that is not the one its record names"));
        }
        outputs.push(bytes);
    }
    Ok(Some(Hit { record, outputs }))
}

/// The outputs named by manifest (`chunks/<blake3>` in `by_path`), put
/// together from their chunks, by path; `None` when a chunk is gone.
fn read_chunks(
    f: DigestFn,
    by_path: &HashMap<&str, Vec<u8>>,
    fetch: &mut Fetch<'_>,
) -> Result<Option<HashMap<String, Vec<u8>>>, RemoteError> {
    let mut manifests = Vec::new();
    for (path, bytes) in by_path.iter() {
        if !path.starts_with(CHUNKS_PREFIX) {
            continue;
        }
        let name = (*path).to_owned();
        let chunks = chunks::decode(bytes)
            .ok_or_else(|| RemoteError::new("a chunk manifest does not decode"))?;
        manifests.push((name, chunks));
    }
    if manifests.is_empty() {
        return Ok(Some(HashMap::new()));
    }
    // Each distinct chunk is read once, however often the outputs hold it.
    let mut wanted: Vec<proto::Digest> = manifests.iter().flat_map(|(_, c)| c.clone()).collect();
    wanted.sort_by(|a, b| a.hash.cmp(&b.hash));
    wanted.dedup();
    let Some(read) = checked(f, &wanted, fetch(&wanted)?)? else {
        return Ok(None);
    };
    let by_digest: HashMap<&proto::Digest, Vec<u8>> = wanted.iter().zip(read).collect();
    let outputs = manifests
        .into_iter()
        .map(|(name, chunks)| {
            let bytes = chunks.iter().flat_map(|c| by_digest[c].iter().copied());
            (name, bytes.collect())
        })
        .collect();
    Ok(Some(outputs))
}

/// `blobs` read for `digests`, each checked against its digest; `None`
/// when one is missing.
fn checked(
    f: DigestFn,
    digests: &[proto::Digest],
    blobs: Vec<Option<Vec<u8>>>,
) -> Result<Option<Vec<Vec<u8>>>, RemoteError> {
    if blobs.len() != digests.len() || blobs.iter().any(Option::is_none) {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(blobs.len());
    for (want, bytes) in digests.iter().zip(blobs.into_iter().flatten()) {
        if f.digest(&bytes) != *want {
            return Err(RemoteError::new(format!(
                "blob {}/{} has other bytes than its digest says",
                want.hash, want.size_bytes
            )));
        }
        out.push(bytes);
    }
    Ok(Some(out))
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

    /// A record with a small output (one blob) and a large one (chunks).
    fn upload() -> Upload {
        let small = b"kind: ConfigMap\n".to_vec();
        let large: Vec<u8> = (0..3000)
            .flat_map(|i| format!("kind: ConfigMap\nmetadata:\n  name: cm-{i}\n").into_bytes())
            .collect();
        let output = |name: &str, bytes: &[u8]| Output {
            name: name.into(),
            digest: Digest::of(bytes),
            size: bytes.len() as u64,
        };
        Upload {
            key: Digest::of(b"key"),
            record: StepRecord::new(
                RecordKind::new("step", 1),
                vec![output("log", &small), output("nodes", &large)],
                vec![],
            ),
            outputs: vec![small, large],
            whole: false,
        }
    }

    /// What `fetch` reads from a server holding `blobs`.
    fn reader(
        blobs: &HashMap<proto::Digest, Vec<u8>>,
    ) -> impl FnMut(&[proto::Digest]) -> Result<Vec<Option<Vec<u8>>>, RemoteError> + '_ {
        |digests| Ok(digests.iter().map(|d| blobs.get(d).cloned()).collect())
    }

    #[test]
    fn a_whole_record_is_deflated_and_reads_back() {
        let upload = Upload {
            whole: true,
            ..upload()
        };
        let bytes = upload.record.encode();
        let (result, blobs) = action_result(DigestFn::Sha256, &upload, &bytes);
        assert_eq!(blobs.len(), 3);
        assert!(result.output_files[2].path.starts_with(DEFLATE_PREFIX));
        assert!(blobs[2].data.len() * 4 < upload.outputs[1].len());
        let server: HashMap<proto::Digest, Vec<u8>> = blobs
            .iter()
            .map(|b| (b.digest.clone(), b.data.to_vec()))
            .collect();
        let hit = read_record(DigestFn::Sha256, &result, &mut reader(&server));
        assert_eq!(hit.unwrap().unwrap().outputs, upload.outputs);
        // Bytes that match their digest but do not inflate: an error.
        let mut garbage = result.clone();
        let junk = b"\xff\xffnot deflate".to_vec();
        garbage.output_files[2].digest = Some(DigestFn::Sha256.digest(&junk));
        let mut server = server;
        server.insert(DigestFn::Sha256.digest(&junk), junk);
        assert!(read_record(DigestFn::Sha256, &garbage, &mut reader(&server)).is_err());
    }

    #[test]
    fn a_record_reads_back_from_its_blobs_and_bad_bytes_are_an_error() {
        for f in [DigestFn::Sha256, DigestFn::Blake3] {
            let upload = upload();
            let bytes = upload.record.encode();
            let (result, blobs) = action_result(f, &upload, &bytes);
            assert!(blobs.len() > 5, "the large output is chunked");
            assert_eq!(result.output_files.len(), 3, "a manifest, not the chunks");
            let result = decode_result(&result.encode_to_vec()).unwrap();
            let server: HashMap<proto::Digest, Vec<u8>> = blobs
                .iter()
                .map(|b| (b.digest.clone(), b.data.to_vec()))
                .collect();
            let hit = read_record(f, &result, &mut reader(&server))
                .unwrap()
                .unwrap();
            assert_eq!(hit.outputs, upload.outputs);
            let chunk = &blobs.last().unwrap().digest;
            let mut missing = server.clone();
            missing.remove(chunk);
            assert_eq!(read_record(f, &result, &mut reader(&missing)), Ok(None));
            let mut wrong = server.clone();
            wrong.insert(chunk.clone(), b"kind: Secret\n".to_vec());
            assert!(read_record(f, &result, &mut reader(&wrong)).is_err());
            let mut wrong = server.clone();
            wrong.insert(blobs[1].digest.clone(), b"kind: Secret\n".to_vec());
            assert!(read_record(f, &result, &mut reader(&wrong)).is_err());
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
