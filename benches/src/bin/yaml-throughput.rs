//! Quick throughput check without criterion: parse and emit a generated
//! ~10 MB manifest N times; prints the best MB/s of each.
//! `yaml-throughput [N] [emit|parse]` (`emit`: parse once, time emitting
//! only; `parse`: time parsing only).
//!
//! Two clocks: wall time, and this thread's CPU time
//! (`/proc/thread-self/schedstat`, Linux only), which other processes on a
//! busy machine do not inflate. Both are best of N.

use krmgraph_yaml::{parse_documents, Encoder, Node};
use std::time::Instant;

/// Wall and thread-CPU seconds, each the best seen.
#[derive(Clone, Copy)]
struct Best {
    wall: f64,
    cpu: f64,
}

impl Best {
    const NONE: Best = Best {
        wall: f64::MAX,
        cpu: f64::MAX,
    };

    /// Runs `f`, keeping the lower of each clock.
    fn time<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let (wall, cpu) = (Instant::now(), thread_cpu());
        let out = f();
        self.wall = self.wall.min(wall.elapsed().as_secs_f64());
        if let (Some(a), Some(b)) = (cpu, thread_cpu()) {
            self.cpu = self.cpu.min(b - a);
        }
        out
    }

    fn report(&self, what: &str, mb: f64, n: usize) {
        let cpu = if self.cpu == f64::MAX {
            String::new()
        } else {
            format!(", {:.1} MB/s thread CPU", mb / self.cpu)
        };
        println!("{what}: {:.1} MB/s wall{cpu} (best of {n})", mb / self.wall);
    }
}

/// This thread's CPU time in seconds, if Linux tells it.
fn thread_cpu() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: f64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns / 1e9)
}

fn emit(docs: &[Node], reserve: usize) -> Vec<u8> {
    let mut e = Encoder::new();
    e.set_indent(2);
    e.reserve(reserve);
    for d in docs {
        e.encode(d).unwrap();
    }
    e.finish().unwrap()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let only = args.next();
    let (do_parse, do_emit) = match only.as_deref() {
        Some("emit") => (false, true),
        Some("parse") => (true, false),
        _ => (true, true),
    };
    let text = krmgraph_benches::manifest(10 * 1024 * 1024);
    let mb = text.len() as f64 / 1e6;
    let mut docs = parse_documents(text.as_bytes()).unwrap();
    let (mut parse, mut emitted) = (Best::NONE, Best::NONE);
    for _ in 0..n {
        if do_parse {
            drop(std::mem::take(&mut docs));
            docs = parse.time(|| parse_documents(text.as_bytes()).unwrap());
        }
        if do_emit {
            let out = emitted.time(|| emit(&docs, text.len()));
            std::hint::black_box(out);
        }
    }
    println!("{:.1} MB, {} documents", mb, docs.len());
    if do_parse {
        parse.report("parse", mb, n);
    }
    if do_emit {
        emitted.report("emit ", mb, n);
    }
}
