//! The operator token, wherever a command takes one (`serve`, `tournament --server`, `ladder ...`):
//! from a flag, the environment, a file or the configuration file, and never empty.
//!
//! An empty token is refused everywhere: a server started with one would let anyone who sends
//! `authorization: Bearer ` (nothing after it) make operator calls, and a client that sends one is
//! surely misconfigured. A token file is the way to keep the secret off the command line, which
//! every local user can read in `/proc/PID/cmdline`: `--operator-token` on the command line is
//! refused where the token guards something beyond loopback ([`refuse_on_command_line`]).
//!
//! Secret files (token files, the ladder's key files) are read with a size limit
//! ([`read_secret`]): a secret is short, and a large file is the wrong file.

use std::io::Read;
use std::path::{Path, PathBuf};

/// `--operator-token`, `--operator-token-file` and their variables, for every command that takes
/// the operator token (flattened into its arguments).
///
/// The help speaks to a client of a server (`maumau tournament --server`, `maumau ladder ...`);
/// `maumau serve`, which asks for the token, words `--operator-token` its own way.
#[derive(clap::Args)]
pub(crate) struct OperatorTokenArgs {
    /// The server's operator token (as given to `maumau serve`; never empty), if its operator
    /// calls need one.
    #[arg(long, env = "MAUMAU_OPERATOR_TOKEN", hide_env_values = true)]
    pub(crate) operator_token: Option<String>,
    /// Read the operator token from this file (without its trailing newline; an empty file is
    /// refused). Conflicts with --operator-token.
    #[arg(
        long,
        env = "MAUMAU_OPERATOR_TOKEN_FILE",
        value_name = "PATH",
        conflicts_with = "operator_token"
    )]
    pub(crate) operator_token_file: Option<PathBuf>,
}

impl OperatorTokenArgs {
    /// The token given by the flag (or its variable) or the file flag, checked; `None` when
    /// neither is given.
    pub(crate) fn resolve(&self) -> Result<Option<String>, String> {
        let flag_name = "--operator-token (or MAUMAU_OPERATOR_TOKEN)";
        match (&self.operator_token, &self.operator_token_file) {
            (Some(_), Some(_)) => Err(format!(
                "give the operator token once: {flag_name} or --operator-token-file, not both"
            )),
            (Some(t), None) => check(t.clone(), flag_name).map(Some),
            (None, Some(p)) => read_file(p).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// The token for the operator calls of a client of `server` (`host:port` or a URL): as
    /// [`OperatorTokenArgs::resolve`], after refusing it on the command line when the server is
    /// beyond loopback ([`refuse_on_command_line`]).
    pub(crate) fn for_server(&self, server: &str) -> Result<Option<String>, String> {
        refuse_on_command_line(!is_loopback(server))?;
        self.resolve()
    }
}

/// The largest secret file read: a token or a key is a line of at most a few hundred bytes.
pub(crate) const SECRET_FILE_LIMIT: u64 = 4096;

/// Reads a small secret file (`what` names it in messages): refused when it cannot be read, is
/// not text, or holds more than [`SECRET_FILE_LIMIT`] bytes.
pub(crate) fn read_secret(path: &Path, what: &str) -> Result<String, String> {
    let bytes = read_limited(path, what, SECRET_FILE_LIMIT)?;
    String::from_utf8(bytes).map_err(|_| format!("the {what} {} is not text", path.display()))
}

/// Reads a file of at most `limit` bytes (`what` names it in messages), or says why not.
pub(crate) fn read_limited(path: &Path, what: &str, limit: u64) -> Result<Vec<u8>, String> {
    let cannot = |e: std::io::Error| format!("cannot read the {what} {}: {e}", path.display());
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .map_err(cannot)?
        .take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > limit {
        return Err(format!(
            "the {what} {} is larger than {limit} bytes; is it the right file?",
            path.display()
        ));
    }
    Ok(bytes)
}

/// Whether a server address (`host:port` or a URL) names this machine: `localhost` or a
/// loopback IP address.
pub(crate) fn is_loopback(server: &str) -> bool {
    let rest = server.split_once("://").map_or(server, |(_, r)| r);
    let host_port = rest.split('/').next().unwrap_or_default();
    let host = match host_port.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host_port.rsplit_once(':').map_or(host_port, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Refuses `--operator-token` given on this process's command line when the token guards an
/// address beyond loopback (`beyond_loopback`): the command line is readable by every local user
/// (`ps`, `/proc/PID/cmdline`). The same token from `MAUMAU_OPERATOR_TOKEN` or a token file is
/// fine.
pub(crate) fn refuse_on_command_line(beyond_loopback: bool) -> Result<(), String> {
    let on_command_line = std::env::args_os().any(|a| {
        let a = a.to_string_lossy();
        a == "--operator-token" || a.starts_with("--operator-token=")
    });
    if beyond_loopback && on_command_line {
        return Err(
            "--operator-token puts the secret on the command line, which every local \
                    user can read (ps, /proc/PID/cmdline); beyond loopback give it with \
                    --operator-token-file PATH or the MAUMAU_OPERATOR_TOKEN variable"
                .into(),
        );
    }
    Ok(())
}

/// Checks a token from `source` (a flag, variable or key, named in the message): refused when
/// empty or only whitespace.
pub(crate) fn check(token: String, source: &str) -> Result<String, String> {
    if token.trim().is_empty() {
        return Err(format!(
            "the operator token from {source} is empty{}: an empty token would let anyone make \
             operator calls; give a secret, or leave it unset",
            if token.is_empty() {
                ""
            } else {
                " (only whitespace)"
            }
        ));
    }
    Ok(token)
}

/// Reads a token from a file: its content without the trailing line end. An empty file (or one
/// with only whitespace) is refused, and so is a file that cannot be read.
pub(crate) fn read_file(path: &Path) -> Result<String, String> {
    let text = read_secret(path, "operator token file")?;
    let token = text.strip_suffix('\n').unwrap_or(&text);
    let token = token.strip_suffix('\r').unwrap_or(token);
    check(token.to_string(), &format!("the file {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_told_apart() {
        for yes in [
            "127.0.0.1:50051",
            "http://localhost:1",
            "[::1]:9",
            "https://127.1.2.3/x",
        ] {
            assert!(is_loopback(yes), "{yes}");
        }
        for no in [
            "10.0.0.1:50051",
            "https://cards.example",
            "[2001:db8::1]:1",
            "0.0.0.0:1",
        ] {
            assert!(!is_loopback(no), "{no}");
        }
    }

    /// The flags are declared once, for every command: `serve` words `--operator-token` as the
    /// server that asks for it, the clients as the token their server was given.
    #[test]
    fn every_command_takes_the_operator_token_flags() {
        use clap::CommandFactory;
        let cli = crate::Cli::command();
        cli.clone().debug_assert();
        let help = |path: &[&str], flag: &str| {
            let command = path.iter().fold(&cli, |c, name| {
                c.find_subcommand(name).expect("a subcommand")
            });
            let arg = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag))
                .expect("the flag");
            arg.get_help().map(ToString::to_string).unwrap_or_default()
        };
        assert!(help(&["serve"], "operator-token").starts_with("Token needed for operator calls"));
        for client in [
            &["tournament"][..],
            &["ladder", "ban"],
            &["ladder", "prune-replays"],
        ] {
            assert!(
                help(client, "operator-token").starts_with("The server's operator token"),
                "{client:?}"
            );
        }
        for command in [&["serve"][..], &["tournament"], &["ladder", "void"]] {
            let file = help(command, "operator-token-file");
            assert!(
                file.starts_with("Read the operator token from this file"),
                "{command:?}"
            );
        }
    }

    #[test]
    fn a_secret_file_over_the_limit_is_refused() {
        let dir = tempfile::tempdir().expect("a directory");
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; SECRET_FILE_LIMIT as usize + 1]).expect("write");
        let e = read_secret(&big, "key file").expect_err("too large");
        assert!(e.contains("larger than 4096 bytes"), "{e}");
        let small = dir.path().join("small");
        std::fs::write(&small, "secret\n").expect("write");
        assert_eq!(read_secret(&small, "key file").as_deref(), Ok("secret\n"));
    }
}
