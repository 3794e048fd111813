import type { EligibilityFilter } from "../../domain/hard-filter.js";
import type { SqlParams } from "../sql-params.js";

/**
 * The hard filter as a SQL predicate over `beliefs b`. Every belief query of
 * the store starts its WHERE clause with this, so isolation and eligibility
 * hold before ORDER BY and LIMIT (the candidate cap) ever apply.
 */
export function eligibilitySql(f: EligibilityFilter, p: SqlParams): string {
  const asOf = p.add(f.asOf.toISOString());
  const knownAt = p.add(f.knownAt.toISOString());
  const clauses = [
    `b.tenant_id = ${p.add(f.principal.tenantId)}`,
    `b.principal_id = ${p.add(f.principal.principalId)}`,
    `b.sensitivity <= ${p.add(f.sensitivityCeiling)}`,
    `b.status = ANY(${p.add(f.statuses)}::text[])`,
    `b.valid_from <= ${asOf}::timestamptz`,
    `(b.valid_to IS NULL OR b.valid_to > ${asOf}::timestamptz)`,
    `b.recorded_at <= ${knownAt}::timestamptz`,
    `(b.retracted_at IS NULL OR b.retracted_at > ${knownAt}::timestamptz)`,
    `(b.portability <> 'local' OR b.origin_scope = ${p.add(f.currentScope)}
      OR lower(b.subject) = ANY(${p.add(f.namedSubjects)}::text[]))`,
    notSucceededSql("b", asOf, knownAt),
  ];
  if (f.historical) {
    // Status no longer excludes, so a belief the user rejected as not true
    // (retired, never held) is kept out from the moment of that rejection:
    // a known_at before it still sees what was recorded then.
    clauses.push(`NOT EXISTS (SELECT 1 FROM rejections r
      WHERE r.tenant_id = b.tenant_id AND r.principal_id = b.principal_id AND r.belief_id = b.belief_id
        AND r.kind = 'not_true' AND r.created_at <= ${knownAt}::timestamptz)`);
  }
  if (f.beliefTypes.length > 0) clauses.push(`b.belief_type = ANY(${p.add(f.beliefTypes)}::text[])`);
  if (f.excludePersonaHeld) {
    clauses.push(`NOT EXISTS (SELECT 1 FROM persona_entries pe
      WHERE pe.tenant_id = b.tenant_id AND pe.principal_id = b.principal_id AND pe.belief_id = b.belief_id)`);
  }
  if (f.excludeExpiredDated) clauses.push(`(b.expires_hint IS NULL OR b.expires_hint > ${asOf}::timestamptz)`);
  return clauses.join("\n  AND ");
}

/**
 * Succession, the one rule for "a newer belief has replaced this one":
 * `n` is a successor in force over `old` at (asOf, knownAt) when it is the
 * same principal's belief, names `old` in its supersedes, is not `old`
 * itself, has begun by asOf (valid_from <= asOf), is on record at knownAt
 * (recorded_at <= knownAt, not retracted by then), and is not expired (a
 * successor retired as not true, or past its life, replaces nothing).
 * The old row's own status and validity do not matter, so formation may
 * write only the successor and leave the old row active, in either order.
 * Once begun, a successor keeps replacing even after it ended itself (say,
 * superseded in turn): supersession is not undone by the next one.
 * `asOf` and `knownAt` are SQL expressions (parameters) of timestamptz text.
 * For a few given old rows (corrections) it uses beliefs_supersedes_idx
 * (sql/0010_supersedes_index.sql); the hard filter, over many rows, asks it
 * through notSucceededSql.
 */
export function successorInForceSql(n: string, old: string, asOf: string, knownAt: string): string {
  return `${n}.supersedes @> ARRAY[${old}.belief_id] AND ${inForceSql(n, old, asOf, knownAt)}`;
}

/**
 * "No successor is in force over `old`", for a predicate over many rows: the
 * principal's beliefs that name others in their supersedes (few; found by
 * beliefs_successors_idx, sql/0011) are unnested and anti-joined by id, so
 * PostgreSQL hashes them once instead of testing `@>` against every pair.
 * The same rule as successorInForceSql, written for a different plan.
 */
export function notSucceededSql(old: string, asOf: string, knownAt: string): string {
  return `NOT EXISTS (SELECT 1 FROM beliefs n CROSS JOIN LATERAL unnest(n.supersedes) AS named(old_id)
      WHERE n.supersedes <> '{}' AND named.old_id = ${old}.belief_id AND ${inForceSql("n", old, asOf, knownAt)})`;
}

/**
 * A belief's lifecycle as recall judges it at (asOf, knownAt): a row still
 * marked active or provisional that a successor in force replaces reads as
 * superseded, by the same rule (successorInForceAtSql) the hard filter
 * excludes it with. Formation may leave the old row active when it writes a
 * successor; a page that showed the stored status would call it current.
 * For a whole list of one principal's rows: the ids replaced are gathered
 * once (an uncorrelated IN, hashed by PostgreSQL) instead of a subquery per
 * row, which on a 10k principal's count took seconds. `tenant` and
 * `principal` are placeholders of the principal whose rows `old` ranges over.
 */
export function statusInForceSql(old: string, tenant: string, principal: string, asOf: string, knownAt: string): string {
  return `CASE WHEN ${old}.status IN ('active', 'provisional') AND ${old}.belief_id IN (
      SELECT named.old_id FROM beliefs n CROSS JOIN LATERAL unnest(n.supersedes) AS named(old_id)
      WHERE n.tenant_id = ${tenant} AND n.principal_id = ${principal} AND n.supersedes <> '{}'
        AND named.old_id <> n.belief_id AND ${successorInForceAtSql("n", asOf, knownAt)})
    THEN 'superseded' ELSE ${old}.status END`;
}

/** Everything of succession but how `n` names `old`. */
function inForceSql(n: string, old: string, asOf: string, knownAt: string): string {
  return `${n}.tenant_id = ${old}.tenant_id AND ${n}.principal_id = ${old}.principal_id
      AND ${n}.belief_id <> ${old}.belief_id
      AND ${successorInForceAtSql(n, asOf, knownAt)}`;
}

/** The successor's own part of the rule: begun by asOf, on record at knownAt, not expired. */
function successorInForceAtSql(n: string, asOf: string, knownAt: string): string {
  return `${n}.status <> 'expired'
      AND ${n}.valid_from <= ${asOf}::timestamptz
      AND ${n}.recorded_at <= ${knownAt}::timestamptz
      AND (${n}.retracted_at IS NULL OR ${n}.retracted_at > ${knownAt}::timestamptz)`;
}
