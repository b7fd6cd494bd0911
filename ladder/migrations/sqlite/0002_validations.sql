-- Step 2: validation verdicts. A validation match is an unrated match in `matches` with one seat
-- row for the version (its copies at the table and the built-in bots beside them are the server's
-- business); its verdict is kept here when it finishes. reasons: one reason per line, empty when
-- it passed.
CREATE TABLE validations (
    match_id    INTEGER PRIMARY KEY REFERENCES matches (id),
    version_id  INTEGER NOT NULL REFERENCES versions (id),
    passed      INTEGER NOT NULL CHECK (passed IN (0, 1)),
    reasons     TEXT NOT NULL
);
CREATE INDEX validations_version ON validations (version_id, match_id);
