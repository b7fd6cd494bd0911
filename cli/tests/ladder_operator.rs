//! End to end: `maumau ladder ban|unban|pause|resume|void|close-season|open-season|set-formats|
//! prune-replays` against a real ladder server on loopback, with readable output and clear
//! errors for a missing or wrong token, an unknown id, an unreachable server and a server
//! without the ladder.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_ladder_service::{LadderFormat, LadderSettings, LadderValidation};
use maumau_server::ServerConfig;
use tonic::transport::Channel;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");
const TOKEN: &str = "s3cret-operator";

/// Starts a server on 127.0.0.1:0 in `runtime`; it runs until the runtime is dropped.
fn start(runtime: &tokio::runtime::Runtime, dir: &std::path::Path, ladder: bool) -> SocketAddr {
    let config = ServerConfig {
        data_dir: dir.to_path_buf(),
        operator_token: Some(TOKEN.into()),
        ..ServerConfig::default()
    };
    let ladder = ladder.then(|| LadderSettings {
        formats: vec![LadderFormat {
            profile: "classic".into(),
            seats: 2,
            weight: 1.0,
        }],
        tick: Duration::from_millis(100),
        // Versions rated from their first match (validation is tested elsewhere).
        validation: LadderValidation {
            required: false,
            ..LadderValidation::default()
        },
        ..LadderSettings::default()
    });
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let forever = std::future::pending::<()>();
            match ladder {
                Some(l) => maumau_ladder_service::run(listener, config, l, |_| {}, forever).await,
                None => maumau_server::run(listener, config, forever).await,
            }
            .unwrap();
        });
        addr
    })
}

/// Runs `maumau ladder ARGS` with `env`; returns (success, stdout, stderr).
fn ladder(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let output = Command::new(BIN)
        .arg("ladder")
        .args(args)
        .env_remove("MAUMAU_OPERATOR_TOKEN")
        .env_remove("MAUMAU_ADDR")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `maumau ladder ARGS --server ADDR --operator-token TOKEN`, which must succeed; its stdout.
fn ok(addr: SocketAddr, args: &[&str]) -> String {
    let server = addr.to_string();
    let mut all = args.to_vec();
    all.extend(["--server", &server, "--operator-token", TOKEN]);
    let (success, out, err) = ladder(&all, &[]);
    assert!(success, "{args:?} failed: {out}\n{err}");
    out
}

/// Like [`ok`], but must fail; its stderr.
fn fails(addr: SocketAddr, args: &[&str]) -> String {
    let server = addr.to_string();
    let mut all = args.to_vec();
    all.extend(["--server", &server, "--operator-token", TOKEN]);
    let (success, out, err) = ladder(&all, &[]);
    assert!(!success, "{args:?} should fail: {out}");
    err
}

/// Registers an owner with a bot and a version; returns (owner id, bot id, version id).
async fn enter(c: &mut LadderServiceClient<Channel>, name: &str) -> (i64, i64, i64) {
    let owner = c
        .register_owner(pb::RegisterOwnerRequest {
            name: name.into(),
            invitation_code: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    let bearer = |message| {
        let mut req = tonic::Request::new(message);
        req.metadata_mut().insert(
            "authorization",
            format!("Bearer {}", owner.owner_key).parse().unwrap(),
        );
        req
    };
    let bot = c
        .register_bot(bearer(pb::RegisterBotRequest {
            name: format!("{name}-bot"),
        }))
        .await
        .unwrap()
        .into_inner();
    let mut req = tonic::Request::new(pb::AddVersionRequest {
        bot_id: bot.bot_id,
        label: "v1".into(),
    });
    req.metadata_mut().insert(
        "authorization",
        format!("Bearer {}", owner.owner_key).parse().unwrap(),
    );
    let v = c.add_version(req).await.unwrap().into_inner();
    (owner.owner_id, bot.bot_id, v.version_id)
}

/// The status GetBot shows for a bot's only version.
fn status(
    runtime: &tokio::runtime::Runtime,
    c: &mut LadderServiceClient<Channel>,
    bot: i64,
) -> pb::VersionStatus {
    runtime.block_on(async {
        c.get_bot(pb::GetBotRequest {
            bot_id: bot,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .versions[0]
            .status()
    })
}

#[test]
fn operator_commands_act_on_a_running_ladder() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let addr = start(&runtime, dir.path(), true);
    let mut c = runtime.block_on(async {
        LadderServiceClient::new(
            Channel::from_shared(format!("http://{addr}"))
                .unwrap()
                .connect()
                .await
                .unwrap(),
        )
    });
    let (owner, bot, version) = runtime.block_on(enter(&mut c, "ada"));
    let bot_s = bot.to_string();

    // Token: missing, wrong (from the environment), then right.
    let server = addr.to_string();
    let (success, _, err) = ladder(&["ban", "bot", &bot_s, "--server", &server], &[]);
    assert!(!success);
    assert!(err.contains("needs its operator token"), "{err}");
    assert!(err.contains("MAUMAU_OPERATOR_TOKEN"), "{err}");
    let (success, _, err) = ladder(
        &["ban", "bot", &bot_s, "--server", &server],
        &[("MAUMAU_OPERATOR_TOKEN", "wrong")],
    );
    assert!(!success);
    assert!(err.contains("refused the operator token"), "{err}");
    assert_eq!(status(&runtime, &mut c, bot), pb::VersionStatus::Active);
    let (success, out, err) = ladder(
        &["ban", "bot", &bot_s, "--reason", "collusion"],
        &[
            ("MAUMAU_OPERATOR_TOKEN", TOKEN),
            ("MAUMAU_ADDR", &format!("http://{addr}")),
        ],
    );
    assert!(success, "{err}");
    assert!(
        out.starts_with(&format!("banned bot {bot} (sanction ")),
        "{out}"
    );
    assert_eq!(status(&runtime, &mut c, bot), pb::VersionStatus::Banned);

    // Unknown ids and kinds.
    let err = fails(addr, &["ban", "bot", "999", "--reason", "x"]);
    assert!(err.contains("not found") && err.contains("999"), "{err}");
    let err = fails(addr, &["ban", "team", "1"]);
    assert!(err.contains("team"), "{err}");

    let out = ok(addr, &["unban", "bot", &bot_s, "--reason", "appeal upheld"]);
    assert_eq!(out.trim(), format!("unbanned bot {bot}: lifted 1 ban"));
    assert_eq!(status(&runtime, &mut c, bot), pb::VersionStatus::Active);

    let out = ok(addr, &["pause", "version", &version.to_string()]);
    assert!(
        out.starts_with(&format!("paused version {version}")),
        "{out}"
    );
    assert_eq!(status(&runtime, &mut c, bot), pb::VersionStatus::Paused);
    let out = ok(addr, &["resume", "owner", &owner.to_string()]);
    assert_eq!(
        out.trim(),
        format!("resumed owner {owner}: lifted 0 pauses")
    );
    assert_eq!(status(&runtime, &mut c, bot), pb::VersionStatus::Paused);
    let out = ok(addr, &["resume", "version", &version.to_string()]);
    assert_eq!(
        out.trim(),
        format!("resumed version {version}: lifted 1 pause")
    );
    assert_eq!(status(&runtime, &mut c, bot), pb::VersionStatus::Active);

    let err = fails(addr, &["void", "4242", "--reason", "test"]);
    assert!(err.contains("not found") && err.contains("4242"), "{err}");

    // Seasons.
    let out = ok(addr, &["close-season"]);
    assert!(out.starts_with("closed season season-1"), "{out}");
    let err = fails(addr, &["close-season"]);
    assert!(err.contains("no season is open"), "{err}");
    let out = ok(addr, &["open-season", "2027-spring"]);
    assert_eq!(out.trim(), "opened season 2027-spring");
    let err = fails(addr, &["open-season", "2027-summer"]);
    assert!(err.contains("not now"), "{err}");

    // Formats.
    let out = ok(addr, &["set-formats", "classic:4=2.5", "brazilian:4"]);
    assert!(out.starts_with("formats now in force:"), "{out}");
    assert!(
        out.contains("classic") && out.contains("4 seats  weight 2.5"),
        "{out}"
    );
    assert!(
        out.contains("brazilian") && out.contains("4 seats  weight 1\n"),
        "{out}"
    );
    let err = fails(addr, &["set-formats", "brazilian:2"]);
    assert!(err.contains("4 to 8 seats"), "{err}");
    let err = fails(addr, &["set-formats", "chess:2"]);
    assert!(err.contains("unknown profile"), "{err}");
    let err = fails(addr, &["set-formats", "classic:4=lots"]);
    assert!(err.contains("PROFILE:SEATS"), "{err}");

    // Pruning, with no ladder match played yet.
    let out = ok(addr, &["prune-replays", "--keep", "0", "--dry-run"]);
    assert!(out.starts_with("would prune 0 replays"), "{out}");
    let out = ok(addr, &["prune-replays", "--older-than", "30d"]);
    assert!(
        out.starts_with("pruned 0 replays (0 B freed); 0 replays kept"),
        "{out}"
    );
    let err = fails(addr, &["prune-replays"]);
    assert!(err.contains("--older-than"), "{err}");
    let err = fails(addr, &["prune-replays", "--older-than", "3w"]);
    assert!(err.contains("s, m, h or d"), "{err}");

    // A server that does not run the ladder, and none at all.
    let plain_dir = tempfile::tempdir().unwrap();
    let plain = start(&runtime, plain_dir.path(), false);
    let err = fails(plain, &["close-season"]);
    assert!(err.contains("does not run the ladder"), "{err}");
    let unused = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = unused.local_addr().unwrap();
    drop(unused);
    let err = fails(gone, &["close-season"]);
    assert!(
        err.contains(&format!("cannot reach the server at http://{gone}")),
        "{err}"
    );
}
