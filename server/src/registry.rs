//! The matches a server knows: open ones in memory (with their table task), finished ones in
//! the store (`store.rs`, in front of the configured `Archive`), read back when asked for.
//! A match leaves memory as soon as its record is committed, so the server's memory is bounded
//! by its open matches, not by its history.
//!
//! The maps sit behind plain `std::sync::Mutex`es that are never held across an `.await`; the
//! store is read on tokio's blocking pool.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use maumau::{pb, wire};
use maumau_engine::Seat;
use rand::RngExt;
use tokio::sync::{mpsc, watch};
use tonic::Status;

use crate::archive::MemoryArchive;
use crate::config::ServerConfig;
use crate::store::Store;
use crate::sync::lock;
use crate::table::{Handle, NewMatch, Role, Table};
use crate::transport::Roaming;

/// The matches in memory: the open ones (and, while the server is torn down, ended ones whose
/// record could not be stored).
struct Inner {
    matches: HashMap<String, Arc<Handle>>,
    tokens: HashMap<String, (Arc<Handle>, Role)>,
    open: usize,
}

/// All matches of one server.
pub(crate) struct Registry {
    pub(crate) config: ServerConfig,
    /// Shared with the open matches' handles, which submit their records to it.
    store: Arc<Store>,
    inner: Mutex<Inner>,
    next_conn: AtomicU64,
    /// The next match's creation order.
    next_seq: AtomicU64,
}

/// A fresh 128-bit secret, as 32 hex digits.
fn secret() -> String {
    format!("{:032x}", rand::rng().random::<u128>())
}

impl Registry {
    /// Opens the registry on the configured archive (in memory when none is configured), which
    /// imports records of earlier formats. Nothing finished is loaded into memory.
    pub(crate) fn open(config: ServerConfig) -> std::io::Result<Arc<Registry>> {
        let archive = config
            .archive
            .clone()
            .unwrap_or_else(|| Arc::new(MemoryArchive::default()));
        let store = Arc::new(Store::open(archive, Handle::summarize)?);
        let next_seq = AtomicU64::new(store.last_seq() + 1);
        Ok(Arc::new(Registry {
            config,
            store,
            inner: Mutex::new(Inner {
                matches: HashMap::new(),
                tokens: HashMap::new(),
                open: 0,
            }),
            next_conn: AtomicU64::new(1),
            next_seq,
        }))
    }

    pub(crate) fn next_conn(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::Relaxed)
    }

    /// Deals the match, starts its table task and returns the response with the tokens, and the
    /// match.
    pub(crate) fn create(
        self: &Arc<Self>,
        m: NewMatch,
    ) -> Result<(pb::CreateMatchResponse, Arc<Handle>), Status> {
        if !self.store.healthy() {
            return Err(wire::status(
                pb::ErrorReason::StorageUnavailable,
                "the server cannot write its data directory (see its log), so it takes no new \
                 match until it can; try again later",
            ));
        }
        let mut log = Vec::new();
        let game = maumau::replay::start_game(m.config, m.seed, m.start.as_ref(), &mut log)
            .map_err(|e| {
                // A seeded deal fails only on its configuration; a deck or position on itself.
                let reason = match m.start {
                    None => pb::ErrorReason::InvalidConfig,
                    Some(_) => pb::ErrorReason::InvalidSetup,
                };
                wire::status(reason, e)
            })?;
        let id = format!("m{}", &secret()[..16]);
        let (tx, rx) = mpsc::channel(256);
        let mut tokens = Vec::new();
        let mut response = pb::CreateMatchResponse {
            match_id: id.clone(),
            seat_tokens: Vec::new(),
            spectator_token: secret(),
            seed_commitment: Vec::new(),
        };
        for seat in 0..game.seats() {
            if m.bots[seat as usize].is_none() {
                let token = secret();
                tokens.push((token.clone(), Role::Seat(seat)));
                response.seat_tokens.push(pb::SeatToken {
                    seat: seat.into(),
                    token,
                });
            }
        }
        tokens.push((response.spectator_token.clone(), Role::Spectator));
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(Handle::open(
            id.clone(),
            &m,
            &game,
            seq,
            tokens,
            tx,
            Arc::downgrade(&self.store),
        ));
        response.seed_commitment = entry.seed_commitment.clone();
        {
            let mut inner = lock(&self.inner);
            if inner.open >= self.config.max_open_matches {
                return Err(wire::status(
                    pb::ErrorReason::Unavailable,
                    format!("the server already holds {} open matches", inner.open),
                ));
            }
            inner.open += 1;
            crate::metrics::match_opened();
            for (token, role) in entry.tokens() {
                inner.tokens.insert(token.clone(), (entry.clone(), *role));
            }
            inner.matches.insert(id.clone(), entry.clone());
        }
        let ended = entry.clone();
        let created = entry.clone();
        let table = Table::new(
            entry,
            game,
            log,
            &m.bots,
            m.clock,
            m.join_timeout.unwrap_or(self.config.join_timeout),
            crate::table::SeatLimits::from_config(&self.config),
        );
        let registry = self.clone();
        let mover = table.mover();
        // The table starts on a task of its own and moves to its seats' connection once they
        // all play through one (see `transport::Roaming` and `Table::follow_seats`).
        tokio::spawn(Roaming::new(
            async move {
                table.run(rx).await;
                registry.closed(&ended);
            },
            mover,
        ));
        Ok((response, created))
    }

    /// A table task ended: its slot is free, and a match whose record is committed leaves
    /// memory: from now on it is read from the store. Its tokens keep working (the store keeps
    /// their hashes), so a seat that reconnects late still receives the final report. Only when
    /// the record could not be stored (the server was torn down) does the match stay here.
    fn closed(&self, entry: &Handle) {
        let mut inner = lock(&self.inner);
        inner.open = inner.open.saturating_sub(1);
        crate::metrics::match_closed();
        if entry.stored() {
            inner.matches.remove(&entry.id);
            for (token, _) in entry.tokens() {
                inner.tokens.remove(token);
            }
        }
        drop(inner);
        entry.close();
    }

    /// How many matches and tokens the registry holds in memory (the open matches').
    #[cfg(test)]
    pub(crate) fn in_memory(&self) -> (usize, usize) {
        let inner = lock(&self.inner);
        (inner.matches.len(), inner.tokens.len())
    }

    /// An open match (in memory; `None` for a finished one).
    pub(crate) fn open_match(&self, id: &str) -> Option<Arc<Handle>> {
        lock(&self.inner).matches.get(id).cloned()
    }

    /// A finished match, read from the store. Blocking.
    fn stored(self: &Arc<Self>, id: &str) -> Option<Arc<Handle>> {
        let (seq, record) = self.store.read(id)?;
        Handle::from_record(seq, Arc::new(record)).map(Arc::new)
    }

    /// The match and role a token belongs to: an open match's from memory, else a finished
    /// match's from the store, if the connection may still pay for the look (see
    /// `Home::store_look`); `None` when neither, or when the budget is spent.
    pub(crate) async fn by_token(self: &Arc<Self>, token: &str) -> Option<(Arc<Handle>, Role)> {
        if let Some(found) = self.open_by_token(token) {
            return Some(found);
        }
        if crate::transport::Home::current().is_some_and(|home| !home.store_look()) {
            return None;
        }
        self.stored_by_token(token).await
    }

    /// The open match a token belongs to, and its role there, from memory.
    pub(crate) fn open_by_token(&self, token: &str) -> Option<(Arc<Handle>, Role)> {
        lock(&self.inner).tokens.get(token).cloned()
    }

    /// The finished match a token belongs to, from the store (a look on the blocking pool: see
    /// `Home::store_look` for what a connection may spend on these).
    pub(crate) async fn stored_by_token(
        self: &Arc<Self>,
        token: &str,
    ) -> Option<(Arc<Handle>, Role)> {
        let (registry, token) = (self.clone(), token.to_string());
        tokio::task::spawn_blocking(move || {
            let (id, seat) = registry.store.token(&token)?;
            let role = match seat {
                Some(s) => Role::Seat(Seat::try_from(s).ok()?),
                None => Role::Spectator,
            };
            Some((registry.get_blocking(&id)?, role))
        })
        .await
        .ok()?
    }

    /// A match: an open one from memory, else a finished one from the store.
    pub(crate) async fn get(self: &Arc<Self>, id: &str) -> Option<Arc<Handle>> {
        if let Some(e) = lock(&self.inner).matches.get(id).cloned() {
            return Some(e);
        }
        let (registry, id) = (self.clone(), id.to_string());
        tokio::task::spawn_blocking(move || registry.stored(&id))
            .await
            .ok()?
    }

    /// [`Registry::get`] for a caller on a blocking thread.
    pub(crate) fn get_blocking(self: &Arc<Self>, id: &str) -> Option<Arc<Handle>> {
        if let Some(e) = lock(&self.inner).matches.get(id).cloned() {
            return Some(e);
        }
        self.stored(id)
    }

    /// Summaries of matches newest first (as the contract says), at most `limit`, optionally of
    /// one status, from the cursor `start`: 0 for the newest, else the cursor the previous page
    /// returned (a creation order: matches created meanwhile do not shift later pages). The
    /// returned cursor is `None` when no further match would be listed.
    pub(crate) async fn list(
        self: &Arc<Self>,
        start: u64,
        limit: usize,
        status: Option<pb::MatchStatus>,
    ) -> (Vec<pb::MatchSummary>, Option<u64>) {
        let before = if start == 0 { u64::MAX } else { start };
        // Memory first, then the store: a match that ends in between is in the store by then
        // (it leaves memory only after its commit), and is listed once.
        let mut open: Vec<(u64, pb::MatchSummary)> = lock(&self.inner)
            .matches
            .values()
            .filter(|e| e.seq < before && status.is_none_or(|s| e.status() == s))
            .map(|e| (e.seq, e.summary()))
            .collect();
        let registry = self.clone();
        let want = limit.saturating_add(1);
        let stored = tokio::task::spawn_blocking(move || {
            registry.store.list(before, status.map(|s| s as i32), want)
        })
        .await
        .unwrap_or_default();
        open.retain(|(seq, _)| !stored.iter().any(|(s, _)| s == seq));
        let mut all = stored;
        all.append(&mut open);
        all.sort_by_key(|(seq, _)| std::cmp::Reverse(*seq));
        let more = all.len() > limit;
        all.truncate(limit);
        let next = if more {
            all.last().map(|(seq, _)| *seq)
        } else {
            None
        };
        (all.into_iter().map(|(_, s)| s).collect(), next)
    }

    /// When a stored match ended and whether its replay is pruned; `None` while it is open or
    /// its record is not committed yet. Blocking.
    pub(crate) fn stored_end(&self, id: &str) -> Option<(u64, bool)> {
        self.store.ended(id)
    }

    /// Deletes a stored match's replay actions, keeping its report and the replay's header, and
    /// returns the bytes freed; `None` when there is nothing to prune or the write failed
    /// (logged). Blocking.
    pub(crate) fn prune_replay(&self, id: &str) -> Option<u64> {
        self.store.prune(id)
    }

    /// Reveals a sealed match that has ended: clears the flag in its stored record (and in
    /// memory, for an entry still there). `Ok(true)` when it was sealed; `Err` with the status
    /// to answer when the match is unknown, still open, or the write failed.
    pub(crate) async fn reveal(self: &Arc<Self>, id: &str) -> Result<bool, Status> {
        let open = lock(&self.inner).matches.get(id).cloned();
        if open.as_ref().is_some_and(|entry| !entry.has_ended()) {
            return Err(wire::status(
                pb::ErrorReason::MatchNotFinished,
                "the match is still being played: reveal it once it has ended",
            ));
        }
        let (registry, key) = (self.clone(), id.to_string());
        let stored = tokio::task::spawn_blocking(move || registry.store.reveal(&key))
            .await
            .map_err(|_| wire::status(pb::ErrorReason::Internal, "the reveal task failed"))?;
        let was_sealed = match (stored, &open) {
            (Ok(Some(was)), _) => was,
            // Ended, but its record is not stored (the server is being torn down).
            (Ok(None), Some(_)) => false,
            (Ok(None), None) => {
                return Err(wire::status(
                    pb::ErrorReason::MatchNotFound,
                    format!("no match `{}`", crate::reasons::echo(id)),
                ));
            }
            (Err(()), _) => {
                return Err(wire::status(
                    pb::ErrorReason::StorageUnavailable,
                    "the match's record could not be rewritten; try again",
                ));
            }
        };
        if let Some(entry) = open {
            entry.unseal();
        }
        Ok(was_sealed)
    }

    /// Follows whether the store can write; health reports NOT_SERVING while it cannot.
    pub(crate) fn storage_health(&self) -> watch::Receiver<bool> {
        self.store.health()
    }

    /// Aborts every open match and waits until each is recorded (for at most a minute: a disk
    /// that cannot be written then loses the aborted matches, which no one was told had ended).
    pub(crate) async fn shutdown(&self) {
        let open: Vec<Arc<Handle>> = lock(&self.inner)
            .matches
            .values()
            .filter(|e| e.sender().is_some())
            .cloned()
            .collect();
        for entry in open {
            entry.abort("the server shut down".into()).await;
        }
        // Wait for the tables to end and their records to be written.
        let until = tokio::time::Instant::now() + Duration::from_secs(60);
        while tokio::time::Instant::now() < until {
            if lock(&self.inner).open == 0 && self.store.writing() == 0 {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        tracing::error!(
            open = lock(&self.inner).open,
            unwritten = self.store.writing(),
            "stopping with matches not recorded: the data directory cannot be written"
        );
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::config::TimeControl;
    use maumau_engine::MatchConfig;

    /// A classic two-seat, one-round match; `bots` seats are the server's random bot.
    fn new_match(seed: u64, bots: usize) -> NewMatch {
        let config = MatchConfig::try_from(&pb::MatchConfig {
            profile: pb::Profile::Classic as i32,
            seats: 2,
            options: Some(pb::ProfileOptions {
                single_round: true,
                ..Default::default()
            }),
            ..Default::default()
        })
        .unwrap();
        let mut seats = vec![None; 2];
        for s in seats.iter_mut().rev().take(bots) {
            *s = Some(pb::BotKind::Random);
        }
        NewMatch {
            config,
            seed,
            start: None,
            clock: TimeControl::default(),
            bots: seats,
            rated: false,
            label: format!("m{seed}"),
            join_timeout: None,
            sealed: false,
            names: Vec::new(),
        }
    }

    /// Memory holds the open matches only: finished ones leave it once stored, and are read
    /// back from the store (by id, by token and in the list, newest first).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn finished_matches_leave_memory() {
        let dir = tempfile::tempdir().unwrap();
        let registry = Registry::open(ServerConfig {
            data_dir: dir.path().to_path_buf(),
            ..ServerConfig::default()
        })
        .unwrap();
        // One open match, waiting for its remote seat.
        let (open, _) = registry.create(new_match(0, 1)).unwrap();
        const N: u64 = 60;
        let mut created = Vec::new();
        for seed in 1..=N {
            created.push(registry.create(new_match(seed, 2)).unwrap().0);
        }
        // Wait until every bots-only table has ended (after its record was stored).
        while lock(&registry.inner).open > 1 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(
            registry.in_memory(),
            (1, 2),
            "only the open match and its two tokens are in memory"
        );
        // Everything is read back from the store.
        let mut listed = Vec::new();
        let mut cursor = 0;
        loop {
            let (page, next) = registry.list(cursor, 7, None).await;
            listed.extend(page);
            match next {
                Some(n) => cursor = n,
                None => break,
            }
        }
        let mut want: Vec<&str> = created.iter().map(|c| c.match_id.as_str()).collect();
        want.insert(0, &open.match_id);
        want.reverse();
        assert_eq!(
            listed
                .iter()
                .map(|s| s.match_id.as_str())
                .collect::<Vec<_>>(),
            want,
            "newest first, each once"
        );
        let (finished, _) = registry.list(0, 500, Some(pb::MatchStatus::Finished)).await;
        assert_eq!(finished.len() as u64, N);
        let (entry, role) = registry
            .stored_by_token(&created[0].spectator_token)
            .await
            .unwrap();
        assert_eq!(role, Role::Spectator);
        assert_eq!(entry.id, created[0].match_id);
        assert_eq!(entry.status(), pb::MatchStatus::Finished);
        assert!(entry.report().is_some() && entry.replay().is_some());
        assert_eq!(registry.in_memory(), (1, 2), "reading does not keep it");
    }
}
