//! Compiles `proto/echo.proto` (the bare echo baseline) with protox and tonic-prost-build; no
//! `protoc` needed.

use std::error::Error;

const PROTO: &str = "proto/echo.proto";

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={PROTO}");
    let fds = protox::compile([PROTO], ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .build_transport(true)
        .compile_fds(fds)?;
    Ok(())
}
