//! `krmgraph fn run` and `krmgraph fn list`: built-in functions as
//! standalone KRM functions.

use std::io::{Read, Write};
use std::process::ExitCode;

use krmgraph_render::{builtin, resolve_image};

use crate::args::FnRunArgs;

/// Runs a built-in on the ResourceList read from stdin.
pub fn run(args: FnRunArgs) -> ExitCode {
    let image = resolve_image(&args.image);
    let Some(function) = builtin::lookup(&image) else {
        eprintln!("Error: {image} is not a built-in function (see `krmgraph fn list`)");
        return ExitCode::from(1);
    };
    let mut input = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut input) {
        eprintln!("Error: reading stdin: {e}");
        return ExitCode::from(1);
    }
    let output = (function.run)(&input);
    let _ = std::io::stdout().write_all(&output.stdout);
    let _ = std::io::stderr().write_all(&output.stderr);
    let code = output.exit_code.unwrap_or(1).clamp(0, 255) as u8;
    ExitCode::from(code)
}

/// Prints the built-ins: image, tags, config kinds.
pub fn list() -> ExitCode {
    let mut out = String::from("IMAGE\tTAGS\tCONFIG KINDS\n");
    for b in builtin::all() {
        let tags = if b.tags == ["*"] {
            "any".to_string()
        } else {
            b.tags.join(",")
        };
        let kinds = if b.config_kinds.is_empty() {
            "-".to_string()
        } else {
            b.config_kinds.join(",")
        };
        out.push_str(&format!("{}{}\t{}\t{}\n", b.registry, b.name, tags, kinds));
    }
    let _ = std::io::stdout().write_all(out.as_bytes());
    ExitCode::SUCCESS
}
