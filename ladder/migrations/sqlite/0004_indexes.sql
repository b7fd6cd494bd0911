-- Step 4: an index for the next rated sequence number (MAX(rated_seq) on every rated finish),
-- which otherwise scans the whole history of matches.
CREATE INDEX matches_rated_seq ON matches (rated_seq);
