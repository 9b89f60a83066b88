//! Quick throughput check without criterion: parse and emit a generated
//! 10 MB manifest N times; prints MB/s for each. `yaml-throughput [N]`.
use krmgraph_engine::yaml::{parse_documents, Encoder};
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(5);
    let text = krmgraph_benches::manifest(10 * 1024 * 1024);
    let mb = text.len() as f64 / 1e6;
    let mut docs = Vec::new();
    let (mut best_parse, mut best_emit) = (f64::MAX, f64::MAX);
    for _ in 0..n {
        let t = Instant::now();
        docs = parse_documents(text.as_bytes()).unwrap();
        best_parse = best_parse.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let mut e = Encoder::new();
        e.set_indent(2);
        for d in &docs {
            e.encode(d).unwrap();
        }
        let out = e.finish().unwrap();
        best_emit = best_emit.min(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    println!("{:.1} MB, {} documents", mb, docs.len());
    println!("parse: {:.1} MB/s (best of {n})", mb / best_parse);
    println!("emit:  {:.1} MB/s (best of {n})", mb / best_emit);
}
