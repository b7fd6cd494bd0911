//! The ladder's web pages: server-rendered HTML that needs no JavaScript, on the gRPC port.
//!
//! In ladder mode every `GET` or `HEAD` request that is not gRPC (or grpc-web, which is always a
//! `POST`) comes here instead of tonic's routes ([`Pages`], through the server's `Extension`):
//!
//! - `/` and `/ladder`: the leaderboard of a season and profile (`?season=NAME&profile=NAME`,
//!   defaults: the open season and the first format's profile), ranked bots first, then a
//!   provisional section, paged (`&page=N`, 1-based; `&per_page=N`, 1 to 500, default 100).
//!   Each line: rank, bot, version, score (μ − 3σ), 95% interval of μ, matches, win rate,
//!   average placing and timeouts (over the version's finished rated matches in the season and
//!   profile), with a note on what the score (μ − 3σ) and the interval mean. Links to every
//!   season and profile. A closed season is frozen: it shows every version rated in it (retired
//!   since or not), as it stood at the close; bans still hide.
//! - `/ladder/bots/{id}` (`?season=NAME`): the bot, its owner, its versions with status, whether
//!   each is online and why it waits, ratings in the season with a rating plot per profile (an
//!   SVG drawn here: μ after each rating event with its 95% interval), validation verdicts, and
//!   each version's newest matches (result, opponents, timeouts, viewer and replay links).
//! - `/ladder/matches/{id}`: a ladder match: season, profile, state, times, seats (bot, version,
//!   placing, joined, timeouts), the server's match viewer, embedded (`/matches/{server id}/view`:
//!   public information while it is played) and, once it has ended, its seed, a replay link and
//!   its rounds with each seat's points and totals (from the server's record).
//! - `/ladder/replays/{id}`: the replay of ladder match `id` as a file
//!   (`ladder-match-{id}.replay`): the protobuf encoding of `maumau.v1.Replay`, exactly what
//!   `MatchService.GetReplay` returns and `VerifyReplay` (or `maumau replay FILE`) checks.
//!
//! On a ladder of several nodes each node keeps the tables it hosted: for a match another node
//! hosted, the links to its viewer and replay lead to that node's address (its
//! `ladder_node_address`), `/ladder/replays/{id}` redirects there (307), and the match page says
//! where its rounds are ([`TableAt`]). A node that stopped is named, not linked.
//!
//! House bots (the server's built-in bots kept on the ladder) carry a "house" badge wherever
//! their name appears.
//!
//! Every page is a `maud` template, as the match viewer's pages are. Unknown paths and ids get a
//! 404 page, a bad query string a 400 page. Everything from users (bot, owner, season and version
//! names, reasons) is escaped by maud (user text through [`Text`]), and every address built from
//! names goes through `percent-encoding`. Pages are built on a blocking
//! thread from the store; the time spent is sent in a `Server-Timing` header (`render;dur=ms`).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use maud::{DOCTYPE, Markup, PreEscaped, Render, html};
use maumau_engine::ProfileId;
use maumau_ladder::matchmaking::Format;
use maumau_ladder::store::{
    Host, MatchRecord, MatchState, PlacingStats, RatingEvent, Season, SeatHistory, Validation,
};
use maumau_ladder::{
    BotId, HOUSE_OWNER, Ladder, LadderError, Leaderboard, MatchId, Millis, OwnerId, Standing,
    Store, VersionId,
};
use prost::Message as _;
use tokio::sync::Semaphore;
use tonic::codegen::http::{self, HeaderValue, StatusCode, header};

use super::{Hub, lock, status_to_wire};

/// Lines per leaderboard page unless `per_page` says otherwise.
const PER_PAGE: usize = 100;
/// The most lines one page may ask for.
const MAX_PER_PAGE: usize = 500;
/// Matches shown per version on a bot page.
const HISTORY: usize = 50;
/// Pages rendered at once: each holds a blocking thread and reads the store the matchmaker and
/// the match records also use, so a flood of anonymous page views must queue, not crowd them out.
const RENDERS: usize = 2;
/// What a reader sees of a server-side failure (the detail is logged).
const INTERNAL: &str = "the server could not build this page; the failure is in its log";
/// How long a page view waits for a render slot before it gets 503.
const RENDER_WAIT: Duration = Duration::from_secs(5);
/// The content security policy of every ladder page: no scripts, no requests, inline styles only.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'";
/// The policy of a page that embeds the match viewer: [`CSP`] plus frames from this origin.
const CSP_WITH_VIEWER: &str = "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'";

/// The ladder's web pages: what the server's page requests (plain `GET` and `HEAD`) get.
pub(crate) struct Pages {
    hub: Arc<Hub>,
    names: Arc<Names>,
    renders: Arc<Semaphore>,
}

impl Pages {
    pub(crate) fn new(hub: Arc<Hub>) -> Pages {
        Pages {
            hub,
            names: Arc::default(),
            renders: Arc::new(Semaphore::new(RENDERS)),
        }
    }

    /// The response to a page request for `uri`.
    pub(crate) fn answer(
        &self,
        uri: &http::Uri,
        head: bool,
    ) -> maumau_server::BoxFuture<'static, http::Response<tonic::body::Body>> {
        let (hub, names) = (self.hub.clone(), self.names.clone());
        let renders = self.renders.clone();
        let uri = uri.clone();
        Box::pin(async move { respond(hub, names, &renders, &uri, head).await })
    }
}

/// What a request gets.
enum Page {
    /// A page (200).
    Html(String),
    /// A page (200) that embeds the server's match viewer (same origin) in an iframe: its policy
    /// allows that frame and nothing else more.
    HtmlWithViewer(String),
    /// A replay file (200).
    File { name: String, bytes: Vec<u8> },
    /// What is asked for is at this address, on another node (307).
    Elsewhere(String),
    /// An error page with its status.
    Error(StatusCode, String),
}

impl Page {
    fn not_found(what: impl Into<String>) -> Page {
        Page::Error(StatusCode::NOT_FOUND, what.into())
    }

    fn bad_request(what: impl Into<String>) -> Page {
        Page::Error(StatusCode::BAD_REQUEST, what.into())
    }
}

impl From<LadderError> for Page {
    fn from(e: LadderError) -> Page {
        match e {
            LadderError::NotFound { .. } => Page::not_found(e.to_string()),
            LadderError::Invalid(_) => Page::bad_request(e.to_string()),
            // Logged once per outage (see `nodes.rs`), not per page.
            LadderError::Unavailable(_) => Page::Error(
                StatusCode::SERVICE_UNAVAILABLE,
                super::STORE_UNAVAILABLE.into(),
            ),
            LadderError::Busy(_) => {
                Page::Error(StatusCode::SERVICE_UNAVAILABLE, super::STORE_BUSY.into())
            }
            e => {
                // The detail (store messages, paths) goes to the log, not to anonymous readers.
                tracing::error!(error = %e, "a ladder page failed");
                Page::Error(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL.into())
            }
        }
    }
}

async fn respond(
    hub: Arc<Hub>,
    names: Arc<Names>,
    renders: &Semaphore,
    uri: &http::Uri,
    head: bool,
) -> http::Response<tonic::body::Body> {
    let started = Instant::now();
    let page = match route(uri) {
        Ok(route) => {
            let ladder = lock(&hub.ladder).clone();
            let permit = tokio::time::timeout(RENDER_WAIT, renders.acquire()).await;
            match (ladder, permit) {
                (None, _) | (_, Ok(Err(_))) => Page::Error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the ladder is shutting down".into(),
                ),
                (_, Err(_)) => Page::Error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the ladder's pages are busy; try again in a moment".into(),
                ),
                (Some(ladder), Ok(Ok(_permit))) => {
                    let hub = hub.clone();
                    tokio::task::spawn_blocking(move || render(&hub, &names, &ladder, route))
                        .await
                        .unwrap_or_else(|e| {
                            tracing::error!(error = %e, "a ladder page panicked");
                            Page::Error(StatusCode::INTERNAL_SERVER_ERROR, INTERNAL.into())
                        })
                }
            }
        }
        Err(page) => page,
    };
    let took = started.elapsed();
    let location = match &page {
        Page::Elsewhere(url) => HeaderValue::from_str(url).ok(),
        _ => None,
    };
    let (status, content_type, body, disposition, csp) = match page {
        Page::Html(html) => (
            StatusCode::OK,
            "text/html; charset=utf-8",
            html.into(),
            None,
            CSP,
        ),
        Page::HtmlWithViewer(html) => (
            StatusCode::OK,
            "text/html; charset=utf-8",
            html.into(),
            None,
            CSP_WITH_VIEWER,
        ),
        Page::File { name, bytes } => (
            StatusCode::OK,
            "application/octet-stream",
            bytes,
            Some(format!("attachment; filename=\"{name}\"")),
            CSP,
        ),
        Page::Error(status, message) => (
            status,
            "text/html; charset=utf-8",
            error_page(status, &message).into(),
            None,
            CSP,
        ),
        Page::Elsewhere(url) => (
            StatusCode::TEMPORARY_REDIRECT,
            "text/html; charset=utf-8",
            error_page(StatusCode::TEMPORARY_REDIRECT, &format!("it is at {url}")).into(),
            None,
            CSP,
        ),
    };

    let body = if head {
        tonic::body::Body::empty()
    } else {
        tonic::body::Body::new(http_body_util::Full::new(Bytes::from(body)))
    };
    let mut response = http::Response::new(body);
    *response.status_mut() = status;
    let h = response.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(csp),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some(d) = disposition.and_then(|d| HeaderValue::from_str(&d).ok()) {
        h.insert(header::CONTENT_DISPOSITION, d);
    }
    if let Some(l) = location {
        h.insert(header::LOCATION, l);
    }
    if let Ok(v) = HeaderValue::from_str(&format!("render;dur={:.3}", took.as_secs_f64() * 1e3)) {
        h.insert("server-timing", v);
    }
    response
}

// ----- routes and queries -----

/// A page asked for, with its checked query.
#[derive(Debug)]
enum Route {
    Leaderboard {
        season: Option<String>,
        profile: Option<String>,
        page: usize,
        per_page: usize,
    },
    Bot {
        id: BotId,
        season: Option<String>,
    },
    Match(MatchId),
    Replay(MatchId),
}

fn route(uri: &http::Uri) -> Result<Route, Page> {
    let path = uri.path();
    let query = parse_query(uri.query().unwrap_or(""))?;
    let id = |s: &str, what: &str| -> Result<i64, Page> {
        s.parse::<i64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| Page::not_found(format!("no {what} {s:?}")))
    };
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').skip(1).collect();
    let route = match segments.as_slice() {
        [] | ["ladder"] => {
            let q = query.only(&["season", "profile", "page", "per_page"])?;
            let number = |key: &str, default: usize, max: usize| -> Result<usize, Page> {
                match q.get(key) {
                    None => Ok(default),
                    Some(v) => v
                        .parse::<usize>()
                        .ok()
                        .filter(|n| (1..=max).contains(n))
                        .ok_or_else(|| {
                            Page::bad_request(format!(
                                "{key} must be a number from 1 to {max}, not {v:?}"
                            ))
                        }),
                }
            };
            let page = number("page", 1, usize::MAX)?;
            let per_page = number("per_page", PER_PAGE, MAX_PER_PAGE)?;
            let profile = q.get("profile").map(str::to_string);
            if let Some(p) = &profile
                && p.parse::<ProfileId>().is_err()
            {
                return Err(Page::bad_request(format!("unknown profile {p:?}")));
            }
            Route::Leaderboard {
                season: q.get("season").map(str::to_string),
                profile,
                page,
                per_page,
            }
        }
        ["ladder", "bots", n] => {
            let q = query.only(&["season"])?;
            Route::Bot {
                id: BotId(id(n, "bot")?),
                season: q.get("season").map(str::to_string),
            }
        }
        ["ladder", "matches", n] => {
            query.only(&[])?;
            Route::Match(MatchId(id(n, "match")?))
        }
        ["ladder", "replays", n] => {
            query.only(&[])?;
            Route::Replay(MatchId(id(n, "match")?))
        }
        _ => return Err(Page::not_found(format!("no page at {path}"))),
    };
    Ok(route)
}

/// A decoded query string.
struct Query(Vec<(String, String)>);

impl Query {
    /// Refuses keys outside `allowed` and repeated keys.
    fn only(&self, allowed: &[&str]) -> Result<&Query, Page> {
        for (i, (k, _)) in self.0.iter().enumerate() {
            if !allowed.contains(&k.as_str()) {
                return Err(Page::bad_request(if allowed.is_empty() {
                    "this page takes no query".to_string()
                } else {
                    format!(
                        "unknown query key {k:?} (this page takes {})",
                        allowed.join(", ")
                    )
                }));
            }
            if self.0[..i].iter().any(|(j, _)| j == k) {
                return Err(Page::bad_request(format!("{k:?} is given twice")));
            }
        }
        Ok(self)
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn parse_query(q: &str) -> Result<Query, Page> {
    let mut out = Vec::new();
    for pair in q.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        out.push((percent_decode(k)?, percent_decode(v)?));
    }
    Ok(Query(out))
}

/// Decodes a query key or value with the crate; a form's `+` is a space (an encoded plus, `%2B`,
/// stays a plus).
fn percent_decode(s: &str) -> Result<String, Page> {
    let bad = || Page::bad_request("the query is not valid percent-encoded UTF-8");
    // The crate passes a malformed escape through as text; a query with one is refused.
    let escapes_whole = s.split('%').skip(1).all(|after| {
        after
            .as_bytes()
            .get(..2)
            .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    if !escapes_whole {
        return Err(bad());
    }
    percent_encoding::percent_decode_str(&s.replace('+', " "))
        .decode_utf8()
        .map(|v| v.into_owned())
        .map_err(|_| bad())
}

/// Characters escaped in a query value or path segment: all but the unreserved ones.
const COMPONENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Percent-encodes a query value or path segment (everything but unreserved characters).
fn percent_encode(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, COMPONENT).to_string()
}

// ----- rendering -----

fn render(hub: &Hub, names: &Names, ladder: &Ladder<dyn Store>, route: Route) -> Page {
    let result = match route {
        Route::Leaderboard {
            season,
            profile,
            page,
            per_page,
        } => {
            // The store's formats, not this node's copy: an operator may have set them
            // through another node.
            let formats = match super::formats_in(ladder.store(), &hub.settings.formats) {
                Ok(f) => f,
                Err(e) => return Page::from(e),
            };
            let profile = profile.unwrap_or_else(|| {
                formats
                    .first()
                    .map_or_else(|| "classic".into(), |f| f.profile.clone())
            });
            leaderboard_page(
                ladder,
                names,
                &formats,
                season.as_deref(),
                &profile,
                page,
                per_page,
            )
        }
        Route::Bot { id, season } => bot_page(hub, names, ladder, id, season.as_deref()),
        Route::Match(id) => match_page(hub, names, ladder, id),
        Route::Replay(id) => replay_file(hub, ladder, id),
    };
    result.unwrap_or_else(Page::from)
}

/// The season named `name`, or the open one (else the newest) when there is no name.
fn pick_season(seasons: &[Season], name: Option<&str>) -> Result<Season, LadderError> {
    let found = match name {
        None => seasons
            .iter()
            .find(|s| s.closed_ms.is_none())
            .or(seasons.last()),
        Some(name) => seasons.iter().find(|s| s.name == name),
    };
    found.cloned().ok_or_else(|| LadderError::NotFound {
        what: "season",
        id: name.unwrap_or("(none yet)").to_string(),
    })
}

/// The board of a season and profile, each bot once with its best version by score, established
/// versions first; banned versions, bots and owners left out. In the open season only active
/// versions count (as in [`Ladder::leaderboard`], which gives the same board one store read per
/// line); a closed season is frozen: every version rated in it counts, retired since or not.
/// Names come from the cache, so a board costs four store reads.
fn season_board(
    ladder: &Ladder<dyn Store>,
    names: &Names,
    season: &Season,
    profile: &str,
) -> Result<Leaderboard, LadderError> {
    use maumau_ladder::store::{SanctionKind, SanctionTarget as T};
    let store = ladder.store();
    let active: Option<HashSet<VersionId>> = match season.closed_ms {
        None => Some(store.active_versions()?.iter().map(|v| v.version).collect()),
        Some(_) => None,
    };
    let banned: HashSet<T> = store
        .active_sanctions()?
        .into_iter()
        .filter(|s| s.kind == SanctionKind::Ban)
        .map(|s| s.target)
        .collect();
    let mut best: HashMap<BotId, (bool, Standing)> = HashMap::new();
    for row in store.ratings(season.id)? {
        if row.profile != profile
            || row.state.matches == 0
            || active.as_ref().is_some_and(|a| !a.contains(&row.version))
        {
            continue;
        }
        let name = names.get(store, row.version)?;
        if banned.contains(&T::Version(row.version))
            || banned.contains(&T::Bot(name.bot))
            || banned.contains(&T::Owner(name.owner))
        {
            continue;
        }
        let provisional = row.state.is_provisional(&ladder.config().rating);
        let r = row.state.rating;
        if best
            .get(&name.bot)
            .is_none_or(|(p, s)| (provisional, -r.score()) < (*p, -s.score))
        {
            best.insert(
                name.bot,
                (
                    provisional,
                    Standing {
                        rank: 0,
                        bot: name.bot,
                        bot_name: name.bot_name,
                        version: row.version,
                        label: name.label,
                        rating: r,
                        score: r.score(),
                        interval95: r.interval95(),
                        matches: row.state.matches,
                    },
                ),
            );
        }
    }
    Ok(Leaderboard::rank(best.into_values()))
}

/// The leaderboard's address for a season, profile and page (defaults left out).
fn leaderboard_url(season: &str, profile: &str, page: usize, per_page: usize) -> String {
    let mut url = format!(
        "/ladder?season={}&profile={}",
        percent_encode(season),
        percent_encode(profile)
    );
    if page > 1 {
        url += &format!("&page={page}");
    }
    if per_page != PER_PAGE {
        url += &format!("&per_page={per_page}");
    }
    url
}

/// A bot page's address, in a season or the default one.
fn bot_url(bot: BotId, season: Option<&str>) -> String {
    match season {
        Some(s) => format!("/ladder/bots/{bot}?season={}", percent_encode(s)),
        None => format!("/ladder/bots/{bot}"),
    }
}

/// The match viewer's address for a server match.
fn viewer_url(server_id: &str) -> String {
    format!("/matches/{}/view", percent_encode(server_id))
}

/// A link to `href` showing `text`, marked as the page shown when `current`.
fn nav_link(href: &str, text: &str, current: bool) -> Markup {
    html! {
        @if current {
            a href=(href) class="current" aria-current="page" { (Text(text)) }
        } @else {
            a href=(href) { (Text(text)) }
        }
    }
}

fn leaderboard_page(
    ladder: &Ladder<dyn Store>,
    names: &Names,
    formats: &[Format],
    season: Option<&str>,
    profile: &str,
    page: usize,
    per_page: usize,
) -> Result<Page, LadderError> {
    let store = ladder.store();
    let seasons = store.seasons()?;
    let season = pick_season(&seasons, season)?;
    let board = season_board(ladder, names, &season, profile)?;
    let stats: HashMap<VersionId, PlacingStats> = store
        .placing_stats(season.id, profile)?
        .into_iter()
        .map(|s| (s.version, s))
        .collect();

    let house = house_bots(ladder)?;
    let total = board.ranked.len() + board.provisional.len();
    let pages = total.div_ceil(per_page).max(1);
    if page > pages {
        return Ok(Page::not_found(format!(
            "page {page} of a leaderboard with {pages} page(s)"
        )));
    }
    let start = (page - 1) * per_page;
    let end = (start + per_page).min(total);

    let in_page = |i: usize| (start..end).contains(&i);
    let ranked: Vec<&Standing> = board
        .ranked
        .iter()
        .enumerate()
        .filter(|(i, _)| in_page(*i))
        .map(|(_, s)| s)
        .collect();
    let provisional: Vec<&Standing> = board
        .provisional
        .iter()
        .enumerate()
        .filter(|(i, _)| in_page(board.ranked.len() + i))
        .map(|(_, s)| s)
        .collect();
    let rating = &ladder.config().rating;
    let body = html! {
        h1 { "Leaderboard" }
        p class="where" {
            "Season " strong { (Text(&season.name)) } ", profile " strong { (Text(profile)) }
            @match season.closed_ms {
                Some(t) => { " — closed " (format_time(t)) ", frozen: the standings at the close." }
                None => { " — open." }
            }
        }
        nav.seasons {
            "Seasons:"
            @for s in seasons.iter().rev() {
                " " (nav_link(&leaderboard_url(&s.name, profile, 1, per_page), &s.name, s.id == season.id))
                @if s.closed_ms.is_none() { " (open)" }
            }
        }
        nav.profiles {
            "Profiles:"
            @for p in ProfileId::ALL {
                " " (nav_link(&leaderboard_url(&season.name, p.name(), 1, per_page), p.name(), p.name() == profile))
            }
        }
        (formats_note(formats))
        (score_note())
        section #ranked {
            h2 { "Ranked" }
            @if board.ranked.is_empty() {
                p { "No bot has an established rating yet." }
            } @else if !ranked.is_empty() {
                (standings_table(&ranked, &stats, &season.name, &house))
            } @else {
                p { "On earlier pages." }
            }
        }
        section #provisional {
            h2 { "Provisional" }
            p.note {
                "Fewer than " (rating.provisional_matches) " rated matches and σ at least "
                (rating.provisional_sigma) ": ranked among themselves."
            }
            @if board.provisional.is_empty() {
                p { "None." }
            } @else if !provisional.is_empty() {
                (standings_table(&provisional, &stats, &season.name, &house))
            } @else {
                p { "On later pages." }
            }
        }
        nav.pages {
            "Page " (page) " of " (pages) " (" (total) " bots)."
            @if page > 1 {
                " " a rel="prev" href=(leaderboard_url(&season.name, profile, page - 1, per_page)) { "Previous" }
            }
            @if page < pages {
                " " a rel="next" href=(leaderboard_url(&season.name, profile, page + 1, per_page)) { "Next" }
            }
        }
    };
    Ok(Page::Html(document(
        &format!("Leaderboard: {} · {profile}", season.name),
        body,
    )))
}

/// What the matchmaker makes, for bot authors choosing what to offer in their lobby: each
/// profile with its table sizes, and each format's share of the weights when they differ.
fn formats_note(formats: &[Format]) -> Markup {
    let on: Vec<&Format> = formats.iter().filter(|f| f.weight > 0.0).collect();
    let total: f64 = on.iter().map(|f| f.weight).sum();
    let equal = on.windows(2).all(|w| w[0].weight == w[1].weight);
    // By profile, in the order the formats name them.
    let mut profiles: Vec<(&str, Vec<&Format>)> = Vec::new();
    for f in &on {
        match profiles.iter_mut().find(|(p, _)| *p == f.profile) {
            Some((_, fs)) => fs.push(f),
            None => profiles.push((&f.profile, vec![f])),
        }
    }
    let sizes = |fs: &[&Format]| -> String {
        let parts: Vec<String> = fs
            .iter()
            .map(|f| {
                if equal {
                    f.seats.to_string()
                } else {
                    format!("{} seats ({:.0}%)", f.seats, 100.0 * f.weight / total)
                }
            })
            .collect();
        match parts.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => parts.concat(),
        }
    };
    html! {
        p.note.formats-note {
            "Tables made: "
            @for (i, (profile, fs)) in profiles.iter().enumerate() {
                @if i > 0 { "; " }
                strong { (Text(profile)) } " at " (sizes(fs)) @if equal { " seats" }
            }
            "."
            @if !equal { " The percentages are the shares of the tables aimed for." }
            " A lobby that offers none of them waits."
        }
    }
}

fn standings_table(
    lines: &[&Standing],
    stats: &HashMap<VersionId, PlacingStats>,
    season: &str,
    house: &HashSet<BotId>,
) -> Markup {
    html! {
        table.standings {
            thead {
                tr {
                    th { "Rank" } th { "Bot" } th { "Version" }
                    th title="μ − 3σ: the rating the ladder is 99.9% sure the bot has at least" { "Score (μ − 3σ)" }
                    th title="μ ± 1.96σ" { "95% interval of μ" }
                    th { "Matches" } th { "Win rate" } th { "Avg placing" } th { "Timeouts" }
                }
            }
            tbody {
                @for s in lines {
                    @let is_house = house.contains(&s.bot);
                    tr.standing.house[is_house] data-bot=(s.bot) data-version=(s.version) data-house=(is_house) {
                        td.rank { (s.rank) }
                        td {
                            a.bot href=(bot_url(s.bot, Some(season))) { (Text(&s.bot_name)) }
                            @if is_house { (house_badge()) }
                        }
                        td { (Text(&s.label)) }
                        td.score { (format!("{:.2}", s.score)) }
                        td { (format!("{:.2} – {:.2}", s.interval95.0, s.interval95.1)) }
                        td { (s.matches) }
                        @match stats.get(&s.version).filter(|p| p.matches > 0) {
                            Some(p) => {
                                @let n = f64::from(p.matches);
                                td { (format!("{:.1}%", 100.0 * f64::from(p.wins) / n)) }
                                td { (format!("{:.2}", p.placing_sum as f64 / n)) }
                                td { (p.timeouts) }
                            }
                            None => { td { "–" } td { "–" } td { "–" } }
                        }
                    }
                }
            }
        }
    }
}

fn bot_page(
    hub: &Hub,
    names: &Names,
    ladder: &Ladder<dyn Store>,
    id: BotId,
    season: Option<&str>,
) -> Result<Page, LadderError> {
    let store = ladder.store();
    let bot = store.bot(id)?;
    let owner = store.owner(bot.owner)?;
    let is_house = ladder.is_house(owner.id)?;
    let house = house_bots(ladder)?;
    let seasons = store.seasons()?;
    let season = pick_season(&seasons, season)?;
    let ratings = store.ratings(season.id)?;
    let versions = store.versions_of(bot.id)?;
    let events = store.rating_events(season.id)?;
    let profile = ratings
        .iter()
        .find(|r| versions.iter().any(|v| v.id == r.version))
        .map_or("classic", |r| r.profile.as_str());

    let mut sections = Vec::new();
    for v in &versions {
        let (status, reason) = status_to_wire(&ladder.eligibility(v.id)?);
        let status = status
            .as_str_name()
            .trim_start_matches("VERSION_STATUS_")
            .to_lowercase();
        let mine: Vec<_> = ratings.iter().filter(|r| r.version == v.id).collect();
        let validations = store.validations_of(v.id)?;
        let history = store
            .seat_history(v.id, None, HISTORY)?
            .iter()
            .map(|e| history_row(hub, names, ladder, &house, v.id, e))
            .collect::<Result<Vec<Markup>, LadderError>>()?;
        sections.push(html! {
            section.version id={ "v" (v.id) } {
                h2 { "Version " (Text(&v.label)) }
                p {
                    "Added " (format_time(v.created_ms)) ". Status: " (status)
                    @if !reason.is_empty() { " (" (Text(&reason)) ")" }
                    "."
                }
                @if !is_house { (lobby_state(hub.waiting_of(v.id), lobby_at(hub, v.id))) }
                @if mine.is_empty() {
                    p { "No rated match in this season." }
                } @else {
                    table.ratings {
                        thead {
                            tr {
                                th { "Profile" } th { "Score (μ − 3σ)" } th { "μ" } th { "σ" }
                                th { "95% interval of μ" } th { "Matches" } th {}
                            }
                        }
                        tbody {
                            @for r in &mine {
                                @let s = r.state.rating;
                                @let (low, high) = s.interval95();
                                tr {
                                    td { (nav_link(&leaderboard_url(&season.name, &r.profile, 1, PER_PAGE), &r.profile, false)) }
                                    td { (format!("{:.2}", s.score())) }
                                    td { (format!("{:.2}", s.mu)) }
                                    td { (format!("{:.2}", s.sigma)) }
                                    td { (format!("{low:.2} – {high:.2}")) }
                                    td { (r.state.matches) }
                                    td { @if r.state.is_provisional(&ladder.config().rating) { "provisional" } }
                                }
                            }
                        }
                    }
                    @for r in &mine {
                        @let history: Vec<&RatingEvent> = events
                            .iter()
                            .filter(|e| e.change.version == v.id && e.change.profile == r.profile)
                            .collect();
                        (rating_plot(v.id, &r.profile, &history))
                    }
                }
                @if !validations.is_empty() { (validations_table(hub, &validations)) }
                @if history.is_empty() {
                    p { "No match played yet." }
                } @else {
                    h3 { "Newest matches (at most " (HISTORY) ")" }
                    table.history {
                        thead {
                            tr {
                                th { "Match" } th { "Ended" } th { "Profile" } th { "State" }
                                th { "Result" } th { "Opponents" } th { "Timeouts" }
                                th { "Rejections" } th { "Watch" } th { "Replay" }
                            }
                        }
                        tbody { @for row in &history { (row) } }
                    }
                }
            }
        });
    }
    let body = html! {
        h1 { "Bot " span.name { (Text(&bot.name)) } @if is_house { (house_badge()) } }
        @if is_house { (house_note()) }
        p {
            "Owner " (Text(&owner.name)) ", registered " (format_time(bot.created_ms))
            ". Ratings of season " strong { (Text(&season.name)) } ". "
            (nav_link(&leaderboard_url(&season.name, profile, 1, PER_PAGE), "Leaderboard", false))
        }
        nav.seasons {
            "Seasons:"
            @for s in seasons.iter().rev() {
                " " (nav_link(&bot_url(bot.id, Some(&s.name)), &s.name, s.id == season.id))
            }
        }
        @for s in &sections { (s) }
        @if versions.is_empty() { p { "No version yet." } }
    };
    Ok(Page::Html(document(&format!("Bot {}", bot.name), body)))
}

/// One of a version's newest matches on its bot page: result, opponents, timeouts, links.
fn history_row(
    hub: &Hub,
    names: &Names,
    ladder: &Ladder<dyn Store>,
    house: &HashSet<BotId>,
    version: VersionId,
    e: &SeatHistory,
) -> Result<Markup, LadderError> {
    let store = ladder.store();
    let m = store.match_record(e.match_id)?;
    let placing = m
        .seats
        .iter()
        .find(|s| s.version == version)
        .and_then(|s| s.placing);
    let opponents = m
        .seats
        .iter()
        .filter(|s| s.version != version)
        .map(|s| names.get(store, s.version))
        .collect::<Result<Vec<Name>, LadderError>>()?;
    Ok(html! {
        tr class="match" data-joined=(e.outcome.joined) {
            td { a class="match" href={ "/ladder/matches/" (m.id) } { "#" (m.id) } }
            td { (format_time(e.ended_ms)) }
            td { (Text(&m.profile)) }
            td { (m.state.as_str()) @if !m.rated { " (unrated)" } }
            td.result {
                @match placing {
                    Some(1) => { "won (1 of " (m.seats.len()) ")" }
                    Some(p) => { (p) " of " (m.seats.len()) }
                    None if !e.invited => { "not played (no invitation was sent)" }
                    None if !e.outcome.joined => { "did not join" }
                    None => { "–" }
                }
            }
            td {
                @for (i, n) in opponents.iter().enumerate() {
                    @if i > 0 { ", " }
                    a href=(bot_url(n.bot, None)) { (Text(&n.bot_name)) }
                    @if house.contains(&n.bot) { (house_badge()) }
                }
                @if opponents.is_empty() && !m.rated { "copies of itself and built-in bots" }
            }
            td.timeouts { (e.outcome.timeouts) }
            td.rejections { (e.outcome.rejections) }
            td { (viewer_link(hub, &m)) }
            td { (replay_link(hub, &m)) }
        }
    })
}

/// The bots of the house owner (none when the ladder never had house bots).
fn house_bots(ladder: &Ladder<dyn Store>) -> Result<HashSet<BotId>, LadderError> {
    Ok(match ladder.house_owner()? {
        Some(o) => ladder
            .store()
            .bots_of(o)?
            .into_iter()
            .map(|b| b.id)
            .collect(),
        None => HashSet::new(),
    })
}

/// The mark of a house bot, after its name.
fn house_badge() -> Markup {
    html! {
        " " span.house title="a house bot: one of the server's built-in bots, kept on the ladder by its operator" { "house" }
    }
}

/// What a house bot is, on its page.
fn house_note() -> Markup {
    html! {
        p.note.house-note {
            "A house bot: one of the server's built-in bots, kept on the ladder by its operator "
            "under the reserved owner " code { (HOUSE_OWNER) } ". It only fills tables a real bot "
            "would otherwise wait for, and its rating is a fixed anchor for everyone else's."
        }
    }
}

/// What the score column means, above the leaderboard.
fn score_note() -> Markup {
    html! {
        p.note.score-note {
            "Bots are ranked by their " strong { "score, μ − 3σ" } ": μ is the rating's mean, σ "
            "its uncertainty, so the score is a cautious estimate that rises as a bot plays and "
            "σ shrinks. The " strong { "95% interval" } " is μ ± 1.96σ: where the bot's true μ "
            "lies, 19 times out of 20. Bots marked " span.house { "house" } " are the server's "
            "built-in bots."
        }
    }
}

/// Where a version's lobby is open.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LobbyAt {
    Here,
    /// On another live node of a shared ladder.
    OtherNode,
    Nowhere,
}

/// Where the version has a lobby open: on this server, or (on a shared ladder) on another live
/// node. Called on a blocking thread (it may read the shared store).
fn lobby_at(hub: &Hub, version: VersionId) -> LobbyAt {
    if lock(&hub.lobbies).open.contains_key(&version) {
        return LobbyAt::Here;
    }
    let elsewhere = hub.cluster.as_ref().is_some_and(|c| {
        c.pg.shared_lobbies(super::nodes::STALE_MS)
            .is_ok_and(|l| l.iter().any(|l| l.version == version))
    });
    if elsewhere {
        LobbyAt::OtherNode
    } else {
        LobbyAt::Nowhere
    }
}

/// The version's lobby: online and why it waits, or offline.
fn lobby_state(waiting: Option<maumau::pb::LobbyWaiting>, at: LobbyAt) -> Markup {
    html! {
        @if let Some(w) = waiting {
            p.lobby data-online="true" data-reason=(waiting_name(w.reason)) {
                "Online, waiting: " strong { (waiting_name(w.reason)) } " — " (w.detail)
                " (" (w.bots_online) " bot(s) online)."
            }
        } @else if at == LobbyAt::Here {
            p.lobby data-online="true" { "Online: its lobby is open." }
        } @else if at == LobbyAt::OtherNode {
            p.lobby data-online="true" { "Online: its lobby is open on another node of this ladder." }
        } @else {
            p.lobby data-online="false" { "Offline: no lobby open on this ladder." }
        }
    }
}

/// A waiting reason's name for people (`no opponents`).
fn waiting_name(reason: i32) -> String {
    maumau::pb::WaitingReason::try_from(reason)
        .unwrap_or_default()
        .as_str_name()
        .trim_start_matches("WAITING_REASON_")
        .replace('_', " ")
        .to_lowercase()
}

/// A version's validation verdicts (rejections with their reasons).
fn validations_table(hub: &Hub, validations: &[Validation]) -> Markup {
    html! {
        h3 { "Validation" }
        table.validations {
            thead { tr { th { "Match" } th { "Profile" } th { "Verdict" } th { "Why" } } }
            tbody {
                @for x in validations {
                    tr.validation data-passed=(x.passed.to_string()) {
                        td { a href={ "/ladder/matches/" (x.match_id) } { "#" (x.match_id) } }
                        td { (x.profile) }
                        td { @if x.passed { "passed" } @else { "rejected" } }
                        td {
                            @if x.reasons.is_empty() { "–" } @else { (x.reasons.join("; ")) }
                            @if !x.passed {
                                @let at = TableAt::of(hub, x.match_id, x.server_match_id.as_deref());
                                @if let Some(url) = at.viewer() {
                                    " " a.watch href=(url) { "watch it" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// The plot's size in SVG units, and its margins.
const PLOT_W: f64 = 640.0;
const PLOT_H: f64 = 220.0;
const PLOT_LEFT: f64 = 44.0;
const PLOT_RIGHT: f64 = 12.0;
const PLOT_TOP: f64 = 12.0;
const PLOT_BOTTOM: f64 = 28.0;

/// A version's rating history in one profile as an SVG plot: μ after each rating event
/// (a rated match, a void), with its 95% interval (μ ± 1.96σ) as a band, from the starting
/// rating. Each point carries its event's id, μ and σ.
fn rating_plot(version: VersionId, profile: &str, events: &[&RatingEvent]) -> Markup {
    let Some(first) = events.first() else {
        return html! {};
    };
    // The rating before the first event, then after each.
    let mut points: Vec<(Option<&RatingEvent>, f64, f64)> = vec![(
        None,
        first.change.before.rating.mu,
        first.change.before.rating.sigma,
    )];
    points.extend(events.iter().map(|e| {
        (
            Some(*e),
            e.change.after.rating.mu,
            e.change.after.rating.sigma,
        )
    }));
    let low = points
        .iter()
        .map(|p| p.1 - 1.96 * p.2)
        .fold(f64::INFINITY, f64::min);
    let high = points
        .iter()
        .map(|p| p.1 + 1.96 * p.2)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = (high - low).max(1e-9);
    let n = (points.len() - 1).max(1) as f64;
    let x = |i: usize| PLOT_LEFT + (PLOT_W - PLOT_LEFT - PLOT_RIGHT) * i as f64 / n;
    let y = |v: f64| PLOT_TOP + (PLOT_H - PLOT_TOP - PLOT_BOTTOM) * (high - v) / span;
    // The interval's upper edge forward, then its lower edge back.
    let upper = points
        .iter()
        .enumerate()
        .map(|(i, p)| (i, p.1 + 1.96 * p.2));
    let lower = points
        .iter()
        .enumerate()
        .rev()
        .map(|(i, p)| (i, p.1 - 1.96 * p.2));
    let band: String = upper
        .chain(lower)
        .enumerate()
        .map(|(k, (i, v))| format!("{}{:.2},{:.2} ", if k == 0 { "M" } else { "L" }, x(i), y(v)))
        .chain(std::iter::once("Z".to_string()))
        .collect();
    let line: String = points
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{:.2},{:.2}", x(i), y(p.1)))
        .collect::<Vec<_>>()
        .join(" ");
    let ticks = [high, (high + low) / 2.0, low];
    html! {
        figure.rating-plot data-version=(version.0) data-profile=(profile) {
            figcaption { "Rating in " (profile) ": μ after each rated match, with its 95% interval (μ ± 1.96σ)" }
            svg xmlns="http://www.w3.org/2000/svg" width=(PLOT_W) height=(PLOT_H)
                viewBox={ "0 0 " (PLOT_W) " " (PLOT_H) } role="img"
                aria-label={ "rating history in " (profile) } {
                @for t in ticks {
                    line x1=(PLOT_LEFT) x2=(PLOT_W - PLOT_RIGHT) y1=(format!("{:.2}", y(t))) y2=(format!("{:.2}", y(t)))
                        stroke="#ddd" {}
                    text x=(PLOT_LEFT - 4.0) y=(format!("{:.2}", y(t) + 4.0)) text-anchor="end"
                        font-size="11" fill="#666" { (format!("{t:.1}")) }
                }
                path.interval d=(band) fill="#cfe0f5" stroke="none" {}
                polyline.mu points=(line) fill="none" stroke="#1f5fae" stroke-width="1.5" {}
                @for (i, p) in points.iter().enumerate() {
                    @match p.0 {
                        Some(e) => {
                            circle.rating-point cx=(format!("{:.2}", x(i))) cy=(format!("{:.2}", y(p.1))) r="3"
                                fill="#1f5fae" data-event=(e.id)
                                data-match=(e.match_id.map_or(0, |m| m.0))
                                data-mu=(p.1) data-sigma=(p.2) {
                                title { (format!("μ {:.2}, σ {:.2}", p.1, p.2)) }
                            }
                        }
                        None => {
                            circle.rating-start cx=(format!("{:.2}", x(i))) cy=(format!("{:.2}", y(p.1))) r="3"
                                fill="#fff" stroke="#1f5fae" data-mu=(p.1) data-sigma=(p.2) {
                                title { (format!("start: μ {:.2}, σ {:.2}", p.1, p.2)) }
                            }
                        }
                    }
                }
                text x=(PLOT_LEFT) y=(PLOT_H - 8.0) font-size="11" fill="#666" { "start" }
                text x=(PLOT_W - PLOT_RIGHT) y=(PLOT_H - 8.0) text-anchor="end" font-size="11" fill="#666" {
                    (events.len()) " rating event(s)"
                }
            }
        }
    }
}

/// Where the table of a ladder match is kept, for its viewer and replay links.
enum TableAt<'a> {
    /// On this server, under this id.
    Here(&'a str),
    /// On another node of a shared ladder, under this id there.
    Node(Host, &'a str),
    /// Nowhere: the match never got a table (or its node is unknown).
    Nowhere,
}

impl<'a> TableAt<'a> {
    /// Where the table of ladder match `id` (the server's id `server_match_id`) is. Blocking:
    /// on a shared ladder it may read the store.
    fn of(hub: &Hub, id: MatchId, server_match_id: Option<&'a str>) -> TableAt<'a> {
        if let Some(here) = hub.table_here(server_match_id) {
            return TableAt::Here(here);
        }
        match (
            server_match_id.filter(|s| !s.is_empty()),
            hub.host_elsewhere(id),
        ) {
            (Some(there), Some(host)) => TableAt::Node(host, there),
            _ => TableAt::Nowhere,
        }
    }

    /// The address of `path` where the table is: this server's path itself, or the same path
    /// on the other node's address (`None` when that node stopped).
    fn url(&self, path: &str) -> Option<String> {
        match self {
            TableAt::Here(_) => Some(path.to_string()),
            TableAt::Node(host, _) if host.up => Some(on_node(&host.address, path)),
            TableAt::Node(..) | TableAt::Nowhere => None,
        }
    }

    /// The match viewer's address for the table, if it can be reached.
    fn viewer(&self) -> Option<String> {
        match self {
            TableAt::Here(id) | TableAt::Node(_, id) => self.url(&viewer_url(id)),
            TableAt::Nowhere => None,
        }
    }

    /// "(node N)" for a table on another node, "(node N, stopped)" when it cannot be reached.
    fn note(&self) -> Option<String> {
        match self {
            TableAt::Node(h, _) if h.up => Some(format!(" (node {})", h.node.0)),
            TableAt::Node(h, _) => Some(format!(" (on node {}, which stopped)", h.node.0)),
            TableAt::Here(_) | TableAt::Nowhere => None,
        }
    }
}

/// `path` at another node's address (`ladder_node_address`: a URL, `http://` when it names no
/// scheme).
fn on_node(address: &str, path: &str) -> String {
    let base = address.trim_end_matches('/');
    if base.contains("://") {
        format!("{base}{path}")
    } else {
        format!("http://{base}{path}")
    }
}

/// A link to the match viewer of a match's table, here or on its node, else a dash.
fn viewer_link(hub: &Hub, m: &MatchRecord) -> Markup {
    let at = TableAt::of(hub, m.id, m.server_match_id.as_deref());
    html! {
        @match at.viewer() {
            Some(url) => { a.watch href=(url) { "view" } @if let Some(n) = at.note() { (n) } }
            None => { "–" @if let Some(n) = at.note() { (n) } }
        }
    }
}

/// Whether a match's table has stopped, so that its seed and replay can be shown: a voided
/// match may still be playing (voiding does not stop the table).
fn table_over(hub: &Hub, m: &MatchRecord) -> bool {
    match m.state {
        MatchState::Finished | MatchState::Aborted => true,
        MatchState::Void => hub
            .table_here(m.server_match_id.as_deref())
            .and_then(|id| hub.host.find_blocking(id))
            .is_none_or(|e| e.report().is_some()),
        _ => false,
    }
}

/// A replay link for an ended match whose table is kept here or on a running node, else a dash.
fn replay_link(hub: &Hub, m: &MatchRecord) -> Markup {
    let ended = matches!(m.state, MatchState::Finished | MatchState::Aborted);
    let at = TableAt::of(hub, m.id, m.server_match_id.as_deref());
    let here = match at {
        TableAt::Here(id) => Some(id),
        _ => None,
    };
    let url = at.url(&format!("/ladder/replays/{}", m.id));
    html! {
        @if ended && hub.replay_pruned(here) {
            "pruned"
        } @else if let Some(url) = url.filter(|_| ended) {
            a.replay href=(url) download { "replay" } @if let Some(n) = at.note() { (n) }
        } @else {
            "–" @if let Some(n) = at.note().filter(|_| ended) { (n) }
        }
    }
}

fn match_page(
    hub: &Hub,
    names: &Names,
    ladder: &Ladder<dyn Store>,
    id: MatchId,
) -> Result<Page, LadderError> {
    let store = ladder.store();
    let m = store.match_record(id)?;
    let season = store
        .seasons()?
        .into_iter()
        .find(|s| s.id == m.season)
        .ok_or_else(|| LadderError::NotFound {
            what: "season",
            id: m.season.to_string(),
        })?;
    let house = house_bots(ladder)?;
    let seats = m
        .seats
        .iter()
        .map(|s| names.get(store, s.version))
        .collect::<Result<Vec<Name>, LadderError>>()?;
    let over = table_over(hub, &m);
    let at = TableAt::of(hub, m.id, m.server_match_id.as_deref());
    let table = match at {
        TableAt::Here(id) => Some(id),
        TableAt::Node(..) | TableAt::Nowhere => None,
    };
    let server_id = table.unwrap_or_default();
    // Rounds, scores and totals: from the server's record of the match, once it has ended.
    let report = if over {
        table
            .and_then(|id| hub.host.find_blocking(id))
            .and_then(|e| e.report())
    } else {
        None
    };
    // A validation match's table holds the version's copies and built-in bots: the server's
    // names for them.
    let round_names: Vec<String> = match &report {
        Some(r) if !m.rated => r.players.iter().map(|p| p.name.clone()).collect(),
        _ => seats.iter().map(|n| n.bot_name.clone()).collect(),
    };
    let times = [
        ("Scheduled", Some(m.created_ms)),
        ("Started", m.started_ms),
        ("Ended", m.ended_ms),
    ];
    let body = html! {
        h1 { "Ladder match #" (m.id) }
        dl {
            dt { "Season" }
            dd { (nav_link(&leaderboard_url(&season.name, &m.profile, 1, PER_PAGE), &season.name, false)) }
            dt { "Profile" } dd { (Text(&m.profile)) }
            dt { "Seats" } dd { (m.seats.len()) }
            dt { "Rated" } dd { @if m.rated { "yes" } @else { "no" } }
            dt { "State" } dd.state { (m.state.as_str()) }
            @if let Some(reason) = &m.reason { dt { "Reason" } dd { (Text(reason)) } }
            @for (what, t) in times {
                @if let Some(t) = t { dt { (what) } dd { (format_time(t)) } }
            }
            // The seed reveals every hidden card: only once the table is over.
            @if m.ended_ms.is_some() && over {
                dt { "Seed" } dd.seed { (m.seed) }
                // Salt and commitment, so that anyone can check
                // SHA-256(salt ‖ seed as 8 bytes big-endian) = commitment.
                @if let Some(r) = report.as_ref().filter(|r| !r.seed_commitment.is_empty()) {
                    dt { "Salt" } dd.salt { code { (hex(&r.seed_salt)) } }
                    dt { "Commitment" } dd.commitment { code { (hex(&r.seed_commitment)) } }
                }
                @if !server_id.is_empty() { dt { "Server match" } dd { code { (Text(server_id)) } } }
            }
            // Another node's table: its rounds are on its own page.
            @if let TableAt::Node(h, _) = &at {
                dt { "Table" }
                dd.node {
                    @if h.up {
                        "hosted by node " (h.node.0) ": its rounds are on "
                        a href=(on_node(&h.address, &format!("/ladder/matches/{}", m.id))) { "its page there" }
                    } @else {
                        "hosted by node " (h.node.0) ", which stopped: its rounds, viewer and replay \
                         are kept in that node's data directory"
                    }
                }
            }
            dt { "Replay" } dd { (replay_link(hub, &m)) }
            // The server's match viewer: public information while the match is played, every
            // hand and any seat's view once it has ended.
            @if let Some(url) = at.viewer() {
                dt { "Watch" } dd { a.watch href=(url) { "the match viewer" } @if let Some(n) = at.note() { (n) } }
            }
        }
        table.seats {
            thead {
                tr {
                    th { "Seat" } th { "Bot" } th { "Version" } th { "Placing" } th { "Joined" }
                    th { "Timeouts" } th { "Rejections" }
                }
            }
            tbody {
                @for (i, (s, n)) in m.seats.iter().zip(&seats).enumerate() {
                    tr.seat data-joined=(s.outcome.is_some_and(|o| o.joined)) {
                        td { (i) }
                        td {
                            a href=(bot_url(n.bot, None)) { (Text(&n.bot_name)) }
                            @if house.contains(&n.bot) { (house_badge()) }
                        }
                        td { (Text(&n.label)) }
                        td { @match s.placing { Some(p) => { (p) } None => { "–" } } }
                        @match s.outcome {
                            Some(o) => {
                                td { @if o.joined { "yes" } @else { "no" } }
                                td { (o.timeouts) }
                                td.rejections { (o.rejections) }
                            }
                            // Ended before any invitation was sent: nobody could join.
                            None if m.state == MatchState::Aborted => { td { "no" } td { "0" } td { "0" } }
                            None => { td { "–" } td { "–" } td { "–" } }
                        }
                    }
                }
            }
        }
        @if let Some(report) = &report { (rounds_table(report, &round_names)) }
        // The viewer itself, embedded: the table move by move, live while the match is played
        // (public information only until it ends), then every hand and any seat's view.
        @if !server_id.is_empty() {
            iframe.viewer src=(viewer_url(server_id)) title="The match viewer"
                style="width:100%;height:44rem;border:1px solid #ccc" {}
        }
    };
    let page = document(&format!("Ladder match {}", m.id), body);
    Ok(if server_id.is_empty() {
        Page::Html(page)
    } else {
        Page::HtmlWithViewer(page)
    })
}

/// Bytes as lower-case hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every round of a match with each seat's points and running total, then the final totals.
fn rounds_table(report: &maumau::pb::MatchReport, names: &[String]) -> Markup {
    let seats = report
        .result
        .as_ref()
        .map_or(names.len(), |r| r.seats as usize)
        .max(names.len());
    let name = |i: usize| names.get(i).cloned().unwrap_or_else(|| format!("seat {i}"));
    let total = |i: usize| {
        report
            .result
            .as_ref()
            .and_then(|r| r.standings.iter().find(|s| s.seat as usize == i))
            .map(|s| s.total)
    };
    html! {
        h2 { "Rounds" }
        @if report.rounds.is_empty() {
            p { "No round was finished." }
        } @else {
            table.rounds {
                thead {
                    tr {
                        th { "Round" } th { "Ended" }
                        @for i in 0..seats { th { (name(i)) } }
                    }
                }
                tbody {
                    @for r in &report.rounds {
                        tr.round {
                            td { (r.round) }
                            td {
                                @match r.winner {
                                    Some(w) => { (name(w as usize)) " went out" }
                                    None => { "blocked" }
                                }
                            }
                            @for i in 0..seats {
                                td.points {
                                    (r.points.get(i).copied().unwrap_or(0))
                                    " (" (r.totals.get(i).copied().unwrap_or(0)) ")"
                                }
                            }
                        }
                    }
                }
                tfoot {
                    tr.totals {
                        th colspan="2" { "Total" }
                        @for i in 0..seats {
                            td.total { (total(i).map_or_else(|| "–".to_string(), |t| t.to_string())) }
                        }
                    }
                }
            }
            p.note { "Each cell: the seat's points in the round (its running total)." }
        }
    }
}

fn replay_file(hub: &Hub, ladder: &Ladder<dyn Store>, id: MatchId) -> Result<Page, LadderError> {
    let m = ladder.store().match_record(id)?;
    if !matches!(m.state, MatchState::Finished | MatchState::Aborted) {
        return Ok(Page::not_found(format!(
            "ladder match {id} is {}: a replay exists once it has been played",
            m.state.as_str()
        )));
    }
    let at = TableAt::of(hub, id, m.server_match_id.as_deref());
    if let TableAt::Node(h, _) = &at {
        return Ok(match at.url(&format!("/ladder/replays/{id}")) {
            Some(url) => Page::Elsewhere(url),
            None => Page::not_found(format!(
                "ladder match {id} was hosted by node {}, which stopped: its replay is kept in \
                 that node's data directory",
                h.node.0
            )),
        });
    }
    let replay = match at {
        TableAt::Here(table) => hub.host.find_blocking(table).and_then(|e| e.replay()),
        TableAt::Node(..) | TableAt::Nowhere => None,
    };
    match replay {
        Some(r) => Ok(Page::File {
            name: format!("ladder-match-{id}.replay"),
            bytes: r.encode_to_vec(),
        }),
        None => Ok(Page::not_found(format!(
            "this server does not keep the table of ladder match {id}"
        ))),
    }
}

/// A version's bot, owner, bot name and label: never change once created, so kept for the
/// server's lifetime ([`Names`]).
#[derive(Clone)]
struct Name {
    bot: BotId,
    owner: OwnerId,
    bot_name: String,
    label: String,
}

/// The names of versions, read from the store once each and shared by every page.
#[derive(Default)]
pub(crate) struct Names(Mutex<HashMap<VersionId, Name>>);

impl Names {
    fn get(&self, store: &dyn Store, v: VersionId) -> Result<Name, LadderError> {
        if let Some(n) = lock(&self.0).get(&v) {
            return Ok(n.clone());
        }
        let version = store.version(v)?;
        let bot = store.bot(version.bot)?;
        let n = Name {
            bot: bot.id,
            owner: bot.owner,
            bot_name: bot.name,
            label: version.label,
        };
        lock(&self.0).insert(v, n.clone());
        Ok(n)
    }
}

/// Text from users (names, labels, reasons) in a page: maud's escaping, and the apostrophe as
/// `&#39;` too, so a name reads the same in an element and in any attribute.
struct Text<'a>(&'a str);

impl Render for Text<'_> {
    fn render_to(&self, buffer: &mut String) {
        for (i, part) in self.0.split('\'').enumerate() {
            if i > 0 {
                buffer.push_str("&#39;");
            }
            part.render_to(buffer);
        }
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:72em;\
padding:0 1em;color:#222}table{border-collapse:collapse;margin:.5em 0}\
th,td{padding:.25em .6em;border-bottom:1px solid #ddd;text-align:left}\
th{background:#f4f4f4}td.rank,td.score{font-variant-numeric:tabular-nums}\
nav{margin:.4em 0}a.current{font-weight:bold;text-decoration:none;color:#222}\
.note{color:#666}.house{font-size:.8em;padding:0 .35em;margin-left:.3em;\
border-radius:.3em;background:#fde9b8;color:#6b4b00}figure{margin:.5em 0}dt{font-weight:bold;float:left;clear:left;width:9em}dd{margin-left:10em}";

/// A whole page: `body` under the ladder's head, style and header.
fn document(title: &str, body: Markup) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (Text(title)) }
                meta name="viewport" content="width=device-width, initial-scale=1";
                style { (PreEscaped(STYLE)) }
            }
            body {
                header { a href="/ladder" { "Mau Mau Arena ladder" } }
                (body)
            }
        }
    }
    .into_string()
}

fn error_page(status: StatusCode, message: &str) -> String {
    let title = format!(
        "{} {}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("Error")
    );
    document(
        &title,
        html! {
            h1 { (title) }
            p.error { (Text(message)) }
        },
    )
}

/// `2026-11-30 19:51 UTC` from Unix milliseconds.
fn format_time(ms: Millis) -> String {
    let secs = ms.div_euclid(1000);
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02} UTC",
        rest / 3600,
        rest % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        let got = html! { p title=(Text("'a'")) { (Text("<script>alert('x&y')</script>\"")) } };
        assert_eq!(
            got.into_string(),
            "<p title=\"&#39;a&#39;\">&lt;script&gt;alert(&#39;x&amp;y&#39;)&lt;/script&gt;&quot;</p>"
        );
    }

    #[test]
    fn queries_round_trip_and_bad_ones_are_refused() {
        let name = "saison 2 / été & <b>";
        let q = parse_query(&format!("season={}&page=2", percent_encode(name))).ok();
        let q = q.expect("a valid query");
        assert_eq!(q.get("season"), Some(name));
        assert_eq!(q.get("page"), Some("2"));
        assert!(q.only(&["season"]).is_err());
        assert!(q.only(&["season", "page"]).is_ok());
        assert!(parse_query("season=%zz").is_err());
        assert!(parse_query("season=%C3").is_err());
        let twice = parse_query("page=1&page=2").ok().expect("parses");
        assert!(twice.only(&["page"]).is_err());
    }

    #[test]
    fn routes() {
        let r = |s: &str| route(&s.parse::<http::Uri>().expect("a uri"));
        assert!(matches!(
            r("/"),
            Ok(Route::Leaderboard {
                page: 1,
                per_page: PER_PAGE,
                ..
            })
        ));
        assert!(matches!(
            r("/ladder/bots/7"),
            Ok(Route::Bot { id: BotId(7), .. })
        ));
        assert!(matches!(
            r("/ladder/matches/3"),
            Ok(Route::Match(MatchId(3)))
        ));
        assert!(matches!(
            r("/ladder/replays/3"),
            Ok(Route::Replay(MatchId(3)))
        ));
        let status = |s: &str| match r(s) {
            Err(Page::Error(status, _)) => Some(status),
            _ => None,
        };
        assert_eq!(status("/ladder/bots/x"), Some(StatusCode::NOT_FOUND));
        assert_eq!(status("/ladder/bots/-1"), Some(StatusCode::NOT_FOUND));
        assert_eq!(status("/nothing"), Some(StatusCode::NOT_FOUND));
        assert_eq!(status("/ladder?page=0"), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            status("/ladder?per_page=501"),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(
            status("/ladder?profile=whist"),
            Some(StatusCode::BAD_REQUEST)
        );
        assert_eq!(status("/ladder?colour=red"), Some(StatusCode::BAD_REQUEST));
        assert_eq!(
            status("/ladder/matches/3?x=1"),
            Some(StatusCode::BAD_REQUEST)
        );
    }

    #[test]
    fn times_are_utc_dates() {
        assert_eq!(format_time(0), "1970-01-01 00:00 UTC");
        assert_eq!(format_time(951_782_400_000), "2000-02-29 00:00 UTC");
        assert_eq!(format_time(1_796_068_282_000), "2026-11-30 19:51 UTC");
    }
}
