import type { Episode, Principal, SensitivityLevel } from "../domain/model.js";
import { EPISODE_COLUMNS, episodeFromRow } from "./beliefs/belief-rows.js";
import type { QueryOptions, SqlClient } from "./sql-client.js";
import { SqlParams } from "./sql-params.js";

export interface SnapshotReportRow {
  sessionId: string;
  snapshotSize: number;
  cited: number;
  /** cited / snapshotSize: sustained values below about 0.25 mean the core carries passengers. */
  utilization: number;
  inTurnReturned: number;
  /** In-turn results that were snapshot-eligible but not in the snapshot: the core may be too small. */
  misses: number;
}

export interface EpisodeQuery {
  sessionId: string | null;
  startTime: Date | null;
  endTime: Date | null;
  includeArchival: boolean;
  sensitivityCeiling: SensitivityLevel;
  after: { occurredAt: Date; sequence: number; episodeId: string } | null;
  limit: number;
}

/** Reads that are not recall candidates: the event log, the snapshot report, a session's scope. */
export class StoreReports {
  constructor(private readonly db: SqlClient) {}

  async episodes(p: Principal, q: EpisodeQuery, options?: QueryOptions): Promise<Episode[]> {
    const params = new SqlParams();
    const clauses = [
      `e.tenant_id = ${params.add(p.tenantId)}`,
      `e.principal_id = ${params.add(p.principalId)}`,
      `e.sensitivity <= ${params.add(q.sensitivityCeiling)}`,
    ];
    if (q.sessionId !== null) clauses.push(`e.session_id = ${params.add(q.sessionId)}`);
    if (q.startTime) clauses.push(`e.occurred_at >= ${params.add(q.startTime.toISOString())}::timestamptz`);
    if (q.endTime) clauses.push(`e.occurred_at < ${params.add(q.endTime.toISOString())}::timestamptz`);
    if (!q.includeArchival) clauses.push("NOT e.archival");
    if (q.after) {
      clauses.push(`(e.occurred_at, e.sequence, e.episode_id) > (${params.add(q.after.occurredAt.toISOString())}::timestamptz,
        ${params.add(q.after.sequence)}::bigint, ${params.add(q.after.episodeId)}::uuid)`);
    }
    const rows = await this.db.query(
      `SELECT ${EPISODE_COLUMNS} FROM episodes e WHERE ${clauses.join(" AND ")}
       ORDER BY e.occurred_at, e.sequence, e.episode_id LIMIT ${params.add(q.limit)}`,
      params.values,
      options,
    );
    return rows.map(episodeFromRow);
  }

  /**
   * Snapshot utilization and misses, per session, from traces: the share of
   * snapshot beliefs cited at least once in the session, and in-turn results
   * that were snapshot-eligible (a durable type, active, recorded by the time
   * of the snapshot, not persona-held) but not in the snapshot.
   */
  async snapshotReport(p: Principal, durableTypes: readonly string[], sessionId: string | null): Promise<SnapshotReportRow[]> {
    const rows = await this.db.query<{ session_id: string; snapshot_size: number; cited: number; in_turn_returned: number; misses: number }>(
      `WITH snapshots AS (
         SELECT DISTINCT ON (t.session_id) t.session_id, t.returned, t.created_at
         FROM recall_traces t
         WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.moment = 'snapshot'
           AND ($3::text IS NULL OR t.session_id = $3::text)
         ORDER BY t.session_id, t.created_at DESC, t.trace_id
       ),
       cited AS (
         SELECT t.session_id, c.belief_id FROM citations c
         JOIN recall_traces t ON t.tenant_id = c.tenant_id AND t.principal_id = c.principal_id AND t.trace_id = c.trace_id
         WHERE c.tenant_id = $1 AND c.principal_id = $2
       ),
       in_turn AS (
         SELECT DISTINCT t.session_id, r.belief_id
         FROM recall_traces t, unnest(t.returned) AS r(belief_id)
         WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.moment = 'in_turn'
       )
       SELECT s.session_id,
         cardinality(s.returned) AS snapshot_size,
         (SELECT count(DISTINCT c.belief_id) FROM cited c WHERE c.session_id = s.session_id AND c.belief_id = ANY(s.returned)) AS cited,
         (SELECT count(*) FROM in_turn i WHERE i.session_id = s.session_id) AS in_turn_returned,
         (SELECT count(*) FROM in_turn i JOIN beliefs b ON b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = i.belief_id
            WHERE i.session_id = s.session_id AND NOT (i.belief_id = ANY(s.returned))
              AND b.belief_type = ANY($4::text[]) AND b.status = 'active'
              -- Eligible when the snapshot was made: recorded by then, and not held by the persona row.
              AND b.recorded_at <= s.created_at
              AND NOT EXISTS (SELECT 1 FROM persona_entries pe
                WHERE pe.tenant_id = b.tenant_id AND pe.principal_id = b.principal_id AND pe.belief_id = b.belief_id)) AS misses
       FROM snapshots s ORDER BY s.session_id`,
      [p.tenantId, p.principalId, sessionId, durableTypes],
    );
    return rows.map((r) => ({
      sessionId: r.session_id,
      snapshotSize: Number(r.snapshot_size),
      cited: Number(r.cited),
      utilization: Number(r.snapshot_size) === 0 ? 0 : Number(r.cited) / Number(r.snapshot_size),
      inTurnReturned: Number(r.in_turn_returned),
      misses: Number(r.misses),
    }));
  }

  /**
   * The project a session opened in: the current_scope of the session's
   * first snapshot recall, or null when it has none. How Search resolves an
   * omitted scope when the call carries no x-session-scope metadata.
   */
  async sessionSnapshotScope(p: Principal, sessionId: string): Promise<string | null> {
    const rows = await this.db.query<{ scope: string | null }>(
      `SELECT t.query->>'currentScope' AS scope FROM recall_traces t
       WHERE t.tenant_id = $1 AND t.principal_id = $2 AND t.session_id = $3 AND t.moment = 'snapshot'
       ORDER BY t.created_at, t.trace_id LIMIT 1`,
      [p.tenantId, p.principalId, sessionId],
    );
    return rows[0]?.scope ?? null;
  }
}
