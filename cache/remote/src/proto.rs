//! The few REAPI v2 (`build.bazel.remote.execution.v2`), ByteStream
//! (`google.bytestream`) and `google.rpc.Status` messages krmgraph sends
//! and reads, written out with prost's derive. Field numbers and types are
//! those of `remote_execution.proto` and `bytestream.proto`; fields
//! krmgraph never sets or reads are left out, which protobuf allows
//! (unknown fields are skipped when decoding, absent ones are defaults).

#![allow(missing_docs)]

/// `DigestFunction.Value`: SHA256.
pub const SHA256: i32 = 1;
/// `DigestFunction.Value`: BLAKE3.
pub const BLAKE3: i32 = 9;

#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct Digest {
    #[prost(string, tag = "1")]
    pub hash: String,
    #[prost(int64, tag = "2")]
    pub size_bytes: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Command {
    #[prost(string, repeated, tag = "1")]
    pub arguments: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub output_paths: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Action {
    #[prost(message, optional, tag = "1")]
    pub command_digest: Option<Digest>,
    #[prost(message, optional, tag = "2")]
    pub input_root_digest: Option<Digest>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OutputFile {
    #[prost(string, tag = "1")]
    pub path: String,
    #[prost(message, optional, tag = "2")]
    pub digest: Option<Digest>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ExecutedActionMetadata {
    #[prost(string, tag = "1")]
    pub worker: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ActionResult {
    #[prost(message, repeated, tag = "2")]
    pub output_files: Vec<OutputFile>,
    #[prost(int32, tag = "4")]
    pub exit_code: i32,
    #[prost(message, optional, tag = "9")]
    pub execution_metadata: Option<ExecutedActionMetadata>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GetActionResultRequest {
    #[prost(string, tag = "1")]
    pub instance_name: String,
    #[prost(message, optional, tag = "2")]
    pub action_digest: Option<Digest>,
    #[prost(int32, tag = "6")]
    pub digest_function: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct UpdateActionResultRequest {
    #[prost(string, tag = "1")]
    pub instance_name: String,
    #[prost(message, optional, tag = "2")]
    pub action_digest: Option<Digest>,
    #[prost(message, optional, tag = "3")]
    pub action_result: Option<ActionResult>,
    #[prost(int32, tag = "5")]
    pub digest_function: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FindMissingBlobsRequest {
    #[prost(string, tag = "1")]
    pub instance_name: String,
    #[prost(message, repeated, tag = "2")]
    pub blob_digests: Vec<Digest>,
    #[prost(int32, tag = "3")]
    pub digest_function: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct FindMissingBlobsResponse {
    #[prost(message, repeated, tag = "2")]
    pub missing_blob_digests: Vec<Digest>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct UpdateBlobRequest {
    #[prost(message, optional, tag = "1")]
    pub digest: Option<Digest>,
    #[prost(bytes = "vec", tag = "2")]
    pub data: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BatchUpdateBlobsRequest {
    #[prost(string, tag = "1")]
    pub instance_name: String,
    #[prost(message, repeated, tag = "2")]
    pub requests: Vec<UpdateBlobRequest>,
    #[prost(int32, tag = "5")]
    pub digest_function: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct Status {
    #[prost(int32, tag = "1")]
    pub code: i32,
    #[prost(string, tag = "2")]
    pub message: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct UpdateBlobResponse {
    #[prost(message, optional, tag = "1")]
    pub digest: Option<Digest>,
    #[prost(message, optional, tag = "2")]
    pub status: Option<Status>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BatchUpdateBlobsResponse {
    #[prost(message, repeated, tag = "1")]
    pub responses: Vec<UpdateBlobResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BatchReadBlobsRequest {
    #[prost(string, tag = "1")]
    pub instance_name: String,
    #[prost(message, repeated, tag = "2")]
    pub digests: Vec<Digest>,
    #[prost(int32, tag = "4")]
    pub digest_function: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadBlobResponse {
    #[prost(message, optional, tag = "1")]
    pub digest: Option<Digest>,
    #[prost(bytes = "vec", tag = "2")]
    pub data: Vec<u8>,
    #[prost(message, optional, tag = "3")]
    pub status: Option<Status>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BatchReadBlobsResponse {
    #[prost(message, repeated, tag = "1")]
    pub responses: Vec<ReadBlobResponse>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GetCapabilitiesRequest {
    #[prost(string, tag = "1")]
    pub instance_name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ActionCacheUpdateCapabilities {
    #[prost(bool, tag = "1")]
    pub update_enabled: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct CacheCapabilities {
    #[prost(int32, repeated, tag = "1")]
    pub digest_functions: Vec<i32>,
    #[prost(message, optional, tag = "2")]
    pub action_cache_update_capabilities: Option<ActionCacheUpdateCapabilities>,
    #[prost(int64, tag = "4")]
    pub max_batch_total_size_bytes: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerCapabilities {
    #[prost(message, optional, tag = "1")]
    pub cache_capabilities: Option<CacheCapabilities>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadRequest {
    #[prost(string, tag = "1")]
    pub resource_name: String,
    #[prost(int64, tag = "2")]
    pub read_offset: i64,
    #[prost(int64, tag = "3")]
    pub read_limit: i64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadResponse {
    #[prost(bytes = "vec", tag = "10")]
    pub data: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteRequest {
    #[prost(string, tag = "1")]
    pub resource_name: String,
    #[prost(int64, tag = "2")]
    pub write_offset: i64,
    #[prost(bool, tag = "3")]
    pub finish_write: bool,
    #[prost(bytes = "vec", tag = "10")]
    pub data: Vec<u8>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct WriteResponse {
    #[prost(int64, tag = "1")]
    pub committed_size: i64,
}
