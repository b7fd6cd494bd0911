//! Compiles `proto/echo.proto` (the bare echo baseline) with protox and tonic-prost-build; no
//! `protoc` needed.

use std::error::Error;

const PROTOS: [&str; 1] = ["proto/echo.proto"];

fn main() -> Result<(), Box<dyn Error>> {
    for p in PROTOS {
        println!("cargo:rerun-if-changed={p}");
    }
    let fds = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .build_transport(true)
        .compile_fds(fds)?;
    Ok(())
}
