//! The container runtime: runs an `image:` function in a container on the
//! Docker Engine, through its API (bollard), the way kpt runs it with
//! `docker run --rm -i --network none --user nobody
//! --security-opt=no-new-privileges --pull <policy> IMAGE` — and gives
//! back what that command gives kpt: the function's stdout, its stderr as
//! kpt filters it, and an exit code (the function's, or 125 with docker's
//! `docker: Error response from daemon: ...` text when the engine refuses,
//! as for a missing image under `--image-pull-policy never`).
//!
//! - `engine`: the tokio runtime and client, created on the first
//!   container a render needs; the running containers an interrupt
//!   removes.
//! - `image`: pull policy, image references, pulls, image identity for
//!   cache keys.
//! - `run`: one container: create, attach, start, stream, wait, remove.
//!
//! Where krmgraph differs from kpt on purpose: an image without a passwd
//! entry for `nobody` runs as `65534:65534` (docker refuses it), a function
//! that outlives `--fn-timeout` is killed *and removed* (kpt kills the
//! docker CLI and leaves the container running), and docker's pull
//! progress is not reproduced (kpt drops most of it from stderr).

mod engine;
mod image;
mod run;

use std::time::Duration;

use super::exec::ProcessOutput;

pub use engine::handles_interrupts;
pub use image::PullPolicy;

/// How container functions run (`--allow-network`,
/// `--image-pull-policy`, `--fn-timeout`).
#[derive(Clone, Debug)]
pub struct ContainerOptions {
    /// Host networking instead of none.
    pub network: bool,
    /// When to pull the image.
    pub pull: PullPolicy,
    /// How long a function may run before its container is killed.
    pub timeout: Duration,
}

/// Why a container function could not run to completion. A function that
/// ran and failed is not an error: its exit code is in the output.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ContainerError {
    /// No engine answers.
    #[error("image {image} runs in a container, and no container engine answers at {socket}: {reason}; start Docker or point DOCKER_HOST at an engine (built-in functions, `krmgraph fn list`, need no engine)")]
    NoEngine {
        /// The function's image.
        image: String,
        /// The socket or address tried (`DOCKER_HOST` or the default).
        socket: String,
        /// What the connection attempt said.
        reason: String,
    },
    /// The function outlived the timeout; its container was removed.
    #[error("unexpected function error: signal: killed (timed out after {0:?}; the container was removed)")]
    Timeout(Duration),
    /// The process is being interrupted; the container was removed.
    #[error("interrupted: the function's container was removed")]
    Interrupted,
    /// The engine failed a request krmgraph needed.
    #[error("container engine: {action}: {message}")]
    Engine {
        /// What krmgraph asked for (`attach`, `wait`, ...).
        action: &'static str,
        /// The engine's answer.
        message: String,
    },
}

/// Runs `image` with `stdin` as its input, blocking this thread (renders
/// call it from their rayon workers, so containers run in parallel up to
/// `--jobs`).
pub fn run(
    image: &str,
    stdin: &[u8],
    options: &ContainerOptions,
) -> Result<ProcessOutput, ContainerError> {
    let engine = engine::get().map_err(|e| e.for_image(image))?;
    let result = engine
        .runtime
        .block_on(run::run(&engine.docker, image, stdin, options));
    if engine::interrupted() {
        engine::wait_for_exit();
    }
    result
}

/// What identifies `image` for cache keys: its ID (the config digest) and
/// repo digests, as the engine has them now, so a re-tagged image makes a
/// new key. `None` when that cannot be known before running (no engine,
/// the image is not present, or the pull policy is `Always`, which may
/// change it), so the render runs uncached.
pub fn image_identity(image: &str, runner: &super::RunnerOptions) -> Option<String> {
    match PullPolicy::parse(&runner.image_pull_policy).ok()? {
        PullPolicy::Always => None,
        PullPolicy::IfNotPresent | PullPolicy::Never => {
            let engine = engine::get().ok()?;
            engine
                .runtime
                .block_on(image::identity(&engine.docker, image))
        }
    }
}

/// The local image's ID and repo digests, as the engine reports them
/// (what a function catalog's `sha256` is checked against); `None` when no
/// engine answers or it has no such image.
pub fn image_digests(image: &str) -> Option<Vec<String>> {
    let engine = engine::get().ok()?;
    engine
        .runtime
        .block_on(image::digests(&engine.docker, image))
}

/// Whether the container engine has `image` locally; `None` when no
/// engine answers or it cannot say.
pub fn image_present(image: &str) -> Option<bool> {
    let engine = engine::get().ok()?;
    engine
        .runtime
        .block_on(image::present(&engine.docker, image))
}

/// What `docker run` prints and exits with when the engine refuses to
/// create or pull an image (no such image, a failed pull): the CLI's text,
/// filtered as kpt filters it, and exit code 125.
fn refused(message: &str) -> ProcessOutput {
    refused_with(message, 125)
}

/// [`refused`] for a container that would not start: 127 when its
/// entrypoint is not found, 126 when it cannot be executed, else 125 (the
/// CLI's `runStartContainerErr`).
fn refused_start(message: &str) -> ProcessOutput {
    let code = if message.contains("executable file not found")
        || message.contains("no such file or directory")
    {
        127
    } else if message.contains("permission denied") || message.contains("is a directory") {
        126
    } else {
        125
    };
    refused_with(message, code)
}

fn refused_with(message: &str, code: i32) -> ProcessOutput {
    let text = format!("docker: {message}\n\nRun 'docker run --help' for more information\n");
    ProcessOutput {
        stdout: Vec::new(),
        stderr: filter_cli_output(text.as_bytes()),
        exit_code: Some(code),
    }
}

/// kpt's `filterDockerCLIOutput`: stderr read line by line (Go's
/// `bufio.Scanner`, which drops a `\r` before each `\n` and stops at a line
/// over 64 KiB), docker's pull progress lines dropped, the rest joined by
/// `\n` (so a final newline is gone).
pub fn filter_cli_output(stderr: &[u8]) -> Vec<u8> {
    const MAX_LINE: usize = 64 * 1024 - 1;
    const PROGRESS: [&[u8]; 8] = [
        b": Pulling from",
        b": Pulling fs layer",
        b": Verifying Checksum",
        b": Download complete",
        b": Pull complete",
        b"Digest: sha256",
        b"Status: Downloaded newer image",
        b"Unable to find image",
    ];
    let mut lines: Vec<&[u8]> = Vec::new();
    let mut rest = stderr;
    while !rest.is_empty() {
        let (line, next) = match rest.iter().position(|&b| b == b'\n') {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        if line.len() > MAX_LINE {
            break;
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !PROGRESS.iter().any(|p| contains(line, p)) {
            lines.push(line);
        }
        rest = next;
    }
    lines.join(&b'\n')
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_stderr_as_kpt() {
        let cases: &[(&str, &str)] = &[
            ("a\nb\n", "a\nb"),
            ("a\n\n", "a\n"),
            ("a", "a"),
            ("crlf\r\nx", "crlf\nx"),
            ("Unable to find image 'x:1' locally\nv1: Pulling from x\nreal\nDigest: sha256:00\nStatus: Downloaded newer image for x:1\n", "real"),
            ("", ""),
        ];
        for (input, want) in cases {
            let got = filter_cli_output(input.as_bytes());
            assert_eq!(String::from_utf8_lossy(&got), *want, "{input:?}");
        }
        let long = format!("first\n{}\nlast\n", "x".repeat(70_000));
        assert_eq!(filter_cli_output(long.as_bytes()), b"first");
    }

    #[test]
    fn refusals_read_like_docker_run() {
        let out = refused("Error response from daemon: No such image: x:latest");
        assert_eq!(out.exit_code, Some(125));
        assert_eq!(
            String::from_utf8_lossy(&out.stderr),
            "docker: Error response from daemon: No such image: x:latest\n\nRun 'docker run --help' for more information"
        );
        let out = refused_start("Error response from daemon: failed to create shim task: exec: \"/nope\": stat /nope: no such file or directory: unknown");
        assert_eq!(out.exit_code, Some(127));
        let out =
            refused_start("Error response from daemon: exec: \"/fn\": permission denied: unknown");
        assert_eq!(out.exit_code, Some(126));
    }
}
