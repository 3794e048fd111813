import type {
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
    t.tool ?? "",
    t.episodeQuery ? JSON.stringify(t.episodeQuery) : null,
    t.returnedEpisodes ?? [],
    t.episodeAdvice ? JSON.stringify(t.episodeAdvice) : null,
  ];
}

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
