import { randomUUID } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import { InvalidArgumentError, NotFoundError } from "../domain/errors.js";
import type { RecallContext, RecallQuery, RecallTrace, ScopeSource } from "../domain/model.js";
import {
  GetTraceResponseSchema,
  MemoryService,
  RecallEpisodesResponseSchema,
  RecallEventSchema,
  ScopeSource as ScopeSourcePb,
  SearchResponseSchema,
  type GetTraceRequest,
  type GetTraceResponse,
  type RecallEpisodesRequest,
  type RecallEpisodesResponse,
  type RecallEvent,
  type RecallRequest,
  type SearchRequest,
  type SearchResponse,
} from "../gen/memory/v1/memory_service_pb.js";
import type { RecallResult } from "../gen/memory/v1/types_pb.js";
import type { ArmOutcome } from "../recall/arms/arm.js";
import { assembleEpisodePage, EPISODE_POLICY, episodeBudgets } from "../recall/episodes.js";
import { isSnapshotOf, recall, sha256Hex, type PipelineDeps, type RecallOutcome, type RecallRun } from "../recall/pipeline.js";
import { fromWorkingState } from "../recall/query-former.js";
import { namesTheOwner, resolveSearchScope } from "../recall/search.js";
import type { SensitivityName } from "../config/config.js";
import { traceView } from "../trace/trace-view.js";
import {
  episodeToProto,
  recallResultToProto,
  recallTraceToProto,
  recallTraceViewToProto,
} from "./wire/convert.js";
import { armResultToProto } from "./wire/arm-result.js";
import { cachedHitToProto } from "./wire/cached-result.js";
import { decodePageToken, encodePageToken, episodeQueryKey } from "./wire/page-token.js";
import { withPreEncodedItems } from "./wire/recalled-item.js";
import { assertSameIdentity, principalOf } from "./identity/identity.js";
import { repliesInBinary } from "./wire/reply-format.js";
import { noteNoMemory, noteRecordCount, noteTraceId } from "./request-log.js";
import { storeDeadlineOf } from "./store-deadline-interceptor.js";
import * as validate from "./wire/validate.js";

export interface MemoryServiceDeps extends PipelineDeps {
  defaultSensitivityCeiling: SensitivityName;
  deadline: { defaultMs: number; maxMs: number };
}

/**
 * The project of the authenticated session, set by the agent runtime (or the
 * proxy that authenticated the caller) beside x-tenant-id and x-principal-id.
 * Search resolves an omitted scope from it. A relevance anchor, not a boundary.
 */
export const SESSION_SCOPE_HEADER = "x-session-scope";

const SCOPE_SOURCE_PB: Record<ScopeSource, ScopeSourcePb> = {
  request: ScopeSourcePb.REQUEST,
  session_header: ScopeSourcePb.SESSION_HEADER,
  session_snapshot: ScopeSourcePb.SESSION_SNAPSHOT,
  none: ScopeSourcePb.NONE,
};

/** Thin handlers, one per RPC: validate, call the pipeline or store, convert. */
export function memoryService(deps: MemoryServiceDeps): ServiceImpl<typeof MemoryService> {
  return {
    recall: (req, ctx) => recallRpc(deps, req, ctx),
    search: (req, ctx) => search(deps, req, ctx),
    recallEpisodes: (req, ctx) => recallEpisodes(deps, req, ctx),
    getTrace: (req, ctx) => getTrace(deps, req, ctx),
  };
}

/** The call's deadline (epoch ms): the client's timeout or the default, never past the maximum. */
function deadlineAt(deps: MemoryServiceDeps, ctx: HandlerContext): number {
  const requested = ctx.timeoutMs() ?? deps.deadline.defaultMs;
  return Date.now() + Math.min(Math.max(0, requested), deps.deadline.maxMs);
}

/** A recall's context from the request's ids (bounded), the surface, the moment and the snapshot sizing. */
function recallContext(
  req: { sessionId: string; runId: string; turnId: string },
  surface: RecallContext["surface"],
  moment: RecallContext["moment"],
  sizing: Pick<RecallContext, "sessionType" | "contextWindowTokens" | "snapshotWatermark"> = {
    sessionType: "interactive",
    contextWindowTokens: 0,
    snapshotWatermark: null,
  },
): RecallContext {
  return {
    moment,
    sessionId: req.sessionId.slice(0, validate.MAX_CONTEXT_ID),
    runId: req.runId.slice(0, validate.MAX_CONTEXT_ID),
    turnId: req.turnId.slice(0, validate.MAX_CONTEXT_ID),
    surface,
    ...sizing,
  };
}

/** Recall: validates, runs the pipeline, streams each arm as it finishes, then the result. */
async function* recallRpc(deps: MemoryServiceDeps, req: RecallRequest, ctx: HandlerContext): AsyncGenerator<RecallEvent> {
  const principal = principalOf(ctx);
  const { query: asked, moment } = validate.recallRequest(req);
  assertSameIdentity(principal, req.query!);
  // Step 1 starts here: the working state joins the query (recall/query-former.ts).
  const query = fromWorkingState(asked, validate.workingState(req));
  const surface = validate.surface(req.surface, deps.defaultSensitivityCeiling);
  const sizing = validate.recallSizing(req, moment);
  const run: RecallRun = {
    principal,
    query,
    context: recallContext(req, surface, moment, sizing),
    kind: moment,
    deadlineAt: deadlineAt(deps, ctx),
    storeDeadline: storeDeadlineOf(ctx),
    signal: ctx.signal,
  };
  // Pre-encoded fields (pre-encoded.ts) only reach a binary client.
  const preEncoded = repliesInBinary(ctx);
  const pipeline = recall(deps, run);
  let step = await pipeline.next();
  while (!step.done) {
    yield create(RecallEventSchema, { event: { case: "arm", value: armResultToProto(step.value, preEncoded) } });
    step = await pipeline.next();
  }
  noteTraceId(ctx, step.value.result.traceId);
  noteRecordCount(ctx, step.value.result.items.length);
  if (step.value.result.noMemory) noteNoMemory(ctx);
  yield create(RecallEventSchema, { event: { case: "result", value: resultToProto(step.value, preEncoded) } });
}

/** Search: the agent's deliberate lookup, one answer; an omitted scope resolved by one rule. */
async function search(deps: MemoryServiceDeps, req: SearchRequest, ctx: HandlerContext): Promise<SearchResponse> {
  const principal = principalOf(ctx);
  const requested = validate.searchRequest(req);
  const surface = validate.surface(req.surface, deps.defaultSensitivityCeiling);
  const searchContext = recallContext(req, surface, "in_turn");
  // One rule for an omitted scope (recall/search.ts); the trace and the response record what it resolved to.
  const resolution = await resolveSearchScope({
    requested: requested.currentScope,
    sessionHeader: sessionScopeHeader(ctx),
    snapshotScope: async () => {
      if (searchContext.sessionId === "") return null;
      // The session's snapshot may have been handed out a moment ago: its trace can still be queued.
      await deps.traces.settle?.(principal, isSnapshotOf(searchContext.sessionId), deadlineAt(deps, ctx));
      return deps.store.at(storeDeadlineOf(ctx)).sessionSnapshotScope(principal, searchContext.sessionId);
    },
  });
  const query = {
    ...requested,
    currentScope: resolution.scope,
    scopeSource: resolution.source,
    includeOwnedResources: namesTheOwner(requested.text ?? "", principal.principalId),
  };
  const outcome = await drain(
    recall(deps, {
      principal,
      query,
      context: searchContext,
      kind: "search",
      deadlineAt: deadlineAt(deps, ctx),
      storeDeadline: storeDeadlineOf(ctx),
      signal: ctx.signal,
    }),
  );
  noteTraceId(ctx, outcome.result.traceId);
  noteRecordCount(ctx, outcome.result.items.length);
  if (outcome.result.noMemory) noteNoMemory(ctx);
  return create(SearchResponseSchema, {
    result: resultToProto(outcome, repliesInBinary(ctx)),
    resolvedScope: resolution.scope,
    scopeSource: SCOPE_SOURCE_PB[resolution.source],
  });
}

/** RecallEpisodes: a page of the event log, rendered and traced like a recall. */
async function recallEpisodes(deps: MemoryServiceDeps, req: RecallEpisodesRequest, ctx: HandlerContext): Promise<RecallEpisodesResponse> {
  const principal = principalOf(ctx);
  const q = validate.recallEpisodesRequest(req);
  const surface = validate.surface(req.surface, deps.defaultSensitivityCeiling);
  const queryKey = episodeQueryKey(q);
  const after = req.pageToken === "" ? null : decodePageToken(req.pageToken, queryKey);
  const budgets = episodeBudgets(q);
  const now = deps.clock();
  const rows = await deps.store.at(storeDeadlineOf(ctx)).episodes(
    principal,
    {
      sessionId: q.sessionId,
      startTime: q.startTime,
      endTime: q.endTime,
      includeArchival: q.includeArchival,
      sensitivityCeiling: surface.sensitivityCeiling,
      after,
      limit: q.pageSize + 1,
    },
    { signal: ctx.signal },
  );
  const page = assembleEpisodePage(rows, { ...q, ...budgets });
  const returned = page.episodes.map((p) => p.episode);
  const last = returned[returned.length - 1];
  const traceId = randomUUID();
  await deps.traces.record(principal, episodeTrace(traceId, q, surface, rows.length, page, after !== null, now, deps.traceRetentionHours));
  noteTraceId(ctx, traceId);
  noteRecordCount(ctx, returned.length);
  return create(RecallEpisodesResponseSchema, {
    episodes: returned.map(episodeToProto),
    nextPageToken: page.more && last ? encodePageToken(last, queryKey) : "",
    tokens: page.tokens,
    truncated: page.truncated,
    rendered: page.rendered,
    traceId,
    withheldEpisodeIds: page.episodes.filter((p) => p.withheld).map((p) => p.episode.episodeId),
    clippedEpisodeIds: page.episodes.filter((p) => p.clipped).map((p) => p.episode.episodeId),
  });
}

/** An episode page's trace: what was read and shown, bound to the rendered bytes like a recall's. */
function episodeTrace(
  traceId: string,
  q: ReturnType<typeof validate.recallEpisodesRequest>,
  surface: RecallContext["surface"],
  rowsRead: number,
  page: ReturnType<typeof assembleEpisodePage>,
  continued: boolean,
  now: Date,
  retentionHours: number,
): RecallTrace {
  const returned = page.episodes.map((p) => p.episode);
  return {
    id: traceId,
    sessionId: q.callerSessionId.slice(0, 200),
    runId: q.runId.slice(0, 200),
    turnId: q.turnId.slice(0, 200),
    moment: "in_turn",
    query: NO_BELIEF_QUERY,
    surfaceId: surface.surfaceId,
    sensitivityCeiling: surface.sensitivityCeiling,
    renderedSha256: sha256Hex(page.rendered),
    armLatenciesMs: {},
    candidates: rowsRead,
    returned: [],
    cited: [],
    droppedForBudget: [],
    droppedForBudgetCount: 0,
    blocked: page.episodes.filter((p) => p.withheld).map((p) => p.episode.episodeId),
    carriedIn: [],
    retrievalPolicyVersion: EPISODE_POLICY.version,
    createdAt: now,
    operatorFieldsExpireAt: new Date(now.getTime() + retentionHours * 3_600_000),
    ranked: [],
    asOf: now,
    tool: EPISODE_POLICY.tool,
    episodeQuery: { ...q, ...episodeBudgets(q), continued },
    returnedEpisodes: returned.map((e) => e.episodeId),
    episodeAdvice: null,
    snapshotWatermark: 0,
    deltaAfter: null,
    corrected: [],
    consideredNotShown: Math.max(0, Math.min(rowsRead, q.pageSize) - returned.length),
    carried: [],
    returnedBands: [],
  };
}

/** GetTrace: the operator's trace by id, or the user's view of a turn. */
async function getTrace(deps: MemoryServiceDeps, req: GetTraceRequest, ctx: HandlerContext): Promise<GetTraceResponse> {
  const principal = principalOf(ctx);
  const request = validate.getTraceRequest(req, deps.defaultSensitivityCeiling);
  const store = deps.store.at(storeDeadlineOf(ctx));
  if (request.form === "user") {
    // The turn's traces (and its session's snapshot) are written first if they still wait in the queue.
    await deps.traces.settle?.(principal, (t) => t.turnId === request.turnId || t.moment === "snapshot", deadlineAt(deps, ctx));
    const view = await traceView(store.traces, principal, request.turnId, request.viewingSurface.sensitivityCeiling);
    // Missing and not-yours are the same answer, so turn ids reveal nothing.
    if (!view) throw new NotFoundError("no trace for this turn");
    return create(GetTraceResponseSchema, { view: recallTraceViewToProto(view) });
  }
  // A trace still waiting to be written is read from the queue: a trace id just handed out is always found.
  // One spooled in a database outage is replayed first (UNAVAILABLE while it cannot be).
  let trace: RecallTrace | null | undefined = deps.traces.pending?.(principal, request.traceId);
  if (!trace) {
    await deps.traces.settle?.(principal, (t) => t.id === request.traceId, deadlineAt(deps, ctx));
    trace = deps.traces.pending?.(principal, request.traceId) ?? (await store.getTrace(principal, request.traceId));
  }
  // Missing and not-yours are the same answer, so ids reveal nothing.
  if (!trace) throw new NotFoundError("trace not found");
  return create(GetTraceResponseSchema, { trace: recallTraceToProto(trace) });
}

/**
 * A binary reply reuses encodings: a cache hit its cached result's, any
 * other result its items' belief fields. A JSON reply is converted whole.
 */
function resultToProto(outcome: RecallOutcome, preEncoded: boolean): RecallResult {
  if (!preEncoded) return recallResultToProto(outcome.result);
  return outcome.cachedResult ? cachedHitToProto(outcome.cachedResult, outcome.result) : withPreEncodedItems(outcome.result);
}

async function drain(pipeline: AsyncGenerator<ArmOutcome, RecallOutcome>): Promise<RecallOutcome> {
  let step = await pipeline.next();
  while (!step.done) step = await pipeline.next();
  return step.value;
}

/** The session scope metadata, if sent; bounded like any scope. */
function sessionScopeHeader(ctx: HandlerContext): string | null {
  const value = ctx.requestHeader.get(SESSION_SCOPE_HEADER);
  if (value !== null && value.length > 500) throw new InvalidArgumentError(SESSION_SCOPE_HEADER, "must be at most 500 characters");
  return value;
}

/** The belief query of an episode trace: none ran (its episode_query says what did). */
const NO_BELIEF_QUERY: RecallQuery = Object.freeze({
  currentScope: "",
  text: null,
  subjects: [],
  beliefTypes: [],
  structuredBeliefTypes: [],
  includeOwnedResources: false,
  asOf: null,
  knownAt: null,
  includeSuperseded: false,
  includeProvisional: false,
  profile: "task",
  budgetTokens: 0,
  maxItems: 0,
  minScore: 0,
}) as RecallQuery;
