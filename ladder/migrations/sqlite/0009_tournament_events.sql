-- Step 9 (PostgreSQL only): a tournament on several machines keeps its games in PostgreSQL
-- (`tournament_events`, `tournament_games`), which a single-process SQLite ladder never needs.
-- The step is recorded here too so that both stores count the same steps.
SELECT 1 WHERE 0;
