//! Dev tool: times `parse_documents` on a file (ad-hoc throughput check).
fn main() {
    let path = std::env::args()
        .nth(1)
        .expect("usage: yaml_parse_speed FILE");
    let input = std::fs::read(&path).expect("read");
    let mut best = f64::MAX;
    let mut docs = 0;
    for _ in 0..5 {
        let t = std::time::Instant::now();
        let r = krmgraph_yaml::parse_documents(&input);
        let dt = t.elapsed().as_secs_f64();
        docs = r.map(|d| d.len()).unwrap_or(0);
        best = best.min(dt);
    }
    println!(
        "{} bytes, {} documents, best {:.1} ms, {:.1} MB/s",
        input.len(),
        docs,
        best * 1e3,
        input.len() as f64 / best / 1e6
    );
}
