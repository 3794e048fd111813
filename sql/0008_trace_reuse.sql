-- A cached snapshot's trace references the render it reuses instead of copying
-- its ranked list (about 43 KB at 10k beliefs) and its dropped ids. Reading the
-- hit's trace joins the original under the same tenant and principal. The
-- reference is an operator field: the retention sweep clears it with the rest,
-- and keeps the original's operator fields while a hit that still needs them
-- has not expired.
ALTER TABLE recall_traces ADD COLUMN reuses_trace_id uuid;

CREATE INDEX recall_traces_reuses_idx ON recall_traces (tenant_id, principal_id, reuses_trace_id)
  WHERE reuses_trace_id IS NOT NULL;
