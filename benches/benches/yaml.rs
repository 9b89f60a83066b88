//! Parse and emit throughput of the YAML document model on a generated
//! ~10 MB KRM manifest (4,000+ documents with comments, setters, wide and
//! compact sequences, flow collections and block scalars).
//!
//! Targets on one core: parse ≥ 15 MB/s, emit ≥ 60 MB/s.
//! Run: `cargo bench -p krmgraph-benches --bench yaml`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use krmgraph_engine::yaml::{parse_documents, Encoder};

fn parse_and_emit(c: &mut Criterion) {
    let text = krmgraph_benches::manifest(10 * 1024 * 1024);
    let docs = parse_documents(text.as_bytes()).expect("generated manifest parses");
    let mut group = c.benchmark_group("yaml-10MB");
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

criterion_group!(benches, parse_and_emit);
criterion_main!(benches);
