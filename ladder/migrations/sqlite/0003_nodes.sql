-- Step 3: several server nodes on one store. Only PostgreSQL has several nodes (see
-- migrations/postgres/0003_nodes.sql); SQLite carries the same step so that the two folders keep
-- the same steps, and its store (one process) leaves these tables and columns empty.
CREATE TABLE nodes (
    id            INTEGER PRIMARY KEY,
    address       TEXT NOT NULL,
    started_ms    INTEGER NOT NULL,
    heartbeat_ms  INTEGER NOT NULL,
    stopped_ms    INTEGER
);

CREATE TABLE node_lobbies (
    node_id       INTEGER NOT NULL REFERENCES nodes (id),
    version_id    INTEGER NOT NULL REFERENCES versions (id),
    max_matches   INTEGER NOT NULL,
    profiles      TEXT NOT NULL,
    seats         TEXT NOT NULL,
    PRIMARY KEY (node_id, version_id)
);

ALTER TABLE matches ADD COLUMN lease_owner INTEGER REFERENCES nodes (id);
ALTER TABLE matches ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matches ADD COLUMN lease_expires_ms INTEGER;
ALTER TABLE matches ADD COLUMN table_seats INTEGER;
ALTER TABLE matches ADD COLUMN copies INTEGER;
ALTER TABLE matches ADD COLUMN attempt INTEGER NOT NULL DEFAULT 0;
ALTER TABLE matches ADD COLUMN retry_of INTEGER REFERENCES matches (id);

CREATE TABLE lobby_events (
    id            INTEGER PRIMARY KEY,
    version_id    INTEGER NOT NULL REFERENCES versions (id),
    payload       BLOB NOT NULL,
    created_ms    INTEGER NOT NULL
);
CREATE INDEX lobby_events_version ON lobby_events (version_id, id);
