//! Quick throughput check without criterion: parse and emit a generated
//! ~10 MB manifest N times; prints the best MB/s of each.
//! `yaml-throughput [N] [emit]` (`emit`: parse once, time emitting only).

use krmgraph_engine::yaml::{parse_documents, Encoder};
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let emit_only = args.next().as_deref() == Some("emit");
    let text = krmgraph_benches::manifest(10 * 1024 * 1024);
    let mb = text.len() as f64 / 1e6;
    let mut docs = parse_documents(text.as_bytes()).unwrap();
    let (mut best_parse, mut best_emit) = (f64::MAX, f64::MAX);
    for _ in 0..n {
        if !emit_only {
            drop(std::mem::take(&mut docs));
            let t = Instant::now();
            docs = parse_documents(text.as_bytes()).unwrap();
            best_parse = best_parse.min(t.elapsed().as_secs_f64());
        }
        let t = Instant::now();
        let mut e = Encoder::new();
        e.set_indent(2);
        e.reserve(text.len());
        for d in &docs {
            e.encode(d).unwrap();
        }
        let out = e.finish().unwrap();
        best_emit = best_emit.min(t.elapsed().as_secs_f64());
        std::hint::black_box(out);
    }
    println!("{:.1} MB, {} documents", mb, docs.len());
    if !emit_only {
        println!("parse: {:.1} MB/s (best of {n})", mb / best_parse);
    }
    println!("emit:  {:.1} MB/s (best of {n})", mb / best_emit);
}
