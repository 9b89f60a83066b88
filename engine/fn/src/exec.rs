//! The `exec:` runtime: runs a local executable as a KRM function, the
//! ResourceList on its stdin, the result on its stdout, as kpt's `ExecFn`
//! does — kpt's working directory and environment, a 5 minute timeout, and
//! kpt's error texts (`fork/exec /x: no such file or directory`,
//! `exec: "x": executable file not found in $PATH`).

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use krmgraph_util::gostr::go_errno_text;

/// How long a function may run before it is killed (kpt's default).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5 * 60);

/// What a finished process produced.
#[derive(Debug, Default)]
pub struct ProcessOutput {
    /// Everything written to stdout.
    pub stdout: Vec<u8>,
    /// Everything written to stderr.
    pub stderr: Vec<u8>,
    /// The exit code; `None` when killed by a signal.
    pub exit_code: Option<i32>,
}

/// Why a function process could not run to completion.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The command line does not split (an unclosed quote).
    #[error("{0}")]
    BadCommand(String),
    /// The program could not be started; the text is kpt's.
    #[error("unexpected function error: {0}")]
    Start(String),
    /// The process ran longer than the timeout and was killed.
    #[error("unexpected function error: signal: killed (timed out after {0:?})")]
    Timeout(Duration),
}

/// Splits a command line as `github.com/google/shlex` does: whitespace
/// separates words, `'...'` is literal, `"..."` allows `\` escapes, `\`
/// escapes outside quotes, and `#` at the start of a word begins a comment.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    #[derive(PartialEq)]
    enum State {
        Start,
        Word,
        Escaping,
        EscapingQuoted,
        DoubleQuoted,
        SingleQuoted,
        Comment,
    }
    let mut words = Vec::new();
    let mut word = String::new();
    let mut state = State::Start;
    for c in line.chars() {
        state = match state {
            State::Start if c.is_whitespace() => State::Start,
            State::Start if c == '#' => State::Comment,
            State::Comment if c == '\n' => State::Start,
            State::Comment => State::Comment,
            State::Start | State::Word => match c {
                c if c.is_whitespace() => {
                    words.push(std::mem::take(&mut word));
                    State::Start
                }
                '"' => State::DoubleQuoted,
                '\'' => State::SingleQuoted,
                '\\' => State::Escaping,
                c => {
                    word.push(c);
                    State::Word
                }
            },
            State::Escaping => {
                word.push(c);
                State::Word
            }
            State::EscapingQuoted => {
                word.push(c);
                State::DoubleQuoted
            }
            State::DoubleQuoted => match c {
                '"' => State::Word,
                '\\' => State::EscapingQuoted,
                c => {
                    word.push(c);
                    State::DoubleQuoted
                }
            },
            State::SingleQuoted => match c {
                '\'' => State::Word,
                c => {
                    word.push(c);
                    State::SingleQuoted
                }
            },
        };
    }
    match state {
        State::Word => words.push(word),
        State::Escaping | State::EscapingQuoted => {
            return Err("EOF found after escape character".into())
        }
        State::DoubleQuoted | State::SingleQuoted => {
            return Err("EOF found when expecting closing quote".into())
        }
        State::Start | State::Comment => {}
    }
    Ok(words)
}

/// The functions running now, by process id (each leads a process group of
/// its own, with the same id), and whether [`kill_running`] was called.
static RUNNING: Mutex<Running> = Mutex::new(Running {
    pids: None,
    killed: false,
});

struct Running {
    pids: Option<HashSet<u32>>,
    killed: bool,
}

fn running() -> std::sync::MutexGuard<'static, Running> {
    RUNNING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Kills every exec function running now, with everything it started, and
/// every one started from now on (the process is about to exit without
/// waiting for them; functions run in process groups of their own, so they
/// would otherwise outlive it).
pub fn kill_running() {
    let mut running = running();
    running.killed = true;
    for pid in running.pids.iter().flatten() {
        kill_group(*pid);
    }
}

/// SIGKILLs the process group `pid` leads.
fn kill_group(pid: u32) {
    if let Ok(pid) = libc::pid_t::try_from(pid) {
        // SAFETY: kill(2) takes no pointers; a group that has just exited
        // is at worst signalled in vain.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
    }
}

fn track(pid: u32, started: bool) {
    let mut running = running();
    if started && running.killed {
        // Started after kill_running (by another thread): it goes too.
        kill_group(pid);
    }
    let set = running.pids.get_or_insert_with(HashSet::new);
    if started {
        set.insert(pid);
    } else {
        set.remove(&pid);
    }
}

/// Runs `command_line` with `stdin` as its input.
///
/// The function runs in a process group of its own, so that a timeout
/// kills whatever it started too (a shell script's children would
/// otherwise keep its stdout open, and the render waiting for it), and a
/// Ctrl-C typed at the terminal reaches krmgraph only: `render` kills the
/// functions on the way out ([`kill_running`]) and `watch` lets the render
/// it interrupts finish.
pub fn run(
    command_line: &str,
    stdin: &[u8],
    timeout: Duration,
) -> Result<ProcessOutput, ExecError> {
    let words = split_command(command_line).map_err(ExecError::BadCommand)?;
    let Some((program, args)) = words.split_first() else {
        return Err(ExecError::Start("exec: no command".into()));
    };
    let path = look_path(program)?;
    let mut command = Command::new(&path);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| ExecError::Start(format!("fork/exec {}: {}", program, go_errno_text(&e))))?;
    track(child.id(), true);
    let result = finish(&mut child, stdin, timeout);
    track(child.id(), false);
    result
}

/// How long the output of a timed-out function is still drained after its
/// process group was killed: a process that left the group (`setsid`) may
/// hold the pipes open for ever, and is then left to itself.
const KILLED_GRACE: Duration = Duration::from_millis(500);

/// Feeds `stdin` to a started function and collects its output and exit;
/// at the deadline, kills its process group.
fn finish(
    child: &mut std::process::Child,
    stdin: &[u8],
    timeout: Duration,
) -> Result<ProcessOutput, ExecError> {
    let mut pipes = match Pipes::new(child, stdin) {
        Ok(pipes) => pipes,
        Err(e) => {
            kill_group(child.id());
            let _ = child.wait();
            return Err(e);
        }
    };
    // A timeout too long for the clock is no timeout.
    let deadline = Instant::now()
        .checked_add(timeout)
        .unwrap_or_else(|| Instant::now() + Duration::from_secs(100 * 365 * 24 * 3600));
    let drained = pipes.pump(deadline);
    let status = match drained {
        Ok(()) => wait_until(child, deadline).inspect_err(|_| {
            kill_group(child.id());
            let _ = child.wait();
        })?,
        Err(Expired) => None,
    };
    let Some(status) = status else {
        kill_group(child.id());
        let _ = pipes.pump(Instant::now() + KILLED_GRACE);
        let _ = child.wait();
        return Err(ExecError::Timeout(timeout));
    };
    Ok(ProcessOutput {
        stdout: pipes.stdout.bytes,
        stderr: pipes.stderr.bytes,
        exit_code: status.code(),
    })
}

/// The deadline passed.
struct Expired;

/// A function's three pipes, non-blocking, driven by poll(2) from one
/// thread: stdin is written while stdout and stderr are read, so no pipe
/// fills up, and the deadline is kept whatever the function does with its
/// pipes.
struct Pipes<'a> {
    stdin: Option<std::process::ChildStdin>,
    input: &'a [u8],
    stdout: Drain<std::process::ChildStdout>,
    stderr: Drain<std::process::ChildStderr>,
}

/// An output pipe and what was read from it.
struct Drain<R> {
    pipe: Option<R>,
    bytes: Vec<u8>,
}

impl<'a> Pipes<'a> {
    fn new(child: &mut std::process::Child, input: &'a [u8]) -> Result<Self, ExecError> {
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        widen_pipe(&stdin, input.len());
        widen_pipe(&stdout, input.len());
        for fd in [stdin.as_raw_fd(), stdout.as_raw_fd(), stderr.as_raw_fd()] {
            set_nonblocking(fd).map_err(|e| ExecError::Start(format!("pipe: {e}")))?;
        }
        let stdin = (!input.is_empty()).then_some(stdin);
        Ok(Pipes {
            stdin,
            input,
            // A function's output is usually about as long as its input.
            stdout: Drain::new(stdout, input.len()),
            stderr: Drain::new(stderr, 0),
        })
    }

    /// Moves bytes until stdout and stderr are closed, or `deadline`.
    fn pump(&mut self, deadline: Instant) -> Result<(), Expired> {
        loop {
            let mut fds = Vec::with_capacity(3);
            if let Some(stdin) = &self.stdin {
                fds.push(pollfd(stdin.as_raw_fd(), libc::POLLOUT));
            }
            for fd in [self.stdout.fd(), self.stderr.fd()].into_iter().flatten() {
                fds.push(pollfd(fd, libc::POLLIN));
            }
            if self.stdout.pipe.is_none() && self.stderr.pipe.is_none() {
                // A function may exit without reading all its input.
                self.stdin = None;
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Expired);
            }
            // Rounded up, so the last poll does not end just short of it.
            let ms = left.as_micros().div_ceil(1000).min(i32::MAX as u128) as libc::c_int;
            // SAFETY: `fds` is a live array of `fds.len()` pollfds.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, ms) };
            if ready <= 0 {
                continue; // EINTR, or the timeout: checked above
            }
            self.write_stdin();
            self.stdout.read();
            self.stderr.read();
        }
    }

    /// Writes what the pipe takes; closes stdin once all is written or the
    /// function closed its end.
    fn write_stdin(&mut self) {
        let Some(stdin) = &mut self.stdin else { return };
        loop {
            match stdin.write(self.input) {
                Ok(n) => {
                    self.input = &self.input[n..];
                    if self.input.is_empty() {
                        break;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.stdin = None;
    }
}

impl<R: Read + AsRawFd> Drain<R> {
    fn new(pipe: R, expected: usize) -> Self {
        Drain {
            pipe: Some(pipe),
            bytes: Vec::with_capacity(expected),
        }
    }

    fn fd(&self) -> Option<RawFd> {
        self.pipe.as_ref().map(|p| p.as_raw_fd())
    }

    /// Reads what the pipe holds; closes it at end of file or an error.
    fn read(&mut self) {
        let Some(pipe) = &mut self.pipe else { return };
        // `read_to_end` reads into the spare capacity without zeroing it
        // first and probes before it grows a full buffer: an output exactly
        // as long as the input (an echo) fills the buffer sized for it
        // without a copy into a doubled one, whose fresh pages the kernel
        // would zero (5 % of a cold render's samples).
        match pipe.read_to_end(&mut self.bytes) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            Ok(_) | Err(_) => {}
        }
        self.pipe = None;
    }
}

fn pollfd(fd: RawFd, events: libc::c_short) -> libc::pollfd {
    libc::pollfd {
        fd,
        events,
        revents: 0,
    }
}

fn set_nonblocking(fd: RawFd) -> std::io::Result<()> {
    // SAFETY: fcntl(2) on a file descriptor this process owns, no pointers.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    // SAFETY: as above.
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Grows the pipe behind `end` towards `len` bytes (up to 1 MiB, the
/// kernel's default limit for unprivileged processes). With the default
/// 64 KiB, a ResourceList of megabytes crosses in a hundred turns between
/// this process and the function, each a wake-up of the other side.
fn widen_pipe(end: &impl AsRawFd, len: usize) {
    const MAX: usize = 1 << 20;
    const DEFAULT: usize = 64 << 10;
    if len <= DEFAULT {
        return;
    }
    let size = len.min(MAX) as libc::c_int;
    // SAFETY: fcntl(2) on a file descriptor this process owns, no pointers.
    // A refusal (a lower limit) leaves the pipe as it was.
    unsafe { libc::fcntl(end.as_raw_fd(), libc::F_SETPIPE_SZ, size) };
}

/// Waits for `child` to exit until `deadline` (`None` then). Polls, from
/// 50 µs apart (the exit is usually at hand: its outputs have closed) up
/// to 2 ms.
fn wait_until(
    child: &mut std::process::Child,
    deadline: Instant,
) -> Result<Option<std::process::ExitStatus>, ExecError> {
    let mut pause = Duration::from_micros(50);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(Some(status)),
            Ok(None) if Instant::now() >= deadline => return Ok(None),
            Ok(None) => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(2));
            }
            Err(e) => return Err(ExecError::Start(format!("wait: {}", go_errno_text(&e)))),
        }
    }
}

/// Go's `exec.LookPath`: a name with a slash is used as given, anything else
/// is searched in `$PATH`.
pub fn look_path(program: &str) -> Result<PathBuf, ExecError> {
    if program.contains('/') {
        return Ok(PathBuf::from(program));
    }
    let path_var = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path_var) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let candidate = dir.join(program);
        if is_executable(&candidate) {
            return Ok(candidate);
        }
    }
    Err(ExecError::Start(format!(
        "exec: \"{program}\": executable file not found in $PATH"
    )))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_google_shlex() {
        let cases: &[(&str, &[&str])] = &[
            ("sed -e 's/foo/bar/'", &["sed", "-e", "s/foo/bar/"]),
            ("a \"b c\" d\\ e", &["a", "b c", "d e"]),
            ("  x  ", &["x"]),
            ("a \"q\\\"x\"", &["a", "q\"x"]),
            ("a # comment", &["a"]),
            ("a#b", &["a#b"]),
        ];
        for (line, want) in cases {
            assert_eq!(split_command(line).unwrap(), *want, "{line}");
        }
        assert!(split_command("a 'b").is_err());
    }

    #[test]
    fn runs_a_process_with_stdin() {
        let out = run("cat", b"hello", DEFAULT_TIMEOUT).unwrap();
        assert_eq!(out.stdout, b"hello");
        assert_eq!(out.exit_code, Some(0));
        let out = run("sh -c 'echo err >&2; exit 3'", b"", DEFAULT_TIMEOUT).unwrap();
        assert_eq!(out.stderr, b"err\n");
        assert_eq!(out.exit_code, Some(3));
    }

    #[test]
    fn start_errors_read_like_kpt() {
        let e = run("/nonexistent/fn", b"", DEFAULT_TIMEOUT).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected function error: fork/exec /nonexistent/fn: no such file or directory"
        );
        let e = run("nosuchcmd-krmgraph arg", b"", DEFAULT_TIMEOUT).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unexpected function error: exec: \"nosuchcmd-krmgraph\": executable file not found in $PATH"
        );
    }

    #[test]
    fn times_out() {
        let e = run("sleep 5", b"", Duration::from_millis(50)).unwrap_err();
        assert!(matches!(e, ExecError::Timeout(_)));
    }
}
