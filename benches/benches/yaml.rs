//! Parse and emit throughput of the YAML document model on a generated
//! ~10 MB KRM manifest (17,000+ documents with comments, setters, wide and
//! compact sequences, flow collections and block scalars).
//!
//! Targets on one core: parse ≥ 15 MB/s, emit ≥ 60 MB/s.
//! Run: `cargo bench -p krmgraph-benches --bench yaml`.
//!
//! Two groups measure the same work: `yaml-10MB` in wall time, and
//! `yaml-10MB-thread-cpu` in the benchmark thread's CPU time
//! (`/proc/thread-self/schedstat`), which stays meaningful when other
//! processes share the cores (wall time then counts their turns too). On
//! an idle machine the two agree.

use std::time::Duration;

use criterion::measurement::{Measurement, ValueFormatter, WallTime};
use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use krmgraph_yaml::{parse_documents, Encoder};

/// The benches, under either clock.
fn parse_and_emit<M: Measurement>(c: &mut Criterion<M>, name: &str) {
    let text = krmgraph_benches::manifest(10 * 1024 * 1024);
    let docs = parse_documents(text.as_bytes()).expect("generated manifest parses");
    let mut group: BenchmarkGroup<'_, M> = c.benchmark_group(name);
    group.sample_size(10);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| parse_documents(text.as_bytes()).unwrap())
    });
    group.bench_function("emit", |b| {
        b.iter(|| {
            let mut e = Encoder::new();
            e.set_indent(2);
            e.set_compact_seq_indent(false);
            for d in &docs {
                e.encode(d).unwrap();
            }
            e.finish().unwrap()
        })
    });
    group.finish();
}

fn wall(c: &mut Criterion) {
    parse_and_emit(c, "yaml-10MB");
}

fn thread_cpu(c: &mut Criterion<ThreadCpuTime>) {
    parse_and_emit(c, "yaml-10MB-thread-cpu");
}

/// The calling thread's CPU time, in the nanoseconds criterion's wall
/// clock uses (so its formatter applies). Linux only: elsewhere, and if
/// the file cannot be read, it measures zero, which criterion reports as
/// an infinite rate rather than a wrong one.
struct ThreadCpuTime;

/// The CPU time this thread has run, in nanoseconds.
fn thread_cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

impl Measurement for ThreadCpuTime {
    type Intermediate = u64;
    type Value = Duration;

    fn start(&self) -> u64 {
        thread_cpu_ns()
    }
    fn end(&self, start: u64) -> Duration {
        Duration::from_nanos(thread_cpu_ns().saturating_sub(start))
    }
    fn add(&self, a: &Duration, b: &Duration) -> Duration {
        *a + *b
    }
    fn zero(&self) -> Duration {
        Duration::ZERO
    }
    fn to_f64(&self, value: &Duration) -> f64 {
        value.as_nanos() as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        static WALL: WallTime = WallTime;
        WALL.formatter()
    }
}

criterion_group!(wall_time, wall);
criterion_group! {
    name = cpu_time;
    config = Criterion::default().with_measurement(ThreadCpuTime);
    targets = thread_cpu
}
criterion_main!(wall_time, cpu_time);
