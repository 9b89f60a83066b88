//! Dev aid: read a package as kpt does and print what krmgraph's kyaml
//! port writes back (`-o stdout`-style ResourceList with `--stdout`,
//! otherwise rewrite the files in place).
use krmgraph_kyaml::{byteio::ByteWriter, kioutil, pkgio, rnode};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().ok_or("usage: kyaml_roundtrip DIR [--stdout]")?;
    let stdout = args.next().as_deref() == Some("--stdout");
    let abs = std::fs::canonicalize(&dir)?.to_string_lossy().into_owned();
    let mut nodes = pkgio::LocalPackageReader::kpt(&dir, &abs).read()?;
    for n in &mut nodes {
        rnode::clear_annotation(n, kioutil::PACKAGE_PATH_ANNOTATION)?;
    }
    if stdout {
        let bytes = ByteWriter::resource_list(None).write(&nodes)?;
        print!("{}", String::from_utf8_lossy(&bytes));
        return Ok(());
    }
    let files = pkgio::render_files(nodes, &pkgio::WriterOptions::default(), None)?;
    pkgio::write_files(std::path::Path::new(&dir), &files)?;
    Ok(())
}
