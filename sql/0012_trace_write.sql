-- Less for each trace write to do (store/trace-rows.ts), without changing what is stored or read.

-- recall_traces_session_idx (0001) is a prefix of recall_traces_session_moment_idx (0004), which
-- serves every query by session, a session's deletion included: one index fewer to update per trace.
DROP INDEX recall_traces_session_idx;

-- The ranked list is most of a trace's row (about 20 KB of jsonb, 6 KB compressed) and about half of
-- the server CPU of its write. lz4 compresses it in less CPU than pglz (0.15-0.24 of the 1.2 ms an
-- in-turn trace's insert takes, measured on PostgreSQL 15) and decompresses it faster. It applies to
-- values written from now on; older ones stay pglz and read back the same. PGlite is built without
-- lz4 ("compression method lz4 not supported"): there the column keeps pglz.
DO $$
BEGIN
  ALTER TABLE recall_traces ALTER COLUMN ranked SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
  NULL;
END $$;
