-- Succession as a hard-filter predicate (store/eligibility-sql.ts, notSucceededSql):
-- the beliefs that name others in their supersedes are few, so the filter
-- anti-joins the candidates against them by (tenant, principal, belief id).
-- This partial index finds them without reading the principal's other beliefs.
-- The GIN index of 0010 could not serve the filter: PostgreSQL turns NOT EXISTS
-- into a hash anti join on (tenant_id, principal_id) and checks `@>` pair by pair
-- (10M pairs, 2.4 s, for a 10k-belief principal).
CREATE INDEX beliefs_successors_idx ON beliefs (tenant_id, principal_id) WHERE supersedes <> '{}';
