//! `GET /play`: a page where a person plays the server's built-in bots.
//!
//! The person picks a profile, options, the seats and their bots, and a clock; the page asks
//! `MatchService.CreatePublicMatch` for the match (so it deals only when the server runs with
//! `--public-play`), keeps the match id in the URL's fragment (`/play#ID`) and the seat token in
//! the browser's `localStorage` (never in a URL), follows the seat on `PlayService.Watch` with a
//! Snapshot after every step, and acts with `SubmitAction`: legal cards are marked in the hand,
//! suit choices and calls are buttons, so are draw, pass, challenge and announce. The events are
//! shown in the viewer's notation: the page reads the seat's frames from
//! `/matches/{id}/frames` (token in the `authorization` header), so notation is written once, in
//! Rust (`maumau::viewer`). Reloading the page (or coming back to the link) watches again with
//! the token: the seat is the person's again, a bot having played it meanwhile
//! (`GIVE_UP_POLICY_BOT_UNTIL_BACK`).
//!
//! The page's script is `server/assets/play.js`, bundled with the TypeScript client's browser
//! entry (grpc-web over fetch, protobuf-es) into `server/assets/play.bundle.js` by
//! `npm run build:play` in `clients/typescript`; the bundle is committed, so the server builds
//! without Node, and `scripts/test-clients.sh` rebuilds it and fails when it differs. A bundle
//! rather than hand-written grpc-web: the page then speaks the protocol through the same tested
//! client as every web app, and decodes the same generated messages.

use std::sync::Arc;

use maud::{DOCTYPE, PreEscaped, html};
use tonic::codegen::http::{self, StatusCode};

use crate::page::{BoxFuture, PageResponse};
use crate::registry::Registry;

/// The page's script: `play.js` and the client it imports, bundled (see the module's docs).
const SCRIPT: &str = include_str!("../assets/play.bundle.js");
/// The page's style.
const STYLE: &str = include_str!("../assets/play.css");

/// The answer to `GET /play`, or `None` for any other path.
pub(crate) fn page(
    registry: &Arc<Registry>,
    uri: &http::Uri,
    head: bool,
) -> Option<BoxFuture<'static, PageResponse>> {
    if uri.path() != "/play" {
        return None;
    }
    // The page differs only by whether public play is on: each built once per process.
    static PAGES: [std::sync::OnceLock<String>; 2] =
        [std::sync::OnceLock::new(), std::sync::OnceLock::new()];
    let public = registry.config.public_play;
    let body = PAGES[usize::from(public)]
        .get_or_init(|| render(public))
        .clone();
    // The page's script calls this server only (a copy hosted elsewhere, `?server=`, is served
    // by that host with its own policy).
    let policy = crate::viewer::policy(&registry.config.allow_origins, HTML, Some(script_hash()));
    Some(Box::pin(async move {
        crate::viewer::respond(StatusCode::OK, HTML, body, None, head, &policy)
    }))
}

const HTML: &str = "text/html; charset=utf-8";

/// The script as it is inlined in the page.
fn inlined_script() -> String {
    SCRIPT.replace("</script", "<\\/script")
}

/// The CSP hash of the inlined script, computed once.
fn script_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| crate::viewer::script_hash(&inlined_script()))
}

/// The page: the setup form, the table (hidden until a match is dealt) and the script.
fn render(public: bool) -> String {
    // A script element ends at the first `</script`: the bundle never has one outside strings
    // and regular expressions, where `<\/` means the same.
    let script = inlined_script();
    let profiles = [
        ("CLASSIC", "classic"),
        ("PENALTY_POINTS", "penalty-points"),
        ("BRAZILIAN", "brazilian"),
        ("ROMANIAN_32", "romanian-32"),
    ];
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                link rel="icon" href="data:,";
                title { "Play · Mau Mau Arena" }
                style { (PreEscaped(STYLE)) }
            }
            body {
                header {
                    a href="/matches" { "Mau Mau Arena" }
                    b { "Play" }
                    span #rules {}
                }
                main #app data-public=(public) {
                    form #setup {
                        h1 { "A table against the bots" }
                        @if !public {
                            p.note #off {
                                "This server does not deal public matches: its operator starts it \
                                 with " code { "maumau serve --public-play" } "."
                            }
                        }
                        label { "Rules "
                            select #profile {
                                @for (value, name) in profiles {
                                    option value=(value) { (name) }
                                }
                            }
                        }
                        label { "Seats "
                            select #seats {
                                @for n in 2..=8u32 {
                                    option value=(n) selected[n == 3] { (n) }
                                }
                            }
                        }
                        fieldset #bots { legend { "Bots" } }
                        label { "Calls "
                            select #calls {
                                option value="ENFORCE" { "a missed call is penalised at once" }
                                option value="CHALLENGE" { "a missed call may be challenged" }
                                option value="OFF" { "no calls" }
                            }
                        }
                        label { input #single type="checkbox" checked; " one round only" }
                        fieldset #clock {
                            legend { "Clock" }
                            label { input type="radio" name="clock" value="untimed" checked; " untimed" }
                            label { input type="radio" name="clock" value="long"; " 30 s a move + 5 min bank" }
                        }
                        button #create type="submit" disabled[!public] { "Deal" }
                        p #setup-error role="alert" {}
                    }
                    section #table hidden aria-label="the table" {
                        div #opponents {}
                        div.centre {
                            div.stock { span.card.back {} span #stock { "–" } }
                            div #top {}
                            dl.facts {
                                dt { "round" } dd #round { "–" }
                                dt { "to move" } dd #turn { "–" }
                                dt { "suit" } dd #named { "–" }
                                dt { "7-debt" } dd #debt { "0" }
                                dt { "direction" } dd #direction { "–" }
                            }
                        }
                        div.me {
                            p #status role="status" { "Connecting…" }
                            span #clock-left {}
                            div #hand aria-label="your hand" {}
                            div #actions {}
                            div #choices {}
                        }
                        div #result role="alert" {}
                        p.links {
                            button #resign.act.quiet type="button" hidden {
                                "Resign"
                            }
                            a #again href="/play" { "New match" }
                            " · "
                            a #viewer href="/matches" { "viewer" }
                        }
                    }
                    aside #events-box hidden { h2 { "Events" } ol #events {} }
                }
                script type="module" { (PreEscaped(script)) }
            }
        }
    }
    .into_string()
}
