//! Images: kpt's `--image-pull-policy` and what `docker run --pull`
//! does with it (pull when missing, always, or never), pull failures as
//! docker prints them, and an image's identity for cache keys.

use bollard::errors::Error as BollardError;
use bollard::query_parameters::CreateImageOptionsBuilder;
use bollard::Docker;
use futures_util::TryStreamExt;

use super::{refused, ContainerError, ProcessOutput};

/// When to pull a function's image (kpt's `--image-pull-policy`; docker
/// run's `--pull`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullPolicy {
    /// Pull before every run (`--pull always`).
    Always,
    /// Pull when the engine does not have the image (`--pull missing`,
    /// kpt's default).
    IfNotPresent,
    /// Never pull; a missing image fails the function (`--pull never`).
    Never,
}

impl PullPolicy {
    /// Parses a flag value as kpt does: case-insensitive, with kpt's error.
    pub fn parse(value: &str) -> Result<PullPolicy, String> {
        match value.to_ascii_lowercase().as_str() {
            "always" => Ok(PullPolicy::Always),
            "ifnotpresent" => Ok(PullPolicy::IfNotPresent),
            "never" => Ok(PullPolicy::Never),
            _ => Err(format!(
                "invalid argument {} for \"--image-pull-policy\" flag: must be one of: Always, IfNotPresent, Never",
                krmgraph_util::gostr::quote(value)
            )),
        }
    }
}

/// The repository and tag (or digest) to pull: docker pulls `latest` for
/// a reference without either (`fromImage` alone would pull every tag).
fn pull_reference(image: &str) -> (&str, &str) {
    if let Some((repo, digest)) = image.split_once('@') {
        return (repo, digest);
    }
    let name_start = image.rfind('/').map_or(0, |i| i + 1);
    match image[name_start..].rfind(':') {
        Some(i) => (&image[..name_start + i], &image[name_start + i + 1..]),
        None => (image, "latest"),
    }
}

fn is_missing(e: &BollardError) -> bool {
    matches!(
        e,
        BollardError::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

/// Makes the image available under `policy`. `Ok(Some(output))` is a
/// failed pull, as `docker run` reports it; under `Never` a missing image
/// is left for the create to report.
pub(super) async fn prepare(
    docker: &Docker,
    image: &str,
    policy: PullPolicy,
) -> Result<Option<ProcessOutput>, ContainerError> {
    let pull = match policy {
        PullPolicy::Never => false,
        PullPolicy::Always => true,
        PullPolicy::IfNotPresent => match docker.inspect_image(image).await {
            Ok(_) => false,
            Err(e) if is_missing(&e) => true,
            Err(e) => return Err(engine_error("inspect image", &e)),
        },
    };
    if !pull {
        return Ok(None);
    }
    let (repo, tag) = pull_reference(image);
    let options = CreateImageOptionsBuilder::default()
        .from_image(repo)
        .tag(tag)
        .build();
    match docker
        .create_image(Some(options), None, None)
        .try_collect::<Vec<_>>()
        .await
    {
        Ok(_) => Ok(None),
        Err(e) => match daemon_message(&e) {
            Some(message) => Ok(Some(refused(&message))),
            None => Err(engine_error("pull", &e)),
        },
    }
}

/// The text docker prints for an error the engine answered with (an HTTP
/// error, or an error in a progress stream); `None` for transport
/// failures.
pub(super) fn daemon_message(e: &BollardError) -> Option<String> {
    match e {
        BollardError::DockerResponseServerError { message, .. } => {
            Some(format!("Error response from daemon: {message}"))
        }
        BollardError::DockerStreamError { error } => Some(error.clone()),
        _ => None,
    }
}

/// An engine failure on `action`.
pub(super) fn engine_error(action: &'static str, e: &BollardError) -> ContainerError {
    ContainerError::Engine {
        action,
        message: e.to_string(),
    }
}

/// Whether the engine has `image`; `None` when it cannot say.
pub(super) async fn present(docker: &Docker, image: &str) -> Option<bool> {
    match docker.inspect_image(image).await {
        Ok(_) => Some(true),
        Err(e) if is_missing(&e) => Some(false),
        Err(_) => None,
    }
}

/// The image's ID and repo digests (`sha256:<hex>`, `name@sha256:<hex>`);
/// `None` when the engine does not have it.
pub(super) async fn digests(docker: &Docker, image: &str) -> Option<Vec<String>> {
    let inspect = docker.inspect_image(image).await.ok()?;
    let mut out = vec![inspect.id?];
    out.extend(inspect.repo_digests.unwrap_or_default());
    Some(out)
}

/// `image <name> id <config digest> repo-digests <a,b>`: what names the
/// image's content; `None` when the engine does not have it.
pub(super) async fn identity(docker: &Docker, image: &str) -> Option<String> {
    let inspect = docker.inspect_image(image).await.ok()?;
    let mut digests = inspect.repo_digests.unwrap_or_default();
    digests.sort();
    Some(format!(
        "image {image} id {} repo-digests {}",
        inspect.id?,
        digests.join(",")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_references_default_to_latest() {
        assert_eq!(
            pull_reference("gcr.io/kpt-fn/dne"),
            ("gcr.io/kpt-fn/dne", "latest")
        );
        assert_eq!(
            pull_reference("localhost:5000/fn"),
            ("localhost:5000/fn", "latest")
        );
        assert_eq!(
            pull_reference("localhost:5000/fn:v1"),
            ("localhost:5000/fn", "v1")
        );
        assert_eq!(pull_reference("fn@sha256:ab"), ("fn", "sha256:ab"));
    }

    #[test]
    fn pull_policies_parse_as_kpt() {
        assert_eq!(PullPolicy::parse("never"), Ok(PullPolicy::Never));
        assert_eq!(
            PullPolicy::parse("IfNotPresent"),
            Ok(PullPolicy::IfNotPresent)
        );
        assert_eq!(PullPolicy::parse("ALWAYS"), Ok(PullPolicy::Always));
        assert_eq!(
            PullPolicy::parse("foo").unwrap_err(),
            "invalid argument \"foo\" for \"--image-pull-policy\" flag: must be one of: Always, IfNotPresent, Never"
        );
    }
}
