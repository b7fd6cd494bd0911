-- Step 10: a worker of a tournament on several machines asks, about once a second, which of the
-- duplicate deals it played sealed games of are over (every game of the seed done, wherever it
-- was played), to reveal them; this index finds a deal's games without reading every game of
-- the event.
CREATE INDEX tournament_games_deals ON tournament_games (event_id, seed);
