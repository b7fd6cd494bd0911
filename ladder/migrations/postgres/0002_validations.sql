-- Step 2: validation verdicts, the same step as migrations/sqlite/0002_validations.sql. A
-- validation match is an unrated match in `matches` with one seat row for the version (its copies
-- at the table and the built-in bots beside them are the server's business); its verdict is kept
-- here when it finishes. reasons: one reason per line, empty when it passed.
CREATE TABLE validations (
    match_id    BIGINT PRIMARY KEY REFERENCES matches (id),
    version_id  BIGINT NOT NULL REFERENCES versions (id),
    passed      BOOLEAN NOT NULL,
    reasons     TEXT NOT NULL
);
CREATE INDEX validations_version ON validations (version_id, match_id);
