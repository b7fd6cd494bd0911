//! The Python client's native transport: a Python bot played by the Rust SDK's runner.
//!
//! `maumau_client.run` and `maumau_client.hold_lobby` call [`play_seat`] and [`hold_lobby`] when
//! this module is importable. The Rust runner ([`maumau_bot_sdk::runner::run_wire`]) owns the
//! connection (tonic), the resume after a dropped stream and the retries; the lobby
//! ([`maumau_bot_sdk::lobby::hold`]) owns the lobby stream, the reconnects, the drain and the
//! WithdrawSeat of a seat whose player failed. Python is called only for what the bot asked to
//! see: each prompt is encoded here with prost and handed over as the bytes of a
//! `play_pb2.DecisionPrompt` (the bot's `DecisionPrompt.FromString`, upb's C parser, wraps them),
//! so a bot with only `decide` costs one parse and one call per decision. Every other hook is
//! called only when the Python side passes it (it passes the ones the bot class overrides).
//!
//! The GIL is released while the runner waits on the network and taken only to call Python;
//! every call runs on the caller's thread (a current-thread tokio runtime), so a bot's hooks are
//! never called at once from two matches, as on the grpcio transport. Signals are checked every
//! tenth of a second: a `KeyboardInterrupt` (or what a handler raises) stops a match, and drains a
//! lobby.
//!
//! The player a Python caller hands over is a tuple, `(decide, decide_optional, prompt_parser,
//! hooks, on_disconnect)`: `decide(prompt) -> int`; `decide_optional(prompt) -> int | None` or
//! `None`; `prompt_parser(bytes) -> DecisionPrompt`; `hooks`, a dict from a part's kind
//! (`welcome`, `snapshot`, `event`, `accepted`, `rejected`, `finished`, `message`) to
//! `(callable, parser)`, the parser making the callable's argument from bytes (`finished` is
//! handed the `MatchReport`, `message` each part as a `ServerMessage` of its own); and
//! `on_disconnect(error_text, attempt)` or `None`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use maumau::{pb, wire};
use maumau_bot_sdk::lobby::{self, LobbyError, LobbyEvent, LobbyOptions};
use maumau_bot_sdk::runner::{RunError, RunOptions, WirePlayer, run_wire};
use prost::Message;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};

create_exception!(
    maumau_engine,
    TransportError,
    PyException,
    "The native transport stopped: args are (message, reason, code), the reason being the \
     server's `maumau-reason` or `maumau-ladder-reason` trailer (empty when none) and the code \
     the gRPC status code (0 when the call got no status). maumau_client turns it into \
     MatchError or LobbyError."
);

/// How often Python's signal handlers get to run while the runner waits on the network.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// A part's kind, as the Python side names it in `hooks`.
const HOOK_KINDS: [&str; 7] = [
    "welcome", "snapshot", "event", "accepted", "rejected", "finished", "message",
];

/// A Python callable and the parser that makes its argument from bytes.
struct Hook {
    call: Py<PyAny>,
    parse: Py<PyAny>,
}

impl Hook {
    fn call(&self, py: Python<'_>, message: &impl Message) -> PyResult<()> {
        let bytes = PyBytes::new(py, &message.encode_to_vec());
        let argument = self.parse.call1(py, (bytes,))?;
        self.call.call1(py, (argument,))?;
        Ok(())
    }
}

/// The tuple a Python caller hands over for a player (see the module's docs).
type Spec<'py> = (
    Py<PyAny>,
    Option<Py<PyAny>>,
    Py<PyAny>,
    Bound<'py, PyDict>,
    Option<Py<PyAny>>,
);

/// A Python bot as a [`WirePlayer`]. The first Python exception is kept in `error`, to be
/// raised again when the run returns.
struct PyPlayer {
    decide: Py<PyAny>,
    decide_optional: Option<Py<PyAny>>,
    parse_prompt: Py<PyAny>,
    /// Indexed as [`HOOK_KINDS`].
    hooks: [Option<Hook>; 7],
    on_disconnect: Option<Py<PyAny>>,
    error: Option<PyErr>,
}

impl PyPlayer {
    /// Reads the tuple described in the module's docs.
    fn from_spec(spec: &Bound<'_, PyAny>) -> PyResult<PyPlayer> {
        let (decide, decide_optional, parse_prompt, hooks, on_disconnect): Spec<'_> =
            spec.extract()?;
        let mut table: [Option<Hook>; 7] = Default::default();
        for (key, value) in hooks.iter() {
            let kind: String = key.extract()?;
            let slot = HOOK_KINDS
                .iter()
                .position(|k| *k == kind)
                .ok_or_else(|| PyValueError::new_err(format!("no hook kind `{kind}`")))?;
            let (call, parse): (Py<PyAny>, Py<PyAny>) = value.extract()?;
            table[slot] = Some(Hook { call, parse });
        }
        Ok(PyPlayer {
            decide,
            decide_optional,
            parse_prompt,
            hooks: table,
            on_disconnect,
            error: None,
        })
    }

    fn hook(&self, kind: &str) -> Option<&Hook> {
        let slot = HOOK_KINDS.iter().position(|k| *k == kind)?;
        self.hooks[slot].as_ref()
    }

    /// Keeps the first Python error and stops the run with its text.
    fn failed(&mut self, py: Python<'_>, error: PyErr) -> RunError {
        let text = error.value(py).to_string();
        let name = error
            .get_type(py)
            .name()
            .map_or_else(|_| "exception".to_string(), |n| n.to_string());
        self.error.get_or_insert(error);
        RunError::Player(format!("{name}: {text}"))
    }

    fn prompt_py(&self, py: Python<'_>, p: &pb::DecisionPrompt) -> PyResult<Option<u32>> {
        if let Some(hook) = self.hook("message") {
            hook.call(
                py,
                &server_message(pb::server_message::Kind::Prompt(p.clone())),
            )?;
        }
        let (decide, what) = if p.required {
            (&self.decide, "decide")
        } else {
            match &self.decide_optional {
                Some(f) => (f, "decide_optional"),
                None => return Ok(None),
            }
        };
        let prompt = self
            .parse_prompt
            .call1(py, (PyBytes::new(py, &p.encode_to_vec()),))?;
        let choice = decide.call1(py, (prompt,))?;
        if !p.required && choice.is_none(py) {
            return Ok(None);
        }
        let choice = choice.bind(py);
        match choice.extract::<u32>() {
            Ok(index) if p.legal_actions.iter().any(|a| a.index == index) => Ok(Some(index)),
            _ => {
                let mut legal: Vec<u32> = p.legal_actions.iter().map(|a| a.index).collect();
                legal.sort_unstable();
                Err(PyValueError::new_err(format!(
                    "{what} returned {}, not one of the legal indices {legal:?}",
                    choice.repr()?
                )))
            }
        }
    }

    fn observe_py(&self, py: Python<'_>, part: &pb::server_message::Kind) -> PyResult<()> {
        use pb::server_message::Kind;
        if let Some(hook) = self.hook("message") {
            hook.call(py, &server_message(part.clone()))?;
        }
        match part {
            Kind::Welcome(m) => self.deliver(py, "welcome", m),
            Kind::Snapshot(m) => self.deliver(py, "snapshot", m),
            Kind::Event(m) => self.deliver(py, "event", m),
            Kind::Accepted(m) => self.deliver(py, "accepted", m),
            Kind::Rejected(m) => self.deliver(py, "rejected", m),
            Kind::Finished(m) => match &m.report {
                Some(report) => self.deliver(py, "finished", report),
                None => Ok(()),
            },
            Kind::Prompt(_) | Kind::Pong(_) | Kind::Heartbeat(_) | Kind::Batch(_) => Ok(()),
        }
    }

    fn deliver(&self, py: Python<'_>, kind: &str, message: &impl Message) -> PyResult<()> {
        match self.hook(kind) {
            Some(hook) => hook.call(py, message),
            None => Ok(()),
        }
    }

    /// Whether any hook wants to see `part`: the GIL is not taken for a part nobody reads.
    fn wants(&self, part: &pb::server_message::Kind) -> bool {
        use pb::server_message::Kind;
        if self.hook("message").is_some() {
            return true;
        }
        let kind = match part {
            Kind::Welcome(_) => "welcome",
            Kind::Snapshot(_) => "snapshot",
            Kind::Event(_) => "event",
            Kind::Accepted(_) => "accepted",
            Kind::Rejected(_) => "rejected",
            Kind::Finished(_) => "finished",
            Kind::Prompt(_) | Kind::Pong(_) | Kind::Heartbeat(_) | Kind::Batch(_) => return false,
        };
        self.hook(kind).is_some()
    }
}

fn server_message(kind: pb::server_message::Kind) -> pb::ServerMessage {
    pb::ServerMessage { kind: Some(kind) }
}

impl WirePlayer for PyPlayer {
    fn prompt(&mut self, p: &pb::DecisionPrompt) -> Result<Option<u32>, RunError> {
        if !p.required && self.decide_optional.is_none() && self.hook("message").is_none() {
            return Ok(None);
        }
        Python::attach(|py| self.prompt_py(py, p).map_err(|e| self.failed(py, e)))
    }

    fn observe(&mut self, part: &pb::server_message::Kind) -> Result<(), RunError> {
        if !self.wants(part) {
            return Ok(());
        }
        Python::attach(|py| self.observe_py(py, part).map_err(|e| self.failed(py, e)))
    }

    fn disconnected(&mut self, why: &str, attempt: u32) -> Result<(), RunError> {
        if self.on_disconnect.is_none() {
            return Ok(());
        }
        Python::attach(|py| {
            match self
                .on_disconnect
                .as_ref()
                .map(|hook| hook.call1(py, (why, attempt)))
            {
                None | Some(Ok(_)) => Ok(()),
                Some(Err(e)) => Err(self.failed(py, e)),
            }
        })
    }
}

/// `http://host:port` from `host:port`; a URL or a Unix socket (`unix:PATH`) as it is.
fn url(server: &str) -> String {
    if server.contains("://") || server.starts_with("unix:") {
        server.trim_end_matches('/').to_string()
    } else {
        format!("http://{server}")
    }
}

fn runtime() -> PyResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("no tokio runtime: {e}")))
}

/// Completes with the error a signal handler raised (`KeyboardInterrupt` on Ctrl-C); checks
/// every [`SIGNAL_CHECK`]. Handlers run only on the main thread, so elsewhere it never completes.
async fn signalled() -> PyErr {
    loop {
        tokio::time::sleep(SIGNAL_CHECK).await;
        if let Err(e) = Python::attach(|py| py.check_signals()) {
            return e;
        }
    }
}

fn transport_error(message: String, reason: &str, code: i32) -> PyErr {
    TransportError::new_err((message, reason.to_string(), code))
}

fn run_error(error: RunError) -> PyErr {
    match &error {
        RunError::Refused(status) => transport_error(
            error.to_string(),
            wire::reason_of(status).as_str_name(),
            status.code() as i32,
        ),
        _ => transport_error(error.to_string(), "", 0),
    }
}

/// Plays one seat with the Rust runner and returns the final `MatchReport`'s bytes.
///
/// `player` is the tuple of the module's docs; `server` is `host:port`, a URL or `unix:PATH`.
/// A Python exception in the bot stops the match and is raised again here; a refusal or a lost
/// connection raises `TransportError`.
#[pyfunction]
#[pyo3(signature = (player, server, token, name, max_reconnects = 10, batched = true))]
pub fn play_seat<'py>(
    py: Python<'py>,
    player: &Bound<'py, PyAny>,
    server: &str,
    token: &str,
    name: &str,
    max_reconnects: u32,
    batched: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut player = PyPlayer::from_spec(player)?;
    let mut options = RunOptions::new(url(server), token);
    options.name = name.to_string();
    options.max_reconnects = max_reconnects;
    options.batched = batched;
    let runtime = runtime()?;
    let outcome = py.detach(|| {
        runtime.block_on(async {
            tokio::select! {
                played = run_wire(&mut player, &options) => Ok(played),
                e = signalled() => Err(e),
            }
        })
    });
    let played = outcome?;
    if let Some(e) = player.error.take() {
        return Err(e);
    }
    let report = played.map_err(run_error)?;
    Ok(PyBytes::new(py, &report.encode_to_vec()))
}

/// What the lobby's callbacks share: the Python errors to raise or report.
#[derive(Default)]
struct LobbyState {
    /// The exception of each failed player, by ladder match id, until `played` reports it.
    failures: HashMap<i64, PyErr>,
    /// The first exception of `on_event` or of a signal handler: it drains the lobby and is
    /// raised when the lobby is done.
    error: Option<PyErr>,
}

fn lock(state: &Mutex<LobbyState>) -> std::sync::MutexGuard<'_, LobbyState> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Calls `on_event(kind, payload)` for one lobby event (see [`hold_lobby`]).
fn lobby_event(
    py: Python<'_>,
    on_event: &Py<PyAny>,
    event: &LobbyEvent,
    state: &Mutex<LobbyState>,
) -> PyResult<()> {
    let bytes = |m: &dyn EncodeDyn| PyBytes::new(py, &m.bytes()).into_any();
    let (kind, payload): (&str, Bound<'_, PyAny>) = match event {
        LobbyEvent::Welcome(m) => ("welcome", bytes(m)),
        LobbyEvent::Waiting(m) => ("waiting", bytes(m)),
        LobbyEvent::Invitation(m) => ("invitation", bytes(m)),
        LobbyEvent::MatchEnded(m) => ("match_ended", bytes(m)),
        LobbyEvent::Notice(m) => ("notice", bytes(m)),
        LobbyEvent::Played {
            invitation,
            outcome,
        } => {
            let error = match outcome {
                Ok(()) => py.None().into_bound(py),
                Err(text) => match lock(state).failures.remove(&invitation.ladder_match_id) {
                    Some(e) => e.into_value(py).into_bound(py).into_any(),
                    None => text.clone().into_pyobject(py)?.into_any(),
                },
            };
            let pair = PyTuple::new(py, [bytes(invitation), error])?;
            ("played", pair.into_any())
        }
        LobbyEvent::Dropped { error, .. } => {
            ("dropped", error.clone().into_pyobject(py)?.into_any())
        }
        LobbyEvent::Draining => ("draining", py.None().into_bound(py)),
        LobbyEvent::Drained => ("drained", py.None().into_bound(py)),
    };
    on_event.call1(py, (kind, payload))?;
    Ok(())
}

/// A prost message behind a reference to a trait object (the lobby's events carry several types).
trait EncodeDyn {
    fn bytes(&self) -> Vec<u8>;
}

impl<M: Message> EncodeDyn for M {
    fn bytes(&self) -> Vec<u8> {
        self.encode_to_vec()
    }
}

/// Plays one invitation with a player from `make_player`; a Python error is kept in `state`.
async fn play_invitation(
    make_player: Arc<Py<PyAny>>,
    state: Arc<Mutex<LobbyState>>,
    options: RunOptions,
    ladder_match_id: i64,
) -> Result<(), String> {
    let made = Python::attach(|py| {
        make_player
            .call0(py)
            .and_then(|spec| PyPlayer::from_spec(spec.bind(py)))
    });
    let mut player = match made {
        Ok(p) => p,
        Err(e) => {
            let text = Python::attach(|py| e.value(py).to_string());
            lock(&state).failures.insert(ladder_match_id, e);
            return Err(format!("no player: {text}"));
        }
    };
    let played = run_wire(&mut player, &options).await;
    if let Some(e) = player.error.take() {
        lock(&state).failures.insert(ladder_match_id, e);
    }
    played.map(|_| ()).map_err(|e| e.to_string())
}

/// Holds a ladder lobby with the Rust SDK (`lobby::hold`) and plays each invitation with a
/// player from `make_player()` (the tuple of the module's docs) on the Rust runner.
///
/// `on_event(kind, payload)` hears `welcome`, `waiting`, `invitation`, `match_ended` and
/// `notice` with the message's bytes (LobbyWelcome, LobbyWaiting, Invitation, LadderMatchEnded,
/// LobbyNotice), `played` with `(invitation bytes, None | exception | text)`, `dropped` with the
/// error's text, `draining` and `drained` with `None`. `drain()` is asked every tenth of a
/// second: once it returns true the lobby drains (so does a signal handler's exception, which is
/// raised at the end). The delay before reopening a dropped lobby doubles from a quarter of a
/// second up to `max_backoff` seconds. A refused lobby raises `TransportError`.
#[pyfunction]
#[pyo3(signature = (make_player, server, key, name, on_event, drain, max_matches = 1, profiles = None, seats = None, max_backoff = 30.0))]
#[allow(clippy::too_many_arguments)] // mirrors maumau_client.hold_lobby's keyword arguments
pub fn hold_lobby(
    py: Python<'_>,
    make_player: Py<PyAny>,
    server: &str,
    key: &str,
    name: &str,
    on_event: Py<PyAny>,
    drain: Py<PyAny>,
    max_matches: u32,
    profiles: Option<Vec<String>>,
    seats: Option<Vec<u32>>,
    max_backoff: f64,
) -> PyResult<()> {
    let mut options = LobbyOptions::new(url(server), key);
    options.max_matches = max_matches;
    options.max_backoff = Duration::try_from_secs_f64(max_backoff)
        .map_err(|e| PyValueError::new_err(format!("max_backoff {max_backoff}: {e}")))?;
    if let Some(p) = profiles {
        options.profiles = p;
    }
    if let Some(s) = seats {
        options.seats = s;
    }
    options.name = name.to_string();
    let state = Arc::new(Mutex::new(LobbyState::default()));
    let make_player = Arc::new(make_player);
    let play = {
        let state = state.clone();
        let name = options.name.clone();
        move |invitation: pb::Invitation, server: String| {
            let mut run_options = RunOptions::new(server, invitation.seat_token);
            run_options.name = name.clone();
            play_invitation(
                make_player.clone(),
                state.clone(),
                run_options,
                invitation.ladder_match_id,
            )
        }
    };
    let on_event_state = state.clone();
    let on_event = move |event: &LobbyEvent| {
        Python::attach(|py| {
            if let Err(e) = lobby_event(py, &on_event, event, &on_event_state) {
                lock(&on_event_state).error.get_or_insert(e);
            }
        });
    };
    let drain_state = state.clone();
    let drained = async move {
        loop {
            tokio::time::sleep(SIGNAL_CHECK).await;
            let asked = Python::attach(|py| {
                if let Err(e) = py.check_signals() {
                    lock(&drain_state).error.get_or_insert(e);
                }
                if lock(&drain_state).error.is_some() {
                    return Ok(true);
                }
                drain.call0(py)?.is_truthy(py)
            });
            match asked {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => {
                    lock(&drain_state).error.get_or_insert(e);
                    return;
                }
            }
        }
    };
    let runtime = runtime()?;
    let held = py.detach(|| runtime.block_on(lobby::hold(&options, play, on_event, drained)));
    if let Some(e) = lock(&state).error.take() {
        return Err(e);
    }
    held.map_err(|e| match &e {
        LobbyError::Refused(status) => transport_error(
            e.to_string(),
            status
                .metadata()
                .get("maumau-ladder-reason")
                .and_then(|v| v.to_str().ok())
                .unwrap_or(""),
            status.code() as i32,
        ),
        LobbyError::BadAddress(_) => transport_error(e.to_string(), "", 0),
    })
}

/// Adds the native transport to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(play_seat, m)?)?;
    m.add_function(wrap_pyfunction!(hold_lobby, m)?)?;
    m.add("TransportError", m.py().get_type::<TransportError>())?;
    Ok(())
}
