-- Why each candidate a recall considered was not rendered, one reason each (floor, relative_floor,
-- budget, item_cap, subject_cap, snapshot_share, superseded, restatement), recorded in the render
-- pass with the rest of the trace (store/traces/trace-rows.ts), not reconstructed later. A JSON
-- array of {"beliefId", "reason"}; an operator field, nulled with the ranked list after the
-- retention window. NULL in traces written before it.
ALTER TABLE recall_traces ADD COLUMN not_shown jsonb;
