-- Step 10 (PostgreSQL only): an index on the games of a tournament on several machines, which
-- are kept in PostgreSQL alone (see step 9). The step is recorded here too so that both stores
-- count the same steps.
SELECT 1 WHERE 0;
