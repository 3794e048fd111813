import type { ConfidenceBand, Moment, Principal, RecallTrace, SensitivityLevel } from "../../domain/model.js";
import { FEEDBACK } from "../../domain/feedback.js";
import type { RecalledEvent } from "../../domain/recalled-event.js";
import type { ShownBelief, TurnTrace } from "../../domain/trace-user-view.js";
import { ROWS_CHANNEL } from "../beliefs/belief-writes.js";
import { fleetScan } from "../fleet-scan.js";
import { SessionFunctions } from "./session-function.js";
import type { Row, SqlClient } from "../sql-client.js";
import { insertTraces, SESSION_SNAPSHOT_CHANNEL, TRACE_COLUMNS, TRACE_FROM, traceFromRow, type StoredSnapshot } from "./trace-rows.js";

/**
 * The SQL of traces and their feedback. Every method that reads or deletes a
 * principal's rows takes the principal first and puts tenant and principal
 * in its WHERE clause. The two sweeps are maintenance across the store, run
 * tenant by tenant (each statement routed to one tenant, docs/scale-out.md):
 * a fleet scan finds the tenants with work due; they return counts only.
 */

export interface RederivationHint {
  subject: string;
  subjectKey: string;
  misses: number;
  firstMissedAt: Date;
  lastMissedAt: Date;
  lastTraceId: string;
}

export interface PromotionCandidate {
  beliefId: string;
  subject: string;
  statement: string;
  originScope: string;
  portability: string;
  scopeLevel: string;
  /** Projects other than its origin where the model cited it. */
  usedIn: string[];
  /** Traces through which it was cited while carried. */
  uses: number;
  lastUsedAt: Date;
}

export interface StoredRecalledEvent {
  traceId: string;
  payload: RecalledEvent;
  createdAt: Date;
  publishedAt: Date | null;
}

export interface SessionDeletion {
  traces: number;
  citations: number;
  events: number;
}

export class TraceStore {
  /** PGlite only: the batch insert through a function that keeps its plan (session-function.ts). */
  private readonly sessionFunctions: SessionFunctions | null;

  constructor(private readonly db: SqlClient) {
    this.sessionFunctions = db.kind === "pglite" ? new SessionFunctions(db) : null;
  }

  /**
   * Writes a batch of traces, each with its memory.recalled outbox row and its
   * recall misses, in one statement per tenant (a sidecar's batch is almost
   * always one), so each routes to one shard. No transaction: the statement is
   * idempotent by trace id, so a batch that partly landed is simply retried.
   * Returns the ids this call wrote.
   */
  async recordBatch(batch: readonly { principal: Principal; trace: RecallTrace }[]): Promise<Set<string>> {
    const byTenant = new Map<string, { principal: Principal; trace: RecallTrace }[]>();
    for (const item of batch) {
      const group = byTenant.get(item.principal.tenantId);
      if (group) group.push(item);
      else byTenant.set(item.principal.tenantId, [item]);
    }
    const written = new Set<string>();
    for (const [tenantId, items] of byTenant) {
      const { text, params } = insertTraces(tenantId, items);
      const ids = this.sessionFunctions
        ? await this.sessionFunctions.textRows(text, params)
        : (await this.db.query<{ trace_id: string }>(text, params)).map((r) => r.trace_id);
      for (const id of ids) written.add(id);
    }
    return written;
  }

  /** One trace: `recordBatch` of one; false when it was already there. */
  async record(p: Principal, trace: RecallTrace): Promise<boolean> {
    return (await this.recordBatch([{ principal: p, trace }])).has(trace.id);
  }

  /**
   * The subject and statement of each of the principal's beliefs in `ids`
   * that is still there: what a trace replayed from the outage spool joins
   * back into its ranked list (trace/spooled-ranked.ts).
   */
  async beliefTexts(p: Principal, ids: readonly string[]): Promise<Map<string, { subject: string; statement: string }>> {
    const texts = new Map<string, { subject: string; statement: string }>();
    if (ids.length === 0) return texts;
    const rows = await this.db.query<{ belief_id: string; subject: string; statement: string }>(
      `SELECT belief_id::text AS belief_id, subject, statement FROM beliefs
       WHERE tenant_id = $1 AND principal_id = $2 AND belief_id = ANY($3::uuid[])`,
      [p.tenantId, p.principalId, ids],
    );
    for (const r of rows) texts.set(r.belief_id, { subject: r.subject, statement: r.statement });
    return texts;
  }

  /** The session's latest snapshot trace (what it returned), or null when the session has none. */
  async latestSnapshot(p: Principal, sessionId: string): Promise<StoredSnapshot | null> {
    const rows = await this.db.query<{ trace_id: string; created_at: Date; returned: string[] }>(
      `SELECT t.trace_id::text AS trace_id, t.created_at, t.returned::text[] AS returned FROM recall_traces t
       WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id = $3 AND t.moment = 'snapshot'
       ORDER BY t.created_at DESC, t.trace_id LIMIT 1`,
      [p.tenantId, p.principalId, sessionId],
    );
    const r = rows[0];
    return r ? { traceId: r.trace_id, createdAt: r.created_at, returned: r.returned } : null;
  }

  /**
   * The beliefs the session's in-turn recalls and searches returned as current (not as of a past
   * time), the most recently shown first, at most `limit`: what a restarted sidecar's in-turn
   * recalls correct (recall/moments/session-shown.ts).
   */
  async sessionShown(p: Principal, sessionId: string, limit: number): Promise<string[]> {
    const rows = await this.db.query<{ belief_id: string }>(
      `SELECT shown.belief_id::text AS belief_id
       FROM recall_traces t, unnest(t.returned) AS shown(belief_id)
       WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id = $3 AND t.moment = 'in_turn'
         AND t.query->>'asOf' IS NULL AND t.query->>'knownAt' IS NULL
       GROUP BY shown.belief_id
       ORDER BY max(t.created_at) DESC, shown.belief_id
       LIMIT $4`,
      [p.tenantId, p.principalId, sessionId, limit],
    );
    return rows.map((r) => r.belief_id);
  }

  /** The principal's trace, or null: another principal's trace is simply not found. */
  async get(p: Principal, traceId: string): Promise<RecallTrace | null> {
    const rows = await this.db.query(
      `SELECT ${TRACE_COLUMNS} FROM ${TRACE_FROM} WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.trace_id = $3`,
      [p.tenantId, p.principalId, traceId],
    );
    const r = rows[0];
    return r ? traceFromRow(r) : null;
  }

  /**
   * The traces that fed a turn (the turn's own recalls plus the latest
   * snapshot of each of their sessions taken before them) and their rendered
   * beliefs at or below min(recall ceiling, viewing ceiling), joined to the
   * beliefs as they are now so the ceiling uses today's sensitivity.
   */
  async forTurn(
    p: Principal,
    turnId: string,
    viewingCeiling: SensitivityLevel,
  ): Promise<{ traces: TurnTrace[]; shown: ShownBelief[] }> {
    const traceRows = await this.db.query(
      `WITH turn AS (
         SELECT * FROM recall_traces WHERE tenant_id = $1 AND principal_id = $2 AND turn_id = $3
       ),
       snapshot AS (
         SELECT DISTINCT ON (s.session_id) s.* FROM recall_traces s
         WHERE s.tenant_id = $1 AND s.principal_id = $2 AND s.moment = 'snapshot' AND s.session_id <> ''
           AND s.session_id IN (SELECT session_id FROM turn)
           AND s.trace_id NOT IN (SELECT trace_id FROM turn)
           AND s.created_at <= (SELECT max(x.created_at) FROM turn x WHERE x.session_id = s.session_id)
         ORDER BY s.session_id, s.created_at DESC, s.trace_id
       )
       SELECT v.trace_id::text AS trace_id, v.moment, v.created_at, v.as_of, v.considered_not_shown,
         v.returned::text[] AS returned, v.returned_bands, v.carried::text[] AS carried,
         ARRAY(SELECT DISTINCT c.belief_id::text FROM citations c
           WHERE c.tenant_id = $1 AND c.principal_id = $2 AND c.trace_id = v.trace_id
             AND c.turn_id = $3) AS cited_this_turn,
         ARRAY(SELECT x.belief_id::text FROM unnest(v.blocked) AS x(belief_id)
           JOIN beliefs b ON b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = x.belief_id
           WHERE b.sensitivity <= LEAST(v.sensitivity_ceiling, $4)) AS blocked_within_ceiling
       FROM (SELECT * FROM turn UNION ALL SELECT * FROM snapshot) v`,
      [p.tenantId, p.principalId, turnId, viewingCeiling],
    );
    const traces: TurnTrace[] = traceRows.map((r) => ({
      traceId: String(r.trace_id),
      moment: r.moment as Moment,
      createdAt: r.created_at as Date,
      asOf: (r.as_of as Date | null) ?? null,
      returned: r.returned as string[],
      returnedBands: (r.returned_bands as ConfidenceBand[] | null) ?? [],
      carried: r.carried as string[],
      citedThisTurn: r.cited_this_turn as string[],
      blockedWithinCeiling: r.blocked_within_ceiling as string[],
      consideredNotShown: Number(r.considered_not_shown),
    }));
    if (traces.length === 0) return { traces, shown: [] };
    const shownRows = await this.db.query(
      `SELECT t.trace_id::text AS trace_id, r.belief_id::text AS belief_id, b.subject, b.statement, b.origin_scope,
         b.authority, b.source_episode_ids[1]::text AS source_episode_id,
         LEAST(b.recorded_at, (SELECT min(e.occurred_at) FROM episodes e
           WHERE e.tenant_id = b.tenant_id AND e.principal_id = b.principal_id
             AND e.episode_id = ANY(b.source_episode_ids))) AS learned_at
       FROM recall_traces t
       CROSS JOIN LATERAL unnest(t.returned) AS r(belief_id)
       JOIN beliefs b ON b.tenant_id = t.tenant_id AND b.principal_id = t.principal_id AND b.belief_id = r.belief_id
       WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.trace_id = ANY($3::uuid[])
         AND NOT (r.belief_id = ANY(t.blocked))
         AND b.sensitivity <= LEAST(t.sensitivity_ceiling, $4)`,
      [p.tenantId, p.principalId, traces.map((t) => t.traceId), viewingCeiling],
    );
    const shown: ShownBelief[] = shownRows.map((r) => ({
      traceId: String(r.trace_id),
      beliefId: String(r.belief_id),
      subject: String(r.subject),
      statement: String(r.statement),
      learnedAt: r.learned_at as Date,
      originScope: String(r.origin_scope),
      authority: r.authority as ShownBelief["authority"],
      sourceEpisodeId: (r.source_episode_id as string | null) ?? null,
    }));
    return { traces, shown };
  }

  /**
   * The one delete path of a session's explanations: its traces, their
   * citations and their memory.recalled events, in one transaction.
   */
  async deleteSession(p: Principal, sessionId: string): Promise<SessionDeletion> {
    return this.db.transaction(async (tx) => {
      // Lock the traces first: a concurrent citation waits, then finds its trace gone.
      await tx.query(
        `SELECT 1 AS ok FROM recall_traces WHERE tenant_id = $1 AND principal_id = $2 AND session_id = $3 FOR UPDATE`,
        [p.tenantId, p.principalId, sessionId],
      );
      // A cached hit in another session reads its ranked list from a render of this one: it keeps a copy.
      await tx.query(
        `UPDATE recall_traces h SET ranked = o.ranked, dropped_for_budget = o.dropped_for_budget, not_shown = o.not_shown,
           reuses_trace_id = NULL
         FROM recall_traces o
         WHERE o.tenant_id = $1 AND o.principal_id = $2 AND o.session_id = $3
           AND h.tenant_id = o.tenant_id AND h.principal_id = o.principal_id AND h.reuses_trace_id = o.trace_id
           AND h.session_id <> $3`,
        [p.tenantId, p.principalId, sessionId],
      );
      const count = async (text: string) =>
        Number((await tx.query<{ n: number }>(text, [p.tenantId, p.principalId, sessionId]))[0]?.n ?? 0);
      const citations = await count(
        `WITH gone AS (
           DELETE FROM citations c USING recall_traces t
           WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id = $3
             AND c.tenant_id = t.tenant_id AND c.principal_id = t.principal_id AND c.trace_id = t.trace_id
           RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
      );
      const events = await count(
        `WITH gone AS (
           DELETE FROM recalled_events WHERE tenant_id = $1 AND principal_id = $2 AND session_id = $3 RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
      );
      const traces = await count(
        `WITH gone AS (
           DELETE FROM recall_traces WHERE tenant_id = $1 AND principal_id = $2 AND session_id = $3 RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
      );
      // Every sidecar forgets what it knew of this session's snapshot (recall/moments/session-snapshots.ts).
      await tx.query(`SELECT pg_notify('${SESSION_SNAPSHOT_CHANNEL}', json_build_array($1::text, $2::text, $3::text, NULL)::text) AS ok`, [
        p.tenantId,
        p.principalId,
        sessionId,
      ]);
      return { traces, citations, events };
    });
  }

  /** Tenants with traces whose operator fields are due to be nulled: a fleet scan, read-only. */
  async tenantsWithExpiredOperatorFields(now: Date): Promise<string[]> {
    return tenantsOf(await this.db.query(TENANTS_DUE_EXPIRY, [now.toISOString()]));
  }

  /** Tenants with traces due for the uncited-returns feedback: a fleet scan, read-only. */
  async tenantsWithUnsettledFeedback(cutoff: Date): Promise<string[]> {
    return tenantsOf(await this.db.query(TENANTS_DUE_FEEDBACK, [cutoff.toISOString()]));
  }

  /**
   * Retention, operator clock: nulls the operator fields (latencies, candidate
   * count, dropped ids, ranked list, the reference to a reused render) of up
   * to `limit` of the tenant's traces whose window has passed, oldest first; a
   * render that unexpired cached hits read their ranked list from waits for
   * them. dropped_for_budget_count and the user-safe fields stay. SKIP LOCKED:
   * should two sidecars ever sweep at once (a lease that ran out mid-run),
   * they share the rows instead of waiting.
   */
  async expireOperatorFields(tenantId: string, now: Date, limit: number): Promise<number> {
    const rows = await this.db.query<{ n: number }>(
      `WITH due AS (
          SELECT tenant_id, principal_id, trace_id FROM recall_traces r
          WHERE tenant_id = $3 AND operator_fields_expire_at <= $1::timestamptz AND ${OPERATOR_FIELDS_PRESENT}
            -- A render keeps its ranked list while a cached hit that reads it there has not expired.
            AND NOT EXISTS (SELECT 1 FROM recall_traces h
              WHERE h.tenant_id = $3 AND h.principal_id = r.principal_id AND h.reuses_trace_id = r.trace_id
                AND h.operator_fields_expire_at > $1::timestamptz)
         ORDER BY operator_fields_expire_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED
       ),
       expired AS (
          UPDATE recall_traces t SET arm_latencies_ms = NULL, candidates = NULL, dropped_for_budget = NULL, ranked = NULL,
            not_shown = NULL, reuses_trace_id = NULL
          FROM due WHERE t.tenant_id = $3 AND t.principal_id = due.principal_id AND t.trace_id = due.trace_id
         RETURNING 1
       )
       SELECT count(*)::int AS n FROM expired`,
      [now.toISOString(), limit, tenantId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Feedback, "returned but never used": for up to `limit` of the tenant's
   * traces recorded before `cutoff` and not yet settled, every returned,
   * unblocked belief the model did not cite through that trace loses utility
   * once per such trace; then the traces are marked settled so they are never
   * charged twice.
   */
  async settleUncitedReturns(
    tenantId: string,
    cutoff: Date,
    now: Date,
    limit: number,
    loss: number = FEEDBACK.uncitedLoss,
  ): Promise<{ traces: number; beliefs: number }> {
    const rows = await this.db.query<{ traces: number; beliefs: number }>(
      `WITH due AS (
         SELECT tenant_id, principal_id, trace_id, returned, blocked FROM recall_traces
         WHERE tenant_id = $5 AND feedback_settled_at IS NULL AND created_at <= $1::timestamptz
         ORDER BY created_at
         LIMIT $2
         FOR UPDATE SKIP LOCKED
       ),
       uncited AS (
         SELECT d.principal_id, r.belief_id, count(*)::int AS n
         FROM due d CROSS JOIN LATERAL unnest(d.returned) AS r(belief_id)
         WHERE NOT (r.belief_id = ANY(d.blocked))
           AND NOT EXISTS (SELECT 1 FROM citations c
             WHERE c.tenant_id = $5 AND c.principal_id = d.principal_id AND c.trace_id = d.trace_id
               AND c.belief_id = r.belief_id)
         GROUP BY d.principal_id, r.belief_id
       ),
       charged AS (
         UPDATE beliefs b SET utility = (1 + b.utility) * power(1 - $3::float8, u.n) - 1
         FROM uncited u
         WHERE b.tenant_id = $5 AND b.principal_id = u.principal_id AND b.belief_id = u.belief_id
         RETURNING b.tenant_id, b.principal_id, b.belief_id
       ),
       -- Utility changed without the head moving: in-process indexes re-read these rows.
       notified AS (
         SELECT pg_notify('${ROWS_CHANNEL}', json_build_array(c.tenant_id, c.principal_id,
           CASE WHEN count(*) <= 150 THEN array_agg(c.belief_id::text ORDER BY c.belief_id) END)::text)
         FROM charged c GROUP BY c.tenant_id, c.principal_id
       ),
       settled AS (
         UPDATE recall_traces t SET feedback_settled_at = $4::timestamptz
         FROM due d WHERE t.tenant_id = $5 AND t.principal_id = d.principal_id AND t.trace_id = d.trace_id
         RETURNING 1
       )
       SELECT (SELECT count(*) FROM settled)::int AS traces, (SELECT count(*) FROM charged)::int AS beliefs,
         (SELECT count(*) FROM notified)::int AS notified`,
      [cutoff.toISOString(), limit, loss, now.toISOString(), tenantId],
    );
    return { traces: Number(rows[0]?.traces ?? 0), beliefs: Number(rows[0]?.beliefs ?? 0) };
  }

  /** Subjects missed at least `minMisses` times: targeted re-derivation hints for formation. */
  async rederivationHints(p: Principal, options: { minMisses?: number; limit?: number } = {}): Promise<RederivationHint[]> {
    const rows = await this.db.query(
      `SELECT subject, subject_key, misses, first_missed_at, last_missed_at, last_trace_id::text AS last_trace_id
       FROM rederivation_hints
       WHERE tenant_id = $1 AND principal_id = $2 AND misses >= $3
       ORDER BY misses DESC, last_missed_at DESC, subject_key
       LIMIT $4`,
      [p.tenantId, p.principalId, options.minMisses ?? FEEDBACK.hintMinMisses, options.limit ?? 100],
    );
    return rows.map((r) => ({
      subject: String(r.subject),
      subjectKey: String(r.subject_key),
      misses: Number(r.misses),
      firstMissedAt: r.first_missed_at as Date,
      lastMissedAt: r.last_missed_at as Date,
      lastTraceId: String(r.last_trace_id),
    }));
  }

  /**
   * Carried beliefs the model cited (the traces' carried_in), per belief:
   * read-path evidence of generality for formation's promotion rule. Most
   * distinct projects first.
   */
  async promotionCandidates(p: Principal, limit = 100): Promise<PromotionCandidate[]> {
    const rows = await this.db.query(
      `SELECT c.belief_id::text AS belief_id, b.subject, b.statement, b.origin_scope, b.portability, b.scope_level,
         array_agg(DISTINCT t.query->>'currentScope') AS used_in, count(*)::int AS uses, max(t.created_at) AS last_used_at
       FROM recall_traces t
       CROSS JOIN LATERAL unnest(t.carried_in) AS c(belief_id)
       JOIN beliefs b ON b.tenant_id = t.tenant_id AND b.principal_id = t.principal_id AND b.belief_id = c.belief_id
       WHERE t.tenant_id = $1 AND t.principal_id = $2
       GROUP BY c.belief_id, b.subject, b.statement, b.origin_scope, b.portability, b.scope_level
       ORDER BY count(DISTINCT t.query->>'currentScope') DESC, count(*) DESC, c.belief_id
       LIMIT $3`,
      [p.tenantId, p.principalId, limit],
    );
    return rows.map((r) => ({
      beliefId: String(r.belief_id),
      subject: String(r.subject),
      statement: String(r.statement),
      originScope: String(r.origin_scope),
      portability: String(r.portability),
      scopeLevel: String(r.scope_level),
      usedIn: [...(r.used_in as string[])].sort(),
      uses: Number(r.uses),
      lastUsedAt: r.last_used_at as Date,
    }));
  }

  /** The outbox, oldest first: unpublished events only unless `all`. */
  async recalledEvents(p: Principal, options: { limit?: number; all?: boolean } = {}): Promise<StoredRecalledEvent[]> {
    const rows = await this.db.query(
      `SELECT trace_id::text AS trace_id, payload, created_at, published_at FROM recalled_events
       WHERE tenant_id = $1 AND principal_id = $2 AND ($3::boolean OR published_at IS NULL)
       ORDER BY created_at, trace_id
       LIMIT $4`,
      [p.tenantId, p.principalId, options.all ?? false, options.limit ?? 100],
    );
    return rows.map((r) => ({
      traceId: String(r.trace_id),
      payload: (typeof r.payload === "string" ? JSON.parse(r.payload) : r.payload) as RecalledEvent,
      createdAt: r.created_at as Date,
      publishedAt: (r.published_at as Date | null) ?? null,
    }));
  }

  /** A consumer acknowledges events it has delivered; returns how many were newly marked. */
  async markRecalledEventsPublished(p: Principal, traceIds: readonly string[], at: Date): Promise<number> {
    if (traceIds.length === 0) return 0;
    const rows = await this.db.query(
      `UPDATE recalled_events SET published_at = $4::timestamptz
       WHERE tenant_id = $1 AND principal_id = $2 AND trace_id = ANY($3::uuid[]) AND published_at IS NULL
       RETURNING 1 AS ok`,
      [p.tenantId, p.principalId, traceIds, at.toISOString()],
    );
    return rows.length;
  }
}

const OPERATOR_FIELDS_PRESENT =
  "(candidates IS NOT NULL OR arm_latencies_ms IS NOT NULL OR dropped_for_budget IS NOT NULL OR ranked IS NOT NULL" +
  " OR not_shown IS NOT NULL" +
  " OR reuses_trace_id IS NOT NULL)";

const TENANTS_DUE_EXPIRY = fleetScan(
  `SELECT DISTINCT tenant_id FROM recall_traces
   WHERE operator_fields_expire_at <= $1::timestamptz AND ${OPERATOR_FIELDS_PRESENT} ORDER BY tenant_id`,
);

const TENANTS_DUE_FEEDBACK = fleetScan(
  `SELECT DISTINCT tenant_id FROM recall_traces
   WHERE feedback_settled_at IS NULL AND created_at <= $1::timestamptz ORDER BY tenant_id`,
);

function tenantsOf(rows: Row[]): string[] {
  return rows.map((r) => String(r.tenant_id));
}
