//! One function container, as `docker run --rm -i` runs it for kpt:
//! created with kpt's settings (no network unless allowed, user `nobody`,
//! `no-new-privileges`, no mounts, no environment beyond the image's),
//! attached before it starts so no output is lost, the ResourceList
//! streamed to its stdin and closed, stdout and stderr collected, the exit
//! code read, and the container removed whatever happened — success,
//! failure, timeout or interrupt.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use bollard::container::{AttachContainerResults, LogOutput};
use bollard::errors::Error as BollardError;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    AttachContainerOptionsBuilder, CreateContainerOptionsBuilder, WaitContainerOptionsBuilder,
};
use bollard::Docker;
use futures_util::{StreamExt, TryStreamExt};
use tokio::io::AsyncWriteExt;

use super::engine::{remove, Registration, PID_LABEL};
use super::image::{self, daemon_message, engine_error};
use super::{
    filter_cli_output, refused, refused_start, ContainerError, ContainerOptions, ProcessOutput,
};

/// kpt's `--user nobody`.
const NOBODY: &str = "nobody";
/// The same user by number, for images without a passwd entry for it.
const NOBODY_ID: &str = "65534:65534";

/// Images found to have no passwd entry for `nobody` (they run as
/// [`NOBODY_ID`] from then on, without the failed first try).
static WITHOUT_NOBODY: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());

fn lacks_nobody(image: &str) -> bool {
    WITHOUT_NOBODY
        .lock()
        .map(|set| set.contains(image))
        .unwrap_or(false)
}

/// What one try at running the image gave.
enum Attempt {
    /// The function ran (or the engine refused it, as `docker run` says).
    Ran(ProcessOutput),
    /// The image has no passwd entry for `nobody`; docker's refusal.
    NoNobody(ProcessOutput),
}

/// Runs `image` on `stdin`: pulls as the policy says, then runs the
/// container.
pub(super) async fn run(
    docker: &Docker,
    image: &str,
    stdin: &[u8],
    options: &ContainerOptions,
) -> Result<ProcessOutput, ContainerError> {
    if let Some(failed_pull) = image::prepare(docker, image, options.pull).await? {
        return Ok(failed_pull);
    }
    let known_numeric = lacks_nobody(image);
    let user = if known_numeric { NOBODY_ID } else { NOBODY };
    match attempt(docker, image, user, stdin, options).await? {
        Attempt::Ran(out) => Ok(out),
        Attempt::NoNobody(out) if known_numeric => Ok(out),
        Attempt::NoNobody(_) => {
            if let Ok(mut set) = WITHOUT_NOBODY.lock() {
                set.insert(image.to_string());
            }
            match attempt(docker, image, NOBODY_ID, stdin, options).await? {
                Attempt::Ran(out) | Attempt::NoNobody(out) => Ok(out),
            }
        }
    }
}

/// Creates, runs and removes one container as `user`.
async fn attempt(
    docker: &Docker,
    image: &str,
    user: &str,
    stdin: &[u8],
    options: &ContainerOptions,
) -> Result<Attempt, ContainerError> {
    let registration = Registration::new().ok_or(ContainerError::Interrupted)?;
    let create = CreateContainerOptionsBuilder::default().build();
    let id = match docker
        .create_container(Some(create), body(image, user, options.network))
        .await
    {
        Ok(created) => created.id,
        Err(e) => return refusal(e, "create container").map(Attempt::Ran),
    };
    if !registration.created(&id) {
        remove(docker, &id).await;
        return Err(ContainerError::Interrupted);
    }
    let outcome = start_and_collect(docker, &id, stdin, options.timeout).await;
    remove(docker, &id).await;
    outcome
}

/// The settings `docker run --rm -i --network none|host --user nobody
/// --security-opt=no-new-privileges` sends, plus krmgraph's label.
fn body(image: &str, user: &str, network: bool) -> ContainerCreateBody {
    ContainerCreateBody {
        image: Some(image.to_string()),
        user: Some(user.to_string()),
        attach_stdin: Some(true),
        attach_stdout: Some(true),
        attach_stderr: Some(true),
        open_stdin: Some(true),
        stdin_once: Some(true),
        tty: Some(false),
        labels: Some(HashMap::from([(
            PID_LABEL.to_string(),
            std::process::id().to_string(),
        )])),
        host_config: Some(HostConfig {
            network_mode: Some(if network { "host" } else { "none" }.to_string()),
            security_opt: Some(vec!["no-new-privileges".to_string()]),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// An engine error as `docker run` reports it (exit 125), or an engine
/// failure when the engine did not answer.
fn refusal(e: BollardError, action: &'static str) -> Result<ProcessOutput, ContainerError> {
    daemon_message(&e)
        .map(|message| refused(&message))
        .ok_or_else(|| engine_error(action, &e))
}

async fn start_and_collect(
    docker: &Docker,
    id: &str,
    stdin: &[u8],
    timeout: Duration,
) -> Result<Attempt, ContainerError> {
    let attach = AttachContainerOptionsBuilder::default()
        .stdin(true)
        .stdout(true)
        .stderr(true)
        .stream(true)
        .build();
    let streams = docker
        .attach_container(id, Some(attach))
        .await
        .map_err(|e| engine_error("attach", &e))?;
    if let Err(e) = docker.start_container(id, None).await {
        let message = daemon_message(&e).ok_or_else(|| engine_error("start container", &e))?;
        let out = refused_start(&message);
        return Ok(if message.contains("unable to find user nobody") {
            Attempt::NoNobody(out)
        } else {
            Attempt::Ran(out)
        });
    }
    match tokio::time::timeout(timeout, collect(docker, id, streams, stdin)).await {
        Ok(result) => result.map(Attempt::Ran),
        Err(_) => Err(ContainerError::Timeout(timeout)),
    }
}

/// Streams `stdin` in and the output out until the container exits, then
/// reads its exit code.
async fn collect(
    docker: &Docker,
    id: &str,
    streams: AttachContainerResults,
    stdin: &[u8],
) -> Result<ProcessOutput, ContainerError> {
    let AttachContainerResults {
        mut output,
        mut input,
    } = streams;
    let data = stdin.to_vec();
    // Written from its own task while the output is read, so that neither
    // side's buffer fills up and stalls the other; the half-close is the
    // function's end of input.
    let writer = tokio::spawn(async move {
        // A function may exit without reading all of its input.
        let _ = input.write_all(&data).await;
        let _ = input.shutdown().await;
    });
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    while let Some(item) = output.next().await {
        match item.map_err(|e| engine_error("read output", &e))? {
            LogOutput::StdOut { message } => stdout.extend_from_slice(&message),
            LogOutput::StdErr { message } => stderr.extend_from_slice(&message),
            LogOutput::StdIn { .. } | LogOutput::Console { .. } => {}
        }
    }
    writer.abort();
    Ok(ProcessOutput {
        stdout,
        stderr: filter_cli_output(&stderr),
        exit_code: Some(exit_code(docker, id).await?),
    })
}

async fn exit_code(docker: &Docker, id: &str) -> Result<i32, ContainerError> {
    let options = WaitContainerOptionsBuilder::default()
        .condition("not-running")
        .build();
    match docker
        .wait_container(id, Some(options))
        .try_collect::<Vec<_>>()
        .await
    {
        Ok(responses) => Ok(responses.last().map_or(0, |r| r.status_code as i32)),
        // bollard reports a non-zero exit as an error.
        Err(BollardError::DockerContainerWaitError { code, .. }) => Ok(code as i32),
        Err(e) => Err(engine_error("wait", &e)),
    }
}
