import type * as domain from "../../domain/model.js";
import { SENSITIVITY } from "../../domain/model.js";
import type { SensitivityName } from "../../config/config.js";
import {
  SessionType,
  type GetTraceRequest,
  type RecallEpisodesRequest,
  type RecallRequest,
  type SearchRequest,
} from "../../gen/memory/v1/memory_service_pb.js";
import type { Surface } from "../../gen/memory/v1/types_pb.js";
import { Profile, Sensitivity } from "../../gen/memory/v1/types_pb.js";
import type { DeleteSessionTracesRequest } from "../../gen/memory/v1/write_service_pb.js";
import { RETRIEVAL_POLICY } from "../../recall/policy.js";
import type { RequestedQuery, WorkingState } from "../../recall/query-former.js";
import { MOMENT, PROFILE } from "./convert.js";
import { BELIEF_TYPE, enumValue, fail, MAX_CONTEXT_ID, MAX_TEXT, optionalText, required, sensitivity, time, uuid } from "./field-checks.js";

/**
 * Request validation: every check names the field in the request's own
 * snake_case path and runs before anything is read or written, so bad input
 * gets INVALID_ARGUMENT. The checks are in field-checks.ts, the write
 * requests' validation in validate-writes.ts (re-exported here).
 */

export { MAX_BATCH, MAX_CONTEXT_ID, enumValue, time, uuid } from "./field-checks.js";
export * from "./validate-writes.js";

export function surface(s: Surface | undefined, defaultCeiling: SensitivityName, field = "surface"): domain.SurfaceContext {
  const fallback = SENSITIVITY[defaultCeiling];
  return {
    surfaceId: optionalText(s?.surfaceId ?? "", `${field}.surface_id`),
    sensitivityCeiling: sensitivity(s?.sensitivityCeiling ?? Sensitivity.UNSPECIFIED, `${field}.sensitivity_ceiling`, fallback),
  };
}

/** Caps are refused above the policy's limits, never silently lowered: the caller learns its request was not served as asked. */
function limits(budgetTokens: number, maxItems: number, at: string): void {
  const max = RETRIEVAL_POLICY.limits;
  if (budgetTokens < 0) fail(`${at}budget_tokens`, "must not be negative");
  if (budgetTokens > max.budgetTokens) fail(`${at}budget_tokens`, `must be at most ${max.budgetTokens}`);
  if (maxItems < 0) fail(`${at}max_items`, "must not be negative");
  if (maxItems > max.maxItems) fail(`${at}max_items`, `must be at most ${max.maxItems}`);
}

function stringList(values: readonly string[], field: string): string[] {
  if (values.length > 100) fail(field, "must have at most 100 entries");
  return values.map((v, i) => required(v, `${field}[${i}]`));
}

const SESSION_TYPE = new Map<SessionType, domain.SessionType>([
  [SessionType.UNSPECIFIED, "interactive"],
  [SessionType.INTERACTIVE, "interactive"],
  [SessionType.ASYNC, "async"],
  [SessionType.CHILD, "child"],
]);

/** Snapshot sizing and the recall delta's bound, from a RecallRequest. */
export function recallSizing(req: RecallRequest, moment: domain.Moment) {
  if (req.contextWindowTokens < 0) fail("context_window_tokens", "must not be negative");
  let snapshotWatermark: number | null = null;
  if (req.snapshotWatermark !== undefined) {
    if (moment !== "in_turn") fail("snapshot_watermark", "only applies to MOMENT_IN_TURN");
    if (req.snapshotWatermark < 0n || req.snapshotWatermark > BigInt(Number.MAX_SAFE_INTEGER)) {
      fail("snapshot_watermark", "is out of range");
    }
    snapshotWatermark = Number(req.snapshotWatermark);
  }
  return {
    sessionType: enumValue(SESSION_TYPE, req.sessionType, "session_type"),
    contextWindowTokens: req.contextWindowTokens,
    snapshotWatermark,
  };
}

/** RecallRequest.working_state, validated; null when absent. */
export function workingState(req: RecallRequest): WorkingState | null {
  const w = req.workingState;
  if (!w) return null;
  if (w.openQuestions.length > 20) fail("working_state.open_questions", "must have at most 20 entries");
  return {
    objective: optionalText(w.objective, "working_state.objective", MAX_TEXT),
    openQuestions: w.openQuestions.map((q, i) => optionalText(q, `working_state.open_questions[${i}]`, MAX_TEXT)),
    activeEntities: stringList(w.activeEntities, "working_state.active_entities"),
    currentMessage: optionalText(w.currentMessage, "working_state.current_message", MAX_TEXT),
  };
}

export function recallRequest(req: RecallRequest): { query: RequestedQuery; moment: domain.Moment } {
  const q = req.query;
  if (!q) fail("query", "is required");
  limits(q.budgetTokens, q.maxItems, "query.");
  if (q.minScore !== undefined && !Number.isFinite(q.minScore)) fail("query.min_score", "must be a number");
  const moment = enumValue(MOMENT, req.moment, "moment");
  return {
    moment,
    query: {
      currentScope: optionalText(q.currentScope, "query.current_scope"),
      text: q.text === undefined || q.text.trim() === "" ? null : optionalText(q.text, "query.text", MAX_TEXT),
      subjects: stringList(q.subjects, "query.subjects"),
      beliefTypes: stringList(q.beliefTypes, "query.belief_types"),
      structuredBeliefTypes: stringList(q.structuredBeliefTypes, "query.structured_belief_types"),
      includeOwnedResources: q.includeOwnedResources,
      asOf: time(q.asOf, "query.as_of"),
      knownAt: time(q.knownAt, "query.known_at"),
      includeSuperseded: q.includeSuperseded,
      includeProvisional: q.includeProvisional,
      profile: q.profile === Profile.UNSPECIFIED ? undefined : enumValue(PROFILE, q.profile, "query.profile"),
      budgetTokens: q.budgetTokens,
      maxItems: q.maxItems,
      minScore: q.minScore,
    },
  };
}

/**
 * Field number of the old memory.search `belief_types` argument, reserved in
 * SearchRequest. A client built from the old schema still sends it; protobuf
 * keeps it as an unknown field, and it is refused by name rather than
 * silently dropped (the caller meant a hard filter it would not get).
 */
export const SEARCH_BELIEF_TYPES_FIELD = 12;

export function searchRequest(req: SearchRequest): RequestedQuery {
  if (req.$unknown?.some((f) => f.no === SEARCH_BELIEF_TYPES_FIELD)) {
    fail("belief_types", "is not an argument of memory.search@2.1.0; use type_hints (relevance anchors, not a filter)");
  }
  limits(req.budgetTokens, req.maxItems, "");
  const typeHints = stringList(req.typeHints, "type_hints");
  typeHints.forEach((t, i) => {
    if (!BELIEF_TYPE.test(t)) fail(`type_hints[${i}]`, "must be snake_case (a-z, 0-9, _)");
  });
  return {
    currentScope: optionalText(req.scope, "scope"),
    text: required(req.text, "text", MAX_TEXT),
    subjects: stringList(req.subjects, "subjects"),
    beliefTypes: [],
    // Soft hints: anchors of the structured arm, never a filter on the stored type.
    structuredBeliefTypes: typeHints,
    includeOwnedResources: false,
    asOf: time(req.asOf, "as_of"),
    knownAt: time(req.knownAt, "known_at"),
    includeSuperseded: false,
    includeProvisional: undefined,
    profile: undefined,
    budgetTokens: req.budgetTokens,
    maxItems: req.maxItems,
    minScore: undefined,
  };
}

export function recallEpisodesRequest(req: RecallEpisodesRequest) {
  const startTime = time(req.startTime, "start_time");
  const endTime = time(req.endTime, "end_time");
  const sessionId = req.sessionId === "" ? null : optionalText(req.sessionId, "session_id");
  if (sessionId === null && !startTime && !endTime) fail("session_id", "is required unless start_time or end_time is set");
  if (startTime && endTime && endTime.getTime() <= startTime.getTime()) fail("end_time", "must be after start_time");
  if (req.pageSize < 0 || req.pageSize > 500) fail("page_size", "must be between 0 and 500");
  if (req.budgetTokens < 0) fail("budget_tokens", "must not be negative");
  if (req.budgetTokens > 0 && req.budgetTokens < 64) fail("budget_tokens", "must be 0 (the default) or at least 64");
  if (req.archivalBudgetTokens < 0) fail("archival_budget_tokens", "must not be negative");
  if (req.archivalBudgetTokens > 0 && req.archivalBudgetTokens < 64) {
    fail("archival_budget_tokens", "must be 0 (the default) or at least 64");
  }
  return {
    sessionId,
    startTime,
    endTime,
    includeArchival: req.includeArchival,
    pageSize: req.pageSize || 50,
    budgetTokens: req.budgetTokens,
    archivalBudgetTokens: req.archivalBudgetTokens,
    callerSessionId: optionalText(req.callerSessionId, "caller_session_id") || (sessionId ?? ""),
    runId: optionalText(req.runId, "run_id"),
    turnId: optionalText(req.turnId, "turn_id"),
  };
}


/** GetTrace's two forms: the operator's trace by id, or the user's view of a turn on a viewing surface. */
export type TraceRequest =
  | { form: "operator"; traceId: string }
  | { form: "user"; turnId: string; viewingSurface: domain.SurfaceContext };

export function getTraceRequest(req: GetTraceRequest, defaultCeiling: SensitivityName): TraceRequest {
  if (req.turnId !== "") {
    if (req.traceId !== "") fail("trace_id", "must not be set together with turn_id");
    if (req.turnId.trim() === "") fail("turn_id", "is required");
    return {
      form: "user",
      turnId: req.turnId.slice(0, MAX_CONTEXT_ID),
      viewingSurface: surface(req.viewingSurface, defaultCeiling, "viewing_surface"),
    };
  }
  if (req.viewingSurface) fail("viewing_surface", "is only used with turn_id");
  return { form: "operator", traceId: uuid(req.traceId, "trace_id") };
}

export function deleteSessionTracesRequest(req: DeleteSessionTracesRequest): { sessionId: string } {
  return { sessionId: required(req.sessionId, "session_id").slice(0, MAX_CONTEXT_ID) };
}
