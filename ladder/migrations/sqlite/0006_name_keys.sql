-- Step 6: each name's comparison form (rules::name_key: NFKC, then the confusable skeleton,
-- case-folded), so that a name that looks like a taken one is found through an index. Rows from
-- before this step have none until the next registration of their kind fills it in.
ALTER TABLE owners ADD COLUMN name_key TEXT;
ALTER TABLE bots ADD COLUMN name_key TEXT;
ALTER TABLE versions ADD COLUMN label_key TEXT;
CREATE INDEX owners_by_name_key ON owners (name_key);
CREATE INDEX bots_by_name_key ON bots (name_key);
CREATE INDEX versions_by_label_key ON versions (bot_id, label_key);
