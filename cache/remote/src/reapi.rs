//! The Remote Execution API v2 client (gRPC, `grpc://`): ActionCache for
//! records, ContentAddressableStorage for blobs (FindMissingBlobs before
//! uploading; BatchUpdateBlobs/BatchReadBlobs under the server's batch
//! limit, ByteStream above it), Capabilities for the digest function and
//! that limit. The instance name and the configured headers go on every
//! call, and every call is bounded by the timeout.
//!
//! Blocking, for rayon's workers: calls run on a small tokio runtime of
//! this client's own.

use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use krmgraph_cache::{Digest, Hit, Moved, RemoteError, Upload};
use prost::Message;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue};
use tonic::transport::{Channel, Endpoint};

use crate::mapping::{self, DigestFn};
use crate::{proto, Options};

const GET_RESULT: &str = "/build.bazel.remote.execution.v2.ActionCache/GetActionResult";
const PUT_RESULT: &str = "/build.bazel.remote.execution.v2.ActionCache/UpdateActionResult";
const FIND_MISSING: &str =
    "/build.bazel.remote.execution.v2.ContentAddressableStorage/FindMissingBlobs";
const BATCH_READ: &str =
    "/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchReadBlobs";
const BATCH_UPDATE: &str =
    "/build.bazel.remote.execution.v2.ContentAddressableStorage/BatchUpdateBlobs";
const CAPABILITIES: &str = "/build.bazel.remote.execution.v2.Capabilities/GetCapabilities";
const READ: &str = "/google.bytestream.ByteStream/Read";
const WRITE: &str = "/google.bytestream.ByteStream/Write";

/// Batch requests stay under this when the server names no limit (REAPI
/// servers commonly take 4 MiB messages).
const DEFAULT_BATCH: usize = 4 << 20;
/// What a request adds to its blobs' bytes, at most, per blob.
const PER_BLOB: usize = 200;
/// Calls in flight at once: servers limit concurrent calls (BuildGrid
/// answers `RESOURCE_EXHAUSTED` above its limit).
const CONCURRENT: usize = 8;
/// ByteStream chunk size.
const CHUNK: usize = 1 << 20;

/// What Capabilities said.
#[derive(Clone, Copy, Debug)]
struct Caps {
    digest: DigestFn,
    max_batch: usize,
}

/// A REAPI cache server.
pub struct Reapi {
    rt: tokio::runtime::Runtime,
    channel: Channel,
    shown: String,
    instance: String,
    headers: Vec<(AsciiMetadataKey, AsciiMetadataValue)>,
    timeout: Duration,
    caps: OnceLock<Result<Caps, RemoteError>>,
    /// Capabilities asked as the client is made: the connection (and its
    /// TLS handshake) and this first call overlap the render's own work
    /// before its first lookup.
    asked: Mutex<Option<tokio::task::JoinHandle<Result<Caps, RemoteError>>>>,
    /// Blobs this process knows the server has.
    present: Mutex<std::collections::HashSet<proto::Digest>>,
}

fn error(e: impl std::fmt::Display) -> RemoteError {
    RemoteError::new(e.to_string())
}

fn status_error(s: &tonic::Status) -> RemoteError {
    use tonic::Code;
    let auth = matches!(s.code(), Code::Unauthenticated | Code::PermissionDenied);
    let message = match s.message() {
        "" => format!("{:?}", s.code()),
        m => format!("{:?}: {m}", s.code()),
    };
    RemoteError { message, auth }
}

impl Reapi {
    /// A client of the server at `http_uri` (`http://host:port`, or
    /// `https://` with `tls`), shown as `shown`.
    /// `tls`: how to check the server (`https://` URIs).
    pub fn new(
        http_uri: &str,
        shown: &str,
        options: &Options,
        tls: Option<tonic::transport::ClientTlsConfig>,
    ) -> Result<Reapi, String> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("krmgraph-remote")
            .enable_all()
            .build()
            .map_err(|e| format!("no runtime for the remote cache: {e}"))?;
        let endpoint = Endpoint::from_shared(http_uri.to_owned())
            .map_err(|e| format!("bad remote cache URL `{shown}`: {e}"))?
            .connect_timeout(options.timeout)
            .tcp_nodelay(true);
        let endpoint = match tls {
            Some(tls) => endpoint
                .tls_config(tls)
                .map_err(|e| format!("TLS for `{shown}`: {e}"))?,
            None => endpoint,
        };
        let channel = {
            let _entered = rt.enter();
            endpoint.connect_lazy()
        };
        let mut headers = Vec::new();
        for (name, value) in &options.headers {
            let key = AsciiMetadataKey::from_bytes(name.to_ascii_lowercase().as_bytes())
                .map_err(|_| format!("--remote-header: `{name}` is not a header name"))?;
            let value = AsciiMetadataValue::try_from(value.as_str())
                .map_err(|_| format!("--remote-header: the value of `{name}` is not ASCII"))?;
            headers.push((key, value));
        }
        let asked = rt.spawn(capabilities(
            channel.clone(),
            headers.clone(),
            options.instance.clone(),
            options.timeout,
        ));
        Ok(Reapi {
            rt,
            channel,
            shown: shown.to_owned(),
            instance: options.instance.clone(),
            headers,
            timeout: options.timeout,
            caps: OnceLock::new(),
            asked: Mutex::new(Some(asked)),
            present: Mutex::default(),
        })
    }

    /// Runs `fut` on the client's runtime, bounded by the timeout.
    fn block<T>(
        &self,
        fut: impl std::future::Future<Output = Result<T, RemoteError>>,
    ) -> Result<T, RemoteError> {
        let timeout = self.timeout;
        self.rt.block_on(async move {
            match tokio::time::timeout(timeout, fut).await {
                Ok(result) => result,
                Err(_) => Err(RemoteError::new(format!(
                    "no answer within {timeout:?} (--remote-timeout)"
                ))),
            }
        })
    }

    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut request = tonic::Request::new(message);
        for (key, value) in &self.headers {
            request.metadata_mut().insert(key.clone(), value.clone());
        }
        request
    }

    /// One call; a server that says it is busy (`RESOURCE_EXHAUSTED`:
    /// BuildGrid's concurrent-RPC limit) is asked again, three times at
    /// most, within the same timeout.
    async fn unary<Q, R>(&self, path: &'static str, message: Q) -> Result<R, RemoteError>
    where
        Q: Message + Clone + Send + Sync + 'static,
        R: Message + Default + Send + Sync + 'static,
    {
        let mut wait = Duration::from_millis(20);
        let mut attempt = 0;
        loop {
            let mut grpc = tonic::client::Grpc::new(self.channel.clone());
            grpc.ready().await.map_err(error)?;
            let codec = tonic_prost::ProstCodec::<Q, R>::default();
            let request = self.request(message.clone());
            match grpc
                .unary(request, PathAndQuery::from_static(path), codec)
                .await
            {
                Ok(response) => return Ok(response.into_inner()),
                Err(s) if s.code() == tonic::Code::ResourceExhausted && attempt < 3 => {
                    attempt += 1;
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                Err(s) => return Err(status_error(&s)),
            }
        }
    }

    /// The digest function and batch limit, asked once (when the client
    /// was made).
    fn caps(&self) -> Result<Caps, RemoteError> {
        self.caps
            .get_or_init(|| {
                let asked = self.asked.lock().ok().and_then(|mut a| a.take());
                let Some(asked) = asked else {
                    return Err(RemoteError::new("Capabilities were not asked"));
                };
                // Bounded by the call's own timeout; this one only
                // guards against a runtime gone.
                self.block(async { asked.await.map_err(error)? })
            })
            .clone()
    }

    /// What the server says about itself, for `krmgraph cache stats`.
    pub fn check(&self) -> Result<String, RemoteError> {
        let caps = self.caps()?;
        Ok(format!(
            "answers; digest function {:?}, batch limit {} bytes",
            caps.digest, caps.max_batch
        ))
    }

    async fn get_result(
        &self,
        caps: Caps,
        key: &Digest,
    ) -> Result<Option<proto::ActionResult>, RemoteError> {
        let request = proto::GetActionResultRequest {
            instance_name: self.instance.clone(),
            action_digest: Some(mapping::action_key(caps.digest, key)),
            digest_function: caps.digest.value(),
        };
        match self.unary(GET_RESULT, request).await {
            Ok(result) => Ok(Some(result)),
            Err(e) if e.message.starts_with("NotFound") => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The bytes of `digests`, `None` for those the server lacks: the
    /// batches (under the server's limit) and the ByteStream reads (above
    /// it) at once.
    async fn read_blobs(
        &self,
        caps: Caps,
        digests: &[proto::Digest],
    ) -> Result<Vec<Option<Vec<u8>>>, RemoteError> {
        let mut batches: Vec<Vec<usize>> = vec![Vec::new()];
        let mut streamed = Vec::new();
        let mut batch_bytes = 0;
        for (i, d) in digests.iter().enumerate() {
            let size = usize::try_from(d.size_bytes).unwrap_or(usize::MAX);
            if size + PER_BLOB > caps.max_batch {
                streamed.push(i);
                continue;
            }
            if batch_bytes + size + PER_BLOB > caps.max_batch {
                batches.push(Vec::new());
                batch_bytes = 0;
            }
            batches.last_mut().into_iter().for_each(|b| b.push(i));
            batch_bytes += size + PER_BLOB;
        }
        let reads = batches
            .iter()
            .filter(|batch| !batch.is_empty())
            .map(|batch| self.read_batch(caps, digests, batch));
        let streams = streamed.iter().map(|&i| async move {
            let bytes = self.read_stream(&digests[i]).await?;
            Ok::<_, RemoteError>(vec![(i, bytes)])
        });
        let (read, streamed) = futures_util::future::try_join(
            futures_util::future::try_join_all(reads),
            futures_util::future::try_join_all(streams),
        )
        .await?;
        let mut out = vec![None; digests.len()];
        for (i, bytes) in read.into_iter().chain(streamed).flatten() {
            out[i] = bytes;
        }
        Ok(out)
    }

    /// One `BatchReadBlobs` of `digests[i]` for each `i` of `batch`: the
    /// bytes by index.
    async fn read_batch(
        &self,
        caps: Caps,
        digests: &[proto::Digest],
        batch: &[usize],
    ) -> Result<Vec<(usize, Option<Vec<u8>>)>, RemoteError> {
        let request = proto::BatchReadBlobsRequest {
            instance_name: self.instance.clone(),
            digests: batch.iter().map(|&i| digests[i].clone()).collect(),
            digest_function: caps.digest.value(),
        };
        let response: proto::BatchReadBlobsResponse = self.unary(BATCH_READ, request).await?;
        let mut by_digest = std::collections::HashMap::new();
        for r in response.responses {
            let ok = r.status.as_ref().is_none_or(|s| s.code == 0);
            if let Some(d) = r.digest.filter(|_| ok) {
                by_digest.insert(d, r.data);
            }
        }
        Ok(batch
            .iter()
            .map(|&i| (i, by_digest.get(&digests[i]).cloned()))
            .collect())
    }

    async fn read_stream(&self, d: &proto::Digest) -> Result<Option<Vec<u8>>, RemoteError> {
        let request = proto::ReadRequest {
            resource_name: self.resource(&format!("blobs/{}/{}", d.hash, d.size_bytes)),
            read_offset: 0,
            read_limit: 0,
        };
        let mut grpc = tonic::client::Grpc::new(self.channel.clone());
        grpc.ready().await.map_err(error)?;
        let codec = tonic_prost::ProstCodec::<proto::ReadRequest, proto::ReadResponse>::default();
        let response = grpc
            .server_streaming(
                self.request(request),
                PathAndQuery::from_static(READ),
                codec,
            )
            .await;
        let mut stream = match response {
            Ok(r) => r.into_inner(),
            Err(s) if s.code() == tonic::Code::NotFound => return Ok(None),
            Err(s) => return Err(status_error(&s)),
        };
        let mut data = Vec::new();
        loop {
            match stream.message().await {
                Ok(Some(chunk)) => data.extend(chunk.data),
                Ok(None) => return Ok(Some(data)),
                Err(s) if s.code() == tonic::Code::NotFound => return Ok(None),
                Err(s) => return Err(status_error(&s)),
            }
        }
    }

    fn resource(&self, rest: &str) -> String {
        match self.instance.as_str() {
            "" => rest.to_owned(),
            instance => format!("{instance}/{rest}"),
        }
    }

    async fn find_missing(
        &self,
        caps: Caps,
        digests: Vec<proto::Digest>,
    ) -> Result<Vec<proto::Digest>, RemoteError> {
        let mut missing = Vec::new();
        // Under any message limit: a digest is about 80 bytes.
        for chunk in digests.chunks(10_000) {
            let request = proto::FindMissingBlobsRequest {
                instance_name: self.instance.clone(),
                blob_digests: chunk.to_vec(),
                digest_function: caps.digest.value(),
            };
            let response: proto::FindMissingBlobsResponse =
                self.unary(FIND_MISSING, request).await?;
            missing.extend(response.missing_blob_digests);
        }
        Ok(missing)
    }

    async fn write_blobs(
        &self,
        caps: Caps,
        blobs: Vec<(proto::Digest, &[u8])>,
    ) -> Result<u64, RemoteError> {
        let mut sent = 0;
        let mut batch = Vec::new();
        let mut batch_bytes = 0;
        for (digest, data) in blobs {
            sent += data.len() as u64;
            if data.len() + PER_BLOB > caps.max_batch {
                self.write_stream(&digest, data).await?;
                continue;
            }
            if batch_bytes + data.len() + PER_BLOB > caps.max_batch {
                self.write_batch(caps, std::mem::take(&mut batch)).await?;
                batch_bytes = 0;
            }
            batch_bytes += data.len() + PER_BLOB;
            batch.push(proto::UpdateBlobRequest {
                digest: Some(digest),
                data: data.to_vec(),
            });
        }
        self.write_batch(caps, batch).await?;
        Ok(sent)
    }

    async fn write_batch(
        &self,
        caps: Caps,
        requests: Vec<proto::UpdateBlobRequest>,
    ) -> Result<(), RemoteError> {
        if requests.is_empty() {
            return Ok(());
        }
        let request = proto::BatchUpdateBlobsRequest {
            instance_name: self.instance.clone(),
            requests,
            digest_function: caps.digest.value(),
        };
        let response: proto::BatchUpdateBlobsResponse = self.unary(BATCH_UPDATE, request).await?;
        let failed = response
            .responses
            .iter()
            .find_map(|r| r.status.as_ref().filter(|s| s.code != 0));
        match failed {
            Some(s) => Err(RemoteError::new(format!(
                "BatchUpdateBlobs: status {}: {}",
                s.code, s.message
            ))),
            None => Ok(()),
        }
    }

    async fn write_stream(&self, d: &proto::Digest, data: &[u8]) -> Result<(), RemoteError> {
        let name = self.resource(&format!(
            "uploads/{}/blobs/{}/{}",
            upload_id(d),
            d.hash,
            d.size_bytes
        ));
        let mut chunks = Vec::new();
        let mut offset = 0;
        loop {
            let end = (offset + CHUNK).min(data.len());
            chunks.push(proto::WriteRequest {
                resource_name: if offset == 0 {
                    name.clone()
                } else {
                    String::new()
                },
                write_offset: offset as i64,
                finish_write: end == data.len(),
                data: data[offset..end].to_vec(),
            });
            offset = end;
            if offset == data.len() {
                break;
            }
        }
        let mut grpc = tonic::client::Grpc::new(self.channel.clone());
        grpc.ready().await.map_err(error)?;
        let codec = tonic_prost::ProstCodec::<proto::WriteRequest, proto::WriteResponse>::default();
        let stream = tokio_stream::iter(chunks);
        grpc.client_streaming(
            self.request(stream),
            PathAndQuery::from_static(WRITE),
            codec,
        )
        .await
        .map(|_| ())
        .map_err(|s| status_error(&s))
    }

    async fn put_result(
        &self,
        caps: Caps,
        key: &Digest,
        result: proto::ActionResult,
    ) -> Result<(), RemoteError> {
        let request = proto::UpdateActionResultRequest {
            instance_name: self.instance.clone(),
            action_digest: Some(mapping::action_key(caps.digest, key)),
            action_result: Some(result),
            digest_function: caps.digest.value(),
        };
        let _: proto::ActionResult = self.unary(PUT_RESULT, request).await?;
        Ok(())
    }
}

/// What the server's Capabilities say (`GetCapabilities`, once per
/// client), within `timeout`.
async fn capabilities(
    channel: Channel,
    headers: Vec<(AsciiMetadataKey, AsciiMetadataValue)>,
    instance: String,
    timeout: Duration,
) -> Result<Caps, RemoteError> {
    let call = async {
        let mut grpc = tonic::client::Grpc::new(channel);
        grpc.ready().await.map_err(error)?;
        let mut request = tonic::Request::new(proto::GetCapabilitiesRequest {
            instance_name: instance,
        });
        for (key, value) in headers {
            request.metadata_mut().insert(key, value);
        }
        let codec = tonic_prost::ProstCodec::<
            proto::GetCapabilitiesRequest,
            proto::ServerCapabilities,
        >::default();
        grpc.unary(request, PathAndQuery::from_static(CAPABILITIES), codec)
            .await
            .map(tonic::Response::into_inner)
            .map_err(|s| status_error(&s))
    };
    let caps = match tokio::time::timeout(timeout, call).await {
        Ok(caps) => caps?,
        Err(_) => {
            return Err(RemoteError::new(format!(
                "no answer within {timeout:?} (--remote-timeout)"
            )))
        }
    };
    let cache = caps.cache_capabilities.unwrap_or_default();
    let digest = if cache.digest_functions.contains(&proto::BLAKE3) {
        DigestFn::Blake3
    } else if cache.digest_functions.contains(&proto::SHA256) || cache.digest_functions.is_empty() {
        DigestFn::Sha256
    } else {
        return Err(RemoteError::new(format!(
            "the server offers neither SHA256 nor BLAKE3 (digest functions {:?})",
            cache.digest_functions
        )));
    };
    let max_batch = match usize::try_from(cache.max_batch_total_size_bytes) {
        Ok(0) | Err(_) => DEFAULT_BATCH,
        Ok(n) => n,
    };
    Ok(Caps { digest, max_batch })
}

/// A unique-enough upload id (ByteStream wants a UUID; any unique string
/// is accepted): the digest, the process and a counter.
fn upload_id(d: &proto::Digest) -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let h = &d.hash[..8.min(d.hash.len())];
    format!(
        "{h}-0000-4000-8000-{:06x}{:06x}",
        std::process::id() & 0xff_ffff,
        n & 0xff_ffff
    )
}

impl krmgraph_cache::Remote for Reapi {
    fn fetch(&self, key: &Digest) -> Result<(Option<Hit>, Moved), RemoteError> {
        let (mut hits, moved) = self.fetch_many(std::slice::from_ref(key))?;
        Ok((hits.pop().flatten(), moved))
    }

    /// The action results at once (a few calls at a time), then one round
    /// of blob reads for all of them and one of chunks: three round trips
    /// however many keys.
    fn fetch_many(&self, keys: &[Digest]) -> Result<(Vec<Option<Hit>>, Moved), RemoteError> {
        let caps = self.caps()?;
        let mut results = Vec::with_capacity(keys.len());
        for chunk in keys.chunks(CONCURRENT) {
            let gets = chunk.iter().map(|key| self.get_result(caps, key));
            results.extend(self.block(futures_util::future::try_join_all(gets))?);
        }
        let found: Vec<proto::ActionResult> = results.iter().flatten().cloned().collect();
        let mut down = found.iter().map(|r| r.encoded_len() as u64).sum::<u64>();
        let mut read = mapping::read_records(caps.digest, &found, &mut |digests| {
            let blobs = self.block(self.read_blobs(caps, digests))?;
            down += blobs.iter().flatten().map(|b| b.len() as u64).sum::<u64>();
            // On the server: an edit's ancestors, which hold these
            // chunks, need not ask about them again.
            if let Ok(mut present) = self.present.lock() {
                let found = digests.iter().zip(&blobs).filter(|(_, b)| b.is_some());
                present.extend(found.map(|(d, _)| d.clone()));
            }
            Ok(blobs)
        })?
        .into_iter();
        let hits = results
            .iter()
            .map(|result| result.as_ref().and_then(|_| read.next().flatten()))
            .collect();
        Ok((hits, Moved { down, up: 0 }))
    }

    fn upload(&self, uploads: &[Upload]) -> Result<Moved, RemoteError> {
        let caps = self.caps()?;
        let records: Vec<Vec<u8>> = uploads.iter().map(|u| u.record.encode()).collect();
        let mut results = Vec::with_capacity(uploads.len());
        let mut blobs = std::collections::HashMap::new();
        for (upload, record) in uploads.iter().zip(&records) {
            let (result, named) = mapping::action_result(caps.digest, upload, record);
            for blob in named {
                blobs.entry(blob.digest).or_insert(blob.data);
            }
            results.push((upload.key, result));
        }
        let known = self.present.lock().map(|p| p.clone()).unwrap_or_default();
        let unknown: Vec<proto::Digest> = blobs
            .keys()
            .filter(|d| !known.contains(*d))
            .cloned()
            .collect();
        let mut up = 0;
        // Blobs first, then the action results that name them; one bounded
        // wait per round of requests.
        let missing = self.block(self.find_missing(caps, unknown.clone()))?;
        let to_send: Vec<(proto::Digest, &[u8])> =
            missing.iter().map(|d| (d.clone(), &*blobs[d])).collect();
        up += self.block(self.write_blobs(caps, to_send))?;
        if let Ok(mut present) = self.present.lock() {
            present.extend(unknown);
        }
        // A few at once: servers limit concurrent calls.
        for chunk in results.chunks(CONCURRENT) {
            let puts = chunk
                .iter()
                .map(|(key, result)| self.put_result(caps, key, result.clone()));
            self.block(futures_util::future::try_join_all(puts))?;
            up += chunk
                .iter()
                .map(|(_, r)| r.encoded_len() as u64)
                .sum::<u64>();
        }
        Ok(Moved { down: 0, up })
    }

    fn describe(&self) -> String {
        self.shown.clone()
    }
}
