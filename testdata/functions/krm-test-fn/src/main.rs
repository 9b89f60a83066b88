//! A KRM function for the container runtime's tests. The first argument
//! (the image's entrypoint picks it) is the behaviour:
//!
//! - `echo`: the ResourceList back unchanged.
//! - `annotate`: adds `test.krmgraph.dev/by: container` to every item's
//!   annotations (a mutator).
//! - `generate`: appends a ConfigMap named `generated-by-container` (a
//!   generator).
//! - `fail`: writes two lines to stderr and a result, exits 1.
//! - `warn`: succeeds with stderr, including a line kpt drops as docker's
//!   pull progress (`Digest: sha256:...`).
//! - `network`: connects to 127.0.0.1:<port> (`port` in the
//!   functionConfig's data) and fails when it cannot.
//! - `sleep`: sleeps 300 s before answering (for timeouts and Ctrl-C).
//! - `whoami`: fails unless it runs as uid 65534 with no-new-privileges.
//!
//! It has no dependencies, so it edits the ResourceList as text: kpt and
//! krmgraph both write it in kyaml's layout (`items:` at column 0, each
//! item's annotations at four spaces).

use std::io::{Read, Write};
use std::time::Duration;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    let mut input = String::new();
    if let Err(e) = std::io::stdin().read_to_string(&mut input) {
        fail(&format!("reading stdin: {e}"));
    }
    let output = match mode.as_str() {
        "echo" => input,
        "annotate" => annotate(&input),
        "generate" => generate(&input),
        "fail" => {
            print(&format!(
                "{input}results:\n- message: failed on purpose\n  severity: error\n"
            ));
            fail("boom: the function failed\nsecond line");
        }
        "warn" => {
            eprint!("a warning\nDigest: sha256:0123 (dropped by kpt)\ncrlf line\r\nlast line");
            input
        }
        "network" => network(&input),
        "sleep" => {
            std::thread::sleep(Duration::from_secs(300));
            input
        }
        "whoami" => whoami(input),
        other => fail(&format!("unknown mode {other:?}")),
    };
    print(&output);
}

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

fn fail(message: &str) -> ! {
    eprintln!("{message}");
    std::process::exit(1)
}

/// The text before `functionConfig:` (the items) and the rest.
fn split_items(input: &str) -> (&str, &str) {
    match input.find("\nfunctionConfig:") {
        Some(i) => input.split_at(i + 1),
        None => (input, ""),
    }
}

/// Idempotent: an item that has the annotation is left alone.
fn annotate(input: &str) -> String {
    const ANNOTATIONS: &str = "\n    annotations:\n";
    const ANNOTATION: &str = "      test.krmgraph.dev/by: container\n";
    let (items, rest) = split_items(input);
    let mut out = String::new();
    // `items:` and then one chunk per item, each starting with "- ".
    for chunk in items.split_inclusive("\n- ") {
        if chunk.contains(ANNOTATION) {
            out.push_str(chunk);
        } else {
            out.push_str(&chunk.replacen(ANNOTATIONS, &format!("{ANNOTATIONS}{ANNOTATION}"), 1));
        }
    }
    out + rest
}

/// Idempotent: nothing is added when the ConfigMap is there.
fn generate(input: &str) -> String {
    let (items, rest) = split_items(input);
    if items.contains("\n    name: generated-by-container\n") {
        return input.to_string();
    }
    let items = items.replace("items: []\n", "items:\n");
    format!(
        "{items}- apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: generated-by-container\n  data:\n    from: container\n{rest}"
    )
}

fn network(input: &str) -> String {
    let port = input
        .split("port: ")
        .nth(1)
        .map(|s| {
            s.trim_start_matches(['"', '\''])
                .chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .unwrap_or_default();
    let address = format!("127.0.0.1:{port}");
    let Ok(parsed) = address.parse() else {
        fail(&format!("no port in the functionConfig ({address})"));
    };
    match std::net::TcpStream::connect_timeout(&parsed, Duration::from_secs(3)) {
        Ok(_) => input.to_string(),
        Err(e) => fail(&format!("network: connecting to {address}: {e}")),
    }
}

fn whoami(input: String) -> String {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or("?")
            .to_string()
    };
    let (uid, gid, nnp) = (field("Uid:"), field("Gid:"), field("NoNewPrivs:"));
    if uid != "65534" || gid != "65534" || nnp != "1" {
        fail(&format!("running as uid {uid} gid {gid}, NoNewPrivs {nnp}"));
    }
    input
}
