//! End to end, fuzzed: random PlayRequest messages and random raw bytes sent as gRPC message
//! bodies. The server never panics and never disconnects another seat, answers each message with
//! a typed refusal (or a Pong, or an acceptance), and no refusal changes the match; afterwards the
//! match and a fresh one play to the end.
//!
//! Seeded and bounded: a few hundred messages, well under a second.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{
    Seat, TestServer, config, create_match, join_request, play_to_end, summary, with_bearer,
};
use maumau::{pb, wire};
use maumau_engine::seed::SplitMix64;
use pb::server_message::Kind;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;

// ----- a seeded generator -------------------------------------------------------------------

/// The engine's SplitMix64 with the draws the fuzzer needs.
struct Rng(SplitMix64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    /// An enum number: mostly near the defined range, sometimes anything.
    fn enum_number(&mut self, defined: i32) -> i32 {
        if self.chance(80) {
            self.below(defined as u64 + 4) as i32 - 2
        } else {
            self.next() as i32
        }
    }

    fn bytes(&mut self, max: u64) -> Vec<u8> {
        let n = self.below(max + 1);
        (0..n).map(|_| self.next() as u8).collect()
    }

    fn hex(&mut self) -> String {
        format!("{:032x}", (self.next() as u128) << 64 | self.next() as u128)
    }
}

// ----- panics in any task of this process are counted ---------------------------------------

static PANICS: AtomicUsize = AtomicUsize::new(0);

fn count_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
    });
}

// ----- a codec that sends raw bytes as the message body -------------------------------------

struct RawCodec<U>(PhantomData<U>);

impl<U> Default for RawCodec<U> {
    fn default() -> Self {
        RawCodec(PhantomData)
    }
}

struct RawEncoder;

impl Encoder for RawEncoder {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        use prost::bytes::BufMut;
        dst.put_slice(&item);
        Ok(())
    }
}

struct ProstDecoder<U>(PhantomData<U>);

impl<U: Message + Default> Decoder for ProstDecoder<U> {
    type Item = U;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<U>, tonic::Status> {
        U::decode(src)
            .map(Some)
            .map_err(|e| tonic::Status::internal(e.to_string()))
    }
}

impl<U: Message + Default + Send + 'static> Codec for RawCodec<U> {
    type Encode = Vec<u8>;
    type Decode = U;
    type Encoder = RawEncoder;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> RawEncoder {
        RawEncoder
    }

    fn decoder(&mut self) -> ProstDecoder<U> {
        ProstDecoder(PhantomData)
    }
}

/// A Play stream whose messages are raw bytes.
struct RawPlay {
    tx: mpsc::Sender<Vec<u8>>,
    rx: tonic::Streaming<pb::PlayResponse>,
}

async fn raw_play(channel: &Channel, first: Vec<u8>) -> RawPlay {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.expect("ready");
    let (tx, rx) = mpsc::channel(64);
    tx.send(first).await.expect("send");
    let rx = grpc
        .streaming(
            tonic::Request::new(ReceiverStream::new(rx)),
            PathAndQuery::from_static("/maumau.v1.PlayService/Play"),
            RawCodec::<pb::PlayResponse>::default(),
        )
        .await
        .expect("the call opens")
        .into_inner();
    RawPlay { tx, rx }
}

impl RawPlay {
    /// The next item within 10 s; `None` when the stream ended.
    async fn next(&mut self) -> Option<Result<pb::ServerMessage, tonic::Status>> {
        use tokio_stream::StreamExt;
        let item = tokio::time::timeout(std::time::Duration::from_secs(10), self.rx.next())
            .await
            .expect("an answer within 10 s")?;
        Some(item.map(|r| r.message.expect("a message")))
    }
}

async fn raw_submit(
    channel: &Channel,
    token: &str,
    body: Vec<u8>,
) -> Result<pb::SubmitActionResponse, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.expect("ready");
    grpc.unary(
        with_bearer(body, token),
        PathAndQuery::from_static("/maumau.v1.PlayService/SubmitAction"),
        RawCodec::<pb::SubmitActionResponse>::default(),
    )
    .await
    .map(tonic::Response::into_inner)
}

// ----- random messages ----------------------------------------------------------------------

fn random_action(rng: &mut Rng) -> pb::Action {
    use pb::action::Kind as A;
    let card = |rng: &mut Rng| {
        if rng.chance(90) {
            Some(pb::Card {
                rank: rng.enum_number(15),
                suit: rng.enum_number(5),
            })
        } else {
            None
        }
    };
    let kind = match rng.below(7) {
        0 => None,
        1 => Some(A::Draw(pb::DrawAction {})),
        2 => Some(A::PassTurn(pb::PassAction {})),
        3 => Some(A::DeclareSuit(pb::DeclareSuitAction {
            suit: rng.enum_number(5),
        })),
        4 => Some(A::Announce(pb::AnnounceAction {
            call: rng.enum_number(3),
        })),
        5 => Some(A::Challenge(pb::ChallengeAction {})),
        _ => Some(A::Play(pb::PlayAction {
            card: card(rng),
            suit: if rng.chance(50) {
                0
            } else {
                rng.enum_number(5)
            },
            call: if rng.chance(50) {
                0
            } else {
                rng.enum_number(3)
            },
        })),
    };
    pb::Action { kind }
}

/// A random message for a joined stream. `state` is the current state id as last seen, `legal`
/// the legal actions of the last required prompt (sometimes one is sent, to move the match).
fn random_request(
    rng: &mut Rng,
    state: u64,
    legal: &[u32],
    request_id: u64,
    tokens: &[String],
) -> pb::PlayRequest {
    use pb::play_request::Kind as K;
    let kind = match rng.below(100) {
        20..=25 if !legal.is_empty() => Some(K::Action(pb::ActionSubmission {
            state_id: state,
            choice: Some(pb::action_submission::Choice::ActionIndex(
                legal[rng.below(legal.len() as u64) as usize],
            )),
            request_id,
        })),
        0..=3 => None,
        4..=7 => Some(K::Join(pb::Join {
            token: match rng.below(3) {
                0 => String::new(),
                1 => tokens[rng.below(tokens.len() as u64) as usize].clone(),
                _ => rng.hex(),
            },
            client_name: String::from_utf8_lossy(&rng.bytes(16)).into_owned(),
            resume: None,
            // Both deliveries, and a value the server does not know.
            event_delivery: rng.below(4) as i32,
            ..Default::default()
        })),
        8..=9 => Some(K::Resume(pb::Resume {
            last_event_number: match rng.below(3) {
                0 => 0,
                1 => rng.below(50),
                _ => rng.next(),
            },
            snapshot: rng.chance(50),
        })),
        10..=19 => Some(K::Ping(pb::Ping { nonce: rng.next() })),
        _ => {
            let state_id = match rng.below(6) {
                0 => 0,
                1 | 2 => state,
                3 => state.wrapping_add(1),
                4 => rng.below(8),
                _ => rng.next(),
            };
            let choice = match rng.below(10) {
                0 => None,
                1..=4 => Some(pb::action_submission::Choice::ActionIndex(
                    match rng.below(4) {
                        0 | 1 => rng.below(202) as u32,
                        2 => 202 + rng.below(100) as u32,
                        _ => rng.next() as u32,
                    },
                )),
                _ => Some(pb::action_submission::Choice::Action(random_action(rng))),
            };
            Some(K::Action(pb::ActionSubmission {
                state_id,
                choice,
                request_id,
            }))
        }
    };
    pb::PlayRequest { kind }
}

/// Random bytes, or a valid message damaged: truncated, a byte flipped, garbage appended.
fn random_body(rng: &mut Rng, valid: &[u8]) -> Vec<u8> {
    let mut b = valid.to_vec();
    match rng.below(5) {
        0 | 1 => return rng.bytes(48),
        2 if !b.is_empty() => b.truncate(rng.below(b.len() as u64) as usize),
        3 if !b.is_empty() => {
            let at = rng.below(b.len() as u64) as usize;
            b[at] ^= 1 << rng.below(8);
        }
        _ => b.extend(rng.bytes(12)),
    }
    b
}

fn typed(status: &tonic::Status) -> pb::ErrorReason {
    let reason = wire::reason_of(status);
    assert_ne!(
        reason,
        pb::ErrorReason::Unspecified,
        "a typed refusal: {status:?}"
    );
    assert_eq!(status.code(), wire::status_code(reason), "{status:?}");
    reason
}

/// Tracks the state id as the stream reports it.
fn note_state(state: &mut u64, m: &pb::ServerMessage) {
    match &m.kind {
        Some(Kind::Prompt(p)) => *state = p.state_id,
        Some(Kind::Snapshot(s)) => *state = s.state_id,
        Some(Kind::Accepted(a)) => *state = a.state_id,
        Some(Kind::Rejected(r)) if r.state_id != 0 => *state = r.state_id,
        _ => {}
    }
}

/// Tracks what seat 0 may do as its stream reports it.
fn note_legal(legal: &mut Vec<u32>, m: &pb::ServerMessage) {
    match &m.kind {
        Some(Kind::Prompt(p)) if p.required => {
            *legal = p.legal_actions.iter().map(|a| a.index).collect()
        }
        Some(Kind::Accepted(_)) => legal.clear(),
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_messages_and_bytes_get_typed_refusals_and_change_nothing() {
    count_panics();
    let mut rng = Rng(SplitMix64::new(0x5EED_F022));
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            // Seat 0 moves first.
            start: Some(pb::create_match_request::Start::Position(
                "mm1 classic options=single_round seats=3 turn=0 rng=4d:0 \
                 hands=9S,KH,JD,5C,2S/KC,7D,3H,4H,6C/AS,8D,10H,QC,4S discard=3S stock=*"
                    .into(),
            )),
            time_control: Some(common::relaxed_clock()),
            ..Default::default()
        },
    )
    .await;
    let id = created.match_id.clone();
    let tokens: Vec<String> = created
        .seat_tokens
        .iter()
        .map(|t| t.token.clone())
        .chain([created.spectator_token.clone()])
        .collect();
    let channel = server.channel().await;
    let mut client = server.play_client().await;
    let mut seat0 = Seat::join(&mut client, &tokens[0], None).await;
    let mut others = vec![
        Seat::join(&mut client, &tokens[1], None).await,
        Seat::join(&mut client, &tokens[2], None).await,
    ];
    let mut state = 0;
    let mut legal: Vec<u32> = Vec::new();
    for m in seat0.sync(0).await {
        note_state(&mut state, &m);
        note_legal(&mut legal, &m);
    }

    // 1. Random PlayRequests on seat 0's joined stream, with a Ping as a barrier now and then.
    // Seats 1 and 2 do not act, so only seat 0's accepted actions may change the match.
    let before = summary(&mut matches, &id).await.actions;
    let mut accepted = 0;
    let mut refusals = std::collections::BTreeMap::new();
    let mut rid = 0;
    for round in 0..10u64 {
        let mut pending = std::collections::HashSet::new();
        let mut joins = 0;
        for _ in 0..40 {
            rid += 1;
            let m = random_request(&mut rng, state, &legal, rid, &tokens);
            match &m.kind {
                Some(pb::play_request::Kind::Action(_)) => {
                    pending.insert(rid);
                }
                Some(pb::play_request::Kind::Join(_)) | None => joins += 1,
                _ => {}
            }
            seat0.send(m).await;
        }
        let mut protocol = 0;
        for m in seat0.sync(1_000_000 + round).await {
            note_state(&mut state, &m);
            note_legal(&mut legal, &m);
            match &m.kind {
                Some(Kind::Accepted(a)) => {
                    assert!(pending.remove(&a.request_id), "one answer each: {a:?}");
                    accepted += 1;
                }
                Some(Kind::Rejected(r)) => {
                    let reason = r.reason();
                    assert_ne!(reason, pb::ErrorReason::Unspecified, "{r:?}");
                    assert!(!r.message.is_empty());
                    match reason {
                        pb::ErrorReason::AlreadyJoined | pb::ErrorReason::MalformedMessage
                            if r.request_id == 0 =>
                        {
                            protocol += 1
                        }
                        _ => assert!(pending.remove(&r.request_id), "one answer each: {r:?}"),
                    }
                    *refusals.entry(reason.as_str_name()).or_insert(0) += 1;
                }
                Some(Kind::Finished(_)) => panic!("the match cannot end here"),
                _ => {}
            }
        }
        assert!(pending.is_empty(), "unanswered: {pending:?}");
        assert_eq!(protocol, joins, "every Join and empty message is answered");
        assert_eq!(
            summary(&mut matches, &id).await.actions,
            before + accepted,
            "only accepted actions change the match"
        );
    }
    assert!(refusals.len() >= 8, "many kinds of refusal: {refusals:?}");
    assert!(accepted > 0, "some actions moved the match");

    // 2. Raw bytes as the first message of fresh streams: a typed refusal, nothing else.
    let unknown_join = join_request(&rng.hex(), None).encode_to_vec();
    for _ in 0..60 {
        let body = random_body(&mut rng, &unknown_join);
        let mut raw = raw_play(&channel, body.clone()).await;
        match raw.next().await {
            Some(Err(status)) => {
                let reason = typed(&status);
                assert!(
                    matches!(
                        reason,
                        pb::ErrorReason::NotJoined
                            | pb::ErrorReason::BadToken
                            | pb::ErrorReason::MalformedMessage
                    ),
                    "{body:?}: {status:?}"
                );
            }
            other => panic!("{body:?} was answered with {other:?}"),
        }
        assert!(raw.next().await.is_none(), "the refused stream ends");
    }

    // 3. Raw bytes to SubmitAction with seat 0's token: a typed answer, MALFORMED_MESSAGE when
    // the body is not a SubmitActionRequest at all.
    let valid_submit = pb::SubmitActionRequest {
        token: String::new(),
        action: Some(pb::ActionSubmission {
            state_id: state,
            choice: Some(pb::action_submission::Choice::ActionIndex(193)),
            request_id: 1,
        }),
    }
    .encode_to_vec();
    let mut undecodable = 0;
    for _ in 0..60 {
        let body = random_body(&mut rng, &valid_submit);
        match raw_submit(&channel, &tokens[0], body.clone()).await {
            Ok(pb::SubmitActionResponse {
                result: Some(pb::submit_action_response::Result::Accepted(_)),
            }) => accepted += 1,
            Ok(pb::SubmitActionResponse {
                result: Some(pb::submit_action_response::Result::Rejected(r)),
            }) => assert_ne!(r.reason(), pb::ErrorReason::Unspecified),
            Ok(other) => panic!("an answer says something: {other:?}"),
            Err(status) if wire::reason_of(&status) == pb::ErrorReason::MalformedMessage => {
                // The body did not decode (refused before the service runs), or had no action.
                assert_eq!(
                    status.code(),
                    tonic::Code::InvalidArgument,
                    "{body:?}: {status:?}"
                );
                undecodable += 1;
            }
            Err(status) => {
                typed(&status);
            }
        }
    }
    assert!(undecodable > 0);
    assert_eq!(summary(&mut matches, &id).await.actions, before + accepted);

    // 4. Raw bytes after a valid Join for seat 0 on a new stream: the new stream supersedes the
    // old one, then the bad bytes end it with a typed refusal.
    let join0 = join_request(
        &tokens[0],
        Some(pb::Resume {
            last_event_number: 0,
            snapshot: true,
        }),
    )
    .encode_to_vec();
    let ping = |nonce: u64| {
        pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Ping(pb::Ping { nonce })),
        }
        .encode_to_vec()
    };
    let valid_action = common::index_request(state, 192, 5).encode_to_vec();
    let mut ended = 0;
    for k in 0..20u64 {
        let mut raw = raw_play(&channel, join0.clone()).await;
        raw.tx.send(ping(k)).await.expect("send");
        let mut welcomed = false;
        loop {
            match raw.next().await {
                Some(Ok(m)) => {
                    welcomed |= matches!(m.kind, Some(Kind::Welcome(_)));
                    if matches!(&m.kind, Some(Kind::Pong(p)) if p.nonce == k) {
                        break;
                    }
                }
                other => panic!("a valid Join is welcomed: {other:?}"),
            }
        }
        assert!(welcomed);
        if k == 0 {
            // The newer connection closed seat 0's first stream, with a typed reason.
            let status = seat0.next_error().await;
            assert_eq!(typed(&status), pb::ErrorReason::Superseded);
        }
        raw.tx
            .send(random_body(&mut rng, &valid_action))
            .await
            .expect("send");
        // The server may have refused the bytes and ended the call already.
        let _ = raw.tx.send(ping(1_000 + k)).await;
        loop {
            match raw.next().await {
                Some(Ok(m)) => match &m.kind {
                    Some(Kind::Pong(p)) if p.nonce == 1_000 + k => break,
                    Some(Kind::Accepted(_)) => accepted += 1,
                    Some(Kind::Rejected(r)) => {
                        assert_ne!(r.reason(), pb::ErrorReason::Unspecified, "{r:?}")
                    }
                    _ => {}
                },
                Some(Err(status)) => {
                    // Bytes that are no PlayRequest end the stream with a typed refusal.
                    assert_eq!(typed(&status), pb::ErrorReason::MalformedMessage);
                    assert!(raw.next().await.is_none());
                    ended += 1;
                    break;
                }
                None => panic!("the stream ended without a status"),
            }
        }
    }
    assert!(ended > 0);
    assert_eq!(summary(&mut matches, &id).await.actions, before + accepted);

    // 5. The other seats were never disturbed: still connected, no verdict of anyone else's
    // action on their streams, and they still answer.
    let s = summary(&mut matches, &id).await;
    assert!(
        s.players[1].connected && s.players[2].connected,
        "{:?}",
        s.players
    );
    for (i, seat) in others.iter_mut().enumerate() {
        seat.sync(7 + i as u64).await;
        assert!(
            seat.log
                .iter()
                .all(|m| !matches!(m.kind, Some(Kind::Accepted(_) | Kind::Rejected(_)))),
            "seat {} heard of another seat's actions",
            i + 1
        );
    }

    // 6. The match plays to its end: every seat restarts its feed from a snapshot (which sends
    // a pending prompt again) and plays.
    let seat0 = Seat::join(
        &mut client,
        &tokens[0],
        Some(pb::Resume {
            last_event_number: 0,
            snapshot: true,
        }),
    )
    .await;
    let mut players = vec![tokio::spawn(play_to_end(seat0, 1))];
    for (i, seat) in others.into_iter().enumerate() {
        seat.send(pb::PlayRequest {
            kind: Some(pb::play_request::Kind::Resume(pb::Resume {
                last_event_number: 0,
                snapshot: true,
            })),
        })
        .await;
        players.push(tokio::spawn(play_to_end(seat, 2 + i as u64)));
    }
    let mut reports = Vec::new();
    for p in players {
        reports.push(p.await.expect("a player"));
    }
    assert!(reports.iter().all(|r| r == &reports[0]));
    assert_eq!(reports[0].status(), pb::MatchStatus::Finished);
    let replay = matches
        .get_replay(pb::GetReplayRequest { match_id: id })
        .await
        .expect("replay")
        .into_inner()
        .replay;
    let verdict = matches
        .verify_replay(pb::VerifyReplayRequest { replay })
        .await
        .expect("verify")
        .into_inner();
    assert!(verdict.valid && verdict.finished, "{verdict:?}");

    // 7. And a fresh match plays normally.
    let fresh = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                options: Some(pb::ProfileOptions {
                    single_round: true,
                    ..Default::default()
                }),
                ..config(pb::Profile::Classic, 2)
            }),
            seed: Some(78),
            ..Default::default()
        },
    )
    .await;
    let a = Seat::join(&mut client, &fresh.seat_tokens[0].token, None).await;
    let b = Seat::join(&mut client, &fresh.seat_tokens[1].token, None).await;
    let (ra, rb) = tokio::join!(play_to_end(a, 3), play_to_end(b, 4));
    assert_eq!(ra, rb);
    assert_eq!(ra.status(), pb::MatchStatus::Finished);

    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "no task panicked");
}
