//! Dev tool: the Rust twin of `yamlv3-oracle`. Reads YAML on stdin and
//! prints `tokens`, `events` or `dump` (node trees) in the oracle's format.

use std::io::Read;

use krmgraph_yaml::debug;

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "dump".into());
    let mut input = Vec::new();
    std::io::stdin()
        .read_to_end(&mut input)
        .expect("read stdin");
    let out = match mode.as_str() {
        "tokens" => debug::dump_tokens(&input),
        "events" => debug::dump_events(&input),
        _ => debug::dump_documents(&input),
    };
    print!("{out}");
}
