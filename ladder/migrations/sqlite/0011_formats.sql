-- Step 11: the formats the matchmaker makes once an operator has set them (SetFormats), in the
-- order given: they outlive a restart and, in a shared store, apply on every node. While the
-- table is empty the configuration's formats (ladder_formats) apply.
CREATE TABLE formats (
  position INTEGER PRIMARY KEY,
  profile TEXT NOT NULL,
  seats INTEGER NOT NULL,
  weight REAL NOT NULL,
  set_ms INTEGER NOT NULL
);
