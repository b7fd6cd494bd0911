//! Generates the Rust code for the `.proto` contract, without a system `protoc`.
//!
//! `protox` compiles every file under `proto/maumau/v1/` to a `FileDescriptorSet` (with source
//! info, so proto comments become doc comments), `tonic-prost-build` turns it into messages,
//! clients and servers, and the encoded set is written to `OUT_DIR/maumau_descriptor.bin` for
//! server reflection.
//!
//! A second pass generates `OUT_DIR/encoded/maumau.v1.rs`: the PlayService server again, with
//! its two streamed responses (`PlayResponse`, `WatchResponse`) as `crate::encoded::Response`,
//! bytes the server encoded itself, its `PlayRequest` as `crate::encoded::Request`, which it
//! reads itself, and every other type taken from `crate::pb`.

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

    let mut play_only = fds.clone();
    for file in &mut play_only.file {
        file.service.retain(|s| s.name() == "PlayService");
    }

    tonic_prost_build::configure()
        .build_client(true)
        .build_server(true)
        // `connect` constructors need tonic's transport, which the `transport` feature enables.
        .build_transport(std::env::var_os("CARGO_FEATURE_TRANSPORT").is_some())
        .compile_fds(fds)?;

    let encoded_dir = out_dir.join("encoded");
    std::fs::create_dir_all(&encoded_dir)?;
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .out_dir(&encoded_dir)
        // The most specific path wins: the two responses, then the rest of the package.
        .extern_path(".maumau.v1.PlayResponse", "crate::encoded::Response")
        .extern_path(".maumau.v1.WatchResponse", "crate::encoded::Response")
        .extern_path(".maumau.v1.PlayRequest", "crate::encoded::Request")
        .extern_path(".maumau.v1", "crate::pb")
        .compile_fds(play_only)?;
    Ok(())
}
