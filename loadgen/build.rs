//! Compiles `proto/echo.proto` (the bare echo baseline) and `proto/lean.proto` (the game
//! client's lean view of the server's messages) with protox and tonic-prost-build; no `protoc`
//! needed.

use std::error::Error;

const PROTOS: [&str; 2] = ["proto/echo.proto", "proto/lean.proto"];

fn main() -> Result<(), Box<dyn Error>> {
    for p in PROTOS {
        println!("cargo:rerun-if-changed={p}");
    }
    let fds = protox::compile(PROTOS, ["proto"])?;
    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        .build_transport(true)
        // A batch's events are counted, not read: kept as slices of the received buffer.
        .bytes(".loadgen.lean.v1.EventBatch.events")
        .compile_fds(fds)?;
    Ok(())
}
