//! The connection to the container engine: one small tokio runtime and one
//! bollard client per process, created the first time something needs a
//! container (a render of built-in and exec functions never starts them),
//! and the containers this process has created and not yet removed, which
//! an interrupt (SIGINT, SIGTERM) removes before the process exits.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use bollard::query_parameters::RemoveContainerOptionsBuilder;
use bollard::Docker;

use super::ContainerError;

/// The label every function container carries, with the pid of the
/// krmgraph process that created it (`docker ps --filter
/// label=dev.krmgraph.pid` lists them).
pub const PID_LABEL: &str = "dev.krmgraph.pid";

/// Docker's default socket, as bollard and the docker CLI use it.
const DEFAULT_HOST: &str = "unix:///var/run/docker.sock";

/// How long connecting may take before the engine counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an interrupt waits for containers being created to be
/// removed by their own runs before the process exits anyway.
const INTERRUPT_GRACE: Duration = Duration::from_secs(10);

/// The runtime and client every container run shares.
pub(super) struct Engine {
    /// Drives bollard's I/O; callers block on it from their own threads.
    pub runtime: tokio::runtime::Runtime,
    /// The engine's API.
    pub docker: Docker,
}

/// Why no engine is available, kept for every later function of the
/// process (the connection is tried once).
#[derive(Clone, Debug)]
pub(super) struct Unreachable {
    socket: String,
    reason: String,
}

impl Unreachable {
    /// The error a function running `image` reports.
    pub fn for_image(&self, image: &str) -> ContainerError {
        ContainerError::NoEngine {
            image: image.to_string(),
            socket: self.socket.clone(),
            reason: self.reason.clone(),
        }
    }
}

static ENGINE: OnceLock<Result<Engine, Unreachable>> = OnceLock::new();

/// Whether the engine is connected, and so handles SIGINT and SIGTERM
/// itself: it removes the containers, kills the exec functions and exits.
pub fn handles_interrupts() -> bool {
    ENGINE.get().is_some_and(Result::is_ok)
}

/// The engine, connecting on first use.
pub(super) fn get() -> Result<&'static Engine, Unreachable> {
    ENGINE.get_or_init(connect).as_ref().map_err(Clone::clone)
}

/// The address bollard connects to: `DOCKER_HOST`, else the default
/// socket.
fn address() -> String {
    std::env::var("DOCKER_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| DEFAULT_HOST.to_string())
}

fn connect() -> Result<Engine, Unreachable> {
    let socket = address();
    let unreachable = |reason: String| Unreachable {
        socket: socket.clone(),
        reason,
    };
    // One worker drives the sockets; the futures themselves are polled on
    // the calling threads (`block_on`), so runs proceed in parallel.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("krmgraph-engine")
        .enable_all()
        .build()
        .map_err(|e| unreachable(format!("starting the async runtime: {e}")))?;
    let docker = Docker::connect_with_host(&socket).map_err(|e| unreachable(chain(&e)))?;
    let docker = runtime
        .block_on(async { tokio::time::timeout(CONNECT_TIMEOUT, docker.negotiate_version()).await })
        .map_err(|_| unreachable(format!("no answer within {CONNECT_TIMEOUT:?}")))?
        .map_err(|e| unreachable(chain(&e)))?;
    runtime.spawn(remove_on_interrupt(docker.clone()));
    Ok(Engine { runtime, docker })
}

/// An error and its causes (hyper's "client error (Connect)" says why
/// only in its source: "Connection refused").
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        // bollard's text already includes its first cause.
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(&format!(": {cause_text}"));
        }
        source = cause.source();
    }
    text
}

/// The containers of this process: per run, the container's id once it
/// is created (`None` while the create request is in flight).
struct Live {
    runs: BTreeMap<u64, Option<String>>,
    next: u64,
    interrupted: bool,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    runs: BTreeMap::new(),
    next: 0,
    interrupted: false,
});

fn live() -> MutexGuard<'static, Live> {
    // A panic elsewhere while holding the lock leaves the set usable.
    LIVE.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// One run's entry in the live set, removed when dropped.
pub(super) struct Registration(u64);

impl Registration {
    /// Registers a run about to create a container; `None` once the
    /// process is being interrupted.
    pub fn new() -> Option<Registration> {
        let mut live = live();
        if live.interrupted {
            return None;
        }
        let key = live.next;
        live.next += 1;
        live.runs.insert(key, None);
        Some(Registration(key))
    }

    /// Records the created container. Returns `false` when an interrupt
    /// came in the meantime: the caller removes the container itself.
    pub fn created(&self, id: &str) -> bool {
        let mut live = live();
        live.runs.insert(self.0, Some(id.to_string()));
        !live.interrupted
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        live().runs.remove(&self.0);
    }
}

/// Whether an interrupt is removing this process's containers.
pub(super) fn interrupted() -> bool {
    live().interrupted
}

/// Blocks the calling thread for good: after an interrupt the handler
/// removes the containers and exits the process, and a run that ended
/// because its container was removed must not report that as the
/// function's failure (nor let the render finish first).
pub(super) fn wait_for_exit() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// Force-removes (kills) a container and its anonymous volumes, as
/// `docker run --rm` does; a container already gone is fine.
pub(super) async fn remove(docker: &Docker, id: &str) {
    let options = RemoveContainerOptionsBuilder::default()
        .force(true)
        .v(true)
        .build();
    let _ = docker.remove_container(id, Some(options)).await;
}

/// Waits for SIGINT or SIGTERM, removes every container of this process,
/// and exits as a shell reports the signal (130 or 143).
async fn remove_on_interrupt(docker: Docker) {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return;
    };
    let code = match futures_util::future::select(Box::pin(int.recv()), Box::pin(term.recv())).await
    {
        futures_util::future::Either::Left(_) => 130,
        futures_util::future::Either::Right(_) => 143,
    };
    let ids: Vec<String> = {
        let mut live = live();
        live.interrupted = true;
        live.runs.values().flatten().cloned().collect()
    };
    crate::exec::kill_running();
    futures_util::future::join_all(ids.iter().map(|id| remove(&docker, id))).await;
    // Runs whose create was in flight remove their container themselves
    // (`Registration::created` tells them); wait for them briefly.
    let deadline = tokio::time::Instant::now() + INTERRUPT_GRACE;
    while !live().runs.is_empty() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "\nkrmgraph: interrupted; removed {} function container(s)",
        ids.len()
    );
    std::process::exit(code);
}
