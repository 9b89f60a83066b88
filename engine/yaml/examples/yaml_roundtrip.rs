//! Dev tool: decode every document of stdin and re-encode it as kyaml does
//! (`compact` or `wide` sequences), like `yamlv3-oracle compact|wide`.
use std::io::{Read, Write};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or_else(|| "compact".into());
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).unwrap();
    let mut decoder = krmgraph_yaml::Decoder::new(&input);
    let mut encoder = krmgraph_yaml::Encoder::new();
    encoder.set_indent(2);
    encoder.set_compact_seq_indent(mode == "compact");
    loop {
        match decoder.next_document() {
            Ok(Some(doc)) => {
                if let Err(e) = encoder.encode(&doc) {
                    println!("ENCODE ERROR: {e}");
                    std::process::exit(1);
                }
            }
            Ok(None) => break,
            Err(e) => {
                println!("ERROR: {e}");
                std::process::exit(1);
            }
        }
    }
    std::io::stdout()
        .write_all(&encoder.finish().unwrap_or_default())
        .unwrap();
}
