//! Generates a package monorepo for benchmarks:
//! `gen-monorepo OUT [--fanout 4] [--depth 4] [--resources 20] [--fn '- exec: cat']...`

fn main() {
    let mut args = std::env::args().skip(1);
    let mut out = None;
    let mut spec = krmgraph_benches::MonorepoSpec {
        fanout: 4,
        depth: 4,
        resources: 20,
        functions: Vec::new(),
    };
    while let Some(arg) = args.next() {
        let mut value = || args.next().unwrap_or_else(|| panic!("{arg} needs a value"));
        match arg.as_str() {
            "--fanout" => spec.fanout = value().parse().expect("--fanout N"),
            "--depth" => spec.depth = value().parse().expect("--depth N"),
            "--resources" => spec.resources = value().parse().expect("--resources N"),
            "--fn" => spec.functions.push(value()),
            _ => out = Some(std::path::PathBuf::from(arg)),
        }
    }
    let out = out
        .expect("usage: gen-monorepo OUT [--fanout N] [--depth N] [--resources N] [--fn ITEM]...");
    let packages = krmgraph_benches::write_monorepo(&out, &spec).expect("writes the monorepo");
    println!(
        "{packages} packages, {} resources",
        packages * spec.resources
    );
}
