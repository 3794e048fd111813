import { createHash, randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type {
  Moment,
  Principal,
  RecallContext,
  RecallQuery,
  RecallResult,
  RecallTrace,
  RecalledBelief,
  StoredBelief,
} from "../domain/model.js";
import type { MemoryStore } from "../store/memory-store.js";
import { assemble } from "./assemble.js";
import type { ArmOutcome, RecallArm } from "./arms/arm.js";
import { lexicalArm } from "./arms/lexical.js";
import { structuredArm } from "./arms/structured.js";
import { collapse } from "./collapse.js";
import { matchFromFused, reciprocalRankFusion } from "./fuse.js";
import { eligibilityFilter } from "./hard-filter.js";
import type { RetrievalPolicy } from "./policy.js";
import { effectiveQuery, lexicalTerms, type RequestedQuery } from "./query-former.js";
import { beliefLine } from "./belief-line.js";
import { isCarried, score } from "./rank.js";
import { RENDER_FOOTER, renderBlock, renderHeader, renderLine, type RenderLine } from "./render.js";
import { countTokens } from "./tokens.js";
import { runArms } from "./run-arms.js";

/**
 * The read path, steps 1-9 in the spec's order. The store is touched only
 * to expand aliases, read the head and run the arms, and the trace recorder
 * once at the end; everything between is pure.
 */

/** Where the pipeline records its trace (trace/trace-writer.ts in the server). */
export interface TraceRecorder {
  /** Resolves once the trace is written or safely queued, by `deadlineAt` at the latest. */
  record(principal: Principal, trace: RecallTrace, deadlineAt?: number): Promise<void>;
}

export interface PipelineDeps {
  store: MemoryStore;
  traces: TraceRecorder;
  policy: RetrievalPolicy;
  clock: () => Date;
  traceRetentionHours: number;
  onArmError?: (arm: string, error: unknown) => void;
  /** Fault injection: delay named arms (RECALL_FAULT_ARM_DELAY). */
  armDelayMs?: Readonly<Record<string, number>>;
}

export interface RecallRun {
  principal: Principal;
  query: RequestedQuery;
  context: RecallContext;
  /** "search" uses the search defaults; traces record it as an in-turn recall. */
  kind: Moment | "search";
  deadlineAt: number;
  signal: AbortSignal;
}

export interface RecallOutcome {
  result: RecallResult;
  trace: RecallTrace;
}

/** Runs a recall: yields each arm's outcome as it finishes, returns the ranked result (already traced). */
export async function* recall(deps: PipelineDeps, run: RecallRun): AsyncGenerator<ArmOutcome, RecallOutcome> {
  const { store, policy } = deps;
  const now = deps.clock();

  // 1. Form the query.
  const query = effectiveQuery(run.query, run.kind, policy);
  const weights = policy.profiles[query.profile];
  const [head, namedSubjects] = await Promise.all([
    store.head(run.principal),
    store.expandSubjects(run.principal, query.subjects),
  ]);
  // Ranking and rendering are pinned to as_of: the query's, or else the time
  // of the principal's last write, so an unchanged store renders the same bytes.
  const asOf = query.asOf ?? head.updatedAt ?? new Date(0);

  // 2. Hard filter (applied inside every arm's SQL).
  const filter = eligibilityFilter(run.principal, query, run.context.surface.sensitivityCeiling, namedSubjects, {
    now,
    excludePersonaHeld: run.kind === "snapshot",
  });

  // 3. Arms, concurrently, one deadline.
  const structuredTypes =
    query.profile === "core" && query.structuredBeliefTypes.length === 0 ? policy.durableTypes : query.structuredBeliefTypes;
  const arms: RecallArm[] = [
    structuredArm(store, filter, { subjects: namedSubjects, types: structuredTypes, typeWeight: policy.typeAnchorWeight }, policy.candidateCap),
    lexicalArm(store, filter, lexicalTerms(query.text), policy.candidateCap),
  ];
  const outcomes: ArmOutcome[] = [];
  const marginMs = deadlineMarginMs(run.deadlineAt - Date.now(), policy);
  for await (const outcome of runArms(arms.map((arm) => withDelay(arm, deps.armDelayMs?.[arm.name] ?? 0)), { deadlineAt: run.deadlineAt - marginMs, signal: run.signal, onArmError: deps.onArmError })) {
    outcomes.push(outcome);
    yield outcome;
  }

  // 4. Fuse.
  const beliefs = new Map<string, StoredBelief>();
  for (const o of outcomes) for (const c of o.candidates) beliefs.set(c.belief.beliefId, c.belief);
  const armsRun = outcomes.filter((o) => !o.degraded && o.candidates.length > 0).length;
  const fused = reciprocalRankFusion(
    outcomes.map((o) => ({ arm: o.arm, ids: o.candidates.map((c) => c.belief.beliefId) })),
    policy.rrfK,
  );

  // 5. Rank.
  const ranked = fused.map((f) => {
    const belief = beliefs.get(f.beliefId)!;
    const carried = isCarried(belief, query.currentScope);
    return {
      ...belief,
      arms: f.arms,
      carried,
      score: score(belief, matchFromFused(f.fused, armsRun, policy.rrfK), { currentScope: query.currentScope, at: asOf, weights }, policy),
    };
  });
  ranked.sort((a, b) => b.score - a.score || (a.beliefId < b.beliefId ? -1 : 1));

  // 6. Collapse and diversify.
  const collapsed = collapse(ranked, policy.perSubjectCap);

  // 7. Safety pass, per item, and the line each item would render as.
  const candidates = collapsed.kept.map((b) => {
    const conflictsWith = collapsed.conflicts.get(b.beliefId) ?? [];
    const line = beliefLine(b, b.carried, conflictsWith, policy);
    return { belief: b, beliefId: b.beliefId, score: b.score, conflictsWith, renderLine: line, line: renderLine(line) };
  });

  // 8. Assemble to budget and render.
  const header = renderHeader(asOf, policy.version);
  const assembled = assemble(candidates, {
    maxItems: query.maxItems,
    budgetTokens: query.budgetTokens,
    floor: query.minScore,
    frameTokens: countTokens(header) + countTokens(RENDER_FOOTER) + 2,
  });
  const rendered = renderBlock(asOf, policy.version, assembled.admitted.map((c) => c.renderLine));
  const items: RecalledBelief[] = assembled.admitted.map((c) => toRecalled(c.belief, c.renderLine));

  // 9. Trace, recorded in the same pass, bound to the exact bytes.
  const traceId = randomUUID();
  const degraded = outcomes.filter((o) => o.degraded).map((o) => o.arm).sort();
  const result: RecallResult = {
    items,
    rendered,
    tokens: countTokens(rendered),
    truncated: assembled.droppedForBudget.length > 0,
    armsDegraded: degraded,
    traceId,
  };
  const trace: RecallTrace = {
    id: traceId,
    sessionId: run.context.sessionId,
    runId: run.context.runId,
    turnId: run.context.turnId,
    moment: run.kind === "search" ? "in_turn" : run.kind,
    query,
    surfaceId: run.context.surface.surfaceId,
    sensitivityCeiling: run.context.surface.sensitivityCeiling,
    renderedSha256: sha256Hex(rendered),
    armLatenciesMs: Object.fromEntries(outcomes.map((o) => [o.arm, o.latencyMs])),
    candidates: fused.length,
    returned: items.map((i) => i.beliefId),
    cited: [],
    droppedForBudget: assembled.droppedForBudget,
    droppedForBudgetCount: assembled.droppedForBudget.length,
    blocked: items.filter((i) => i.blocked).map((i) => i.beliefId),
    // Promotion candidates are the carried beliefs the model then cites: filled in by citations.
    carriedIn: [],
    retrievalPolicyVersion: policy.version,
    createdAt: now,
    operatorFieldsExpireAt: new Date(now.getTime() + deps.traceRetentionHours * 3_600_000),
    ranked: candidates.map((c) => toRecalled(c.belief, c.renderLine)),
    asOf,
    consideredNotShown: fused.length - items.length,
    carried: items.filter((i) => i.carried && !i.blocked).map((i) => i.beliefId),
    returnedBands: assembled.admitted.map((c) => c.renderLine.band),
  };
  // Bounded: a slow or failing write is queued for retry, not waited on (trace/trace-writer.ts).
  // It may use half of the margin the arms left; the other half is for the reply.
  await deps.traces.record(run.principal, trace, run.deadlineAt - marginMs / 2);
  return { result, trace };
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

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function toRecalled(b: StoredBelief & { score: number; arms: string[]; carried: boolean }, line: RenderLine): RecalledBelief {
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

export type { RecallQuery };
