//! Generates the Rust code for the `.proto` contract, without a system `protoc`.
//!
//! `protox` compiles every file under `proto/maumau/v1/` to a `FileDescriptorSet` (with source
//! info, so proto comments become doc comments), `tonic-prost-build` turns it into messages,
//! clients and servers, and the encoded set is written to `OUT_DIR/maumau_descriptor.bin` for
//! server reflection.

use std::error::Error;
use std::path::{Path, PathBuf};

use prost::Message;

const PROTO_ROOT: &str = "proto";
const PROTO_DIR: &str = "proto/maumau/v1";

fn main() -> Result<(), Box<dyn Error>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(PROTO_DIR)?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    files.retain(|p| p.extension().is_some_and(|e| e == "proto"));
    files.sort();

    println!("cargo:rerun-if-changed={PROTO_DIR}");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }

    let fds = protox::compile(&files, [PROTO_ROOT])?;

    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    std::fs::write(
        Path::new(&out_dir).join("maumau_descriptor.bin"),
        fds.encode_to_vec(),
    )?;

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // `connect` constructors need tonic's transport, which the `transport` feature enables.
        .build_transport(std::env::var_os("CARGO_FEATURE_TRANSPORT").is_some())
        .compile_fds(fds)?;
    Ok(())
}
