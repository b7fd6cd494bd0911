-- Step 7: the game server's id of each match's table (the id of MatchService's GetMatch, set once
-- when the table is created), so that the ladder service finds a match's table, viewer and replay
-- again after a restart from its own store. Matches scheduled before this step have none.
ALTER TABLE matches ADD COLUMN server_match_id TEXT;
