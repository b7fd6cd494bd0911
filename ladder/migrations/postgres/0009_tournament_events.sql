-- Step 9: tournaments played on several machines (`maumau tournament --store postgres://...` and
-- any number of `maumau worker --store postgres://...`). An event is one tournament: its
-- description (entrants, rules, format, deals and the secret seed, as `tournament.json` holds it),
-- whether replays are kept, and the version of maumau that started it (workers of another
-- version refuse it). The command that started it renews `coordinator_until_ms` while it runs;
-- workers play no games of an event whose coordinator is gone.
CREATE TABLE tournament_events (
    id                   BIGSERIAL PRIMARY KEY,
    description          TEXT NOT NULL,
    replays              BOOLEAN NOT NULL,
    version              TEXT NOT NULL,
    state                TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'finished')),
    created_ms           BIGINT NOT NULL,
    coordinator_until_ms BIGINT NOT NULL
);

-- One row per game of a released round: its fixture (id, seed, seats), and who plays it. A game
-- is claimed under a lease (owner, epoch, expiry by the database's clock); its result is kept
-- only by the claim still holding the lease, and once.
CREATE TABLE tournament_games (
    id             BIGSERIAL PRIMARY KEY,
    event_id       BIGINT NOT NULL REFERENCES tournament_events (id) ON DELETE CASCADE,
    round          INTEGER NOT NULL,
    idx            INTEGER NOT NULL,
    fixture        TEXT NOT NULL,
    seed           BIGINT NOT NULL,
    seats          INTEGER[] NOT NULL,
    state          TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'claimed', 'done')),
    lease_owner    BIGINT,
    lease_epoch    BIGINT NOT NULL DEFAULT 0,
    lease_until_ms BIGINT,
    plays          INTEGER NOT NULL DEFAULT 0,
    record         TEXT,
    replay         BYTEA,
    UNIQUE (event_id, round, idx)
);

-- Claims look for the first unfinished game of a running event.
CREATE INDEX tournament_games_unfinished ON tournament_games (event_id, round, idx)
    WHERE state <> 'done';
