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
/// `fetch` ([`read_records`] of one result).
#[cfg(test)]
fn read_record(
    f: DigestFn,
    result: &proto::ActionResult,
    fetch: &mut Fetch<'_>,
) -> Result<Option<Hit>, RemoteError> {
    let mut hits = read_records(f, std::slice::from_ref(result), fetch)?;
    Ok(hits.pop().flatten())
}

/// The records the action results hold, in order, reading the blobs they
/// name with `fetch` in two rounds shared by all of them: first the
/// records and the outputs' blobs or manifests, then the manifests'
/// chunks, each distinct digest once a round. A record one of whose
/// blobs or chunks is gone is `None` (a miss); bytes that do not match
/// their digest, or a manifest or record that does not decode, are errors.
pub fn read_records(
    f: DigestFn,
    results: &[proto::ActionResult],
    fetch: &mut Fetch<'_>,
) -> Result<Vec<Option<Hit>>, RemoteError> {
    let files: Vec<Vec<(&str, &proto::Digest)>> = results
        .iter()
        .map(|result| {
            let named = result.output_files.iter();
            named
                .filter_map(|file| Some((file.path.as_str(), file.digest.as_ref()?)))
                .collect()
        })
        .collect();
    let named = read_round(f, files.iter().flatten().map(|(_, d)| *d), fetch)?;
    let mut readings = Vec::with_capacity(files.len());
    for files in &files {
        let blobs: Option<HashMap<&str, Vec<u8>>> = files
            .iter()
            .map(|(path, d)| Some((*path, named.get(*d)?.clone())))
            .collect();
        readings.push(blobs.map(Reading::new).transpose()?);
    }
    let wanted = readings.iter().flatten().flat_map(Reading::chunks);
    let chunks = read_round(f, wanted, fetch)?;
    let mut hits = Vec::with_capacity(readings.len());
    for reading in readings {
        hits.push(match reading {
            Some(reading) => reading.finish(&chunks)?,
            None => None,
        });
    }
    Ok(hits)
}

/// The blobs of `digests` the server has, each distinct one read once
/// and checked against its digest.
fn read_round<'d>(
    f: DigestFn,
    digests: impl Iterator<Item = &'d proto::Digest>,
    fetch: &mut Fetch<'_>,
) -> Result<HashMap<proto::Digest, Vec<u8>>, RemoteError> {
    let mut wanted: Vec<proto::Digest> = digests.cloned().collect();
    wanted.sort_by(|a, b| a.hash.cmp(&b.hash).then(a.size_bytes.cmp(&b.size_bytes)));
    wanted.dedup();
    if wanted.is_empty() {
        return Ok(HashMap::new());
    }
    let blobs = fetch(&wanted)?;
    if blobs.len() != wanted.len() {
        return Ok(HashMap::new());
    }
    let mut read = HashMap::with_capacity(wanted.len());
    for (want, bytes) in wanted.into_iter().zip(blobs) {
        let Some(bytes) = bytes else { continue };
        if f.digest(&bytes) != want {
            return Err(RemoteError::new(format!(
                "blob {}/{} has other bytes than its digest says",
                want.hash, want.size_bytes
            )));
        }
        read.insert(want, bytes);
    }
    Ok(read)
}

/// A record whose first round is read: its blobs by path, the record
/// decoded, and the chunks its manifests name.
struct Reading<'a> {
    by_path: HashMap<&'a str, Vec<u8>>,
    record: StepRecord,
    manifests: Vec<(String, Vec<proto::Digest>)>,
}

fn bad(what: &str) -> RemoteError {
    RemoteError::new(format!("the action result {what}"))
}

impl<'a> Reading<'a> {
    fn new(by_path: HashMap<&'a str, Vec<u8>>) -> Result<Reading<'a>, RemoteError> {
        let record = by_path.get(RECORD).ok_or_else(|| bad("names no record"))?;
        let record =
            StepRecord::decode(record).map_err(|e| bad(&format!("holds a bad record: {e}")))?;
        let mut manifests = Vec::new();
        for (path, bytes) in &by_path {
            if !path.starts_with(CHUNKS_PREFIX) {
                continue;
            }
            let chunks = chunks::decode(bytes)
                .ok_or_else(|| RemoteError::new("a chunk manifest does not decode"))?;
            manifests.push(((*path).to_owned(), chunks));
        }
        Ok(Reading {
            by_path,
            record,
            manifests,
        })
    }

    /// The chunks the second round reads for this record.
    fn chunks(&self) -> impl Iterator<Item = &proto::Digest> {
        self.manifests.iter().flat_map(|(_, chunks)| chunks)
    }

    /// The record with its outputs, put together from `chunks` where a
    /// manifest names them; `None` when a chunk is gone.
    fn finish(
        mut self,
        chunks: &HashMap<proto::Digest, Vec<u8>>,
    ) -> Result<Option<Hit>, RemoteError> {
        let mut chunked = HashMap::new();
        for (name, parts) in &self.manifests {
            let mut bytes = Vec::new();
            for part in parts {
                let Some(chunk) = chunks.get(part) else {
                    return Ok(None);
                };
                bytes.extend_from_slice(chunk);
            }
            chunked.insert(name.as_str(), bytes);
        }
        let mut outputs = Vec::with_capacity(self.record.outputs.len());
        for output in &self.record.outputs {
            let name = |prefix: &str| format!("{prefix}{}", output.digest);
            let packed = match self.by_path.remove(name(DEFLATE_PREFIX).as_str()) {
                Some(packed) => Some(
                    inflated(&packed, output.size)
                        .ok_or_else(|| bad("has a deflated blob that does not inflate"))?,
                ),
                None => None,
            };
            let bytes = packed
                .or_else(|| self.by_path.remove(name(BLOB_PREFIX).as_str()))
                .or_else(|| chunked.remove(name(CHUNKS_PREFIX).as_str()))
                .ok_or_else(|| bad("lacks a blob its record names"))?;
            if bytes.len() as u64 != output.size || Digest::of(&bytes) != output.digest {
                return Err(bad("has a blob that is not the one its record names"));
            }
            outputs.push(bytes);
        }
        Ok(Some(Hit {
            record: self.record,
            outputs,
        }))
    }
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
    fn records_read_together_share_two_rounds_and_a_gone_blob_misses_one() {
        let f = DigestFn::Sha256;
        let first = upload();
        let mut second = upload();
        second.key = Digest::of(b"other");
        second.record.meta = b"other".to_vec();
        let encoded = [first.record.encode(), second.record.encode()];
        let (r1, b1) = action_result(f, &first, &encoded[0]);
        let (r2, b2) = action_result(f, &second, &encoded[1]);
        let mut server: HashMap<proto::Digest, Vec<u8>> = b1
            .iter()
            .chain(&b2)
            .map(|b| (b.digest.clone(), b.data.to_vec()))
            .collect();
        let mut rounds = Vec::new();
        let mut fetch = |digests: &[proto::Digest]| {
            rounds.push(digests.len());
            Ok(digests.iter().map(|d| server.get(d).cloned()).collect())
        };
        let hits = read_records(f, &[r1.clone(), r2.clone()], &mut fetch).unwrap();
        assert_eq!(hits[0].as_ref().unwrap().outputs, first.outputs);
        assert_eq!(hits[1].as_ref().unwrap().outputs, second.outputs);
        // Two records, the same outputs: their blobs and chunks once each.
        let chunks: std::collections::HashSet<_> = b1[3..].iter().map(|b| &b.digest).collect();
        let chunks = chunks.len();
        assert_eq!(rounds, [4, chunks], "records, shared blobs; then chunks");
        server.remove(&b2[0].digest);
        let hits = read_records(f, &[r1, r2], &mut reader(&server)).unwrap();
        assert!(hits[0].is_some() && hits[1].is_none());
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
