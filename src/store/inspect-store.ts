import type {
  Authority,
  BeliefStatus,
  Episode,
  Moment,
  Principal,
  RejectionKind,
  SensitivityLevel,
  StoredBelief,
} from "../domain/model.js";
import { BELIEF_COLUMNS, EPISODE_COLUMNS, beliefFromRow, episodeFromRow } from "./beliefs/belief-rows.js";
import { notSucceededSql, statusInForceSql } from "./candidates/eligibility-sql.js";
import type { Row, SqlClient } from "./sql-client.js";
import { SqlParams } from "./sql-params.js";

/**
 * The inspection API's SQL (InspectService): what a principal's memory holds
 * and what each turn was shown, for a person to read. Every statement pins
 * tenant and principal, and every belief it returns is at or below the
 * viewing ceiling; ids of linked beliefs above it are never returned (only
 * counted). Lists are keyset-paged: a page reads its own rows, never the
 * whole memory, so a 10k-belief principal's first page costs what a
 * 10-belief one's does, plus a count.
 */

/** A belief as the inspector shows it: the stored row, its successors and how it was judged. */
export interface InspectedBelief {
  belief: StoredBelief;
  /** Its lifecycle now as recall judges it: superseded once a successor is in force, whatever the row says. */
  statusNow: BeliefStatus;
  /** Beliefs at or below the ceiling that name this one in their supersedes. */
  supersededBy: string[];
  rejections: number;
  persona: boolean;
}

export interface BeliefFilter {
  ceiling: SensitivityLevel;
  /** Matched against each belief's status now (statusNow), not the stored one. */
  statuses: BeliefStatus[];
  beliefTypes: string[];
  originScopes: string[];
  sensitivities: SensitivityLevel[];
  authorities: Authority[];
  subject: string | null;
  asOf: Date | null;
  knownAt: Date | null;
}

/** A keyset position: the sort key's text (exact to the microsecond) and the row's id. */
export interface Cursor {
  key: string;
  id: string;
}

export interface BeliefPage {
  beliefs: InspectedBelief[];
  /** Set when another page follows: the last row's position. */
  next: Cursor | null;
  total: number;
}

export interface BeliefDetail {
  belief: InspectedBelief;
  predecessors: InspectedBelief[];
  successors: InspectedBelief[];
  conflicts: InspectedBelief[];
  linkedAboveCeiling: number;
  rejections: StoredRejection[];
  sourceEpisodes: Episode[];
  citations: number;
}

export interface StoredRejection {
  rejectionId: string;
  kind: RejectionKind;
  correctionBeliefId: string | null;
  scope: string;
  reason: string;
  createdAt: Date;
}

export interface PrincipalSummary {
  beliefsByStatus: Record<string, number>;
  beliefsAboveCeiling: number;
  sessions: number;
}

export interface SessionSummary {
  sessionId: string;
  firstAt: Date;
  lastAt: Date;
  turns: number;
  traces: number;
  /** The project of the session's latest recall. */
  currentScope: string;
}

export interface TraceSummary {
  traceId: string;
  moment: Moment;
  tool: string;
  queryText: string;
  createdAt: Date;
  returned: number;
  blocked: number;
}

export interface TurnSummary {
  turnId: string;
  firstAt: Date;
  traces: TraceSummary[];
}

export class InspectStore {
  constructor(private readonly db: SqlClient) {}

  async summary(p: Principal, ceiling: SensitivityLevel): Promise<PrincipalSummary> {
    const rows = await this.db.query(
      `SELECT ${STATUS_NOW} AS status, count(*) FILTER (WHERE b.sensitivity <= $3) AS visible, count(*) FILTER (WHERE b.sensitivity > $3) AS above
       FROM beliefs b WHERE b.tenant_id = $1 AND b.principal_id = $2 GROUP BY 1`,
      [p.tenantId, p.principalId, ceiling],
    );
    const sessions = await this.db.query(
      `SELECT count(DISTINCT t.session_id) AS n FROM recall_traces t
       WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id <> ''`,
      [p.tenantId, p.principalId],
    );
    const beliefsByStatus: Record<string, number> = {};
    let above = 0;
    for (const r of rows) {
      if (Number(r.visible) > 0) beliefsByStatus[String(r.status)] = Number(r.visible);
      above += Number(r.above);
    }
    return { beliefsByStatus, beliefsAboveCeiling: above, sessions: Number(sessions[0]?.n ?? 0) };
  }

  /** One page of beliefs, newest recorded first, after `after`. */
  async listBeliefs(p: Principal, f: BeliefFilter, after: Cursor | null, limit: number): Promise<BeliefPage> {
    const params = new SqlParams();
    const where = filterSql(p, f, params);
    const countParams = [...params.values];
    const keyset = after ? `\n  AND (b.recorded_at, b.belief_id) < (${params.add(after.key)}::timestamptz, ${params.add(after.id)}::uuid)` : "";
    const rows = await this.db.query(
      `SELECT ${inspectedColumns(params.add(f.ceiling))}
       FROM beliefs b
       WHERE ${where}${keyset}
       ORDER BY b.recorded_at DESC, b.belief_id DESC
       LIMIT ${params.add(limit + 1)}`,
      params.values,
    );
    const counted = await this.db.query(`SELECT count(*) AS n FROM beliefs b WHERE ${where}`, countParams);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      beliefs: page.map(inspectedFromRow),
      next: rows.length > limit && last ? { key: String(last.recorded_at_key), id: String(last.belief_id) } : null,
      total: Number(counted[0]?.n ?? 0),
    };
  }

  /** The belief with its neighbours, or null when the principal has no such belief at or below the ceiling. */
  async belief(p: Principal, beliefId: string, ceiling: SensitivityLevel): Promise<BeliefDetail | null> {
    const [row] = await this.db.query(
      `SELECT ${inspectedColumns("$4")} FROM beliefs b
       WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = $3 AND b.sensitivity <= $4`,
      [p.tenantId, p.principalId, beliefId, ceiling],
    );
    if (!row) return null;
    const belief = inspectedFromRow(row);
    // Every link, named on either side, read whatever its sensitivity so those above the ceiling are counted.
    const linked = await this.db.query(
      `SELECT ${inspectedColumns("$5")},
         b.belief_id = ANY($4::uuid[]) AS is_predecessor,
         b.supersedes @> ARRAY[$3::uuid] AS is_successor,
         (b.conflicts_with @> ARRAY[$3::uuid] OR b.belief_id = ANY($6::uuid[])) AS is_conflict
       FROM beliefs b
       WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id <> $3
         AND (b.belief_id = ANY($4::uuid[]) OR b.supersedes @> ARRAY[$3::uuid]
           OR b.conflicts_with @> ARRAY[$3::uuid] OR b.belief_id = ANY($6::uuid[]))
       ORDER BY b.valid_from, b.belief_id`,
      [p.tenantId, p.principalId, beliefId, storedLinks(row, "supersedes"), ceiling, storedLinks(row, "conflicts_with")],
    );
    const visible = linked.filter((r) => Number(r.sensitivity) <= ceiling);
    const rejections = await this.db.query(
      `SELECT r.rejection_id::text AS rejection_id, r.kind, r.correction_belief_id::text AS correction_belief_id,
         r.scope, r.reason, r.created_at
       FROM rejections r WHERE r.tenant_id = $1 AND r.principal_id = $2 AND r.belief_id = $3
       ORDER BY r.created_at, r.rejection_id`,
      [p.tenantId, p.principalId, beliefId],
    );
    const episodes = await this.db.query(
      `SELECT ${EPISODE_COLUMNS} FROM episodes e
       WHERE e.tenant_id = $1 AND e.principal_id = $2 AND e.episode_id = ANY($3::uuid[]) AND e.sensitivity <= $4
       ORDER BY e.occurred_at, e.sequence, e.episode_id`,
      [p.tenantId, p.principalId, belief.belief.sourceEpisodeIds, ceiling],
    );
    const citations = await this.db.query(
      `SELECT count(*) AS n FROM citations c WHERE c.tenant_id = $1 AND c.principal_id = $2 AND c.belief_id = $3`,
      [p.tenantId, p.principalId, beliefId],
    );
    return {
      belief,
      predecessors: visible.filter((r) => r.is_predecessor === true).map(inspectedFromRow),
      successors: visible.filter((r) => r.is_successor === true).map(inspectedFromRow),
      conflicts: visible.filter((r) => r.is_conflict === true).map(inspectedFromRow),
      linkedAboveCeiling: linked.length - visible.length,
      rejections: rejections.map((r) => ({
        rejectionId: String(r.rejection_id),
        kind: r.kind as RejectionKind,
        // A correction above the ceiling is not named (its id would say it exists).
        correctionBeliefId: visibleId(r.correction_belief_id, linked, ceiling),
        scope: String(r.scope),
        reason: String(r.reason),
        createdAt: r.created_at as Date,
      })),
      sourceEpisodes: episodes.map(episodeFromRow),
      citations: Number(citations[0]?.n ?? 0),
    };
  }

  /**
   * Of `ids`, the principal's beliefs at or below the ceiling (the ids
   * missing from the answer are above it, or no longer stored).
   */
  async beliefsAtOrBelow(p: Principal, ids: readonly string[], ceiling: SensitivityLevel): Promise<StoredBelief[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query(
      `SELECT ${BELIEF_COLUMNS} FROM beliefs b
       WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = ANY($3::uuid[]) AND b.sensitivity <= $4`,
      [p.tenantId, p.principalId, ids, ceiling],
    );
    return rows.map(beliefFromRow);
  }

  /** Sessions with traces, most recently active first. */
  async sessions(p: Principal, after: Cursor | null, limit: number): Promise<{ sessions: SessionSummary[]; next: Cursor | null }> {
    const params = new SqlParams();
    const pin = `t.tenant_id = ${params.add(p.tenantId)} AND t.principal_id = ${params.add(p.principalId)}`;
    const having = after ? `HAVING (max(t.created_at), t.session_id) < (${params.add(after.key)}::timestamptz, ${params.add(after.id)})` : "";
    const rows = await this.db.query(
      `SELECT t.session_id, min(t.created_at) AS first_at, max(t.created_at) AS last_at, max(t.created_at)::text AS last_key,
         count(*) AS traces, count(DISTINCT t.turn_id) FILTER (WHERE t.turn_id <> '') AS turns,
         (array_agg(COALESCE(t.query->>'currentScope', '') ORDER BY t.created_at DESC, t.trace_id DESC))[1] AS current_scope
       FROM recall_traces t WHERE ${pin} AND t.session_id <> ''
       GROUP BY t.session_id ${having}
       ORDER BY max(t.created_at) DESC, t.session_id DESC
       LIMIT ${params.add(limit + 1)}`,
      params.values,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      sessions: page.map((r) => ({
        sessionId: String(r.session_id),
        firstAt: r.first_at as Date,
        lastAt: r.last_at as Date,
        turns: Number(r.turns),
        traces: Number(r.traces),
        currentScope: String(r.current_scope ?? ""),
      })),
      next: rows.length > limit && last ? { key: String(last.last_key), id: String(last.session_id) } : null,
    };
  }

  /** A session's turns in the order they happened, each with its traces. */
  async turns(p: Principal, sessionId: string, after: Cursor | null, limit: number): Promise<{ turns: TurnSummary[]; next: Cursor | null }> {
    const params = new SqlParams();
    const pin = `t.tenant_id = ${params.add(p.tenantId)} AND t.principal_id = ${params.add(p.principalId)} AND t.session_id = ${params.add(sessionId)}`;
    const having = after ? `HAVING (min(t.created_at), t.turn_id) > (${params.add(after.key)}::timestamptz, ${params.add(after.id)})` : "";
    const turnRows = await this.db.query(
      `SELECT t.turn_id, min(t.created_at) AS first_at, min(t.created_at)::text AS first_key
       FROM recall_traces t WHERE ${pin}
       GROUP BY t.turn_id ${having}
       ORDER BY min(t.created_at), t.turn_id
       LIMIT ${params.add(limit + 1)}`,
      params.values,
    );
    const page = turnRows.slice(0, limit);
    const traceRows = await this.db.query(
      `SELECT t.trace_id::text AS trace_id, t.turn_id, t.moment, t.tool, COALESCE(t.query->>'text', '') AS query_text,
         t.created_at, cardinality(t.returned) AS returned, cardinality(t.blocked) AS blocked
       FROM recall_traces t
       WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id = $3 AND t.turn_id = ANY($4::text[])
       ORDER BY t.created_at, t.trace_id`,
      [p.tenantId, p.principalId, sessionId, page.map((r) => String(r.turn_id))],
    );
    const last = page.at(-1);
    return {
      turns: page.map((r) => ({
        turnId: String(r.turn_id),
        firstAt: r.first_at as Date,
        traces: traceRows
          .filter((t) => t.turn_id === r.turn_id)
          .map((t) => ({
            traceId: String(t.trace_id),
            moment: t.moment as Moment,
            tool: String(t.tool),
            queryText: String(t.query_text),
            createdAt: t.created_at as Date,
            returned: Number(t.returned),
            blocked: Number(t.blocked),
          })),
      })),
      next: turnRows.length > limit && last ? { key: String(last.first_key), id: String(last.turn_id) } : null,
    };
  }
}

/**
 * Each belief's status now, by recall's one rule of succession
 * (store/candidates/eligibility-sql.ts). Every statement that uses it has
 * the tenant in $1 and the principal in $2.
 */
const STATUS_NOW = statusInForceSql("b", "$1", "$2", "now()", "now()");

/** The isolation predicates, the ceiling and the request's filters over `beliefs b`. */
function filterSql(p: Principal, f: BeliefFilter, params: SqlParams): string {
  const [tenant, principal] = [params.add(p.tenantId), params.add(p.principalId)];
  // STATUS_NOW reads them there.
  if (tenant !== "$1" || principal !== "$2") throw new Error("filterSql must start the statement's parameters");
  const clauses = [
    `b.tenant_id = ${tenant}`,
    `b.principal_id = ${principal}`,
    `b.sensitivity <= ${params.add(f.ceiling)}`,
  ];
  if (f.statuses.length > 0) clauses.push(`${STATUS_NOW} = ANY(${params.add(f.statuses)}::text[])`);
  if (f.beliefTypes.length > 0) clauses.push(`b.belief_type = ANY(${params.add(f.beliefTypes)}::text[])`);
  if (f.originScopes.length > 0) clauses.push(`b.origin_scope = ANY(${params.add(f.originScopes)}::text[])`);
  if (f.sensitivities.length > 0) clauses.push(`b.sensitivity = ANY(${params.add(f.sensitivities)}::smallint[])`);
  if (f.authorities.length > 0) clauses.push(`b.authority = ANY(${params.add(f.authorities)}::text[])`);
  if (f.subject !== null) clauses.push(`lower(b.subject) = lower(${params.add(f.subject)})`);
  if (f.knownAt) {
    // As known then: recorded by then, not yet retracted, and not yet rejected as not true.
    const knownAt = params.add(f.knownAt.toISOString());
    clauses.push(`b.recorded_at <= ${knownAt}::timestamptz`);
    clauses.push(`(b.retracted_at IS NULL OR b.retracted_at > ${knownAt}::timestamptz)`);
    clauses.push(`NOT EXISTS (SELECT 1 FROM rejections r
      WHERE r.tenant_id = b.tenant_id AND r.principal_id = b.principal_id AND r.belief_id = b.belief_id
        AND r.kind = 'not_true' AND r.created_at <= ${knownAt}::timestamptz)`);
  }
  if (f.asOf) {
    // Held then, and no successor in force then: the hard filter's own rule of succession.
    const asOf = params.add(f.asOf.toISOString());
    const knownAt = f.knownAt ? params.add(f.knownAt.toISOString()) : "'infinity'";
    clauses.push(`b.valid_from <= ${asOf}::timestamptz`);
    clauses.push(`(b.valid_to IS NULL OR b.valid_to > ${asOf}::timestamptz)`);
    clauses.push(notSucceededSql("b", asOf, knownAt));
  }
  return clauses.join("\n  AND ");
}

/**
 * A belief's columns with its links narrowed to the beliefs visible at the
 * ceiling (an id above it would say that it exists), its successors, its
 * rejection count and its persona mark. `ceiling` is a placeholder.
 */
function inspectedColumns(ceiling: string): string {
  const visible = (column: string) => `ARRAY(SELECT x::text FROM unnest(b.${column}) AS x
      WHERE EXISTS (SELECT 1 FROM beliefs o WHERE o.tenant_id = b.tenant_id AND o.principal_id = b.principal_id
        AND o.belief_id = x AND o.sensitivity <= ${ceiling})) AS visible_${column}`;
  return `${BELIEF_COLUMNS}, b.recorded_at::text AS recorded_at_key, ${STATUS_NOW} AS status_now,
    b.supersedes::text[] AS stored_supersedes, b.conflicts_with::text[] AS stored_conflicts_with,
    ${visible("supersedes")}, ${visible("conflicts_with")},
    ARRAY(SELECT n.belief_id::text FROM beliefs n
      WHERE n.tenant_id = b.tenant_id AND n.principal_id = b.principal_id AND n.supersedes @> ARRAY[b.belief_id]
        AND n.belief_id <> b.belief_id AND n.sensitivity <= ${ceiling}
      ORDER BY n.valid_from, n.belief_id) AS superseded_by,
    (SELECT count(*) FROM rejections r
      WHERE r.tenant_id = b.tenant_id AND r.principal_id = b.principal_id AND r.belief_id = b.belief_id) AS rejection_count,
    EXISTS (SELECT 1 FROM persona_entries pe
      WHERE pe.tenant_id = b.tenant_id AND pe.principal_id = b.principal_id AND pe.belief_id = b.belief_id) AS persona`;
}

function inspectedFromRow(r: Row): InspectedBelief {
  const belief = beliefFromRow(r);
  return {
    belief: { ...belief, supersedes: r.visible_supersedes as string[], conflictsWith: r.visible_conflicts_with as string[] },
    statusNow: r.status_now as BeliefStatus,
    supersededBy: r.superseded_by as string[],
    rejections: Number(r.rejection_count),
    persona: Boolean(r.persona),
  };
}

function storedLinks(r: Row, column: "supersedes" | "conflicts_with"): string[] {
  return (r[`stored_${column}`] as string[] | null) ?? [];
}

function visibleId(id: unknown, linked: readonly Row[], ceiling: SensitivityLevel): string | null {
  if (id === null || id === undefined) return null;
  const row = linked.find((r) => r.belief_id === id);
  return row && Number(row.sensitivity) <= ceiling ? String(id) : null;
}
