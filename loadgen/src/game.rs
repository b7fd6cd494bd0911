//! The game load: M concurrent 4-seat classic matches (calls enforced, every seat remote), each
//! seat a bot on its own Play stream that answers every required prompt at once. A slot that sees
//! its match finish creates the next one, until the window closes.
//!
//! The server sends every seat every event and a full observation with each prompt. By default a
//! bot reads only what it acts on (`lean.rs`: kinds, prompt state ids, legal action indices,
//! verdict request ids, event counts; the rest is stepped over unread), like a bot that answers
//! from its prompts; `--decode full` decodes every message into the `maumau.v1` types.
//!
//! With `Delivery::WithPrompt` every seat joins with EVENT_DELIVERY_WITH_PROMPT: its events and
//! the answers to its accepted actions come in one EventBatch with its next prompt instead of one
//! message each, so a decision costs one message each way, as an echo round trip does. With
//! `Delivery::PerStep` (EVENT_DELIVERY_PER_STEP) every seat gets one EventBatch per step of the
//! match (the step's answer, events and prompt): events as they happen, a message per seat per
//! decision.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use clap::ValueEnum;
use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use prost::bytes::{Buf, Bytes};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Streaming;
use tonic::codec::DecodeBuf;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::Channel;
use tonic_prost::ProstCodec;

use crate::lean::{self, Lean};
use crate::stats::{Latencies, Watchdog, Window};

/// Seats per match.
pub(crate) const SEATS: usize = 4;
/// Longest wait for any one server message or call.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Most messages one seat reads in one match (a bound far above a real match).
const MAX_MESSAGES: u64 = 10_000_000;
/// Most matches one slot plays in a run (a bound far above what a run reaches).
const MAX_MATCHES: u64 = 1_000_000;

/// How a bot picks among the legal actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Policy {
    /// The first legal action.
    First,
    /// A seeded pseudo-random legal action.
    Random,
}

/// How much of the server's messages a bot decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Decode {
    /// Only what it acts on, read from the wire (`lean.rs`); the rest is stepped over unread.
    Lean,
    /// Every message, into the `maumau.v1` types.
    Full,
}

/// How the seats ask for their events (`Join.event_delivery`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Delivery {
    /// EVENT_DELIVERY_AS_THEY_HAPPEN: one message per event.
    AsTheyHappen,
    /// EVENT_DELIVERY_WITH_PROMPT: the events in one batch with the next prompt.
    WithPrompt,
    /// EVENT_DELIVERY_PER_STEP: each step's answer, events and prompt in one batch.
    PerStep,
}

impl Delivery {
    fn to_wire(self) -> pb::EventDelivery {
        match self {
            Delivery::AsTheyHappen => pb::EventDelivery::AsTheyHappen,
            Delivery::WithPrompt => pb::EventDelivery::WithPrompt,
            Delivery::PerStep => pb::EventDelivery::PerStep,
        }
    }
}

/// A response type a bot reads its [`Lean`] view of a message from.
trait Incoming: Sized + Send + Sync + 'static {
    /// The message from its bytes.
    fn decode(bytes: Bytes) -> Result<Self, String>;
    /// What the bot acts on.
    fn read(self) -> Result<Lean, String>;
}

/// A message kept as its bytes, read by [`lean::read`] (`--decode lean`).
struct Raw(Bytes);

impl Incoming for Raw {
    fn decode(bytes: Bytes) -> Result<Raw, String> {
        Ok(Raw(bytes))
    }

    fn read(self) -> Result<Lean, String> {
        lean::read(&self.0).map_err(|e| e.to_string())
    }
}

fn prompt(p: pb::DecisionPrompt) -> lean::Prompt {
    lean::Prompt {
        state_id: p.state_id,
        required: p.required,
        legal: p.legal_actions.iter().map(|a| a.index).collect(),
    }
}

/// A message decoded whole into the `maumau.v1` types (`--decode full`).
impl Incoming for pb::PlayResponse {
    fn decode(bytes: Bytes) -> Result<Self, String> {
        prost::Message::decode(bytes).map_err(|e| e.to_string())
    }

    fn read(self) -> Result<Lean, String> {
        use pb::server_message::Kind;
        Ok(match self.message.and_then(|m| m.kind) {
            Some(Kind::Prompt(p)) => Lean::Prompt(prompt(p)),
            Some(Kind::Batch(b)) => Lean::Batch {
                accepted: b.accepted.iter().map(|a| a.request_id).collect(),
                events: b.events.len() as u64,
                prompt: b.prompt.map(prompt),
            },
            Some(Kind::Event(_)) => Lean::Event,
            Some(Kind::Accepted(a)) => Lean::Accepted {
                request_id: a.request_id,
            },
            Some(Kind::Rejected(r)) => Lean::Rejected {
                request_id: r.request_id,
            },
            Some(Kind::Finished(_)) => Lean::Finished,
            _ => Lean::Other,
        })
    }
}

/// The Play stream's codec for a bot: requests encode with prost; a response is taken whole as
/// `Bytes` (a split of tonic's buffer, not a copy) and handed to `R`. Decoding through tonic's
/// `DecodeBuf` instead advances a `BytesMut` at every field.
struct BotCodec<R>(PhantomData<fn() -> R>);

impl<R: Incoming> tonic::codec::Codec for BotCodec<R> {
    type Encode = pb::PlayRequest;
    type Decode = R;
    type Encoder = <ProstCodec<pb::PlayRequest, pb::PlayResponse> as tonic::codec::Codec>::Encoder;
    type Decoder = BytesDecoder<R>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstCodec::<pb::PlayRequest, pb::PlayResponse>::raw_encoder(Default::default())
    }

    fn decoder(&mut self) -> Self::Decoder {
        BytesDecoder(PhantomData)
    }
}

/// Hands each whole message's bytes to `R`.
struct BytesDecoder<R>(PhantomData<fn() -> R>);

impl<R: Incoming> tonic::codec::Decoder for BytesDecoder<R> {
    type Item = R;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<R>, tonic::Status> {
        R::decode(src.copy_to_bytes(src.remaining()))
            .map(Some)
            .map_err(|e| tonic::Status::internal(format!("undecodable message: {e}")))
    }
}

/// Opens a Play stream whose answers decode as `R` (the same rpc and wire format whatever `R`).
async fn open_play<R: Incoming>(
    channel: Channel,
    requests: ReceiverStream<pb::PlayRequest>,
) -> Result<Streaming<R>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unavailable(format!("the channel is not ready: {e}")))?;
    let codec = BotCodec::<R>(PhantomData);
    let path = PathAndQuery::from_static("/maumau.v1.PlayService/Play");
    Ok(grpc
        .streaming(tonic::Request::new(requests), path, codec)
        .await?
        .into_inner())
}

/// What a run of matches measured.
#[derive(Debug, Default)]
pub(crate) struct GameLoad {
    /// Accepted actions inside the window.
    pub(crate) decisions: u64,
    /// Decision latencies inside the window: prompt received to the next prompt or accept.
    pub(crate) latencies: Latencies,
    /// Matches that finished inside the window.
    pub(crate) matches_finished: u64,
    /// Matches that finished at any time, and their accepted actions (for decisions per match).
    pub(crate) finished_total: u64,
    /// Accepted actions of those matches.
    pub(crate) finished_decisions: u64,
    /// Server messages received inside the window, all kinds.
    pub(crate) messages: u64,
    /// Of those, numbered events.
    pub(crate) events: u64,
    /// Actions the server rejected.
    pub(crate) rejections: u64,
    /// Seats that waited 10 s for a message inside the window.
    pub(crate) stalls: u64,
    /// Calls or streams that failed.
    pub(crate) errors: u64,
    /// The first failure, if any.
    pub(crate) first_error: Option<String>,
}

impl GameLoad {
    fn error(&mut self, e: String) {
        self.errors += 1;
        self.first_error.get_or_insert(e);
    }

    fn add(&mut self, o: GameLoad) {
        self.decisions += o.decisions;
        self.latencies.merge(o.latencies);
        self.matches_finished += o.matches_finished;
        self.finished_total += o.finished_total;
        self.finished_decisions += o.finished_decisions;
        self.messages += o.messages;
        self.events += o.events;
        self.rejections += o.rejections;
        self.stalls += o.stalls;
        self.errors += o.errors;
        if self.first_error.is_none() {
            self.first_error = o.first_error;
        }
    }
}

/// What one seat saw of one match.
#[derive(Default)]
struct SeatRun {
    /// Accepted actions inside the window.
    decisions: u64,
    /// All accepted actions.
    accepted: u64,
    latencies: Latencies,
    messages: u64,
    events: u64,
    rejections: u64,
    finished: bool,
    stalled: bool,
    error: Option<String>,
}

/// A small seeded generator (PCG-style LCG step), enough to pick among legal actions.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn action(state_id: u64, action_index: u32, request_id: u64) -> pb::PlayRequest {
    pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Action(pb::ActionSubmission {
            state_id,
            choice: Some(pb::action_submission::Choice::ActionIndex(action_index)),
            request_id,
        })),
    }
}

/// Plays one seat: Join, then answer each required prompt at once, until MatchFinished or the
/// window closes. The server's messages decode as `R`.
async fn play_seat<R: Incoming>(
    channel: Channel,
    token: String,
    policy: Policy,
    delivery: Delivery,
    seed: u64,
    window: Window,
) -> SeatRun {
    let mut run = SeatRun::default();
    let (tx, rx) = mpsc::channel(8);
    let join = pb::PlayRequest {
        kind: Some(pb::play_request::Kind::Join(pb::Join {
            token,
            client_name: "loadgen".into(),
            resume: None,
            event_delivery: delivery.to_wire() as i32,
            ..Default::default()
        })),
    };
    if tx.send(join).await.is_err() {
        run.error = Some("cannot queue Join".into());
        return run;
    }
    let mut inbound: Streaming<R> =
        match tokio::time::timeout(TIMEOUT, open_play(channel, ReceiverStream::new(rx))).await {
            Ok(Ok(s)) => s,
            Ok(Err(s)) => {
                run.error = Some(format!("Play: {s}"));
                return run;
            }
            Err(_) => {
                run.error = Some("Play did not open within 10 s".into());
                return run;
            }
        };
    let mut rng = Lcg(seed);
    let mut choose = |n: usize| match policy {
        Policy::First => 0,
        Policy::Random => rng.below(n),
    };
    let mut request_id = 0u64;
    // The decision being timed: its request id and when its prompt arrived.
    let mut pending: Option<(u64, Instant)> = None;
    // One watchdog per seat, re-armed only when it fires (see `Watchdog`).
    let mut watchdog = Watchdog::new(window);
    for _ in 0..MAX_MESSAGES {
        let msg = match watchdog.guard(inbound.next()).await {
            Some(Some(Ok(r))) => match r.read() {
                Ok(m) => m,
                Err(e) => {
                    run.error = Some(format!("a message the bot cannot read: {e}"));
                    break;
                }
            },
            Some(Some(Err(s))) => {
                run.error = Some(format!("Play stream: {s}"));
                break;
            }
            Some(None) => {
                run.error = Some("the Play stream ended before MatchFinished".into());
                break;
            }
            None => {
                run.stalled = !window.over();
                break;
            }
        };
        let now = watchdog.progress();
        if window.contains(now) {
            run.messages += 1;
            run.events += match msg {
                Lean::Event => 1,
                Lean::Batch { events, .. } => events,
                _ => 0,
            };
        }
        // A batch is its held answers, then its events, then its prompt.
        let msg = match msg {
            Lean::Batch {
                accepted, prompt, ..
            } => {
                for id in accepted {
                    run.accepted += 1;
                    if window.contains(now) {
                        run.decisions += 1;
                    }
                    // Under WithPrompt the answer comes with the seat's next prompt, long after
                    // the decision: no latency to take from it. Under PerStep it comes at once.
                    if let Some((p, t0)) = pending
                        && p == id
                    {
                        pending = None;
                        if delivery == Delivery::PerStep && window.contains(now) {
                            run.latencies.push(now - t0);
                        }
                    }
                }
                match prompt {
                    Some(p) => Lean::Prompt(p),
                    None => Lean::Other,
                }
            }
            m => m,
        };
        match msg {
            Lean::Prompt(lean::Prompt {
                state_id,
                required: true,
                legal,
            }) => {
                if let Some((_, t0)) = pending.take()
                    && window.contains(now)
                {
                    run.latencies.push(now - t0);
                }
                let Some(&index) = legal.get(choose(legal.len())) else {
                    run.error = Some("a required prompt without legal actions".into());
                    break;
                };
                request_id += 1;
                pending = Some((request_id, now));
                if tx.send(action(state_id, index, request_id)).await.is_err() {
                    run.error = Some("the request stream closed".into());
                    break;
                }
            }
            Lean::Accepted { request_id: id } => {
                run.accepted += 1;
                if window.contains(now) {
                    run.decisions += 1;
                }
                if let Some((p, t0)) = pending
                    && p == id
                {
                    pending = None;
                    if window.contains(now) {
                        run.latencies.push(now - t0);
                    }
                }
            }
            Lean::Rejected { request_id: id } => {
                run.rejections += 1;
                if pending.is_some_and(|(p, _)| p == id) {
                    pending = None;
                }
            }
            Lean::Finished => {
                run.finished = true;
                break;
            }
            Lean::Prompt(_) | Lean::Batch { .. } | Lean::Event | Lean::Other => {}
        }
    }
    run
}

fn create_request(seed: u64) -> pb::CreateMatchRequest {
    pb::CreateMatchRequest {
        config: Some(pb::MatchConfig {
            profile: pb::Profile::Classic as i32,
            seats: SEATS as u32,
            calls: pb::CallsMode::Enforce as i32,
            ..Default::default()
        }),
        seed: Some(seed),
        label: "loadgen".into(),
        ..Default::default()
    }
}

/// One slot: create a match, play its four seats, repeat until the window closes.
#[allow(clippy::too_many_arguments)]
async fn slot(
    index: u64,
    mut control: MatchServiceClient<Channel>,
    seats: [Channel; SEATS],
    policy: Policy,
    decode: Decode,
    delivery: Delivery,
    seed: u64,
    window: Window,
) -> GameLoad {
    let mut out = GameLoad::default();
    for n in 0..MAX_MATCHES {
        if window.over() {
            break;
        }
        let match_seed = seed ^ (index << 32) ^ n;
        let created =
            match tokio::time::timeout(TIMEOUT, control.create_match(create_request(match_seed)))
                .await
            {
                Ok(Ok(r)) => r.into_inner(),
                Ok(Err(s)) => {
                    out.error(format!("CreateMatch: {s}"));
                    break;
                }
                Err(_) => {
                    out.error("CreateMatch took over 10 s".into());
                    break;
                }
            };
        let players: Vec<_> = created
            .seat_tokens
            .into_iter()
            .zip(seats.iter())
            .map(|(t, channel)| {
                let bot_seed = match_seed.wrapping_mul(31).wrapping_add(u64::from(t.seat));
                let channel = channel.clone();
                match decode {
                    Decode::Lean => tokio::spawn(play_seat::<Raw>(
                        channel, t.token, policy, delivery, bot_seed, window,
                    )),
                    Decode::Full => tokio::spawn(play_seat::<pb::PlayResponse>(
                        channel, t.token, policy, delivery, bot_seed, window,
                    )),
                }
            })
            .collect();
        let mut finished = players.len() == SEATS;
        let mut accepted = 0;
        let mut ended = None;
        for mut p in players {
            match tokio::time::timeout_at(window.end + TIMEOUT * 2, &mut p).await {
                Ok(Ok(r)) => {
                    out.decisions += r.decisions;
                    out.latencies.merge(r.latencies);
                    out.rejections += r.rejections;
                    out.messages += r.messages;
                    out.events += r.events;
                    out.stalls += u64::from(r.stalled);
                    accepted += r.accepted;
                    finished &= r.finished;
                    if let Some(e) = r.error {
                        out.error(e);
                    }
                }
                Ok(Err(e)) => {
                    out.error(format!("seat task: {e}"));
                    finished = false;
                }
                Err(_) => {
                    p.abort();
                    out.error("a seat task did not finish".into());
                    finished = false;
                }
            }
            ended = Some(Instant::now());
        }
        if finished {
            out.finished_total += 1;
            out.finished_decisions += accepted;
            if ended.is_some_and(|t| window.contains(t)) {
                out.matches_finished += 1;
            }
        }
        if out.errors > 0 && !window.over() {
            // Do not spin on a failing server: one failure ends this slot.
            break;
        }
    }
    out
}

/// Runs `streams / 4` concurrent matches against `url` until `window` closes: every Play stream
/// over one shared HTTP/2 connection, or one connection per stream (reused by the slot's next
/// matches). Matches are created over a separate control connection.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn load(
    url: &str,
    streams: usize,
    shared: bool,
    policy: Policy,
    decode: Decode,
    delivery: Delivery,
    seed: u64,
    window: Window,
) -> Result<GameLoad, String> {
    let control = MatchServiceClient::new(crate::connect(url, 1).await?.remove(0));
    let channels = Arc::new(crate::connect(url, if shared { 1 } else { streams }).await?);
    let slots = streams / SEATS;
    let tasks: Vec<_> = (0..slots)
        .map(|i| {
            let seats = std::array::from_fn(|s| channels[(i * SEATS + s) % channels.len()].clone());
            tokio::spawn(slot(
                i as u64,
                control.clone(),
                seats,
                policy,
                decode,
                delivery,
                seed,
                window,
            ))
        })
        .collect();
    let mut total = GameLoad::default();
    for mut t in tasks {
        match tokio::time::timeout_at(window.end + TIMEOUT * 4, &mut t).await {
            Ok(Ok(l)) => total.add(l),
            Ok(Err(e)) => total.error(format!("slot task: {e}")),
            Err(_) => {
                t.abort();
                total.error("a slot task did not finish".into());
            }
        }
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The load generator's bots play real matches against the real server, over loopback, in
    /// every combination of delivery, decoding and connection layout: what they read of the
    /// server's messages (`lean.rs` or the full types) is enough to play legally to the end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_bots_play_whole_matches_against_the_server() {
        let data = tempfile::tempdir().expect("a temporary directory");
        let config = maumau_server::ServerConfig {
            data_dir: data.path().to_path_buf(),
            actions_per_second: 1_000_000,
            calls_per_second: 1_000_000,
            ..Default::default()
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(maumau_server::run(listener, config, async {
            let _ = stopped.await;
        }));
        for delivery in [
            Delivery::AsTheyHappen,
            Delivery::WithPrompt,
            Delivery::PerStep,
        ] {
            for decode in [Decode::Lean, Decode::Full] {
                for shared in [true, false] {
                    let what = format!("{delivery:?}, {decode:?}, shared {shared}");
                    // A window long enough for a whole match: 0.4 s, longer on a busy machine
                    // (what decides is that a match ends, not how fast).
                    let mut measured = Duration::from_millis(400);
                    let load = loop {
                        let window = Window::after(Duration::from_millis(100), measured);
                        let load =
                            load(&url, 8, shared, Policy::Random, decode, delivery, 7, window)
                                .await
                                .unwrap_or_else(|e| panic!("{what}: {e}"));
                        if load.finished_total > 0 || measured >= Duration::from_secs(25) {
                            break load;
                        }
                        measured *= 4;
                    };
                    assert_eq!(load.errors, 0, "{what}: {:?}", load.first_error);
                    assert_eq!(load.rejections, 0, "{what}: every action legal");
                    assert_eq!(load.stalls, 0, "{what}");
                    assert!(load.decisions > 0, "{what}: no decision in the window");
                    assert!(
                        load.finished_total > 0 && load.finished_decisions > 0,
                        "{what}: no match played to its end in {measured:?}"
                    );
                    assert!(load.events > 0, "{what}: no event counted");
                }
            }
        }
        let _ = stop.send(());
        server
            .await
            .expect("the server task")
            .expect("the server stops cleanly");
    }
}
