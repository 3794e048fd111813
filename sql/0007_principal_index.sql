-- recall: the in-process principal index (src/principal-index/) catches up
-- by a delta above the store position it reflects. Appending episodes
-- changes the source context of beliefs citing their sessions without
-- moving those beliefs' store_position, so the delta finds the sessions of
-- episodes appended since through this index.
CREATE INDEX episodes_position_idx ON episodes (tenant_id, principal_id, store_position);
