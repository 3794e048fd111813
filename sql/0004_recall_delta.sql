-- Snapshot watermark and recall delta on traces.
ALTER TABLE recall_traces
  ADD COLUMN snapshot_watermark bigint NOT NULL DEFAULT 0,
  ADD COLUMN delta_after        bigint,
  ADD COLUMN corrected          uuid[] NOT NULL DEFAULT '{}';

-- The session's snapshot trace is looked up on every in-turn recall with a delta.
CREATE INDEX recall_traces_session_moment_idx ON recall_traces (tenant_id, principal_id, session_id, moment, created_at);
