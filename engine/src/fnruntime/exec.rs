//! The `exec:` runtime: runs a local executable as a KRM function, the
//! ResourceList on its stdin, the result on its stdout, as kpt's `ExecFn`
//! does — kpt's working directory and environment, a 5 minute timeout, and
//! kpt's error texts (`fork/exec /x: no such file or directory`,
//! `exec: "x": executable file not found in $PATH`).

use std::collections::HashSet;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

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

/// Whether functions start in a process group of their own.
static OWN_PROCESS_GROUPS: AtomicBool = AtomicBool::new(false);

/// The functions running now, by process id.
static RUNNING: Mutex<Option<HashSet<u32>>> = Mutex::new(None);

/// Starts every later exec function in a process group of its own, so a
/// Ctrl-C typed at the terminal reaches this process only, not the
/// functions (`watch` lets the render it interrupts finish).
pub fn own_process_groups() {
    OWN_PROCESS_GROUPS.store(true, Ordering::SeqCst);
}

/// Kills every exec function running now (before the process exits
/// without waiting for them; functions in their own process groups would
/// otherwise outlive it).
pub fn kill_running() {
    let running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    for pid in running.iter().flatten() {
        if let Ok(pid) = libc::pid_t::try_from(*pid) {
            // SAFETY: kill(2) takes no pointers; a pid that has just exited
            // is at worst signalled in vain.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

fn track(pid: u32, running: bool) {
    let mut set = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
    let set = set.get_or_insert_with(HashSet::new);
    if running {
        set.insert(pid);
    } else {
        set.remove(&pid);
    }
}

/// Runs `command_line` with `stdin` as its input.
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
        .stderr(Stdio::piped());
    if OWN_PROCESS_GROUPS.load(Ordering::SeqCst) {
        command.process_group(0);
    }
    let mut child = command
        .spawn()
        .map_err(|e| ExecError::Start(format!("fork/exec {}: {}", program, go_errno_text(&e))))?;
    track(child.id(), true);
    let result = finish(&mut child, stdin, timeout);
    track(child.id(), false);
    result
}

/// Feeds `stdin` to a started function and collects its output and exit.
fn finish(
    child: &mut std::process::Child,
    stdin: &[u8],
    timeout: Duration,
) -> Result<ProcessOutput, ExecError> {
    let mut child_stdin = child.stdin.take().expect("piped stdin");
    let mut child_stdout = child.stdout.take().expect("piped stdout");
    let mut child_stderr = child.stderr.take().expect("piped stderr");
    widen_pipe(&child_stdin, stdin.len());
    widen_pipe(&child_stdout, stdin.len());
    // A function's output is usually about as long as its input.
    let expected = stdin.len();
    // Feed stdin and drain both outputs on their own threads so no pipe
    // fills up, while this thread enforces the timeout.
    let deadline = Instant::now() + timeout;
    let (stdout, stderr, status) = std::thread::scope(|s| {
        s.spawn(move || {
            // A function may exit without reading all its input.
            let _ = child_stdin.write_all(stdin);
        });
        let (closed, stdout_closed) = std::sync::mpsc::channel();
        let out = s.spawn(move || {
            let bytes = read_all(&mut child_stdout, expected);
            let _ = closed.send(());
            bytes
        });
        let err = s.spawn(move || read_all(&mut child_stderr, 0));
        // A function's stdout closes when it exits: waiting for that first
        // finds the exit at once instead of at the next poll.
        let _ = stdout_closed.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let status = wait_until(child, deadline, timeout);
        (
            out.join().unwrap_or_default(),
            err.join().unwrap_or_default(),
            status,
        )
    });
    let status = status?;
    Ok(ProcessOutput {
        stdout,
        stderr,
        exit_code: status.code(),
    })
}

fn read_all(r: &mut impl Read, expected: usize) -> Vec<u8> {
    let mut buf = Vec::with_capacity(expected);
    let _ = r.read_to_end(&mut buf);
    buf
}

/// Grows the pipe behind `end` towards `len` bytes (up to 1 MiB, the
/// kernel's default limit for unprivileged processes). With the default
/// 64 KiB, a ResourceList of megabytes crosses in a hundred turns between
/// this process and the function, each a wake-up of the other side.
fn widen_pipe(end: &impl std::os::fd::AsRawFd, len: usize) {
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

/// Waits for `child` to exit, killing it at `deadline` (the end of its
/// `timeout`). Polls, from 50 µs apart (the exit is usually at hand when
/// this is called) up to 2 ms.
fn wait_until(
    child: &mut std::process::Child,
    deadline: Instant,
    timeout: Duration,
) -> Result<std::process::ExitStatus, ExecError> {
    let mut pause = Duration::from_micros(50);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ExecError::Timeout(timeout));
            }
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
pub(crate) fn look_path(program: &str) -> Result<PathBuf, ExecError> {
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

/// The text Go's `syscall.Errno` prints for common errors.
pub fn go_errno_text(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(2) => "no such file or directory".into(),
        Some(8) => "exec format error".into(),
        Some(13) => "permission denied".into(),
        Some(20) => "not a directory".into(),
        Some(21) => "is a directory".into(),
        Some(40) => "too many levels of symbolic links".into(),
        _ => {
            let text = e.to_string();
            match text.find(" (os error") {
                Some(i) => text[..i].to_lowercase(),
                None => text,
            }
        }
    }
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
