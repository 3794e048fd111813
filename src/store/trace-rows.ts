import type {
  ConfidenceBand,
  EpisodeSearchAdvice,
  EpisodeTraceQuery,
  RecallQuery,
  RecallTrace,
  RecalledBelief,
  SensitivityLevel,
} from "../domain/model.js";
import type { Row } from "./sql-client.js";

/** Parameters $3.. of the trace insert (after tenant and principal). JSON goes as text cast to jsonb. */
export function traceParams(t: RecallTrace): unknown[] {
  return [
    t.id,
    t.sessionId,
    t.runId,
    t.turnId,
    t.moment,
    JSON.stringify(t.query),
    t.surfaceId,
    t.sensitivityCeiling,
    t.renderedSha256,
    t.asOf.toISOString(),
    t.returned,
    t.droppedForBudgetCount,
    t.blocked,
    t.carriedIn,
    t.retrievalPolicyVersion,
    t.createdAt.toISOString(),
    t.operatorFieldsExpireAt.toISOString(),
    t.armLatenciesMs === null ? null : JSON.stringify(t.armLatenciesMs),
    t.candidates,
    t.droppedForBudget,
    t.ranked === null ? null : JSON.stringify(t.ranked),
    t.consideredNotShown,
    t.carried,
    t.returnedBands,
    t.snapshotWatermark,
    t.deltaAfter,
    t.corrected,
    t.tool ?? "",
    t.episodeQuery ? JSON.stringify(t.episodeQuery) : null,
    t.returnedEpisodes ?? [],
    t.episodeAdvice ? JSON.stringify(t.episodeAdvice) : null,
  ];
}

/** The trace insert; `traceParams` fill $3.. after tenant and principal. Repeating it is a no-op. */
export const INSERT_TRACE = `INSERT INTO recall_traces (tenant_id, principal_id, trace_id, session_id, run_id, turn_id,
    moment, query, surface_id, sensitivity_ceiling, rendered_sha256, as_of, returned, dropped_for_budget_count, blocked,
    carried_in, retrieval_policy_version, created_at, operator_fields_expire_at, arm_latencies_ms, candidates,
    dropped_for_budget, ranked, considered_not_shown, carried, returned_bands, snapshot_watermark, delta_after, corrected,
    tool, episode_query, returned_episodes, episode_advice)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8::text::jsonb, $9, $10, $11, $12::timestamptz, $13::uuid[], $14, $15::uuid[],
    $16::uuid[], $17, $18::timestamptz, $19::timestamptz, $20::text::jsonb, $21, $22::uuid[], $23::text::jsonb, $24,
    $25::uuid[], $26::text[], $27, $28, $29::uuid[], $30, $31::text::jsonb, $32::uuid[], $33::text::jsonb)
  ON CONFLICT (tenant_id, principal_id, trace_id) DO NOTHING
  RETURNING 1 AS ok`;

/** Columns of a trace read (`t` is recall_traces); `cited` is derived from the citations. */
export const TRACE_COLUMNS = `t.*, t.trace_id::text AS trace_id, t.returned::text[] AS returned, t.blocked::text[] AS blocked,
  t.carried_in::text[] AS carried_in, t.dropped_for_budget::text[] AS dropped_for_budget, t.carried::text[] AS carried,
  t.corrected::text[] AS corrected, t.returned_episodes::text[] AS returned_episodes,
  COALESCE((SELECT array_agg(DISTINCT c.belief_id::text ORDER BY c.belief_id::text) FROM citations c
    WHERE c.tenant_id = t.tenant_id AND c.principal_id = t.principal_id AND c.trace_id = t.trace_id), '{}') AS cited`;

export function traceFromRow(r: Row): RecallTrace {
  return {
    id: String(r.trace_id),
    sessionId: String(r.session_id),
    runId: String(r.run_id),
    turnId: String(r.turn_id),
    moment: r.moment as RecallTrace["moment"],
    query: reviveQuery(parseJson(r.query) as Record<string, unknown>),
    surfaceId: String(r.surface_id),
    sensitivityCeiling: Number(r.sensitivity_ceiling) as SensitivityLevel,
    renderedSha256: String(r.rendered_sha256),
    armLatenciesMs: (parseJson(r.arm_latencies_ms) as Record<string, number> | null) ?? null,
    candidates: r.candidates === null ? null : Number(r.candidates),
    returned: (r.returned as string[]) ?? [],
    cited: (r.cited as string[]) ?? [],
    droppedForBudget: (r.dropped_for_budget as string[] | null) ?? null,
    droppedForBudgetCount: Number(r.dropped_for_budget_count),
    blocked: (r.blocked as string[]) ?? [],
    carriedIn: (r.carried_in as string[]) ?? [],
    retrievalPolicyVersion: String(r.retrieval_policy_version),
    createdAt: r.created_at as Date,
    operatorFieldsExpireAt: r.operator_fields_expire_at as Date,
    ranked: reviveRanked(parseJson(r.ranked) as Record<string, unknown>[] | null),
    asOf: r.as_of as Date,
    consideredNotShown: Number(r.considered_not_shown ?? 0),
    carried: (r.carried as string[] | null) ?? [],
    returnedBands: (r.returned_bands as ConfidenceBand[] | null) ?? [],
    snapshotWatermark: Number(r.snapshot_watermark),
    deltaAfter: r.delta_after === null || r.delta_after === undefined ? null : Number(r.delta_after),
    corrected: (r.corrected as string[]) ?? [],
    tool: String(r.tool ?? ""),
    episodeQuery: reviveEpisodeQuery(parseJson(r.episode_query) as Record<string, unknown> | null),
    returnedEpisodes: (r.returned_episodes as string[] | null) ?? [],
    episodeAdvice: reviveAdvice(parseJson(r.episode_advice) as Record<string, unknown> | null),
  };
}

// jsonb arrives parsed from both drivers today; accept text too so a driver setting cannot break traces.
function parseJson(value: unknown): unknown {
  return typeof value === "string" ? JSON.parse(value) : (value ?? null);
}

function reviveQuery(q: Record<string, unknown>): RecallQuery {
  return {
    ...(q as unknown as RecallQuery),
    asOf: q.asOf ? new Date(q.asOf as string) : null,
    knownAt: q.knownAt ? new Date(q.knownAt as string) : null,
  };
}

function reviveRanked(items: Record<string, unknown>[] | null): RecalledBelief[] | null {
  if (items === null) return null;
  return items.map((i) => ({
    ...(i as unknown as RecalledBelief),
    validFrom: new Date(i.validFrom as string),
    validTo: i.validTo ? new Date(i.validTo as string) : null,
  }));
}

function dateOrNull(value: unknown): Date | null {
  return value ? new Date(value as string) : null;
}

function reviveEpisodeQuery(q: Record<string, unknown> | null): EpisodeTraceQuery | null {
  if (q === null) return null;
  return { ...(q as unknown as EpisodeTraceQuery), startTime: dateOrNull(q.startTime), endTime: dateOrNull(q.endTime) };
}

function reviveAdvice(a: Record<string, unknown> | null): EpisodeSearchAdvice | null {
  if (a === null) return null;
  const advice = a as unknown as EpisodeSearchAdvice;
  const scope = a.scope as Record<string, unknown>;
  return { ...advice, scope: { ...advice.scope, startTime: dateOrNull(scope.startTime), endTime: dateOrNull(scope.endTime) } };
}
