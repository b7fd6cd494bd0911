//! `maumau ladder ban|unban|pause|resume|void|close-season|open-season|set-formats|
//! prune-replays`: the ladder's operator calls on a running server, over gRPC with the operator
//! token.

use std::error::Error;
use std::time::Duration;

use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_ladder_service::LADDER_REASON_TRAILER;
use tonic::transport::Channel;

/// Where the server is and the token its operator calls need.
#[derive(clap::Args)]
pub(crate) struct Remote {
    /// The server: `host:port` or a URL.
    #[arg(long, env = "MAUMAU_ADDR", default_value = "127.0.0.1:50051")]
    server: String,
    #[command(flatten)]
    operator_token: crate::operator_token::OperatorTokenArgs,
}

/// What a ban or pause applies to.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum TargetKind {
    /// Every bot and version of an owner.
    Owner,
    /// Every version of a bot.
    Bot,
    /// One version.
    Version,
}

impl TargetKind {
    fn to_wire(self, id: i64) -> pb::SanctionTarget {
        let kind = match self {
            TargetKind::Owner => pb::SanctionTargetKind::Owner,
            TargetKind::Bot => pb::SanctionTargetKind::Bot,
            TargetKind::Version => pb::SanctionTargetKind::Version,
        };
        pb::SanctionTarget {
            kind: kind as i32,
            id,
        }
    }

    fn name(self) -> &'static str {
        match self {
            TargetKind::Owner => "owner",
            TargetKind::Bot => "bot",
            TargetKind::Version => "version",
        }
    }
}

/// A ban, pause or their lifting.
#[derive(clap::Args)]
pub(crate) struct SanctionArgs {
    /// owner, bot or version.
    #[arg(value_enum)]
    kind: TargetKind,
    /// Its id (as in GetBot and the leaderboard).
    id: i64,
    /// Why: shown to the owner for a ban or pause, kept for the record when lifting.
    #[arg(long, default_value = "")]
    reason: String,
    #[command(flatten)]
    remote: Remote,
}

/// Voids a ladder match.
#[derive(clap::Args)]
pub(crate) struct VoidArgs {
    /// The ladder's match id (as in GetBot's history and LadderMatchEnded).
    ladder_match_id: i64,
    /// Why, for the record.
    #[arg(long, default_value = "")]
    reason: String,
    #[command(flatten)]
    remote: Remote,
}

/// Closes the open season.
#[derive(clap::Args)]
pub(crate) struct CloseSeasonArgs {
    #[command(flatten)]
    remote: Remote,
}

/// Opens a season.
#[derive(clap::Args)]
pub(crate) struct OpenSeasonArgs {
    /// A new, unique name.
    name: String,
    #[command(flatten)]
    remote: Remote,
}

/// Replaces the formats the matchmaker makes (stored: they outlive a restart and apply on every
/// node, in place of the configuration's).
#[derive(clap::Args)]
pub(crate) struct SetFormatsArgs {
    /// Formats as PROFILE:SEATS or PROFILE:SEATS=WEIGHT (weight 1 when left out; 0 turns a
    /// format off), e.g. `classic:4=2 brazilian:2`.
    #[arg(required = true, value_parser = parse_format)]
    formats: Vec<pb::LadderFormat>,
    #[command(flatten)]
    remote: Remote,
}

/// Prunes stored replays of ended ladder matches.
#[derive(clap::Args)]
pub(crate) struct PruneArgs {
    /// Prune replays of matches that ended longer ago than this: a number with s, m, h or d
    /// (seconds, minutes, hours, days), e.g. `30d`.
    #[arg(long, value_parser = parse_age)]
    older_than: Option<Duration>,
    /// Keep the replays of this many most recently ended matches, prune the rest.
    #[arg(long)]
    keep: Option<u32>,
    /// Only say how many would be pruned.
    #[arg(long)]
    dry_run: bool,
    #[command(flatten)]
    remote: Remote,
}

/// `PROFILE:SEATS[=WEIGHT]`.
fn parse_format(text: &str) -> Result<pb::LadderFormat, String> {
    let bad = || format!("{text:?} is not PROFILE:SEATS or PROFILE:SEATS=WEIGHT");
    let (format, weight) = match text.split_once('=') {
        Some((f, w)) => (f, w.trim().parse::<f64>().map_err(|_| bad())?),
        None => (text, 1.0),
    };
    let (profile, seats) = format.split_once(':').ok_or_else(bad)?;
    Ok(pb::LadderFormat {
        profile: profile.trim().to_string(),
        seats: seats.trim().parse().map_err(|_| bad())?,
        weight,
    })
}

/// `90s`, `15m`, `12h`, `30d`, or plain seconds.
fn parse_age(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&text[..i], c),
        _ => (text, 's'),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not an age like 90s, 15m, 12h or 30d"))?;
    let scale = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        _ => return Err(format!("{text:?}: the unit must be s, m, h or d")),
    };
    let secs = n
        .checked_mul(scale)
        .ok_or_else(|| format!("{text:?} is too long"))?;
    if secs == 0 {
        return Err("the age must be more than 0".into());
    }
    Ok(Duration::from_secs(secs))
}

/// A connected client with the operator token.
struct Operator {
    client: LadderServiceClient<Channel>,
    url: String,
    token: Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>,
}

impl Operator {
    async fn connect(remote: &Remote) -> Result<Operator, Box<dyn Error>> {
        let url = if remote.server.contains("://") {
            remote.server.clone()
        } else {
            format!("http://{}", remote.server)
        };
        let token = match remote.operator_token.for_server(&remote.server)? {
            None => None,
            Some(t) => Some(
                format!("Bearer {t}")
                    .parse()
                    .map_err(|_| "the operator token holds characters a header cannot carry")?,
            ),
        };
        let endpoint = Channel::from_shared(url.clone())
            .map_err(|e| format!("{:?} is not a server address: {e}", remote.server))?
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(60));
        let channel = endpoint
            .connect()
            .await
            .map_err(|e| format!("cannot reach the server at {url}: {}", source_chain(&e)))?;
        Ok(Operator {
            client: LadderServiceClient::new(channel),
            url,
            token,
        })
    }

    /// A request with the operator token.
    fn request<T>(&self, message: T) -> tonic::Request<T> {
        let mut req = tonic::Request::new(message);
        if let Some(t) = &self.token {
            req.metadata_mut().insert("authorization", t.clone());
        }
        req
    }

    /// A refusal in words an operator can act on.
    fn explain(&self, status: tonic::Status) -> Box<dyn Error> {
        let reason = status
            .metadata()
            .get(LADDER_REASON_TRAILER)
            .and_then(|v| v.to_str().ok())
            .and_then(pb::LadderErrorReason::from_str_name)
            .unwrap_or(pb::LadderErrorReason::Unspecified);
        let message = status.message();
        let text = match (reason, status.code()) {
            (pb::LadderErrorReason::OperatorOnly, _) if self.token.is_none() => format!(
                "the server needs its operator token: pass --operator-token or set \
                 MAUMAU_OPERATOR_TOKEN ({message})"
            ),
            (pb::LadderErrorReason::OperatorOnly, _) => {
                format!("the server refused the operator token ({message})")
            }
            (pb::LadderErrorReason::NotFound, _) => format!("not found: {message}"),
            (pb::LadderErrorReason::State, _) => format!("not now: {message}"),
            (pb::LadderErrorReason::Invalid, _) => format!("refused: {message}"),
            (_, tonic::Code::Unimplemented) => format!(
                "the server at {} does not run the ladder (start it with `maumau serve --ladder`)",
                self.url
            ),
            (_, tonic::Code::Unavailable) => {
                format!("the server at {} is unavailable: {message}", self.url)
            }
            (_, code) => format!("the server refused ({code:?}): {message}"),
        };
        text.into()
    }
}

/// An error with its causes, for transport errors whose top line says little.
fn source_chain(e: &dyn Error) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(cause) = next {
        out.push_str(": ");
        out.push_str(&cause.to_string());
        next = cause.source();
    }
    out
}

/// Which operator call.
pub(crate) enum Call<'a> {
    Ban(&'a SanctionArgs),
    Unban(&'a SanctionArgs),
    Pause(&'a SanctionArgs),
    Resume(&'a SanctionArgs),
    Void(&'a VoidArgs),
    CloseSeason(&'a CloseSeasonArgs),
    OpenSeason(&'a OpenSeasonArgs),
    SetFormats(&'a SetFormatsArgs),
    Prune(&'a PruneArgs),
}

impl Call<'_> {
    fn remote(&self) -> &Remote {
        match self {
            Call::Ban(a) | Call::Unban(a) | Call::Pause(a) | Call::Resume(a) => &a.remote,
            Call::Void(a) => &a.remote,
            Call::CloseSeason(a) => &a.remote,
            Call::OpenSeason(a) => &a.remote,
            Call::SetFormats(a) => &a.remote,
            Call::Prune(a) => &a.remote,
        }
    }
}

/// Runs an operator call and prints its outcome.
pub(crate) fn run(call: Call<'_>) -> Result<(), Box<dyn Error>> {
    if let Call::Prune(a) = &call
        && a.older_than.is_none()
        && a.keep.is_none()
    {
        return Err("say which replays to prune: --older-than AGE, --keep N, or both".into());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let out = runtime.block_on(async {
        let mut op = Operator::connect(call.remote()).await?;
        perform(&mut op, &call).await
    })?;
    println!("{out}");
    Ok(())
}

async fn perform(op: &mut Operator, call: &Call<'_>) -> Result<String, Box<dyn Error>> {
    let shown = |a: &SanctionArgs| format!("{} {}", a.kind.name(), a.id);
    let plural = |n: u32, one: &str, many: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {many}")
        }
    };
    Ok(match call {
        Call::Ban(a) => {
            let req = op.request(pb::BanRequest {
                target: Some(a.kind.to_wire(a.id)),
                reason: a.reason.clone(),
            });
            let r = op.client.ban(req).await.map_err(|e| op.explain(e))?;
            format!("banned {} (sanction {})", shown(a), r.get_ref().sanction_id)
        }
        Call::Unban(a) => {
            let req = op.request(pb::UnbanRequest {
                target: Some(a.kind.to_wire(a.id)),
                reason: a.reason.clone(),
            });
            let r = op.client.unban(req).await.map_err(|e| op.explain(e))?;
            let n = r.get_ref().lifted;
            format!("unbanned {}: lifted {}", shown(a), plural(n, "ban", "bans"))
        }
        Call::Pause(a) => {
            let req = op.request(pb::PauseRequest {
                target: Some(a.kind.to_wire(a.id)),
                reason: a.reason.clone(),
            });
            let r = op.client.pause(req).await.map_err(|e| op.explain(e))?;
            format!("paused {} (sanction {})", shown(a), r.get_ref().sanction_id)
        }
        Call::Resume(a) => {
            let req = op.request(pb::ResumeRequest {
                target: Some(a.kind.to_wire(a.id)),
                reason: a.reason.clone(),
            });
            let r = op.client.resume(req).await.map_err(|e| op.explain(e))?;
            let n = r.get_ref().lifted;
            format!(
                "resumed {}: lifted {}",
                shown(a),
                plural(n, "pause", "pauses")
            )
        }
        Call::Void(a) => {
            let req = op.request(pb::VoidMatchRequest {
                ladder_match_id: a.ladder_match_id,
                reason: a.reason.clone(),
            });
            let r = op.client.void_match(req).await.map_err(|e| op.explain(e))?;
            let n = r.get_ref().ratings_changed;
            format!(
                "voided ladder match {}: {} recomputed without it",
                a.ladder_match_id,
                plural(n, "rating", "ratings")
            )
        }
        Call::CloseSeason(_) => {
            let req = op.request(pb::CloseSeasonRequest {});
            let r = op
                .client
                .close_season(req)
                .await
                .map_err(|e| op.explain(e))?;
            format!(
                "closed season {} (no rated matches until a season opens)",
                r.get_ref().season
            )
        }
        Call::OpenSeason(a) => {
            let req = op.request(pb::OpenSeasonRequest {
                name: a.name.clone(),
            });
            let r = op
                .client
                .open_season(req)
                .await
                .map_err(|e| op.explain(e))?;
            format!("opened season {}", r.get_ref().season)
        }
        Call::SetFormats(a) => {
            let req = op.request(pb::SetFormatsRequest {
                formats: a.formats.clone(),
            });
            let r = op
                .client
                .set_formats(req)
                .await
                .map_err(|e| op.explain(e))?;
            let mut out = String::from("formats now in force:");
            for f in &r.get_ref().formats {
                out.push_str(&format!(
                    "\n  {:<16} {} seats  weight {}",
                    f.profile, f.seats, f.weight
                ));
            }
            out
        }
        Call::Prune(a) => {
            let req = op.request(pb::PruneReplaysRequest {
                older_than_seconds: a.older_than.map_or(0, |d| d.as_secs()),
                keep_newest: a.keep,
                dry_run: a.dry_run,
            });
            let r = op
                .client
                .prune_replays(req)
                .await
                .map_err(|e| op.explain(e))?;
            let r = r.get_ref();
            let replays = |n| plural(n, "replay", "replays");
            if a.dry_run {
                format!(
                    "would prune {}; {} would stay (dry run: nothing changed)",
                    replays(r.pruned),
                    replays(r.kept)
                )
            } else {
                format!(
                    "pruned {} ({} freed); {} kept; results and ratings stay",
                    replays(r.pruned),
                    bytes(r.bytes_freed),
                    replays(r.kept)
                )
            }
        }
    })
}

/// Bytes in a readable unit.
fn bytes(n: u64) -> String {
    match n {
        0..1_000 => format!("{n} B"),
        1_000..1_000_000 => format!("{:.1} kB", n as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", n as f64 / 1e6),
        _ => format!("{:.1} GB", n as f64 / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_ages_parse_and_bad_ones_are_refused() {
        let f = parse_format("classic:4=2.5").expect("format");
        assert_eq!((f.profile.as_str(), f.seats, f.weight), ("classic", 4, 2.5));
        let f = parse_format("brazilian:2").expect("format");
        assert_eq!(
            (f.profile.as_str(), f.seats, f.weight),
            ("brazilian", 2, 1.0)
        );
        for bad in ["classic", "classic:x", "classic:4=much", ""] {
            assert!(parse_format(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_age("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_age("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_age("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_age("30d"), Ok(Duration::from_secs(30 * 86_400)));
        for bad in ["", "d", "5w", "0s", "-3d", "99999999999999999999d"] {
            assert!(parse_age(bad).is_err(), "{bad:?}");
        }
        assert_eq!(bytes(999), "999 B");
        assert_eq!(bytes(1_500_000), "1.5 MB");
    }
}
