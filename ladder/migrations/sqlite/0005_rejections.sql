-- Step 5: refused actions per seat (the server's SeatStats.rejections), shown beside timeouts on
-- the bot and match pages. Seats of matches that ended before this step read 0.
ALTER TABLE match_seats ADD COLUMN rejections INTEGER NOT NULL DEFAULT 0 CHECK (rejections >= 0);
