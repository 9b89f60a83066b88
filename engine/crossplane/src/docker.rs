//! The Docker runtime (§2.6), through the Docker Engine API (bollard, as
//! krmgraph-fn's container runtime): `spec.package` (or the
//! `runtime-docker-image` override) started with `--insecure`, port 9443
//! published on an ephemeral port of the publish address (127.0.0.1 by
//! default), dialled at `host:port` as `ContainerInspect` reports it; the
//! pull policy, env, container name and target annotations; and the
//! containers stopped and removed as the cleanup annotation says (remove
//! by default) at the end, on failure, and on Ctrl-C.

use std::collections::HashMap;
use std::sync::Mutex;

use bollard::errors::Error as BollardError;
use bollard::models::{ContainerCreateBody, HostConfig, PortBinding};
use bollard::query_parameters::{
    CreateContainerOptionsBuilder, CreateImageOptionsBuilder, ListContainersOptionsBuilder,
    RemoveContainerOptionsBuilder, StopContainerOptionsBuilder,
};
use bollard::Docker;
use futures_util::StreamExt;

use crate::client::chain;
use crate::model::Function;
use crate::Error;

const IMAGE: &str = "render.crossplane.io/runtime-docker-image";
const CLEANUP: &str = "render.crossplane.io/runtime-docker-cleanup";
const PULL_POLICY: &str = "render.crossplane.io/runtime-docker-pull-policy";
const NAME: &str = "render.crossplane.io/runtime-docker-name";
const ENV: &str = "render.crossplane.io/runtime-docker-env";
const PUBLISH_ADDRESS: &str = "render.crossplane.io/runtime-docker-publish-address";
const TARGET: &str = "render.crossplane.io/runtime-docker-target";

/// The label on every container started here, with the pid of the
/// process (`docker ps --filter label=dev.krmgraph.crossplane.pid`).
pub const PID_LABEL: &str = "dev.krmgraph.crossplane.pid";

/// The port functions serve on.
const PORT: &str = "9443/tcp";

/// What to do with a container at the end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cleanup {
    /// Stop and remove it (the default).
    Remove,
    /// Stop it.
    Stop,
    /// Leave it running.
    Orphan,
}

/// When to pull the image.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PullPolicy {
    /// When creating the container finds no image (the default).
    IfNotPresent,
    /// Before creating the container.
    Always,
    /// Never: a missing image is an error.
    Never,
}

/// A Function's Docker settings, from its annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The image.
    pub image: String,
    /// `runtime-docker-cleanup`.
    pub cleanup: Cleanup,
    /// `runtime-docker-pull-policy`.
    pub pull: PullPolicy,
    /// `runtime-docker-name`.
    pub name: Option<String>,
    /// `runtime-docker-env` pairs (`k=v`; others are ignored).
    pub env: Vec<String>,
    /// `runtime-docker-publish-address`.
    pub publish_address: String,
    /// `runtime-docker-target`: the host dialled.
    pub target_host: String,
}

impl Settings {
    /// `f`'s settings; a bad annotation value is an error.
    pub fn of(f: &Function) -> Result<Settings, Error> {
        let bad = |key: &str, value: &str, what: &str| {
            Error::Input(format!(
                "Function {:?}: unsupported {key:?} annotation value {value:?} (unknown {what})",
                f.name
            ))
        };
        let cleanup = match f.annotation(CLEANUP, "Remove") {
            "Remove" => Cleanup::Remove,
            "Stop" => Cleanup::Stop,
            "Orphan" => Cleanup::Orphan,
            other => return Err(bad(CLEANUP, other, "cleanup policy")),
        };
        let pull = match f.annotation(PULL_POLICY, "IfNotPresent") {
            "IfNotPresent" => PullPolicy::IfNotPresent,
            "Always" => PullPolicy::Always,
            "Never" => PullPolicy::Never,
            other => return Err(bad(PULL_POLICY, other, "pull policy")),
        };
        let publish_address = f.annotation(PUBLISH_ADDRESS, "127.0.0.1").to_string();
        Ok(Settings {
            image: f.annotation(IMAGE, &f.package).to_string(),
            cleanup,
            pull,
            name: Some(f.annotation(NAME, ""))
                .filter(|n| !n.is_empty())
                .map(str::to_string),
            env: f
                .annotation(ENV, "")
                .split(',')
                .filter(|pair| pair.contains('='))
                .map(str::to_string)
                .collect(),
            target_host: f.annotation(TARGET, &publish_address).to_string(),
            publish_address,
        })
    }
}

/// A container started for a function.
#[derive(Clone, Debug)]
pub struct Started {
    /// The container's id.
    pub id: String,
    /// Where its server listens: `host:port`.
    pub target: String,
    /// The image's ID and repo digests: the cache key's function identity.
    pub identity: Vec<u8>,
    /// What to do with it at the end.
    pub cleanup: Cleanup,
}

/// The containers of this process still to clean up, for an interrupt.
static LIVE: Mutex<Vec<(String, Cleanup)>> = Mutex::new(Vec::new());

/// Connects to the engine (`DOCKER_HOST` or the default socket).
pub async fn connect() -> Result<Docker, Error> {
    let docker = Docker::connect_with_defaults()
        .map_err(|e| Error::Runtime(format!("cannot connect to Docker: {}", chain(&e))))?;
    docker
        .negotiate_version()
        .await
        .map_err(|e| Error::Runtime(format!("cannot connect to Docker: {}", chain(&e))))
}

/// Starts function `name`'s container.
pub async fn start(docker: &Docker, name: &str, s: &Settings) -> Result<Started, String> {
    if s.pull == PullPolicy::Always {
        pull(docker, &s.image).await?;
    }
    let id = match &s.name {
        Some(container) => match docker.inspect_container(container, None).await {
            Ok(existing) => existing.id.unwrap_or_else(|| container.clone()),
            Err(e) if not_found(&e) => create(docker, s).await?,
            Err(e) => {
                return Err(format!(
                    "cannot inspect container {container:?}: {}",
                    chain(&e)
                ))
            }
        },
        None => create(docker, s).await?,
    };
    if let Ok(mut live) = LIVE.lock() {
        live.push((id.clone(), s.cleanup));
    }
    let started = async {
        let running = docker
            .inspect_container(&id, None)
            .await
            .ok()
            .and_then(|c| c.state?.running)
            .unwrap_or(false);
        if !running {
            docker.start_container(&id, None).await.map_err(|e| {
                format!(
                    "cannot start container for Function {name:?}: {}",
                    chain(&e)
                )
            })?;
        }
        let inspected = docker
            .inspect_container(&id, None)
            .await
            .map_err(|e| format!("cannot inspect container: {}", chain(&e)))?;
        let port = inspected
            .network_settings
            .and_then(|n| n.ports)
            .and_then(|p| p.get(PORT).cloned().flatten())
            .and_then(|b| b.into_iter().find_map(|b| b.host_port))
            .ok_or_else(|| format!("container of Function {name:?} publishes no {PORT} port"))?;
        let identity = identity(docker, &s.image).await?;
        Ok::<_, String>(Started {
            id: id.clone(),
            target: format!("{}:{port}", s.target_host),
            identity,
            cleanup: s.cleanup,
        })
    }
    .await;
    if started.is_err() {
        clean(docker, &id, s.cleanup).await;
    }
    started
}

/// Creates the container, pulling the image first if the policy says so.
async fn create(docker: &Docker, s: &Settings) -> Result<String, String> {
    let mut options = CreateContainerOptionsBuilder::default();
    if let Some(name) = &s.name {
        options = options.name(name);
    }
    let options = options.build();
    let body = ContainerCreateBody {
        image: Some(s.image.clone()),
        cmd: Some(vec!["--insecure".to_string()]),
        env: Some(s.env.clone()).filter(|e| !e.is_empty()),
        exposed_ports: Some(vec![PORT.to_string()]),
        labels: Some(HashMap::from([(
            PID_LABEL.to_string(),
            std::process::id().to_string(),
        )])),
        host_config: Some(HostConfig {
            port_bindings: Some(HashMap::from([(
                PORT.to_string(),
                Some(vec![PortBinding {
                    host_ip: Some(s.publish_address.clone()),
                    host_port: Some("0".to_string()),
                }]),
            )])),
            ..HostConfig::default()
        }),
        ..ContainerCreateBody::default()
    };
    match docker
        .create_container(Some(options.clone()), body.clone())
        .await
    {
        Ok(created) => Ok(created.id),
        Err(e) if not_found(&e) && s.pull == PullPolicy::IfNotPresent => {
            pull(docker, &s.image).await?;
            docker
                .create_container(Some(options), body)
                .await
                .map(|c| c.id)
                .map_err(|e| format!("cannot create container: {}", chain(&e)))
        }
        Err(e) if not_found(&e) => Err(format!(
            "image {:?} is not present and the pull policy is Never",
            s.image
        )),
        Err(e) => Err(format!("cannot create container: {}", chain(&e))),
    }
}

/// Pulls `image`.
async fn pull(docker: &Docker, image: &str) -> Result<(), String> {
    let options = CreateImageOptionsBuilder::default()
        .from_image(image)
        .build();
    let mut stream = docker.create_image(Some(options), None, None);
    while let Some(item) = stream.next().await {
        item.map_err(|e| format!("cannot pull image {image:?}: {}", chain(&e)))?;
    }
    Ok(())
}

/// The image's ID and repo digests.
async fn identity(docker: &Docker, image: &str) -> Result<Vec<u8>, String> {
    let inspected = docker
        .inspect_image(image)
        .await
        .map_err(|e| format!("cannot inspect image {image:?}: {}", chain(&e)))?;
    let mut id = inspected.id.unwrap_or_default().into_bytes();
    let mut digests = inspected.repo_digests.unwrap_or_default();
    digests.sort();
    for d in digests {
        id.push(0);
        id.extend_from_slice(d.as_bytes());
    }
    Ok(id)
}

fn not_found(e: &BollardError) -> bool {
    matches!(
        e,
        BollardError::DockerResponseServerError {
            status_code: 404,
            ..
        }
    )
}

/// Stops and removes (or only stops, or leaves) container `id`.
pub async fn clean(docker: &Docker, id: &str, cleanup: Cleanup) {
    match cleanup {
        Cleanup::Remove => {
            let options = RemoveContainerOptionsBuilder::default()
                .force(true)
                .v(true)
                .build();
            let _ = docker.remove_container(id, Some(options)).await;
        }
        Cleanup::Stop => {
            let options = StopContainerOptionsBuilder::default().t(5).build();
            let _ = docker.stop_container(id, Some(options)).await;
        }
        Cleanup::Orphan => {}
    }
    if let Ok(mut live) = LIVE.lock() {
        live.retain(|(other, _)| other != id);
    }
}

/// The containers (running or not) with this process's label.
async fn labelled(docker: &Docker) -> Vec<String> {
    let filters = HashMap::from([(
        "label".to_string(),
        vec![format!("{PID_LABEL}={}", std::process::id())],
    )]);
    let options = ListContainersOptionsBuilder::default()
        .all(true)
        .filters(&filters)
        .build();
    docker
        .list_containers(Some(options))
        .await
        .map(|list| list.into_iter().filter_map(|c| c.id).collect())
        .unwrap_or_default()
}

/// Set once [`clean_on_interrupt`] has a signal, before it stops anything.
static INTERRUPTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Never returns once an interrupt is being handled: stopping the
/// containers ends their calls, and the render that sees those calls fail
/// must not exit first (with 1, leaving containers behind) — the handler
/// exits when it is done.
pub async fn wait_if_interrupted() {
    if INTERRUPTED.load(std::sync::atomic::Ordering::SeqCst) {
        std::future::pending::<()>().await;
    }
}

/// Cleans up every container of this process on SIGINT or SIGTERM, then
/// exits as a shell reports the signal (130 or 143).
pub async fn clean_on_interrupt(docker: Docker) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let code = tokio::select! {
        _ = int.recv() => 130,
        _ = term.recv() => 143,
    };
    INTERRUPTED.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut live: Vec<(String, Cleanup)> = LIVE.lock().map(|l| l.clone()).unwrap_or_default();
    // A container whose create was in flight carries the label but is not
    // registered yet: remove it too.
    for id in labelled(&docker).await {
        if !live
            .iter()
            .any(|(known, _)| id.starts_with(known) || known.starts_with(&id))
        {
            live.push((id, Cleanup::Remove));
        }
    }
    for (id, cleanup) in &live {
        clean(&docker, id, *cleanup).await;
    }
    eprintln!(
        "\nkrmgraph: interrupted; cleaned up {} function container(s)",
        live.len()
    );
    std::process::exit(code);
}
