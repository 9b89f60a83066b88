//! Compiles the vendored `RunFunctionRequest`/`RunFunctionResponse` protos
//! (v1 and v1beta1, from the Crossplane Python function SDK) with protox,
//! so no `protoc` is needed. Map fields become `BTreeMap`s: prost encodes
//! them in key order, which makes a request's encoding deterministic (as
//! Go's `Deterministic: true`), and so usable in a cache key.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let protos = [
        "proto/v1/run_function.proto",
        "proto/v1beta1/run_function.proto",
    ];
    for proto in protos {
        println!("cargo:rerun-if-changed={proto}");
    }
    let fds = protox::compile(protos, ["proto"])?;
    tonic_prost_build::configure()
        .btree_map(".")
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)?;
    Ok(())
}
