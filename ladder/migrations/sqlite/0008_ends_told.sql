-- Step 8: whether the lobbies were told of a match's end (used by a ladder shared through
-- PostgreSQL, see postgres/0008_ends_told.sql; kept here so both stores have the same steps).
ALTER TABLE matches ADD COLUMN ends_told INTEGER NOT NULL DEFAULT 1;
