//! The server side of the vendored v1 protocol, compiled without protoc.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "../../../engine/crossplane/proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile(["v1/run_function.proto"], [proto])?;
    tonic_prost_build::configure()
        .btree_map(".")
        .build_client(false)
        .compile_fds(fds)?;
    Ok(())
}
