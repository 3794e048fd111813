-- A trace's ranked list is stored as the JSON text the sidecar sent (store/trace-rows.ts), not as
-- jsonb: nothing in SQL reads inside it, and parsing it into jsonb was most of a trace write's server
-- CPU (an in-turn trace 0.93 -> 0.47 ms, a cold snapshot's 3.8 -> 0.9 ms, measured on PostgreSQL 15).
-- Readers parse the text as before. The type change rewrites recall_traces once, under this
-- migration's lock; its ranked lists are operator fields, cleared after the retention window, so
-- the table holds at most that window's.
ALTER TABLE recall_traces ALTER COLUMN ranked TYPE text USING ranked::text;

-- As 0012: lz4 where the server has it (PGlite has not, and keeps pglz).
DO $$
BEGIN
  ALTER TABLE recall_traces ALTER COLUMN ranked SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
