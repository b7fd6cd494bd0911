//! The operator token, wherever a command takes one (`serve`, `tournament --server`, `ladder ...`):
//! from a flag, the environment, a file or the configuration file, and never empty.
//!
//! An empty token is refused everywhere: a server started with one would let anyone who sends
//! `authorization: Bearer ` (nothing after it) make operator calls, and a client that sends one is
//! surely misconfigured. A token file is the way to keep the secret off the command line, which
//! every local user can read in `/proc/PID/cmdline`.

use std::path::Path;

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
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "cannot read the operator token file {}: {e}",
            path.display()
        )
    })?;
    let token = text.strip_suffix('\n').unwrap_or(&text);
    let token = token.strip_suffix('\r').unwrap_or(token);
    check(token.to_string(), &format!("the file {}", path.display()))
}

/// The token given by a flag (or its environment variable) or a file flag, checked; `None` when
/// neither is given. `flag_name` names the flag and its variable in messages.
pub(crate) fn resolve(
    flag: Option<&str>,
    file: Option<&Path>,
    flag_name: &str,
) -> Result<Option<String>, String> {
    match (flag, file) {
        (Some(_), Some(_)) => Err(format!(
            "give the operator token once: {flag_name} or --operator-token-file, not both"
        )),
        (Some(t), None) => check(t.to_string(), flag_name).map(Some),
        (None, Some(p)) => read_file(p).map(Some),
        (None, None) => Ok(None),
    }
}
