-- Succession (store/eligibility-sql.ts, successorInForceSql): every belief
-- query asks whether some belief of the same principal names the candidate in
-- its supersedes. This index answers that per candidate without scanning the
-- principal's beliefs (btree_gin, from 0001, lets the isolation columns lead).
CREATE INDEX beliefs_supersedes_idx ON beliefs USING gin (tenant_id, principal_id, supersedes);
