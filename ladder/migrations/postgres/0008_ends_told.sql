-- Step 8: whether the lobbies were told of a match's end. A node that claims a match clears it;
-- whoever posts the match's end messages (its node, or the matchmaker for a node that died
-- between recording the end and posting them) sets it in the same transaction, and only the
-- one that sets it posts them: a recorded result reaches its bots once, through any node.
ALTER TABLE matches ADD COLUMN ends_told BOOLEAN NOT NULL DEFAULT TRUE;
CREATE INDEX matches_untold ON matches (id) WHERE NOT ends_told;
