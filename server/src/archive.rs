//! The archive of finished matches: the trait a storage implements, and an in-memory one.
//!
//! The server keeps only its open matches in memory. Once a match has ended, its record (report,
//! replay, the summary ListMatches shows, hashed tokens) goes to an [`Archive`], and everything
//! finished is read back from there when asked for. The server owns the generic part (`store.rs`:
//! the writer queue that commits batches on tokio's blocking pool, health, retries); an archive
//! only stores and reads. Every method is synchronous and called on the blocking pool.
//!
//! Two archives exist: the SQLite one in the `maumau-archive` crate, which `maumau serve` uses
//! (`<data_dir>/matches.sqlite`, durable), and [`MemoryArchive`] here, which the server uses when
//! [`ServerConfig::archive`](crate::ServerConfig::archive) names none: for embedding and tests
//! that need no disk. It is **not durable**: a restart forgets every finished match.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use maumau::pb;
use prost::Message;

use crate::sync::lock;

/// Why an archive could not read or write (logged by the server, which retries a failed commit).
pub type ArchiveError = Box<dyn std::error::Error + Send + Sync>;

/// Makes the summary ListMatches shows from a record and its creation order (`None`: the record
/// is not usable). The server passes one to [`Archive::start`] for records it imports.
pub type Summarize = fn(u64, Arc<pb::StoredMatch>) -> Option<pb::MatchSummary>;

/// A finished match to archive.
#[derive(Clone, Debug)]
pub struct ArchivedMatch {
    /// Creation order: ListMatches' order and page cursor.
    pub seq: u64,
    /// The match id.
    pub id: String,
    /// The record: report, replay, configuration.
    pub record: Arc<pb::StoredMatch>,
    /// The summary ListMatches shows.
    pub summary: pb::MatchSummary,
    /// SHA-256 hashes of the match's tokens (see [`token_hash`]) with their seat (`None` for the
    /// spectator token), so a seat that comes back late still gets the final report.
    pub tokens: Vec<([u8; 32], Option<u32>)>,
}

/// Where finished matches are kept. Implementations are called from tokio's blocking pool, one
/// [`commit`](Archive::commit) at a time; reads may run beside a commit.
pub trait Archive: Send + Sync + std::fmt::Debug {
    /// Called once as the server starts, before any other method: opens the storage (an error
    /// stops the server from starting: a server that could not store results must not run),
    /// imports records of earlier formats with `summarize`, and returns the creation order of
    /// the newest stored match (0 when there is none).
    fn start(&self, summarize: Summarize) -> std::io::Result<u64>;

    /// Names the archive in logs (the SQLite archive: its file).
    fn name(&self) -> String;

    /// Stores finished matches all at once, durably before it returns; a row replaces a stored
    /// one with its id. On an error nothing is stored and the server tries again later.
    fn commit(&self, rows: &[&ArchivedMatch]) -> Result<(), ArchiveError>;

    /// The creation order and record of one finished match (`None`: unknown, or its record is
    /// damaged, which the archive logs).
    fn read(&self, id: &str) -> Result<Option<(u64, pb::StoredMatch)>, ArchiveError>;

    /// The finished match a token hash belongs to, and the token's seat (`None`: the spectator).
    fn token(&self, hash: &[u8; 32]) -> Result<Option<(String, Option<u32>)>, ArchiveError>;

    /// Creation orders and summaries of finished matches created before `before`, newest
    /// first, at most `limit`, only of `status` when given (a `maumau.v1.MatchStatus`).
    fn list(
        &self,
        before: u64,
        status: Option<i32>,
        limit: usize,
    ) -> Result<Vec<(u64, pb::MatchSummary)>, ArchiveError>;

    /// When a finished match ended (Unix milliseconds) and whether its replay is pruned.
    fn ended(&self, id: &str) -> Result<Option<(u64, bool)>, ArchiveError>;

    /// Deletes the replay's actions from a stored record (see [`prune_replay`]) and returns the
    /// bytes freed; `None` when there is nothing to prune (no such finished match, or its
    /// replay is pruned already).
    fn prune(&self, id: &str) -> Result<Option<u64>, ArchiveError>;

    /// Clears the `sealed` flag of a stored record (the operator revealed the match): returns
    /// whether it was set, or `None` when no finished match has this id. Durable before it
    /// returns, like a commit.
    fn reveal(&self, id: &str) -> Result<Option<bool>, ArchiveError>;
}

/// The SHA-256 of a token, as archived.
pub fn token_hash(token: &str) -> [u8; 32] {
    use sha2::Digest;
    sha2::Sha256::digest(token.as_bytes()).into()
}

/// Prunes a record's replay: deletes its actions (and refused messages), keeping the report and the replay's header,
/// and marks record and summary pruned. Returns the bytes freed in the encoded record.
pub fn prune_replay(record: &mut pb::StoredMatch, summary: &mut pb::MatchSummary) -> u64 {
    let before = record.encoded_len();
    if let Some(replay) = &mut record.replay {
        replay.actions = Vec::new();
        replay.rejections = Vec::new();
    }
    record.replay_pruned = true;
    summary.replay_pruned = true;
    before.saturating_sub(record.encoded_len()) as u64
}

/// Finished matches in memory: for embedding and tests that need no disk. **Not durable**: a
/// restart (or dropping it) forgets them all, and memory grows with the history. The server
/// uses one when [`ServerConfig::archive`](crate::ServerConfig::archive) is `None`.
#[derive(Debug, Default)]
pub struct MemoryArchive {
    inner: Mutex<Memory>,
}

#[derive(Debug, Default)]
struct Memory {
    /// By creation order.
    matches: BTreeMap<u64, ArchivedMatch>,
    /// Match id to creation order.
    ids: HashMap<String, u64>,
    /// Token hash to match id and seat.
    tokens: HashMap<[u8; 32], (String, Option<u32>)>,
}

impl Memory {
    fn by_id(&self, id: &str) -> Option<&ArchivedMatch> {
        self.ids.get(id).and_then(|seq| self.matches.get(seq))
    }
}

impl Archive for MemoryArchive {
    fn start(&self, _summarize: Summarize) -> std::io::Result<u64> {
        Ok(lock(&self.inner)
            .matches
            .last_key_value()
            .map_or(0, |(seq, _)| *seq))
    }

    fn name(&self) -> String {
        "memory (not durable)".into()
    }

    fn commit(&self, rows: &[&ArchivedMatch]) -> Result<(), ArchiveError> {
        let mut memory = lock(&self.inner);
        for row in rows {
            if let Some(old) = memory.ids.insert(row.id.clone(), row.seq) {
                memory.matches.remove(&old);
            }
            for (hash, seat) in &row.tokens {
                memory.tokens.insert(*hash, (row.id.clone(), *seat));
            }
            memory.matches.insert(row.seq, ArchivedMatch::clone(row));
        }
        Ok(())
    }

    fn read(&self, id: &str) -> Result<Option<(u64, pb::StoredMatch)>, ArchiveError> {
        Ok(lock(&self.inner)
            .by_id(id)
            .map(|m| (m.seq, pb::StoredMatch::clone(&m.record))))
    }

    fn token(&self, hash: &[u8; 32]) -> Result<Option<(String, Option<u32>)>, ArchiveError> {
        Ok(lock(&self.inner).tokens.get(hash).cloned())
    }

    fn list(
        &self,
        before: u64,
        status: Option<i32>,
        limit: usize,
    ) -> Result<Vec<(u64, pb::MatchSummary)>, ArchiveError> {
        Ok(lock(&self.inner)
            .matches
            .range(..before)
            .rev()
            .filter(|(_, m)| status.is_none_or(|s| m.summary.status == s))
            .take(limit)
            .map(|(seq, m)| (*seq, m.summary.clone()))
            .collect())
    }

    fn ended(&self, id: &str) -> Result<Option<(u64, bool)>, ArchiveError> {
        Ok(lock(&self.inner)
            .by_id(id)
            .map(|m| (m.record.ended_unix_ms, m.record.replay_pruned)))
    }

    fn prune(&self, id: &str) -> Result<Option<u64>, ArchiveError> {
        let mut memory = lock(&self.inner);
        let Some(seq) = memory.ids.get(id).copied() else {
            return Ok(None);
        };
        let Some(m) = memory.matches.get_mut(&seq) else {
            return Ok(None);
        };
        if m.record.replay_pruned {
            return Ok(None);
        }
        let mut record = pb::StoredMatch::clone(&m.record);
        let freed = prune_replay(&mut record, &mut m.summary);
        m.record = Arc::new(record);
        Ok(Some(freed))
    }

    fn reveal(&self, id: &str) -> Result<Option<bool>, ArchiveError> {
        let mut memory = lock(&self.inner);
        let Some(seq) = memory.ids.get(id).copied() else {
            return Ok(None);
        };
        let Some(m) = memory.matches.get_mut(&seq) else {
            return Ok(None);
        };
        let was = m.record.sealed;
        if was {
            Arc::make_mut(&mut m.record).sealed = false;
        }
        Ok(Some(was))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(seq: u64, label: &str, status: pb::MatchStatus) -> ArchivedMatch {
        let id = format!("m-{seq}");
        ArchivedMatch {
            seq,
            id: id.clone(),
            record: Arc::new(pb::StoredMatch {
                label: label.into(),
                ended_unix_ms: 1000 + seq,
                replay: Some(pb::Replay {
                    actions: vec![pb::ReplayAction::default(); 3],
                    ..Default::default()
                }),
                ..Default::default()
            }),
            summary: pb::MatchSummary {
                match_id: id,
                status: status as i32,
                ..Default::default()
            },
            tokens: vec![(token_hash(&format!("t-{seq}")), Some(0))],
        }
    }

    /// The memory archive answers like the SQLite one: newest first, by status, labels by
    /// prefix, tokens by hash, a replay pruned once.
    #[test]
    fn the_memory_archive_keeps_what_it_was_given() {
        let archive = MemoryArchive::default();
        assert_eq!(archive.start(|_, _| None).expect("start"), 0);
        let (a, b, c) = (
            row(1, "cup/1", pb::MatchStatus::Finished),
            row(2, "cup/2", pb::MatchStatus::Aborted),
            row(3, "other", pb::MatchStatus::Finished),
        );
        archive.commit(&[&a, &b]).expect("commit");
        archive.commit(&[&c]).expect("commit");
        assert_eq!(archive.start(|_, _| None).expect("start"), 3);
        let seqs =
            |l: Vec<(u64, pb::MatchSummary)>| l.into_iter().map(|(s, _)| s).collect::<Vec<_>>();
        assert_eq!(
            seqs(archive.list(u64::MAX, None, 10).expect("list")),
            vec![3, 2, 1]
        );
        assert_eq!(seqs(archive.list(3, None, 1).expect("list")), vec![2]);
        let finished = Some(pb::MatchStatus::Finished as i32);
        assert_eq!(
            seqs(archive.list(u64::MAX, finished, 10).expect("list")),
            vec![3, 1]
        );
        assert_eq!(
            archive.token(&token_hash("t-2")).expect("token"),
            Some(("m-2".into(), Some(0)))
        );
        assert_eq!(archive.token(&token_hash("t-9")).expect("token"), None);
        assert_eq!(archive.ended("m-3").expect("ended"), Some((1003, false)));
        assert!(
            archive
                .prune("m-3")
                .expect("prune")
                .is_some_and(|freed| freed > 0)
        );
        assert_eq!(archive.prune("m-3").expect("prune"), None);
        assert_eq!(archive.ended("m-3").expect("ended"), Some((1003, true)));
        let (seq, record) = archive.read("m-3").expect("read").expect("stored");
        assert_eq!(seq, 3);
        assert!(record.replay.expect("replay").actions.is_empty());
        assert_eq!(archive.read("m-9").expect("read"), None);
    }
}
