//! The Mau Mau Arena contract: the protobuf messages and gRPC services of `maumau.v1`, generated
//! from `proto/maumau/v1/*.proto`, and the conversions between them and the rules engine.
//!
//! ```
//! use maumau::{pb, wire};
//! use maumau_engine::{Action, Game, MatchConfig, ProfileId};
//! use prost::Message;
//!
//! let game = Game::new(MatchConfig::new(ProfileId::Classic, 3), 7).expect("a valid config");
//! let seat = game.to_act().expect("someone is to move");
//!
//! // Server side: a prompt for the seat to move, encoded for the wire.
//! let prompt = pb::DecisionPrompt {
//!     state_id: 1,
//!     legal_actions: wire::legal_actions_to_wire(&game.observation(seat)),
//!     required: true,
//!     observation: Some(wire::observation_to_wire(&game.observation(seat))),
//!     ..Default::default()
//! };
//! let bytes = prompt.encode_to_vec();
//!
//! // Client side: pick the first legal action and answer by its dense index.
//! let prompt = pb::DecisionPrompt::decode(bytes.as_slice()).expect("valid bytes");
//! let answer = pb::ActionSubmission {
//!     state_id: prompt.state_id,
//!     choice: Some(pb::action_submission::Choice::ActionIndex(prompt.legal_actions[0].index)),
//!     request_id: 1,
//! };
//!
//! // Server side again: read and check the answer, then hand it to the engine.
//! let action: Action = wire::action_from_submission(&answer).expect("a well-formed action");
//! assert!(game.legal_actions(seat).contains(&action));
//! ```
//!
//! - [`pb`]: the generated code. Messages, enums, and for each service a client
//!   ([`pb::play_service_client::PlayServiceClient`],
//!   [`pb::match_service_client::MatchServiceClient`]) and a server trait with its tower service
//!   ([`pb::play_service_server`], [`pb::match_service_server`]).
//! - [`wire`]: the one module that converts between engine values and `pb` values; incoming
//!   values are checked there, with typed errors that name the [`pb::ErrorReason`] to report.
//! - [`replay`]: re-simulating and verifying a [`pb::Replay`] with the engine alone (what
//!   `MatchService.VerifyReplay` answers and `maumau replay FILE` prints).
//! - [`viewer`]: a replay as frames, the table after each step as one perspective saw it, in
//!   readable notation (what `maumau replay FILE --show`, `maumau play` and the web viewer show).
//! - [`FILE_DESCRIPTOR_SET`]: the encoded descriptors of every proto file, for gRPC server
//!   reflection.
//!
//! The engine never sees a `pb` type: servers and bots convert at their edge with [`wire`].
//!
//! # Features
//!
//! - `transport` (default): `connect` constructors on the generated clients, and tonic's HTTP/2
//!   transport. Turn default features off to keep only the messages, codecs and service traits.

pub mod replay;
pub mod viewer;
pub mod wire;

/// Everything `build.rs` generates, under one set of lint exemptions.
#[allow(
    clippy::all,
    clippy::pedantic,
    missing_docs,
    unreachable_pub,
    rustdoc::broken_intra_doc_links,
    rustdoc::invalid_html_tags,
    rustdoc::bare_urls
)]
mod generated {
    /// The code generated from `proto/maumau/v1/*.proto` (package `maumau.v1`).
    pub mod pb {
        tonic::include_proto!("maumau.v1");
    }

    /// The PlayService server again, streaming [`crate::encoded::Response`].
    pub mod encoded {
        include!(concat!(env!("OUT_DIR"), "/encoded/maumau.v1.rs"));
    }
}

pub use generated::pb;

pub mod encoded;

/// The protobuf package of the contract.
pub const PACKAGE: &str = "maumau.v1";

/// The encoded `FileDescriptorSet` of every proto file of the contract (with comments), for
/// gRPC server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("maumau_descriptor");

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    #[test]
    fn descriptor_set_names_every_file_and_service() {
        let fds = prost_types_free::decode(FILE_DESCRIPTOR_SET);
        for file in [
            "cards.proto",
            "rules.proto",
            "game.proto",
            "events.proto",
            "errors.proto",
            "record.proto",
            "play.proto",
            "match.proto",
            "ladder.proto",
        ] {
            assert!(
                fds.iter().any(|name| name == &format!("maumau/v1/{file}")),
                "{file} missing from {fds:?}"
            );
        }
        assert_eq!(
            pb::play_service_server::SERVICE_NAME,
            "maumau.v1.PlayService"
        );
        assert_eq!(
            pb::match_service_server::SERVICE_NAME,
            "maumau.v1.MatchService"
        );
        assert_eq!(
            pb::ladder_service_server::SERVICE_NAME,
            "maumau.v1.LadderService"
        );
        assert!(
            pb::Welcome::default().encode_to_vec().is_empty(),
            "defaults encode to nothing"
        );
    }

    /// Reads the file names of a `FileDescriptorSet` without depending on `prost-types`.
    mod prost_types_free {
        use prost::Message;

        #[derive(Clone, PartialEq, Message)]
        struct FileDescriptorSet {
            #[prost(message, repeated, tag = "1")]
            file: Vec<FileDescriptorProto>,
        }

        #[derive(Clone, PartialEq, Message)]
        struct FileDescriptorProto {
            #[prost(string, optional, tag = "1")]
            name: Option<String>,
        }

        pub(super) fn decode(bytes: &[u8]) -> Vec<String> {
            FileDescriptorSet::decode(bytes)
                .expect("the descriptor set decodes")
                .file
                .into_iter()
                .filter_map(|f| f.name)
                .collect()
        }
    }
}
