-- A recall of a principal that was never written has no valid time to pin its ranking to (the time
-- of the principal's last write is the default, and there is none): its block's header has no as_of,
-- and its trace records none rather than 1970-01-01 (issue 47). Dropping NOT NULL rewrites nothing.
ALTER TABLE recall_traces ALTER COLUMN as_of DROP NOT NULL;
