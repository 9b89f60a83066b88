//! Ad hoc emit throughput: a ~10 MB KRM stream (Deployments, Services and
//! ConfigMaps with comments, quoted values and literal blocks) encoded as
//! kyaml does. Ignored by default; run in release:
//!
//! `cargo test --release -p krmgraph-engine --test yaml_emit_throughput -- --ignored --nocapture`
//!
//! `in_cache_only` encodes a few documents over and over (`DOCS` of each
//! kind, default 1; `ITERS`): the emitter's CPU cost without the cache
//! misses of walking a 10 MB tree. The criterion bench lives in `benches/`;
//! these are quick checks only.

use std::time::Instant;

/// A clock: this thread's CPU time in seconds where Linux tells it
/// (`/proc/thread-self/schedstat`, so other processes on a busy machine do
/// not count), wall time otherwise.
struct Clock(Instant);

impl Clock {
    fn now() -> Clock {
        Clock(Instant::now())
    }
    fn cpu() -> Option<f64> {
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
        Some(ns / 1e9)
    }
    fn run<T>(f: impl FnOnce() -> T) -> (T, f64) {
        let wall = Clock::now();
        let cpu = Clock::cpu();
        let out = f();
        let secs = match (cpu, Clock::cpu()) {
            (Some(a), Some(b)) if b > a => b - a,
            _ => wall.0.elapsed().as_secs_f64(),
        };
        (out, secs)
    }
}

use krmgraph_yaml::node::{Kind, Node, Style};
use krmgraph_yaml::Encoder;

fn s(v: &str) -> Node {
    Node::string(v)
}

fn int(v: i64) -> Node {
    {
        let mut n = Node::new(Kind::Scalar);
        n.tag = "!!int".into();
        n.value = v.to_string().into();
        n
    }
}

fn quoted(v: &str) -> Node {
    let mut n = s(v);
    n.style = Style::DOUBLE_QUOTED;
    n
}

fn map(pairs: Vec<(&str, Node)>) -> Node {
    let mut m = Node::mapping();
    for (k, v) in pairs {
        m.content.push(s(k));
        m.content.push(v);
    }
    m
}

fn seq(items: Vec<Node>) -> Node {
    let mut q = Node::sequence();
    q.content = items;
    q
}

fn metadata(name: &str, i: usize) -> Node {
    let mut name_node = s(&format!("{name}-{i}"));
    name_node.set_line_comment("# kpt-set: ${name}");
    map(vec![
        ("name", name_node),
        ("namespace", s("production")),
        (
            "labels",
            map(vec![
                ("app.kubernetes.io/name", s(name)),
                ("app.kubernetes.io/instance", s(&format!("{name}-{i}"))),
                ("tier", s("backend")),
            ]),
        ),
        (
            "annotations",
            map(vec![
                ("config.kubernetes.io/index", quoted(&i.to_string())),
                (
                    "internal.config.kubernetes.io/path",
                    s(&format!("resources/{name}-{i}.yaml")),
                ),
            ]),
        ),
    ])
}

fn deployment(i: usize) -> Node {
    let container = map(vec![
        ("name", s("app")),
        ("image", s("gcr.io/example/app:v1.2.3")),
        (
            "args",
            seq(vec![
                s("--port=8080"),
                s("--log-level=info"),
                s("--config=/etc/app/config.yaml"),
            ]),
        ),
        (
            "ports",
            seq(vec![map(vec![
                ("containerPort", int(8080)),
                ("protocol", s("TCP")),
            ])]),
        ),
        (
            "env",
            seq(vec![
                map(vec![("name", s("ENABLED")), ("value", s("true"))]),
                map(vec![("name", s("REPLICAS")), ("value", s("3"))]),
            ]),
        ),
        (
            "resources",
            map(vec![
                (
                    "limits",
                    map(vec![("cpu", s("500m")), ("memory", s("128Mi"))]),
                ),
                (
                    "requests",
                    map(vec![("cpu", s("250m")), ("memory", s("64Mi"))]),
                ),
            ]),
        ),
    ]);
    let mut spec = map(vec![
        ("replicas", int(3)),
        (
            "selector",
            map(vec![("matchLabels", map(vec![("app", s("app"))]))]),
        ),
        (
            "template",
            map(vec![
                (
                    "metadata",
                    map(vec![("labels", map(vec![("app", s("app"))]))]),
                ),
                ("spec", map(vec![("containers", seq(vec![container]))])),
            ]),
        ),
    ]);
    spec.content[0].set_head_comment("# Scaled by the HPA in production.");
    map(vec![
        ("apiVersion", s("apps/v1")),
        ("kind", s("Deployment")),
        ("metadata", metadata("app", i)),
        ("spec", spec),
    ])
}

fn service(i: usize) -> Node {
    map(vec![
        ("apiVersion", s("v1")),
        ("kind", s("Service")),
        ("metadata", metadata("svc", i)),
        (
            "spec",
            map(vec![
                ("selector", map(vec![("app", s("app"))])),
                (
                    "ports",
                    seq(vec![map(vec![
                        ("port", int(80)),
                        ("targetPort", int(8080)),
                    ])]),
                ),
            ]),
        ),
    ])
}

fn config_map(i: usize) -> Node {
    let config = "server:\n  port: 8080\n  timeout: 30s\nlogging:\n  level: info\n  format: json\nfeatures:\n  - a\n  - b\n";
    map(vec![
        ("apiVersion", s("v1")),
        ("kind", s("ConfigMap")),
        ("metadata", metadata("cfg", i)),
        (
            "data",
            map(vec![
                ("config.yaml", s(config)),
                ("LOG_LEVEL", s("info")),
                ("TIMEOUT", s("30")),
                ("GREETING", s("hello, world: it's \"quoted\"")),
            ]),
        ),
    ])
}

fn encode(docs: &[Node], reserve: usize) -> Vec<u8> {
    let mut enc = Encoder::new();
    enc.reserve(reserve);
    enc.set_indent(2);
    enc.set_compact_seq_indent(true);
    for doc in docs {
        enc.encode(doc).unwrap();
    }
    enc.finish().unwrap()
}

fn touch(n: &Node) -> usize {
    let mut acc = n.tag.as_bytes().first().copied().unwrap_or(0) as usize
        + n.value.as_bytes().first().copied().unwrap_or(0) as usize
        + n.head_comment().len()
        + n.line_comment().len()
        + n.foot_comment().len();
    for c in &n.content {
        acc += touch(c);
    }
    acc
}

#[test]
#[ignore]
fn emit_throughput() {
    let mut docs = Vec::new();
    let mut i = 0;
    while docs.len() < 30_000 {
        docs.push(deployment(i));
        docs.push(service(i));
        docs.push(config_map(i));
        i += 1;
    }
    // Size the stream to ~10 MB.
    let per_doc = encode(&docs[..300], 0).len() as f64 / 300.0;
    docs.truncate((10.0 * 1024.0 * 1024.0 / per_doc) as usize);
    let iters: usize = std::env::var("ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7);
    if let Some(path) = std::env::var_os("EMIT_OUT") {
        // The stream itself, e.g. to time go-yaml on the same documents.
        std::fs::write(path, encode(&docs, 0)).unwrap();
    }
    for reserve in [false, true] {
        measure(&docs, iters, reserve);
    }
}

fn measure(docs: &[Node], iters: usize, reserve: bool) {
    let mut best = f64::MAX;
    let mut size = 0;
    for _ in 0..iters {
        let (len, secs) = Clock::run(|| encode(docs, if reserve { 11 << 20 } else { 0 }).len());
        size = len;
        best = best.min(secs);
    }
    // The floor: touching every node's tag, value and comments, as the
    // encoder must.
    let mut walk = f64::MAX;
    for _ in 0..iters {
        let (acc, secs) = Clock::run(|| docs.iter().map(touch).sum::<usize>());
        std::hint::black_box(acc);
        walk = walk.min(secs);
    }
    eprintln!("tree walk alone: {:.1} ms", walk * 1e3);
    let mb = size as f64 / (1024.0 * 1024.0);
    eprintln!(
        "emit{}: {} documents, {mb:.1} MiB in {:.1} ms: {:.0} MiB/s",
        if reserve { " (output reserved)" } else { "" },
        docs.len(),
        best * 1e3,
        mb / best
    );
}

#[test]
#[ignore]
fn in_cache_only() {
    let mut docs = Vec::new();
    let n_docs: usize = std::env::var("DOCS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    for i in 0..n_docs {
        docs.push(deployment(i));
        docs.push(service(i));
        docs.push(config_map(i));
    }
    let n: usize = std::env::var("ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let mut size = 0;
    let mut t = f64::MAX;
    for _ in 0..50 {
        let (len, secs) = Clock::run(|| {
            let mut len = 0;
            for _ in 0..n / 50 {
                len = encode(&docs, 0).len();
            }
            len
        });
        size = len;
        t = t.min(secs / (n / 50) as f64);
    }
    eprintln!(
        "in-cache: {size} bytes in {:.3} ms: {:.0} MiB/s",
        t * 1e3,
        size as f64 / 1048576.0 / t
    );
}
