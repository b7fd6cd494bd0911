//! The match viewer on the server's own port: plain `GET` pages for people, beside gRPC.
//!
//! - `/matches` (and `/` when no extension, such as the ladder, serves its own front page): the
//!   newest matches, open and ended, each linked to its viewer.
//! - `/matches/{id}/view`: the viewer page (HTML, with its script and style inlined from
//!   `server/assets/`); it loads its frames from the next URL with the same query.
//! - `/matches/{id}/frames`: the frames as JSON ([`maumau::viewer::Viewing`] plus the players'
//!   `names`). Query: `view=public` (the default while a match is open), `omniscient` (the
//!   default once it has ended) or a seat number; `token=T` shows the view of the seat whose
//!   token it is (a spectator token: the public view). A live match's frames carry
//!   `time_left_ms`, the time the seat to act has left before the server acts for it (absent
//!   while no remote seat is to act). Every hand (`omniscient`) and any seat's
//!   view without its token only once the match has ended, and of a sealed match
//!   (`CreateMatchRequest.sealed`) only once the operator has revealed it (until then
//!   403 `ERROR_REASON_SEALED`). The token may come in the `authorization: Bearer T` header
//!   instead (the `/play` page sends it there, off the URL). A refusal is JSON too,
//!   `{"reason": "ERROR_REASON_…", "message": "…"}`, with the reason in the `maumau-reason`
//!   header, as on gRPC. Two matches' frames are built at once; a request that waits 5 s for
//!   its turn gets 503 `ERROR_REASON_UNAVAILABLE`.
//! - A live match is shown as it stands: its table is asked for the replay so far
//!   (`table::Handle::live_replay`), and the frames are built from it for the public or the
//!   token's seat, marked `"live": true`; the page asks again every second until the end.
//!
//! [`standalone_page`] is the same viewer with its frames inside the page, for a file that opens
//! offline (`maumau replay FILE --html OUT`).

use std::sync::Arc;

use maud::{DOCTYPE, Markup, PreEscaped, html};
use maumau::pb;
use maumau::viewer::{Perspective, Viewing};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use tonic::codegen::http::{self, HeaderValue, StatusCode, header};

use crate::page::{BoxFuture, PageResponse};
use crate::registry::Registry;
use crate::table::Role;

/// The viewer's script, served inside its page.
const SCRIPT: &str = include_str!("../assets/viewer.js");
/// The viewer's style, served inside its page (and inlined in other pages that should look like
/// it, such as a tournament's `report.html`).
pub const STYLE: &str = include_str!("../assets/viewer.css");
/// Frames built at once, for all requests (each takes a blocking thread).
static BUILDS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);
/// How long a request waits for a build slot before it gets 503 `ERROR_REASON_UNAVAILABLE`.
const BUILD_WAIT: std::time::Duration = std::time::Duration::from_secs(5);
/// Matches listed on `/matches`.
const LISTED: usize = 100;

/// Characters escaped in a URL's path segment or query value: all but unreserved ones.
const COMPONENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// `s` as one URL path segment or query value (and as a file name: nothing in it that a file
/// system reads specially); the report of `maumau tournament` links its games with it too.
pub fn encode(s: &str) -> String {
    utf8_percent_encode(s, COMPONENT).to_string()
}

/// The answer to a page request the viewer serves, or `None` for a path that is not its own
/// (`root`: whether `/` is the viewer's, i.e. no extension serves pages; `bearer`: the token of
/// the request's `authorization: Bearer` header, which the frames take like `token=` in the
/// query, so that a page keeps it off URLs).
pub(crate) fn page(
    registry: &Arc<Registry>,
    uri: &http::Uri,
    head: bool,
    root: bool,
    bearer: Option<String>,
) -> Option<BoxFuture<'static, PageResponse>> {
    let path = uri.path();
    let query = uri.query().unwrap_or("").to_string();
    if path == "/favicon.ico" {
        // Browsers ask for it whatever the page declares: no icon, and no error either.
        let policy = policy(&registry.config.allow_origins, JSON, None);
        let response = respond(
            StatusCode::NO_CONTENT,
            JSON,
            String::new(),
            None,
            true,
            &policy,
        );
        return Some(Box::pin(async move { response }));
    }
    let route = if path == "/matches" || (root && path == "/") {
        Route::List
    } else {
        let rest = path.strip_prefix("/matches/")?;
        let (id, what) = rest.split_once('/')?;
        let id = percent_decode_str(id).decode_utf8().ok()?.into_owned();
        match what {
            "view" => Route::View(id),
            "frames" => Route::Frames(id),
            _ => return None,
        }
    };
    let registry = registry.clone();
    let viewer = matches!(route, Route::View(_));
    Some(Box::pin(async move {
        let (status, kind, body, reason) = match route {
            Route::List => (StatusCode::OK, HTML, list(&registry).await, None),
            Route::View(id) => view(&registry, &id, &query).await,
            Route::Frames(id) => match frames(&registry, &id, &query, bearer).await {
                Ok(json) => (StatusCode::OK, JSON, json, None),
                Err(refusal) => refusal.json(),
            },
        };
        // Only the viewer page runs a script; the list and the refusals are plain HTML.
        let script = (viewer && reason.is_none()).then(viewer_script_hash);
        let policy = policy(&registry.config.allow_origins, kind, script);
        respond(status, kind, body, reason, head, &policy)
    }))
}

enum Route {
    List,
    View(String),
    Frames(String),
}

const HTML: &str = "text/html; charset=utf-8";
const JSON: &str = "application/json";

pub(crate) fn respond(
    status: StatusCode,
    kind: &'static str,
    body: String,
    reason: Option<pb::ErrorReason>,
    head: bool,
    policy: &str,
) -> PageResponse {
    let body = if head {
        tonic::body::Body::empty()
    } else {
        tonic::body::Body::new(http_body_util::Full::new(bytes::Bytes::from(body)))
    };
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    // The policy is built from validated origins; one that still cannot be a header value
    // falls back to the strictest policy rather than to none.
    let policy = HeaderValue::from_str(policy)
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'"));
    headers.insert(header::CONTENT_SECURITY_POLICY, policy);
    if let Some(reason) = reason {
        headers.insert(
            "maumau-reason",
            HeaderValue::from_static(reason.as_str_name()),
        );
    }
    response
}

/// The CSP hash of the viewer's script, computed once.
fn viewer_script_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| script_hash(SCRIPT))
}

/// The `Content-Security-Policy` of a page of kind `kind` (HTML or JSON) whose only script is
/// inlined with hash `script` ([`script_hash`]; `None`: no script runs). Styles are inlined too
/// (and in `style` attributes), so `'unsafe-inline'` is allowed for styles only. Scripts fetch
/// from this server only (`connect-src 'self'`). Pages may be framed by this server's own
/// pages (the ladder's match page embeds the viewer) and by the origins in
/// [`crate::ServerConfig::allow_origins`], nothing else.
pub(crate) fn policy(allow_origins: &[String], kind: &str, script: Option<&str>) -> String {
    let ancestors = frame_ancestors(allow_origins);
    if kind != HTML {
        return format!("default-src 'none'; frame-ancestors {ancestors}");
    }
    let script = script.map_or("'none'".to_string(), |hash| format!("'{hash}'"));
    format!(
        "default-src 'none'; script-src {script}; style-src 'unsafe-inline'; img-src 'self' data:; \
         connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors {ancestors}"
    )
}

/// `'self'` and the allowed origins, as CSP source expressions (an origin that could end the
/// directive is left out: the list is checked at start, this is a second line).
fn frame_ancestors(allow_origins: &[String]) -> String {
    let mut sources = vec!["'self'".to_string()];
    for origin in allow_origins {
        let origin = origin.trim().trim_end_matches('/');
        let fits = !origin.is_empty()
            && origin
                .chars()
                .all(|c| c.is_ascii_graphic() && !matches!(c, ';' | ',' | '\''));
        if fits && !sources.iter().any(|s| s == origin) {
            sources.push(origin.to_string());
        }
    }
    sources.join(" ")
}

/// `sha256-…`: the CSP source that allows an inline script of exactly this text.
pub(crate) fn script_hash(script: &str) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(script.as_bytes());
    format!("sha256-{}", base64(&digest))
}

/// Standard base64 with padding (RFC 4648), as CSP hashes are written.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A request the viewer refuses, with its typed reason.
struct Refusal {
    status: StatusCode,
    reason: pb::ErrorReason,
    message: String,
}

impl Refusal {
    fn new(status: StatusCode, reason: pb::ErrorReason, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            reason,
            message: message.into(),
        }
    }

    fn json(self) -> (StatusCode, &'static str, String, Option<pb::ErrorReason>) {
        let body = serde_json::json!({
            "reason": self.reason.as_str_name(),
            "message": self.message,
        });
        (self.status, JSON, body.to_string(), Some(self.reason))
    }

    fn html(self) -> (StatusCode, &'static str, String, Option<pb::ErrorReason>) {
        let body = shell(
            "Mau Mau Arena",
            html! { p.note { (self.message) } p.note { a href="/matches" { "All matches" } } },
        );
        (self.status, HTML, body.into_string(), Some(self.reason))
    }
}

/// What a query asks for: a perspective (`view`) and a token.
#[derive(Default)]
struct Query {
    view: Option<Perspective>,
    token: Option<String>,
}

fn parse_query(query: &str) -> Result<Query, Refusal> {
    let bad =
        |m: String| Refusal::new(StatusCode::BAD_REQUEST, pb::ErrorReason::InvalidArgument, m);
    let mut q = Query::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let value = percent_decode_str(value)
            .decode_utf8()
            .map_err(|_| bad(format!("`{key}` is not UTF-8")))?;
        let twice = || bad(format!("`{key}` is given more than once"));
        match key {
            "view" if q.view.is_some() => return Err(twice()),
            "token" if q.token.is_some() => return Err(twice()),
            "view" => q.view = Some(value.parse().map_err(bad)?),
            "token" => q.token = Some(value.into_owned()),
            _ => {
                return Err(bad(format!(
                    "unknown query parameter `{}` (view, token)",
                    crate::echo(key)
                )));
            }
        }
    }
    Ok(q)
}

/// The frames of match `id` as the query asks, as JSON.
async fn frames(
    registry: &Arc<Registry>,
    id: &str,
    query: &str,
    bearer: Option<String>,
) -> Result<String, Refusal> {
    let mut q = parse_query(query)?;
    match (&q.token, bearer) {
        (Some(t), Some(b)) if *t != b => {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                pb::ErrorReason::BadToken,
                "the token in the authorization header and the one in the query differ",
            ));
        }
        (None, Some(b)) => q.token = Some(b),
        _ => {}
    }
    let entry = registry.get(id).await.ok_or_else(|| not_found(id))?;
    let mut perspective = q.view;
    if let Some(token) = &q.token {
        let (owner, role) = registry
            .by_token(token)
            .await
            .filter(|(owner, _)| owner.id == entry.id)
            .ok_or_else(|| {
                Refusal::new(
                    StatusCode::FORBIDDEN,
                    pb::ErrorReason::BadToken,
                    "the token is not one of this match's",
                )
            })?;
        drop(owner);
        let own = match role {
            Role::Seat(s) => Perspective::Seat(s),
            Role::Spectator => Perspective::Public,
        };
        // A token shows its own view only: a `view` beside it must name that one.
        if let Some(asked) = perspective.filter(|&p| p != own) {
            return Err(Refusal::new(
                StatusCode::BAD_REQUEST,
                pb::ErrorReason::InvalidArgument,
                format!(
                    "the token shows the view `{}`, not `{}`: give one of `view` and `token`",
                    view_value(own),
                    view_value(asked)
                ),
            ));
        }
        perspective = Some(own);
    }
    if entry.replay_pruned() {
        return Err(Refusal::new(
            StatusCode::GONE,
            pb::ErrorReason::ReplayPruned,
            "the operator deleted this match's replay; its result stays",
        ));
    }
    // A live match is shown as it stands: to everyone as a spectator sees it, to a seat's token
    // as that seat saw it; every hand only once it has ended.
    let (replay, live, time_left) = match entry.replay() {
        Some(replay) => (replay, false, None),
        None => {
            if q.token.is_none() && perspective.is_some_and(|p| p != Perspective::Public) {
                return Err(Refusal::new(
                    StatusCode::CONFLICT,
                    pb::ErrorReason::MatchNotFinished,
                    "the match is still being played: while it lasts, only what a spectator \
                     sees is shown (or a seat's own view, with its token)",
                ));
            }
            match entry.live_replay().await {
                Some(l) => (l.replay, true, l.time_left),
                // The table ended in between: the match's own replay is there now.
                None => (entry.replay().ok_or_else(|| not_found(id))?, false, None),
            }
        }
    };
    // A sealed match that has ended is shown as while it lasted (publicly, or as the token's
    // seat saw it) until the operator reveals it: every hand would tell its deal.
    let sealed = !live && entry.sealed();
    if sealed && q.token.is_none() && perspective.is_some_and(|p| p != Perspective::Public) {
        return Err(Refusal::new(
            StatusCode::FORBIDDEN,
            pb::ErrorReason::Sealed,
            "the match is sealed: until the operator reveals it, only what a spectator saw is \
             shown (or a seat's own view, with its token)",
        ));
    }
    let perspective = perspective.unwrap_or(if live || sealed {
        Perspective::Public
    } else {
        Perspective::Omniscient
    });
    let names: Vec<String> = entry.summary().players.iter().map(player_name).collect();
    // Building a match's frames takes CPU on the blocking pool: a flood of anonymous requests
    // queues here instead of crowding out the matches' own blocking work (the store's writes).
    let permit = tokio::time::timeout(BUILD_WAIT, BUILDS.acquire())
        .await
        .ok()
        .and_then(Result::ok)
        .ok_or_else(|| {
            Refusal::new(
                StatusCode::SERVICE_UNAVAILABLE,
                pb::ErrorReason::Unavailable,
                "the server is busy building other viewers: try again in a moment",
            )
        })?;
    let built = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        // The move list names the players beside their seats, as the terminal does.
        let viewing = maumau::viewer::frames_named(&replay, perspective, &names).map_err(|e| {
            let (status, reason) = match e.message.starts_with("seat ") {
                true => (StatusCode::BAD_REQUEST, pb::ErrorReason::NoSuchSeat),
                false => (StatusCode::INTERNAL_SERVER_ERROR, pb::ErrorReason::Internal),
            };
            Refusal::new(status, reason, e.message)
        })?;
        let mut json = with_names(&viewing, &names, live);
        if let (Some(left), Some(object)) = (time_left, json.as_object_mut()) {
            object.insert(
                "time_left_ms".into(),
                serde_json::json!(left.as_millis() as u64),
            );
        }
        Ok(json.to_string())
    })
    .await;
    built.unwrap_or_else(|_| {
        Err(Refusal::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            pb::ErrorReason::Internal,
            "the frames could not be built",
        ))
    })
}

/// A player's display name: its client's name, else its built-in bot's kind, else nothing.
fn player_name(p: &pb::PlayerInfo) -> String {
    if !p.name.is_empty() {
        return p.name.clone();
    }
    match pb::BotKind::try_from(p.bot) {
        Ok(pb::BotKind::Unspecified) | Err(_) => String::new(),
        Ok(kind) => kind
            .as_str_name()
            .trim_start_matches("BOT_KIND_")
            .to_lowercase(),
    }
}

/// The viewing as JSON, with the players' names beside it and whether the match is still being
/// played (`live`: the page then asks again for what came since).
fn with_names(viewing: &Viewing, names: &[String], live: bool) -> serde_json::Value {
    let mut value = serde_json::to_value(viewing).unwrap_or_default();
    // The result's line names the players (the notation's own words, with names for seats).
    for (i, outcome) in viewing
        .frames
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.result.as_ref().map(|r| (i, r)))
    {
        let named = outcome.line_with(names);
        let frame = &mut value["frames"][i];
        if let Some(notes) = frame["notes"].as_array_mut() {
            for note in notes
                .iter_mut()
                .filter(|n| n.as_str() == Some(&outcome.line))
            {
                *note = serde_json::json!(named);
            }
        }
        frame["result"]["line"] = serde_json::json!(named);
    }
    if let Some(object) = value.as_object_mut() {
        object.insert("names".into(), serde_json::json!(names));
        object.insert("live".into(), serde_json::json!(live));
    }
    value
}

fn not_found(id: &str) -> Refusal {
    Refusal::new(
        StatusCode::NOT_FOUND,
        pb::ErrorReason::MatchNotFound,
        format!("no match `{}`", crate::echo(id)),
    )
}

/// The viewer page of match `id`.
async fn view(
    registry: &Arc<Registry>,
    id: &str,
    query: &str,
) -> (StatusCode, &'static str, String, Option<pb::ErrorReason>) {
    let q = match parse_query(query) {
        Ok(q) => q,
        Err(refusal) => return refusal.html(),
    };
    let Some(entry) = registry.get(id).await else {
        return not_found(id).html();
    };
    let summary = entry.summary();
    let title = format!("Match {}", entry.id);
    let rules = rules_line(&summary);
    if entry.replay_pruned() {
        let body = html! {
            header { a href="/matches" { "Mau Mau Arena" } b { (title) } span.rules { (rules) } }
            p.note { "The operator deleted this match's replay; its result stays." }
        };
        return (
            StatusCode::OK,
            HTML,
            shell(&title, body).into_string(),
            None,
        );
    }
    let live = entry.replay().is_none();
    // A sealed match offers no other perspective than the one it is shown in, as a live one.
    let sealed = !live && entry.sealed();
    let frames_url = format!("/matches/{}/frames", encode(&entry.id));
    let mut own_query = Vec::new();
    if let Some(v) = q.view {
        own_query.push(format!("view={}", encode(&view_value(v))));
    }
    if let Some(t) = &q.token {
        own_query.push(format!("token={}", encode(t)));
    }
    let own_query = if own_query.is_empty() {
        String::new()
    } else {
        format!("?{}", own_query.join("&"))
    };
    let seats = summary
        .players
        .len()
        .max(summary.config.as_ref().map_or(0, |c| c.seats as usize));
    let choices: Vec<(String, String)> = every_perspective(seats)
        .map(|p| (view_value(p), perspective_label(p)))
        .collect();
    let chosen = q.view.map_or("omniscient".to_string(), view_value);
    // While the match is played the page follows it, as a spectator sees it (or as the seat
    // whose token is in the query): no perspective to switch to until it ends. A token shows
    // its own view only, so with one there is none to switch to either.
    let choices =
        (!live && !sealed && q.token.is_none()).then_some((choices.as_slice(), chosen.as_str()));
    let body = viewer_body(
        &title,
        &rules,
        html! {
            @if sealed {
                p.note {
                    "Sealed: every hand is shown once the operator reveals this match."
                }
            }
            @if live {
                p.note #live {
                    "Live: this match is being played. The page follows it move by move, as "
                    "a spectator sees it; every hand is shown when it ends."
                }
            }
            main #viewer data-frames-url=(frames_url) data-query=(own_query) data-live[live] {
                (viewer_parts(choices))
            }
            script { (PreEscaped(SCRIPT)) }
        },
    );
    (
        StatusCode::OK,
        HTML,
        shell(&title, body).into_string(),
        None,
    )
}

/// The options for people: `default options` or `options deck32,nine_reverses` (the viewer's
/// rules line and the tournament report's).
pub fn options_words(words: &str) -> String {
    if words == "-" {
        "default options".to_string()
    } else {
        format!("options {words}")
    }
}

/// Every way of seeing a match of `seats` seats: every hand, a spectator's, then each seat's.
pub fn every_perspective(seats: usize) -> impl Iterator<Item = Perspective> {
    [Perspective::Omniscient, Perspective::Public]
        .into_iter()
        .chain((0..seats as u8).map(Perspective::Seat))
}

/// A perspective in the viewer's switch.
fn perspective_label(p: Perspective) -> String {
    match p {
        Perspective::Omniscient => "every hand".into(),
        Perspective::Public => "public (a spectator's)".into(),
        Perspective::Seat(s) => format!("as seat {s} saw it"),
    }
}

/// A perspective as the `view` query value.
fn view_value(p: Perspective) -> String {
    match p {
        Perspective::Omniscient => "omniscient".into(),
        Perspective::Public => "public".into(),
        Perspective::Seat(s) => s.to_string(),
    }
}

/// "classic · 3 seats · options - · calls enforce", and whether it is rated and its label.
fn rules_line(summary: &pb::MatchSummary) -> String {
    let Some(c) = summary
        .config
        .as_ref()
        .and_then(|c| maumau_engine::MatchConfig::try_from(c).ok())
    else {
        return String::new();
    };
    let mut line = format!(
        "{} · {} seats · {} · calls {}",
        c.profile,
        c.seats,
        options_words(&c.options.to_words()),
        c.calls.name()
    );
    if summary.rated {
        line.push_str(" · rated");
    }
    if !summary.label.is_empty() {
        line.push_str(&format!(" · {}", summary.label));
    }
    line
}

/// The header and the viewer's parts.
fn viewer_body(title: &str, rules: &str, main: Markup) -> Markup {
    html! {
        header {
            a href="/matches" { "Mau Mau Arena" }
            b { (title) }
            span.rules { (rules) }
        }
        (main)
    }
}

/// The table, the step, the move list and the controls (with a perspective switch when
/// `choices` are given: the values and labels, and the one chosen).
fn viewer_parts(choices: Option<(&[(String, String)], &str)>) -> Markup {
    html! {
        div.board {
        section.felt aria-label="the table" {
            div #seats {}
            div.centre {
                div.stockpile { span.card.back {} span { "stock " b #stock { "–" } } }
                div.pile #discard aria-label="discard pile" {}
                dl.facts {
                    dt { "round" } dd #round { "–" }
                    dt { "to move" } dd #turn { "–" }
                    div.clock #deadline-box hidden { dt { "time left" } dd #deadline { "–" } }
                    dt { "named suit" } dd #named { "–" }
                    div #debt-box style="display:contents" { dt { "7-debt" } dd #debt { "0" } }
                    dt { "direction" } dd #direction { "–" }
                    dt { "perspective" } dd #perspective-now { "–" }
                }
                span #top hidden {}
            }
            div.step {
                p #line { "Loading…" }
                div #think {}
                ul #notes {}
                ul #refused aria-label="refused messages" {}
                div #offence {}
                div #legal {}
                div #round-end {}
                section.result-card #result-card aria-label="the match's result" hidden {}
            }
        }
        nav.controls aria-label="playback" {
            button #first type="button" title="the start (Home)" { "« start" }
            button #back type="button" title="one event back (←)" { "◀ back" }
            button #play type="button" title="play or pause (space)" aria-pressed="false" { "▶ play" }
            button #forward type="button" title="one event forward (→)" { "next ▶" }
            button #last type="button" title="the end (End)" { "end »" }
            button #to-result type="button" title="jump to the match's result" hidden { "jump to result »" }
            input #scrub type="range" min="0" max="0" value="0" aria-label="event";
            span #where { "0 / 0" }
            select #speed aria-label="speed" {
                option value="1500" { "slow" }
                option value="700" selected { "normal" }
                option value="250" { "fast" }
            }
            @if let Some((choices, chosen)) = choices {
                select #perspective aria-label="perspective" {
                    @for (value, label) in choices {
                        option value=(value) selected[value == chosen] { (label) }
                    }
                }
            }
        }
        }
        aside aria-label="moves" { h2 { "Moves" } ol #moves {} }
    }
}

/// A whole page around `body`, with the viewer's style.
fn shell(title: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Mau Mau Arena" }
                link rel="icon" href="data:,";
                style { (PreEscaped(STYLE)) }
            }
            body {
                (body)
            }
        }
    }
}

/// The viewer with `viewing`'s frames inside the page: one file that opens offline (from
/// `file://`) at its first event (the result is one click away, not a spoiler), or at the event
/// its `#e=N` names. `names` are the players'
/// names by seat (empty: the seats are shown by number only).
///
/// `views` are the perspectives the file holds, the first shown at first; with more than one
/// the page offers a switch between them (everything is inside the file: it works offline).
pub fn standalone_page(views: &[Viewing], names: &[String]) -> String {
    let Some(viewing) = views.first() else {
        return String::new();
    };
    // JSON inside a script element: `<` escaped so no `</script>` can end it early.
    let blocks: Vec<(String, String)> = views
        .iter()
        .map(|v| {
            let json = with_names(v, names, false)
                .to_string()
                .replace('<', "\\u003c");
            (view_value(v.perspective), json)
        })
        .collect();
    let choices: Vec<(String, String)> = views
        .iter()
        .map(|v| (view_value(v.perspective), perspective_label(v.perspective)))
        .collect();
    let chosen = view_value(viewing.perspective);
    let switch = (views.len() > 1).then_some((choices.as_slice(), chosen.as_str()));
    let title = if viewing.match_id.is_empty() {
        "A replay".to_string()
    } else {
        format!("Match {}", viewing.match_id)
    };
    let rules = format!(
        "{} · {} seats · {} · calls {}",
        viewing.profile,
        viewing.seats,
        options_words(&viewing.options),
        viewing.calls
    );
    let body = html! {
        header { b { (title) } span.rules { (rules) } }
        main #viewer {
            (viewer_parts(switch))
        }
        @for (view, json) in &blocks {
            script.frames type="application/json" data-view=(view) { (PreEscaped(json)) }
        }
        script { (PreEscaped(SCRIPT)) }
    };
    shell(&title, body).into_string()
}

/// The newest matches, each linked to its viewer.
async fn list(registry: &Arc<Registry>) -> String {
    let (matches, _) = registry.list(0, LISTED, None).await;
    let body = html! {
        header { b { "Mau Mau Arena" } span.rules { "matches on this server, newest first" } }
        @if matches.is_empty() {
            p.note { "No matches yet." }
        } @else {
            table.matches {
                thead { tr { th { "match" } th { "status" } th { "rules" } th { "players" } th { "round" } th { "moves" } } }
                tbody {
                    @for m in &matches {
                        tr {
                            td data-label="match" { a.view href={ "/matches/" (encode(&m.match_id)) "/view" } { (m.match_id) } }
                            td data-label="status" { (status_word(m.status)) }
                            td data-label="rules" { (rules_line(m)) }
                            td data-label="players" { (m.players.iter().map(|p| format!("S{} {}", p.seat, player_name(p))).collect::<Vec<_>>().join(", ")) }
                            td data-label="round" { (m.round) }
                            td data-label="moves" { (m.actions) }
                        }
                    }
                }
            }
        }
    };
    shell("Matches", body).into_string()
}

fn status_word(status: i32) -> String {
    pb::MatchStatus::try_from(status)
        .map(|s| {
            s.as_str_name()
                .trim_start_matches("MATCH_STATUS_")
                .to_lowercase()
        })
        .unwrap_or_default()
}
