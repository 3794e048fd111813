import { createHash, randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type {
  Correction,
  RecallQuery,
  EpisodeSearchAdvice,
  Moment,
  NotShown,
  Principal,
  RecallContext,
  RecallResult,
  RecallTrace,
  RecalledBelief,
  StoredBelief,
} from "../domain/model.js";
import { correctionIds, renderCorrections } from "./moments/recall-delta.js";
import { assembleSnapshot, snapshotCacheKey } from "./moments/snapshot.js";
import type { SnapshotCache } from "./moments/snapshot-cache.js";
import type { SessionSnapshots } from "./moments/session-snapshots.js";
import type { SessionShown } from "./moments/session-shown.js";
import type { MemoryStore, StoreHead } from "../store/memory-store.js";
import { boundSource, type ArmCandidate, type CandidateRouter } from "../ports/candidate-source.js";
import { assemble, type Assembled } from "./render/assemble.js";
import type { ArmObserver, ArmOutcome, RecallArm } from "./arms/arm.js";
import { deltaArm } from "./arms/delta.js";
import { lexicalArm } from "./arms/lexical.js";
import { semanticArm, semanticRankingFor, type SemanticSearch } from "./arms/semantic.js";
import { structuredArm } from "./arms/structured.js";
import { collapse } from "./rank/collapse.js";
import { fuseArms } from "./rank/fuse-arms.js";
import { adviseEpisodicSearch } from "./escalation.js";
import { asHeldThen, eligibilityFilter, type EligibilityFilter } from "../domain/hard-filter.js";
import type { RetrievalPolicy } from "./policy.js";
import { effectiveQuery, type RequestedQuery } from "./query-former.js";
import { beliefLine } from "./render/belief-line.js";
import { scanStatements } from "./safety/safety.js";
import { gateSemanticOnly } from "../domain/semantic-calibration.js";
import { demoteCoveredSources, demoteNearDuplicates, isCarried, score } from "./rank/rank.js";
import { heldBackByFloors } from "./rank/relative-floor.js";
import { blockShortIds, RENDER_FOOTER, renderedBlock, renderHeader, renderLine, type RenderLine } from "./render/render.js";
import { LineCandidate } from "./render/line-candidate.js";
import { rankedCandidate, type RankedCandidate } from "./rank/ranked-candidate.js";
import { runArms } from "./arms/run-arms.js";
import { countTokens } from "./render/tokens.js";
import { SEARCH_TOOL_ID } from "./search.js";

/**
 * The read path, steps 1-9 in the spec's order. The store is touched only
 * to expand aliases, read the head, run the arms, look up corrections and
 * record the trace; everything between is pure.
 */

/** A cached snapshot: the result and trace of the render that produced it. */
export interface CachedSnapshot {
  result: RecallResult;
  trace: RecallTrace;
}

/** What a read that settles traces first may match a trace by: it is all a spooled trace is indexed by. */
export type TraceKey = Pick<RecallTrace, "id" | "sessionId" | "turnId" | "moment">;

/** Where the pipeline records its trace (trace/trace-writer.ts in the server). */
export interface TraceRecorder {
  /** Resolves once the trace is written or safely queued, by `deadlineAt` at the latest. */
  record(principal: Principal, trace: RecallTrace, deadlineAt?: number): Promise<void>;
  /** A recorder that writes later: the principal's trace while it waits to be written. */
  pending?(principal: Principal, traceId: string): RecallTrace | undefined;
  /** A recorder that writes later: writes the principal's waiting traces that `match` before a store read looks for them. */
  settle?(principal: Principal, match: (t: TraceKey) => boolean, deadlineAt?: number): Promise<void>;
}

export interface PipelineDeps {
  store: MemoryStore;
  traces: TraceRecorder;
  policy: RetrievalPolicy;
  clock: () => Date;
  traceRetentionHours: number;
  /** Where the principal's head (the snapshot watermark) is read: a HeadTracker, or the store itself. */
  heads: { head(p: Principal, storeDeadline?: number): Promise<StoreHead> };
  /** Where the arms read: the principal index when it holds the principal; absent means the SQL source. */
  candidates?: CandidateRouter;
  snapshotCache?: SnapshotCache<CachedSnapshot>;
  /** What each session's latest snapshot returned, known in process; absent means read from the store each time. */
  sessionSnapshots?: Pick<SessionSnapshots, "returned" | "recorded">;
  /** What each session's in-turn recalls showed, known in process; absent means read from the store each time. */
  sessionShown?: Pick<SessionShown, "shown" | "recorded">;
  onArmError?: (arm: string, error: unknown) => void;
  /** Fault injection: delay named arms (RECALL_FAULT_ARM_DELAY). */
  armDelayMs?: Readonly<Record<string, number>>;
  /** The semantic arm's embedder and store; absent when RECALL_SEMANTIC=off. */
  semantic?: SemanticSearch;
  /** Sees every arm run and outcome (metrics, spans); the pipeline does not know which. */
  armObserver?: ArmObserver;
}

export interface RecallRun {
  principal: Principal;
  query: RequestedQuery;
  context: RecallContext;
  /** "search" uses the search defaults; traces record it as an in-turn recall. */
  kind: Moment | "search";
  deadlineAt: number;
  /** Bounds every store call of the recall (store/store-deadline.ts); absent: unbounded. */
  storeDeadline?: number;
  signal: AbortSignal;
}

export interface RecallOutcome {
  result: RecallResult;
  trace: RecallTrace;
  /** A cache hit: the cached result that `result` copies, all but its traceId and fromCache. */
  cachedResult?: RecallResult;
}

/**
 * Runs a recall: yields each arm's outcome as it finishes, returns the ranked
 * result (already traced). Three parts: gather (steps 1-3, the I/O: query,
 * head, source, arms), decide (steps 4-8, pure: fuse through render) and
 * record (step 9: the trace, the session's snapshot, the cache).
 */
export async function* recall(deps: PipelineDeps, run: RecallRun): AsyncGenerator<ArmOutcome, RecallOutcome> {
  const now = deps.clock();
  const gathered = yield* gather(deps, run, now);
  if ("cached" in gathered) return await fromCache(deps, run, gathered.cached, now);
  const decided = await decide(deps, run, gathered, now);
  return await record(deps, run, gathered, decided, now);
}

/** What steps 1-3 found: the query as run, where it read, and each arm's outcome. */
interface Gathered {
  query: RecallQuery;
  head: StoreHead;
  /** The snapshot cache's key of this recall; null when it is not cached. */
  cacheKey: string | null;
  /** Each requested subject with its own names (alias-expanded). */
  subjectGroups: Map<string, string[]>;
  /** Null when the query had no as_of and the principal was never written: nothing pins the block. */
  asOf: Date | null;
  /** The principal holds no memory: never written, or erased with nothing written since. */
  noMemory: boolean;
  filter: EligibilityFilter;
  policyVersion: string;
  deltaAfter: number | null;
  marginMs: number;
  outcomes: ArmOutcome[];
  corrections: Correction[];
}

/** Steps 1-3: the effective query, the head, the source and the arms, yielding each arm as it finishes; or a cache hit. */
async function* gather(deps: PipelineDeps, run: RecallRun, now: Date): AsyncGenerator<ArmOutcome, Gathered | { cached: CachedSnapshot }> {
  const { store, policy } = deps;
  const ctx = run.context;

  // 1. Form the query.
  const query = effectiveQuery(run.query, run.kind, policy, ctx);
  const head = await deps.heads.head(run.principal, run.storeDeadline);

  // A session-open snapshot of an unchanged store is served from memory, byte for byte.
  const cacheKey =
    run.kind === "snapshot" && deps.snapshotCache
      ? snapshotCacheKey(run.principal, query, { ...ctx, sensitivityCeiling: ctx.surface.sensitivityCeiling }, head.position, policy.version)
      : null;
  const cached = cacheKey !== null ? deps.snapshotCache!.get(cacheKey) : undefined;
  if (cached) return { cached };

  const chosen = deps.candidates ? await deps.candidates.sourceFor(run.principal, head, run.storeDeadline) : store.candidates;
  const source = boundSource(chosen, run.storeDeadline);
  const subjectGroups = await source.expandSubjectsEach(run.principal, query.subjects);
  // Every name of every named subject (alias-expanded); the groups also serve the escalation check.
  const namedSubjects = [...new Set([...subjectGroups.values()].flat())].sort();
  // Ranking and rendering are pinned to as_of: the query's, or else the time
  // of the principal's last write, so an unchanged store renders the same bytes.
  // A principal never written has no such time: its block has no as_of.
  const asOf = query.asOf ?? head.updatedAt ?? null;
  const noMemory = head.position === 0 || head.erasedPosition === head.position;

  // 2. Hard filter (applied inside every arm's SQL).
  const filter = eligibilityFilter(run.principal, query, ctx.surface.sensitivityCeiling, namedSubjects, {
    now,
    excludePersonaHeld: run.kind === "snapshot",
  });
  // The bounded ownership lookup and the semantic arm are versioned: queries that use them say so
  // in the header and the trace, so a trace always names the ranking that produced its block.
  const semanticOn = deps.semantic !== undefined && run.kind !== "snapshot";
  const policyVersion =
    policy.version + (query.includeOwnedResources ? policy.ownedResources.tag : "") + (semanticOn ? policy.semanticTag : "");

  // 3. Arms, concurrently, one deadline.
  const structuredTypes =
    query.profile === "core" && query.structuredBeliefTypes.length === 0 ? policy.durableTypes : query.structuredBeliefTypes;
  const deltaAfter = run.kind === "in_turn" && ctx.snapshotWatermark !== null ? ctx.snapshotWatermark : null;
  const arms: RecallArm[] = [
    structuredArm(
      source,
      filter,
      {
        subjects: namedSubjects,
        types: structuredTypes,
        typeWeight: policy.typeAnchorWeight,
        owned: query.includeOwnedResources ? policy.ownedResources : null,
      },
      policy.candidateCap,
    ),
    lexicalArm(source, filter, query.text, namedSubjects, policy),
  ];
  if (deltaAfter !== null) arms.push(deltaArm(source, filter, deltaAfter, policy.candidateCap));
  // Not for snapshots: embeddings arrive after the head moves, and the prefix's bytes must follow the head alone.
  if (semanticOn) {
    const { candidateCap } = semanticRankingFor(policy, query.profile, deps.semantic!);
    arms.push(semanticArm(deps.semantic!, source, filter, query.text, candidateCap, run.storeDeadline));
  }
  // Corrections to what the session was shown (its snapshot, then its in-turn recalls and searches;
  // never dropped for budget): looked up beside the arms, so the lookup overlaps the arms' work.
  const marginMs = deadlineMarginMs(run.deadlineAt - Date.now(), policy);
  // A source that knows nothing was written after the watermark has no correction to find: what the
  // session was shown (a union of hundreds of ids, or a store read) is not gathered for it.
  const correcting: Promise<Correction[]> =
    deltaAfter !== null && ctx.sessionId !== "" && source.writtenAfter?.(run.principal, deltaAfter) !== false
      ? (async () => {
          const shown = await sessionShownBefore(deps, run, run.deadlineAt - marginMs);
          return source.snapshotCorrections(run.principal, shown, deltaAfter, now);
        })()
      : Promise.resolve([]);
  // Awaited after the arms; if the arms fail first, its own failure is not left unhandled.
  correcting.catch(() => {});
  const outcomes: ArmOutcome[] = [];
  for await (const outcome of runArms(
    arms.map((arm) => {
      const delayed = withDelay(arm, deps.armDelayMs?.[arm.name] ?? 0);
      return deps.armObserver ? deps.armObserver.wrap(delayed, run.kind) : delayed;
    }),
    { deadlineAt: run.deadlineAt - marginMs, signal: run.signal, onArmError: deps.onArmError },
  )) {
    deps.armObserver?.outcome(outcome, run.kind);
    outcomes.push(outcome);
    yield outcome;
  }
  const corrections = await correcting;
  // A cancelled call stops here and below: its block would never reach the model, so it is
  // neither finished nor traced (runArms already abandons the arms at the cancel).
  run.signal.throwIfAborted();
  return { query, head, cacheKey, subjectGroups, asOf, noMemory, filter, policyVersion, deltaAfter, marginMs, outcomes, corrections };
}

/** What steps 4-8 made of the arms' outcomes: the ranked lines, what was admitted, and the bytes. */
interface Decided {
  /** Candidates the arms found, fused. */
  fusedCount: number;
  /** Every ranked line after collapse, admitted or not. */
  candidates: LineCandidate[];
  assembled: Assembled<LineCandidate>;
  /** Every candidate considered and not rendered, with its one reason: collapse's, then assembly's. */
  notShown: NotShown[];
  correctionsText: string;
  block: { text: string; tokens: number };
  rendered: string;
  items: RecalledBelief[];
  episodeAdvice: EpisodeSearchAdvice | null;
}

/** Steps 4-8: fuse, rank, collapse, the safety pass, assemble and render; pure but for the safety scan's yielding. */
async function decide(deps: PipelineDeps, run: RecallRun, g: Gathered, now: Date): Promise<Decided> {
  const { policy } = deps;
  const { query, outcomes, filter, asOf } = g;
  const weights = policy.profiles[query.profile];

  // 4. Fuse.
  const rows = new Map<string, ArmCandidate>();
  for (const o of outcomes) for (const c of o.candidates) rows.set(c.belief.beliefId, c);
  const semantic = deps.semantic;
  const ranking = semantic ? semanticRankingFor(policy, query.profile, semantic) : undefined;
  const fused = fuseArms(outcomes, policy.rrfK, ranking);

  // 5. Rank. Under rank fusion a belief only the semantic arm found counts as far as its similarity does.
  const cosine = new Map(outcomes.filter((o) => o.arm === "semantic").flatMap((o) => o.candidates.map((c) => [c.belief.beliefId, c.armScore] as const)));
  const gate = ranking?.method === "rrf" ? semantic?.similarity : undefined;
  const ranked = fused.map((f) => {
    const { belief, memo } = rows.get(f.beliefId)!;
    const carried = isCarried(belief, query.currentScope);
    // A historical query ranks a belief with the lifecycle it had at as_of.
    const s = score(asHeldThen(belief, filter.historical), f.match, { currentScope: query.currentScope, at: asOf ?? now, weights }, policy);
    return rankedCandidate(belief, f.arms, carried, gateSemanticOnly(s, f.arms, cosine.get(f.beliefId), gate), memo);
  });
  ranked.sort((a, b) => b.score - a.score || (a.beliefId < b.beliefId ? -1 : 1));
  // The penalty's last parts need the first ranking: a near-duplicate of a higher-ranked item, then
  // an item whose cited sources higher-ranked items already cite.
  const reranked = demoteCoveredSources(demoteNearDuplicates(ranked, weights, policy), weights, policy);
  // The floor's relative part, from the arms' own scores; a query with no floor (min_score 0) has none.
  const heldBack = query.minScore > 0 ? heldBackByFloors(outcomes, reranked, weights.relativeFloor, policy.typeAnchorWeight,
          ranking?.method === "convex" && semantic ? { similarity: semantic.similarity, floor: query.minScore } : undefined) : new Set<string>();

  // 6. Collapse and diversify.
  const collapsed = collapse(reranked, perSubjectCap(query.maxItems, query.profile, policy));

  // 7. Safety pass, per item, and the line each item would render as.
  const verdicts = await scanStatements(collapsed.kept);
  run.signal.throwIfAborted();
  const candidates = collapsed.kept.map((b, i) => {
    const conflictsWith = collapsed.conflicts.get(b.beliefId) ?? [];
    // A historical query bands a belief with the lifecycle it had at as_of.
    return new LineCandidate(b, conflictsWith, beliefLine(asHeldThen(b, filter.historical), b.carried, conflictsWith, policy, verdicts[i]!));
  });

  // 8. Assemble to budget and render.
  const header = renderHeader(asOf, g.policyVersion, query.knownAt);
  const limits = {
    maxItems: query.maxItems,
    budgetTokens: query.budgetTokens,
    floor: query.minScore,
    frameTokens: countTokens(header) + countTokens(RENDER_FOOTER) + 2,
    heldBack,
  };
  const assembled =
    run.kind === "snapshot"
      ? assembleSnapshot(candidates, { ...limits, durableShare: policy.snapshotDurableShare, durableTypes: policy.durableTypes })
      : assemble(candidates, limits);
  // Each admitted line was rendered and counted when assembly weighed it, with eight-digit ids;
  // only a block where two ids share those eight digits renders its lines again, the colliding ids longer.
  const ids = blockShortIds(assembled.admitted.map((c) => c.renderLine), correctionIds(g.corrections));
  const correctionsText = renderCorrections(g.corrections, ids);
  const lineTexts = assembled.admitted.map((c) => (ids.lengthened ? renderLine(c.renderLine, ids) : c.line));
  const block = renderedBlock(asOf, g.policyVersion, lineTexts, query.knownAt);
  const rendered = correctionsText + block.text;
  const items: RecalledBelief[] = assembled.admitted.map((c) => toRecalled(c.belief, c.renderLine));

  // Escalation: advise (never run) episodic search. A snapshot has no question to escalate.
  let episodeAdvice: EpisodeSearchAdvice | null = null;
  if (run.kind !== "snapshot") {
    const answered = answeredSubjects(query.subjects, g.subjectGroups, items);
    episodeAdvice = adviseEpisodicSearch({
      text: query.text,
      subjects: query.subjects,
      answered: (subject) => answered.has(subject),
      sessionId: run.context.sessionId,
      reference: query.asOf ?? now,
    });
  }
  const notShown: NotShown[] = [...collapsed.removed].map(([beliefId, reason]) => ({ beliefId, reason }));
  notShown.push(...assembled.notShown);
  return { fusedCount: fused.length, candidates, assembled, notShown, correctionsText, block, rendered, items, episodeAdvice };
}

/** Step 9: the result and its trace, recorded in the same pass and bound to the exact bytes; then the session's snapshot and the cache. */
async function record(deps: PipelineDeps, run: RecallRun, g: Gathered, d: Decided, now: Date): Promise<RecallOutcome> {
  const ctx = run.context;
  const { query, head, asOf, noMemory, corrections } = g;
  const { items, assembled } = d;
  const traceId = randomUUID();
  const degraded = g.outcomes.filter((o) => o.degraded).map((o) => o.arm).sort();
  const result: RecallResult = {
    items,
    rendered: d.rendered,
    // Corrections end in a newline, so no token spans them and the block.
    tokens: countTokens(d.correctionsText) + d.block.tokens,
    truncated: assembled.droppedForBudget.length > 0,
    armsDegraded: degraded,
    traceId,
    snapshotWatermark: head.position,
    fromCache: false,
    corrections,
    asOf,
    noMemory,
    knownAt: query.knownAt,
    episodeAdvice: d.episodeAdvice,
  };
  const trace: RecallTrace = {
    id: traceId,
    sessionId: ctx.sessionId,
    runId: ctx.runId,
    turnId: ctx.turnId,
    moment: run.kind === "search" ? "in_turn" : run.kind,
    query,
    surfaceId: ctx.surface.surfaceId,
    sensitivityCeiling: ctx.surface.sensitivityCeiling,
    renderedSha256: sha256Hex(d.rendered),
    armLatenciesMs: Object.fromEntries(g.outcomes.map((o) => [o.arm, o.latencyMs])),
    candidates: d.fusedCount,
    returned: items.map((i) => i.beliefId),
    cited: [],
    droppedForBudget: assembled.droppedForBudget,
    droppedForBudgetCount: assembled.droppedForBudget.length,
    blocked: items.filter((i) => i.blocked).map((i) => i.beliefId),
    // Promotion candidates are the carried beliefs the model then cites: filled in by citations.
    carriedIn: [],
    retrievalPolicyVersion: g.policyVersion,
    createdAt: now,
    operatorFieldsExpireAt: new Date(now.getTime() + deps.traceRetentionHours * 3_600_000),
    ranked: d.candidates.map((c) => toRecalled(c.belief, c.renderLine)),
    asOf,
    snapshotWatermark: head.position,
    deltaAfter: g.deltaAfter,
    corrected: corrections.map((c) => c.beliefId),
    consideredNotShown: d.fusedCount - items.length,
    notShown: d.notShown,
    carried: items.filter((i) => i.carried && !i.blocked).map((i) => i.beliefId),
    returnedBands: assembled.admitted.map((c) => c.renderLine.band),
    tool: run.kind === "search" ? SEARCH_TOOL_ID : "",
    episodeAdvice: d.episodeAdvice,
  };
  run.signal.throwIfAborted();
  // Bounded: a slow or failing write is queued for retry, not waited on (trace/trace-writer.ts).
  // It may use half of the margin the arms left; the other half is for the reply.
  await deps.traces.record(run.principal, trace, run.deadlineAt - g.marginMs / 2);
  if (trace.moment === "snapshot") deps.sessionSnapshots?.recorded(run.principal, trace);
  // A historical recall showed what held then, not what holds: there is nothing of it to correct.
  else if (trace.moment === "in_turn" && query.asOf === null && query.knownAt === null) deps.sessionShown?.recorded(run.principal, trace.sessionId, trace.returned);
  // Only complete renders are cached: a degraded one would pin partial results for the session.
  if (g.cacheKey !== null && degraded.length === 0) deps.snapshotCache!.set(g.cacheKey, { result, trace });
  return { result, trace };
}

/** Traces a snapshot corrections or scope lookup reads: the session's snapshots. */
export function isSnapshotOf(sessionId: string): (t: TraceKey) => boolean {
  return (t) => t.moment === "snapshot" && t.sessionId === sessionId;
}

/**
 * A cache hit is still a recall of its own: a new trace (this session's ids,
 * now), bound to the same bytes. It references the render it reuses rather
 * than storing its ranked list again; queueing it never waits on the database.
 */
async function fromCache(deps: PipelineDeps, run: RecallRun, cached: CachedSnapshot, now: Date): Promise<RecallOutcome> {
  const traceId = randomUUID();
  const result: RecallResult = { ...cached.result, traceId, fromCache: true };
  const trace: RecallTrace = {
    ...cached.trace,
    id: traceId,
    sessionId: run.context.sessionId,
    runId: run.context.runId,
    turnId: run.context.turnId,
    surfaceId: run.context.surface.surfaceId,
    createdAt: now,
    operatorFieldsExpireAt: new Date(now.getTime() + deps.traceRetentionHours * 3_600_000),
    armLatenciesMs: {},
    reusesTraceId: cached.trace.id,
  };
  run.signal.throwIfAborted();
  await deps.traces.record(run.principal, trace, run.deadlineAt);
  deps.sessionSnapshots?.recorded(run.principal, trace);
  return { result, trace, cachedResult: cached.result };
}

/** What the session was shown before this recall: its latest snapshot's ids and its in-turn recalls' and searches'. */
async function sessionShownBefore(deps: PipelineDeps, run: RecallRun, deadlineAt: number): Promise<string[]> {
  const [snapshot, inTurn] = await Promise.all([snapshotReturned(deps, run, deadlineAt), inTurnShown(deps, run, deadlineAt)]);
  const shown = new Set(snapshot);
  for (const id of inTurn) shown.add(id);
  return [...shown];
}

/** What the session's in-turn recalls and searches showed: known in process, or read from their stored traces. */
async function inTurnShown(deps: PipelineDeps, run: RecallRun, deadlineAt: number): Promise<readonly string[]> {
  const { principal: p, storeDeadline } = run;
  const { sessionId } = run.context;
  if (deps.sessionShown) return deps.sessionShown.shown(p, sessionId, deadlineAt, storeDeadline);
  await deps.traces.settle?.(p, isInTurnOf(sessionId), deadlineAt);
  return deps.store.at(storeDeadline).traces.sessionShown(p, sessionId, SESSION_SHOWN_READ_LIMIT);
}

/** Traces an in-turn corrections lookup reads: the session's in-turn recalls and searches. */
export function isInTurnOf(sessionId: string): (t: TraceKey) => boolean {
  return (t) => t.moment === "in_turn" && t.sessionId === sessionId;
}

/** The most ids of a session's in-turn recalls a lookup reads from the store. */
export const SESSION_SHOWN_READ_LIMIT = 500;

/** What the session's latest snapshot returned: known in process, or read from its stored trace. */
async function snapshotReturned(deps: PipelineDeps, run: RecallRun, deadlineAt: number): Promise<readonly string[]> {
  const { principal: p, storeDeadline } = run;
  const { sessionId } = run.context;
  if (deps.sessionSnapshots) return deps.sessionSnapshots.returned(p, sessionId, deadlineAt, storeDeadline);
  // The stored trace is read: one just handed out may still be queued.
  await deps.traces.settle?.(p, isSnapshotOf(sessionId), deadlineAt);
  return (await deps.store.at(storeDeadline).traces.latestSnapshot(p, sessionId))?.returned ?? [];
}

/**
 * At most this many beliefs per subject, so one heavily discussed entity
 * cannot take the whole block: a share of the item cap, by profile. The core
 * profile has none: the snapshot is mostly about one subject, the user.
 */
export function perSubjectCap(maxItems: number, profile: RecallQuery["profile"], policy: RetrievalPolicy): number {
  return Math.max(policy.perSubject.min, Math.ceil(maxItems * policy.perSubject.share[profile]));
}

export function deadlineMarginMs(allowedMs: number, policy: RetrievalPolicy): number {
  const { share, minMs, maxMs } = policy.deadlineMargin;
  return Math.min(maxMs, Math.max(minMs, Math.round(allowedMs * share)));
}

/** Wraps an arm so it starts late; the delay honours the arm's abort signal like real work does. */
function withDelay(arm: RecallArm, ms: number): RecallArm {
  if (ms <= 0) return arm;
  return {
    name: arm.name,
    async run(signal) {
      await delay(ms, undefined, { signal });
      return arm.run(signal);
    },
  };
}

/** The named subjects some returned belief is about, directly or through an alias. */
function answeredSubjects(
  subjects: readonly string[],
  groups: ReadonlyMap<string, readonly string[]>,
  items: readonly RecalledBelief[],
): Set<string> {
  const returned = new Set(items.map((i) => i.subject.toLowerCase()));
  const answered = new Set<string>();
  for (const subject of subjects) {
    const names = groups.get(subject.toLowerCase()) ?? [subject.toLowerCase()];
    if (names.some((n) => returned.has(n))) answered.add(subject);
  }
  return answered;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function toRecalled(b: RankedCandidate, line: RenderLine): RecalledBelief {
  const blocked = line.withheld !== null;
  return {
    beliefId: b.beliefId,
    subject: b.subject,
    statement: blocked ? "" : b.statement,
    beliefType: b.beliefType,
    status: b.status,
    confidenceBand: line.band,
    authority: b.authority,
    originScope: b.originScope,
    portability: b.portability,
    carried: b.carried,
    validFrom: b.validFrom,
    validTo: b.validTo,
    score: b.score,
    arms: b.arms,
    conflictWith: [...line.conflictsWith],
    blocked,
  };
}
