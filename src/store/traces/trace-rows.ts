import type {
  ConfidenceBand,
  Principal,
  EpisodeSearchAdvice,
  EpisodeTraceQuery,
  NotShown,
  RecallQuery,
  RecallTrace,
  RecalledBelief,
  SensitivityLevel,
} from "../../domain/model.js";
import { missEvidence, type MissEvidence } from "../../domain/feedback.js";
import { recalledEvent } from "../../domain/recalled-event.js";
import { rankedJson } from "./ranked-json.js";
import type { Row } from "../sql-client.js";

/** Every column a trace write fills, with its SQL type: the one list the batch insert is built from. */
const WRITTEN_COLUMNS = [
  ["tenant_id", "text"],
  ["principal_id", "text"],
  ["trace_id", "uuid"],
  ["session_id", "text"],
  ["run_id", "text"],
  ["turn_id", "text"],
  ["moment", "text"],
  ["query", "jsonb"],
  ["surface_id", "text"],
  ["sensitivity_ceiling", "smallint"],
  ["rendered_sha256", "text"],
  ["as_of", "timestamptz"],
  ["returned", "uuid[]"],
  ["dropped_for_budget_count", "integer"],
  ["blocked", "uuid[]"],
  ["carried_in", "uuid[]"],
  ["retrieval_policy_version", "text"],
  ["created_at", "timestamptz"],
  ["operator_fields_expire_at", "timestamptz"],
  ["arm_latencies_ms", "jsonb"],
  ["candidates", "integer"],
  ["dropped_for_budget", "uuid[]"],
  ["ranked", "text"],
  ["considered_not_shown", "integer"],
  ["carried", "uuid[]"],
  ["returned_bands", "text[]"],
  ["snapshot_watermark", "bigint"],
  ["delta_after", "bigint"],
  ["corrected", "uuid[]"],
  ["tool", "text"],
  ["episode_query", "jsonb"],
  ["returned_episodes", "uuid[]"],
  ["episode_advice", "jsonb"],
  ["reuses_trace_id", "uuid"],
  ["not_shown", "jsonb"],
] as const;

/**
 * The batch insert's JSON input: every written column but the ranked list
 * (its own parameter, see insertTraces), the outbox payload, and what the
 * recall-miss count reads.
 */
const INPUT_FIELDS = [
  ...WRITTEN_COLUMNS.filter(([name]) => name !== "ranked"),
  ["event", "jsonb"],
  ["seq", "integer"],
  ["named", "text[]"],
  ["held", "text[]"],
] as const;

type InputField = (typeof INPUT_FIELDS)[number][0];

/**
 * One trace as a row of the batch insert, keyed by field. A trace that
 * reuses another render (a cached snapshot) carries a reference instead of
 * that render's ranked list and dropped ids; `event` is its memory.recalled
 * outbox payload; `seq` its place in the batch, the order its recall misses
 * count in.
 */
function traceRecord(p: Principal, t: RecallTrace, seq: number): Record<Exclude<InputField, "ranked">, unknown> & MissEvidence {
  const reuses = t.reusesTraceId ?? null;
  return {
    tenant_id: p.tenantId,
    principal_id: p.principalId,
    trace_id: t.id,
    session_id: t.sessionId,
    run_id: t.runId,
    turn_id: t.turnId,
    moment: t.moment,
    query: t.query,
    surface_id: t.surfaceId,
    sensitivity_ceiling: t.sensitivityCeiling,
    rendered_sha256: t.renderedSha256,
    as_of: t.asOf?.toISOString() ?? null,
    returned: t.returned,
    dropped_for_budget_count: t.droppedForBudgetCount,
    blocked: t.blocked,
    carried_in: t.carriedIn,
    retrieval_policy_version: t.retrievalPolicyVersion,
    created_at: t.createdAt.toISOString(),
    operator_fields_expire_at: t.operatorFieldsExpireAt.toISOString(),
    arm_latencies_ms: t.armLatenciesMs,
    candidates: t.candidates,
    dropped_for_budget: reuses === null ? t.droppedForBudget : null,
    considered_not_shown: t.consideredNotShown,
    carried: t.carried,
    returned_bands: t.returnedBands,
    snapshot_watermark: t.snapshotWatermark,
    delta_after: t.deltaAfter,
    corrected: t.corrected,
    tool: t.tool ?? "",
    episode_query: t.episodeQuery ?? null,
    returned_episodes: t.returnedEpisodes ?? [],
    episode_advice: t.episodeAdvice ?? null,
    reuses_trace_id: reuses,
    not_shown: reuses === null ? (t.notShown ?? null) : null,
    event: recalledEvent(p, t),
    seq,
    ...missEvidence(t),
  };
}

const COLUMN_LIST = WRITTEN_COLUMNS.map(([name]) => name).join(", ");
/** The same columns to select, tenant_id taken from $2: one statement per tenant, so it routes to one shard. */
const SELECTED_COLUMNS = WRITTEN_COLUMNS.map(([name]) => (name === "tenant_id" ? "$2::text" : name)).join(", ");

/**
 * NOTIFYed for every snapshot trace written and every session whose traces
 * are deleted, so each sidecar's in-process view of a session's snapshot
 * (recall/moments/session-snapshots.ts) follows every other sidecar's writes.
 * Payload: [tenant, principal, session, trace id, or null for a deletion].
 */
export const SESSION_SNAPSHOT_CHANNEL = "recall_session_snapshot";

/** A session's latest snapshot as stored: what it returned. */
export interface StoredSnapshot {
  traceId: string;
  createdAt: Date;
  returned: readonly string[];
}

/**
 * The batch write of one tenant's traces, one statement: $1 is a JSON array
 * of `traceRecord`s, $2 their tenant, $3 their ranked lists: JSON texts in
 * batch order, each followed by U+0001 (which JSON text never holds
 * unescaped), an empty one for a trace that reuses a render. The ranked list
 * is most of a trace and nothing in SQL reads inside it: as a parameter of
 * its own it is stored as sent, where inside $1 PostgreSQL parsed it into
 * jsonb (server CPU of an in-turn trace's write 0.93 -> 0.47 ms, of a cold
 * snapshot's 3.8 -> 0.9 ms). It inserts every trace not already there, the
 * memory.recalled outbox row of each one it inserted and, when some trace
 * can count them, the recall misses of those (domain/feedback.ts); it returns
 * their ids. Repeating it is a no-op: a retry counts no miss twice. A batch
 * that counts no misses leaves that part out, which spares the planner about
 * half a millisecond (more on PGlite, which plans every call).
 */
export function insertTraces(
  tenantId: string,
  items: readonly { principal: Principal; trace: RecallTrace }[],
): { text: string; params: [string, string, string] } {
  const records = items.map(({ principal, trace }, seq) => traceRecord(principal, trace, seq));
  const text = records.some((r) => r.named.length > 0) ? INSERT_TRACES_COUNTING_MISSES : INSERT_TRACES;
  const ranked = items.map(({ trace }) => (trace.reusesTraceId == null && trace.ranked !== null ? rankedJson(trace.ranked) : ""));
  return { text, params: [JSON.stringify(records), tenantId, ranked.map((r) => r + RANKED_END).join("")] };
}

const RANKED_END = "\u0001";

const insertTracesText = (countMisses: boolean) => `WITH input AS (
    SELECT x.*, r.ranked
    FROM jsonb_to_recordset($1::text::jsonb) AS x(${INPUT_FIELDS.map(([n, type]) => `${n} ${type}`).join(", ")})
      JOIN unnest(string_to_array($3::text, chr(1), '')) WITH ORDINALITY AS r(ranked, ord) ON r.ord = x.seq + 1
  ),
  written AS (
    INSERT INTO recall_traces (${COLUMN_LIST})
    SELECT ${SELECTED_COLUMNS} FROM input
    ON CONFLICT (tenant_id, principal_id, trace_id) DO NOTHING
    RETURNING tenant_id, principal_id, trace_id
  ),
  -- What the rest reads of the traces inserted (not i.*: that would copy every ranked list again).
  inserted AS (
    SELECT i.principal_id, i.trace_id, i.session_id, i.moment, i.created_at, i.event, i.seq, i.named, i.held
    FROM input i JOIN written w ON w.tenant_id = i.tenant_id AND w.principal_id = i.principal_id AND w.trace_id = i.trace_id
  ),
  events AS (
    INSERT INTO recalled_events (tenant_id, principal_id, trace_id, session_id, payload, created_at)
    SELECT $2::text, i.principal_id, i.trace_id, i.session_id, i.event, i.created_at FROM inserted i
    RETURNING 1
  ),
  notified AS (
    SELECT count(pg_notify('${SESSION_SNAPSHOT_CHANNEL}', json_build_array($2::text, i.principal_id, i.session_id, i.trace_id::text)::text)) AS n
    FROM inserted i WHERE i.moment = 'snapshot' AND i.session_id <> ''
  )${countMisses ? COUNT_MISSES : ""}
  SELECT trace_id::text AS trace_id FROM written, notified`;

/**
 * The recall misses of the traces inserted. A named subject is keyed by its
 * canonical subject (lower-cased, after aliases); a trace answers it when it
 * holds a belief about it under any of its names, which clears its hint;
 * otherwise the trace counts one miss of it, under the name it first gave it
 * (spelled as it last gave it). The traces apply in batch order, as if
 * written one by one, folded into one change per hint: a statement may not
 * change a row twice.
 */
const COUNT_MISSES = `,
  -- Each distinct subject a trace named (lower-cased), spelled as it was last named, at its first naming.
  asked AS (
    SELECT i.seq, lower(n.name) AS asked, (array_agg(n.name ORDER BY n.pos DESC))[1] AS spelled, min(n.pos) AS pos
    FROM inserted i CROSS JOIN LATERAL unnest(i.named) WITH ORDINALITY AS n(name, pos)
    GROUP BY i.seq, lower(n.name)
  ),
  -- Per trace and canonical subject: answered, or missed under the name first given.
  outcomes AS (
    SELECT i.seq, i.principal_id, i.trace_id, i.created_at, c.canonical AS subject_key,
      (array_agg(a.spelled ORDER BY a.pos))[1] AS subject,
      c.canonical = ANY(i.held) OR EXISTS (SELECT 1 FROM subject_aliases x
        WHERE x.tenant_id = $2 AND x.principal_id = i.principal_id AND lower(x.subject) = c.canonical AND x.alias_key = ANY(i.held)) AS answered
    FROM asked a JOIN inserted i ON i.seq = a.seq
      CROSS JOIN LATERAL (SELECT COALESCE((SELECT lower(x.subject) FROM subject_aliases x
        WHERE x.tenant_id = $2 AND x.principal_id = i.principal_id AND x.alias_key = a.asked), a.asked) AS canonical) c
    GROUP BY i.seq, i.principal_id, i.trace_id, i.created_at, i.held, c.canonical
  ),
  -- Per hint: whether a trace of the batch answered it, and the misses after the last that did.
  hint_changes AS (
    SELECT principal_id, subject_key, hit >= 0 AS cleared, count(*) FILTER (WHERE seq > hit)::int AS misses,
      (array_agg(created_at ORDER BY seq) FILTER (WHERE seq > hit))[1] AS first_missed_at,
      max(created_at) FILTER (WHERE seq > hit) AS last_missed_at,
      (array_agg(subject ORDER BY seq DESC) FILTER (WHERE seq > hit))[1] AS subject,
      (array_agg(trace_id ORDER BY seq DESC) FILTER (WHERE seq > hit))[1] AS last_trace_id
    FROM (SELECT o.*, COALESCE(max(o.seq) FILTER (WHERE o.answered) OVER (PARTITION BY o.principal_id, o.subject_key), -1) AS hit
      FROM outcomes o) o
    GROUP BY principal_id, subject_key, hit
  ),
  cleared AS (
    DELETE FROM rederivation_hints h USING hint_changes c
    WHERE h.tenant_id = $2 AND h.principal_id = c.principal_id AND h.subject_key = c.subject_key AND c.misses = 0
    RETURNING 1
  ),
  counted AS (
    INSERT INTO rederivation_hints AS h (tenant_id, principal_id, subject_key, subject, misses, first_missed_at, last_missed_at, last_trace_id)
    SELECT $2::text, c.principal_id, c.subject_key, c.subject, c.misses, c.first_missed_at, c.last_missed_at, c.last_trace_id
    FROM hint_changes c WHERE c.misses > 0
    -- In key order, so concurrent writers lock the hints they share in the same order.
    ORDER BY c.principal_id, c.subject_key
    ON CONFLICT (tenant_id, principal_id, subject_key) DO UPDATE SET
      subject = EXCLUDED.subject, last_trace_id = EXCLUDED.last_trace_id,
      -- A hint answered earlier in the batch starts again from the misses after that.
      (misses, first_missed_at, last_missed_at) = (
        SELECT CASE WHEN c.cleared THEN 0 ELSE h.misses END + EXCLUDED.misses,
          CASE WHEN c.cleared THEN EXCLUDED.first_missed_at ELSE h.first_missed_at END,
          CASE WHEN c.cleared THEN EXCLUDED.last_missed_at ELSE GREATEST(h.last_missed_at, EXCLUDED.last_missed_at) END
        FROM hint_changes c WHERE c.principal_id = h.principal_id AND c.subject_key = h.subject_key)
    RETURNING 1
  )`;

const INSERT_TRACES = insertTracesText(false);
const INSERT_TRACES_COUNTING_MISSES = insertTracesText(true);

/**
 * Columns of a trace read (`t` is recall_traces, `o` the render it reuses,
 * joined by TRACE_FROM); `cited` is derived from the citations.
 */
export const TRACE_COLUMNS = `t.*, t.trace_id::text AS trace_id, t.reuses_trace_id::text AS reuses_trace_id,
  o.ranked AS reused_ranked, o.dropped_for_budget::text[] AS reused_dropped_for_budget,
  o.not_shown AS reused_not_shown, t.returned::text[] AS returned, t.blocked::text[] AS blocked,
  t.carried_in::text[] AS carried_in, t.dropped_for_budget::text[] AS dropped_for_budget, t.carried::text[] AS carried,
  t.corrected::text[] AS corrected, t.returned_episodes::text[] AS returned_episodes,
  COALESCE((SELECT array_agg(DISTINCT c.belief_id::text ORDER BY c.belief_id::text) FROM citations c
    WHERE c.tenant_id = t.tenant_id AND c.principal_id = t.principal_id AND c.trace_id = t.trace_id), '{}') AS cited`;

/** A trace and the render it reuses, if any: always of the same tenant and principal. */
export const TRACE_FROM = `recall_traces t LEFT JOIN recall_traces o
  ON o.tenant_id = t.tenant_id AND o.principal_id = t.principal_id AND o.trace_id = t.reuses_trace_id`;

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
    droppedForBudget: ((r.reused_dropped_for_budget ?? r.dropped_for_budget) as string[] | null) ?? null,
    droppedForBudgetCount: Number(r.dropped_for_budget_count),
    blocked: (r.blocked as string[]) ?? [],
    carriedIn: (r.carried_in as string[]) ?? [],
    retrievalPolicyVersion: String(r.retrieval_policy_version),
    createdAt: r.created_at as Date,
    operatorFieldsExpireAt: r.operator_fields_expire_at as Date,
    ranked: reviveRanked(parseJson(r.reused_ranked ?? r.ranked) as Record<string, unknown>[] | null),
    asOf: (r.as_of as Date | null) ?? null,
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
    // Only traces that recorded reasons (and are inside the operator window) have them.
    ...notShownOf(r),
    // Only a cached hit has one, so any other trace reads back exactly as it was written.
    ...(r.reuses_trace_id ? { reusesTraceId: String(r.reuses_trace_id) } : {}),
  };
}

function notShownOf(r: Row): { notShown?: NotShown[] } {
  const notShown = parseJson(r.reused_not_shown ?? r.not_shown) as NotShown[] | null;
  return notShown === null ? {} : { notShown };
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
