//! Arbitrary bytes through the YAML model: parse every document, emit it as
//! kpt would (compact and wide), parse the output again. Nothing may panic.
#![no_main]

use krmgraph_yaml::{Decoder, Encoder};
use libfuzzer_sys::fuzz_target;

// The CLI's threads: stacks deep enough for the deepest tree the parser
// gives (`par::STACK_SIZE`), so the fuzzer finds what a render would.
fuzz_target!(
    init: krmgraph_util::par::init_global_pool(),
    |data: &[u8]| {
        krmgraph_util::par::with_stack(|| run(data));
    }
);

fn run(data: &[u8]) {
    let mut decoder = Decoder::new(data);
    let mut docs = Vec::new();
    while let Ok(Some(doc)) = decoder.next_document() {
        docs.push(doc);
        if docs.len() > 64 {
            break;
        }
    }
    for compact in [true, false] {
        let mut encoder = Encoder::new();
        encoder.set_indent(2);
        encoder.set_compact_seq_indent(compact);
        let mut ok = true;
        for doc in &docs {
            ok &= encoder.encode(doc).is_ok();
        }
        if let (true, Ok(bytes)) = (ok, encoder.finish()) {
            if !docs.is_empty() {
                // go-yaml itself emits some exotic tags it cannot read back
                // (`!%21` becomes `!!`), so only the absence of panics counts.
                let _ = krmgraph_yaml::parse_documents(&bytes);
            }
        }
    }
}
