//! One function's gRPC client, as classic render dials it (§2.6): an
//! insecure (h2c) channel to the target, connected on first use and
//! retried until the deadline (Go's `waitForReady`), `RunFunction` on the
//! v1 service with the v1beta1 service as the fallback when a function
//! answers `Unimplemented`, and message limits large enough for big XRs.
//! Every XR rendered at once shares the one channel.

use std::time::Duration;

use prost::Message;
use tokio::sync::OnceCell;
use tokio::time::Instant;
use tonic::transport::{Channel, Endpoint};
use tonic::Code;

use crate::proto::{v1, v1beta1};

/// The largest message sent or received (Go's and tonic's default is 4
/// MiB, too small for large XR trees).
const MAX_MESSAGE: usize = 256 << 20;

/// A function's connection.
pub struct Client {
    target: String,
    channel: OnceCell<Channel>,
}

impl Client {
    /// A client of the server at `target` (`host:port` or
    /// `dns:///host:port`); nothing is dialled yet.
    pub fn new(target: &str) -> Client {
        Client {
            target: target.to_string(),
            channel: OnceCell::new(),
        }
    }

    /// The channel, connecting (with retries) until `deadline`.
    async fn channel(&self, deadline: Instant) -> Result<Channel, String> {
        self.channel
            .get_or_try_init(|| connect(&self.target, deadline))
            .await
            .cloned()
    }

    /// `RunFunction`, with the v1beta1 fallback. A call that cannot reach
    /// the server (a container whose port is published before its server
    /// listens) is tried again until `deadline`, as Go's `waitForReady`.
    pub async fn run(
        &self,
        req: v1::RunFunctionRequest,
        deadline: Instant,
    ) -> Result<v1::RunFunctionResponse, String> {
        let channel = self.channel(deadline).await?;
        let mut backoff = Duration::from_millis(20);
        loop {
            let timeout = deadline.saturating_duration_since(Instant::now());
            let mut client = v1::function_runner_service_client::FunctionRunnerServiceClient::new(
                channel.clone(),
            )
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE);
            let mut request = tonic::Request::new(req.clone());
            request.set_timeout(timeout);
            match client.run_function(request).await {
                Ok(rsp) => return Ok(rsp.into_inner()),
                Err(status) if status.code() == Code::Unimplemented => {
                    return run_beta(channel, &req, timeout).await
                }
                Err(status) if unreachable(&status) && Instant::now() + backoff < deadline => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                }
                Err(status) => return Err(status_text(&status)),
            }
        }
    }
}

/// Whether the call failed before reaching a server.
fn unreachable(status: &tonic::Status) -> bool {
    status.code() == Code::Unavailable
        || (status.code() == Code::Unknown && status.message() == "transport error")
}

/// The same call on the v1beta1 service: the messages are the same on the
/// wire, so the request is re-encoded as it is.
async fn run_beta(
    channel: Channel,
    req: &v1::RunFunctionRequest,
    timeout: Duration,
) -> Result<v1::RunFunctionResponse, String> {
    let beta = v1beta1::RunFunctionRequest::decode(req.encode_to_vec().as_slice())
        .map_err(|e| format!("cannot convert the request to v1beta1: {e}"))?;
    let mut client =
        v1beta1::function_runner_service_client::FunctionRunnerServiceClient::new(channel)
            .max_decoding_message_size(MAX_MESSAGE)
            .max_encoding_message_size(MAX_MESSAGE);
    let mut request = tonic::Request::new(beta);
    request.set_timeout(timeout);
    let rsp = client
        .run_function(request)
        .await
        .map_err(|s| status_text(&s))?
        .into_inner();
    v1::RunFunctionResponse::decode(rsp.encode_to_vec().as_slice())
        .map_err(|e| format!("cannot convert the v1beta1 response: {e}"))
}

/// A gRPC status as Go's client prints it.
fn status_text(status: &tonic::Status) -> String {
    let mut text = format!(
        "rpc error: code = {:?} desc = {}",
        status.code(),
        status.message()
    );
    if let Some(source) = std::error::Error::source(status) {
        text.push_str(&format!(": {}", chain(source)));
    }
    text
}

/// Connects to `target`, retrying with backoff until `deadline`.
async fn connect(target: &str, deadline: Instant) -> Result<Channel, String> {
    let address = target.strip_prefix("dns:///").unwrap_or(target);
    let endpoint = Endpoint::from_shared(format!("http://{address}"))
        .map_err(|e| format!("invalid target {target:?}: {e}"))?
        .connect_timeout(Duration::from_secs(5))
        .tcp_nodelay(true);
    let mut backoff = Duration::from_millis(20);
    loop {
        match endpoint.connect().await {
            Ok(channel) => return Ok(channel),
            Err(e) => {
                if Instant::now() + backoff >= deadline {
                    return Err(format!(
                        "cannot connect to {target} before the timeout: {}",
                        chain(&e)
                    ));
                }
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(500));
            }
        }
    }
}

/// An error and its causes ("transport error: Connection refused").
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(&format!(": {cause_text}"));
        }
        source = cause.source();
    }
    text
}
