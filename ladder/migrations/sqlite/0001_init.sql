-- Step 1: the ladder's tables. Times are Unix milliseconds; seeds are u64 stored by bit pattern.
-- A PostgreSQL folder must carry the same steps with the same meaning.

CREATE TABLE owners (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    created_ms  INTEGER NOT NULL
);

CREATE TABLE bots (
    id          INTEGER PRIMARY KEY,
    owner_id    INTEGER NOT NULL REFERENCES owners (id),
    name        TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    created_ms  INTEGER NOT NULL
);
CREATE INDEX bots_owner ON bots (owner_id);

-- A version's label is immutable; retired_ms is set when it leaves the two newest of its bot.
CREATE TABLE versions (
    id          INTEGER PRIMARY KEY,
    bot_id      INTEGER NOT NULL REFERENCES bots (id),
    label       TEXT NOT NULL CHECK (length(label) > 0),
    created_ms  INTEGER NOT NULL,
    retired_ms  INTEGER,
    UNIQUE (bot_id, label)
);
CREATE TRIGGER versions_immutable BEFORE UPDATE OF bot_id, label, created_ms ON versions
BEGIN
    SELECT RAISE(ABORT, 'a version is immutable');
END;

-- Keys are stored only as SHA-256 hashes of their text.
CREATE TABLE keys (
    id          INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL CHECK (kind IN ('owner', 'version')),
    owner_id    INTEGER REFERENCES owners (id),
    version_id  INTEGER REFERENCES versions (id),
    hash        BLOB NOT NULL UNIQUE CHECK (length(hash) = 32),
    created_ms  INTEGER NOT NULL,
    revoked_ms  INTEGER,
    CHECK ((kind = 'owner' AND owner_id IS NOT NULL AND version_id IS NULL)
        OR (kind = 'version' AND version_id IS NOT NULL AND owner_id IS NULL))
);
CREATE INDEX keys_owner ON keys (owner_id);
CREATE INDEX keys_version ON keys (version_id);

CREATE TABLE seasons (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE CHECK (length(name) > 0),
    opened_ms   INTEGER NOT NULL,
    closed_ms   INTEGER
);
-- At most one open season.
CREATE UNIQUE INDEX seasons_one_open ON seasons ((closed_ms IS NULL)) WHERE closed_ms IS NULL;

-- rated: counts for ratings when finished (validation matches do not).
-- rated_seq: the order in which finished rated matches were rated; replays follow it.
CREATE TABLE matches (
    id          INTEGER PRIMARY KEY,
    season_id   INTEGER NOT NULL REFERENCES seasons (id),
    profile     TEXT NOT NULL,
    seed        INTEGER NOT NULL,
    rated       INTEGER NOT NULL CHECK (rated IN (0, 1)),
    state       TEXT NOT NULL
                CHECK (state IN ('scheduled', 'running', 'finished', 'aborted', 'void')),
    rated_seq   INTEGER UNIQUE,
    created_ms  INTEGER NOT NULL,
    started_ms  INTEGER,
    ended_ms    INTEGER,
    reason      TEXT
);
CREATE INDEX matches_state ON matches (state);
CREATE INDEX matches_season_profile ON matches (season_id, profile, rated_seq);

-- joined is NULL until the match ends; placing only for finished matches.
CREATE TABLE match_seats (
    match_id    INTEGER NOT NULL REFERENCES matches (id),
    seat        INTEGER NOT NULL CHECK (seat >= 0),
    version_id  INTEGER NOT NULL REFERENCES versions (id),
    placing     INTEGER CHECK (placing >= 1),
    joined      INTEGER CHECK (joined IN (0, 1)),
    timeouts    INTEGER NOT NULL DEFAULT 0 CHECK (timeouts >= 0),
    PRIMARY KEY (match_id, seat),
    UNIQUE (match_id, version_id)
);
CREATE INDEX match_seats_version ON match_seats (version_id, match_id);

-- The current rating of each version per season and profile; always equal to the last event.
CREATE TABLE ratings (
    season_id   INTEGER NOT NULL REFERENCES seasons (id),
    profile     TEXT NOT NULL,
    version_id  INTEGER NOT NULL REFERENCES versions (id),
    mu          REAL NOT NULL,
    sigma       REAL NOT NULL,
    matches     INTEGER NOT NULL,
    PRIMARY KEY (season_id, profile, version_id)
);

-- Every rating change. cause 'match': a rated match finished (one per seat, never two);
-- 'void': a voided match was taken out; 'rerate': an operator applied a recomputation.
CREATE TABLE rating_events (
    id            INTEGER PRIMARY KEY,
    season_id     INTEGER NOT NULL REFERENCES seasons (id),
    profile       TEXT NOT NULL,
    version_id    INTEGER NOT NULL REFERENCES versions (id),
    match_id      INTEGER REFERENCES matches (id),
    cause         TEXT NOT NULL CHECK (cause IN ('match', 'void', 'rerate')),
    mu_before     REAL NOT NULL,
    sigma_before  REAL NOT NULL,
    matches_before INTEGER NOT NULL,
    mu_after      REAL NOT NULL,
    sigma_after   REAL NOT NULL,
    matches_after INTEGER NOT NULL,
    created_ms    INTEGER NOT NULL
);
CREATE UNIQUE INDEX rating_events_once ON rating_events (match_id, version_id)
    WHERE cause = 'match';
CREATE INDEX rating_events_key ON rating_events (season_id, profile, version_id, id);

-- Pauses and bans. kind 'pause' is manual (never lifted by a match); 'health' is lifted by a clean
-- probe match or the owner; 'ban' only by an operator.
CREATE TABLE sanctions (
    id            INTEGER PRIMARY KEY,
    target        TEXT NOT NULL CHECK (target IN ('owner', 'bot', 'version')),
    target_id     INTEGER NOT NULL,
    kind          TEXT NOT NULL CHECK (kind IN ('ban', 'pause', 'health')),
    reason        TEXT NOT NULL,
    created_ms    INTEGER NOT NULL,
    lifted_ms     INTEGER,
    lifted_reason TEXT
);
CREATE INDEX sanctions_target ON sanctions (target, target_id);
