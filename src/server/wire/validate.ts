import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { InvalidArgumentError } from "../../domain/errors.js";
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
import type { Belief, Episode, Surface } from "../../gen/memory/v1/types_pb.js";
import { Profile, Sensitivity } from "../../gen/memory/v1/types_pb.js";
import {
  RejectionKind,
  type AppendEpisodesRequest,
  type DeleteSessionTracesRequest,
  type PutBeliefsRequest,
  type PutSubjectAliasesRequest,
  type RecordCitationsRequest,
  type RejectBeliefRequest,
} from "../../gen/memory/v1/write_service_pb.js";
import { RETRIEVAL_POLICY } from "../../recall/policy.js";
import type { RequestedQuery, WorkingState } from "../../recall/query-former.js";
import { AUTHORITY, MOMENT, PORTABILITY, PROFILE, SCOPE_LEVEL, SENSITIVITY_LEVEL, STATUS, toDate } from "./convert.js";

/**
 * Request validation: every check names the field in the request's own
 * snake_case path ("beliefs[2].confidence") and runs before anything is
 * written, so bad input gets INVALID_ARGUMENT and never a partial write.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const BELIEF_TYPE = /^[a-z][a-z0-9_]{0,63}$/;
export const MAX_BATCH = 1000;
const MAX_TEXT = 8000;
const MAX_NAME = 500;

function fail(field: string, problem: string): never {
  throw new InvalidArgumentError(field, problem);
}

export function uuid(value: string, field: string): string {
  if (!UUID.test(value)) fail(field, value === "" ? "is required" : "must be a UUID");
  return value.toLowerCase();
}

function required(value: string, field: string, max = MAX_NAME): string {
  if (value.trim() === "") fail(field, "is required");
  if (value.length > max) fail(field, `must be at most ${max} characters`);
  return value;
}

function optionalText(value: string, field: string, max = MAX_NAME): string {
  if (value.length > max) fail(field, `must be at most ${max} characters`);
  return value;
}

export function enumValue<P, D>(map: Map<P, D>, value: P, field: string): D {
  const out = map.get(value);
  if (out === undefined) fail(field, "must be set to a known value");
  return out;
}

export function time(ts: Timestamp | undefined, field: string): Date | null {
  if (!ts) return null;
  const d = toDate(ts);
  // Years 0001-9999, as RFC 3339 and PostgreSQL's timestamptz can both hold.
  if (!d || Number.isNaN(d.getTime()) || d.getUTCFullYear() < 1 || d.getUTCFullYear() > 9999) fail(field, "is out of range");
  if (ts.nanos < 0 || ts.nanos > 999_999_999) fail(field, "has invalid nanos");
  return d;
}

function batch<T>(items: readonly T[], field: string): readonly T[] {
  if (items.length === 0) fail(field, "must not be empty");
  if (items.length > MAX_BATCH) fail(field, `must have at most ${MAX_BATCH} entries`);
  return items;
}

function sensitivity(value: Sensitivity, field: string, fallback: domain.SensitivityLevel): domain.SensitivityLevel {
  if (value === Sensitivity.UNSPECIFIED) return fallback;
  return enumValue(SENSITIVITY_LEVEL, value, field);
}

function noDuplicates(ids: readonly string[], field: string, path: (i: number) => string): void {
  const seen = new Set<string>();
  ids.forEach((id, i) => {
    if (seen.has(id)) fail(path(i), `duplicates an earlier entry of ${field}`);
    seen.add(id);
  });
}

export function belief(b: Belief, at: string, now: Date): domain.Belief {
  const recordedAt = time(b.recordedAt, `${at}.recorded_at`) ?? now;
  const validFrom = time(b.validFrom, `${at}.valid_from`) ?? recordedAt;
  const validTo = time(b.validTo, `${at}.valid_to`);
  if (validTo && validTo.getTime() <= validFrom.getTime()) fail(`${at}.valid_to`, "must be after valid_from");
  const retractedAt = time(b.retractedAt, `${at}.retracted_at`);
  if (retractedAt && retractedAt.getTime() < recordedAt.getTime()) fail(`${at}.retracted_at`, "must not be before recorded_at");
  if (!Number.isFinite(b.confidence) || b.confidence < 0 || b.confidence > 1) fail(`${at}.confidence`, "must be between 0 and 1");
  if (b.evidenceCount < 0) fail(`${at}.evidence_count`, "must not be negative");
  const beliefType = required(b.beliefType, `${at}.belief_type`, 64);
  if (!BELIEF_TYPE.test(beliefType)) fail(`${at}.belief_type`, "must be snake_case (a-z, 0-9, _)");
  return {
    beliefId: uuid(b.beliefId, `${at}.belief_id`),
    subject: required(b.subject, `${at}.subject`),
    statement: required(b.statement, `${at}.statement`, MAX_TEXT),
    beliefType,
    predicateKey: optionalText(b.predicateKey, `${at}.predicate_key`),
    status: enumValue(STATUS, b.status, `${at}.status`),
    confidence: b.confidence,
    authority: enumValue(AUTHORITY, b.authority, `${at}.authority`),
    originScope: required(b.originScope, `${at}.origin_scope`),
    scopeLevel: enumValue(SCOPE_LEVEL, b.scopeLevel, `${at}.scope_level`),
    portability: enumValue(PORTABILITY, b.portability, `${at}.portability`),
    sensitivity: sensitivity(b.sensitivity, `${at}.sensitivity`, SENSITIVITY.personal),
    validFrom,
    validTo,
    recordedAt,
    retractedAt,
    supersedes: b.supersedes.map((id, i) => uuid(id, `${at}.supersedes[${i}]`)),
    conflictsWith: b.conflictsWith.map((id, i) => uuid(id, `${at}.conflicts_with[${i}]`)),
    evidenceCount: Math.max(1, b.evidenceCount),
    lastEvidenceAt: time(b.lastEvidenceAt, `${at}.last_evidence_at`) ?? recordedAt,
    expiresHint: time(b.expiresHint, `${at}.expires_hint`),
    flaggedForReview: b.flaggedForReview,
    sourceEpisodeIds: b.sourceEpisodeIds.map((id, i) => uuid(id, `${at}.source_episode_ids[${i}]`)),
  };
}

export function putBeliefs(req: PutBeliefsRequest, now: Date): domain.Belief[] {
  const beliefs = batch(req.beliefs, "beliefs").map((b, i) => belief(b, `beliefs[${i}]`, now));
  noDuplicates(beliefs.map((b) => b.beliefId), "belief_id", (i) => `beliefs[${i}].belief_id`);
  return beliefs;
}

export function episode(e: Episode, at: string): domain.Episode {
  const occurredAt = time(e.occurredAt, `${at}.occurred_at`);
  if (!occurredAt) fail(`${at}.occurred_at`, "is required");
  return {
    episodeId: uuid(e.episodeId, `${at}.episode_id`),
    sessionId: required(e.sessionId, `${at}.session_id`),
    occurredAt,
    sequence: sequence(e.sequence, `${at}.sequence`),
    actor: optionalText(e.actor, `${at}.actor`),
    kind: optionalText(e.kind, `${at}.kind`),
    content: required(e.content, `${at}.content`, 64_000),
    project: optionalText(e.project, `${at}.project`),
    archival: e.archival,
    sensitivity: sensitivity(e.sensitivity, `${at}.sensitivity`, SENSITIVITY.personal),
  };
}

/** int64 on the wire, a JavaScript number inside: beyond 2^53 it would silently change value. */
function sequence(value: bigint, field: string): number {
  if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    fail(field, `must be between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`);
  }
  return Number(value);
}

export function appendEpisodes(req: AppendEpisodesRequest): domain.Episode[] {
  const episodes = batch(req.episodes, "episodes").map((e, i) => episode(e, `episodes[${i}]`));
  noDuplicates(episodes.map((e) => e.episodeId), "episode_id", (i) => `episodes[${i}].episode_id`);
  return episodes;
}

export function subjectAliases(req: PutSubjectAliasesRequest): domain.SubjectAlias[] {
  const aliases = batch(req.aliases, "aliases").map((a, i) => ({
    alias: required(a.alias, `aliases[${i}].alias`),
    subject: required(a.subject, `aliases[${i}].subject`),
  }));
  noDuplicates(aliases.map((a) => a.alias.toLowerCase()), "alias", (i) => `aliases[${i}].alias`);
  return aliases;
}

export function citations(req: RecordCitationsRequest): { traceId: string; beliefIds: string[]; turnId: string | null } {
  return {
    traceId: uuid(req.traceId, "trace_id"),
    beliefIds: batch(req.beliefIds, "belief_ids").map((id, i) => uuid(id, `belief_ids[${i}]`)),
    turnId: req.turnId === "" ? null : req.turnId.slice(0, MAX_CONTEXT_ID),
  };
}

export const REJECTION_KIND = new Map<RejectionKind, domain.RejectionKind>([
  [RejectionKind.UNSPECIFIED, "unspecified"],
  [RejectionKind.NOT_TRUE, "not_true"],
  [RejectionKind.CHANGED, "changed"],
  [RejectionKind.NOT_HERE, "not_here"],
]);

export function rejection(req: RejectBeliefRequest, now: Date): domain.Rejection {
  const kind = enumValue(REJECTION_KIND, req.kind, "kind");
  const beliefId = uuid(req.beliefId, "belief_id");
  let correction: domain.Belief | null = null;
  if (kind === "changed") {
    if (!req.correction) fail("correction", "is required when kind is CHANGED");
    correction = belief(req.correction, "correction", now);
    if (correction.beliefId === beliefId) fail("correction.belief_id", "must differ from belief_id");
  } else if (req.correction) {
    fail("correction", "is only allowed when kind is CHANGED");
  }
  if (kind === "not_here") required(req.scope, "scope");
  return {
    rejectionId: uuid(req.rejectionId, "rejection_id"),
    beliefId,
    kind,
    correction,
    scope: optionalText(req.scope, "scope"),
    reason: optionalText(req.reason, "reason", 2000),
  };
}

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

/** Session, run and turn ids are kept to their first MAX_CONTEXT_ID characters, when recorded and when looked up. */
export const MAX_CONTEXT_ID = 200;

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
