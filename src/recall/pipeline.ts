import { createHash, randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type {
  EpisodeSearchAdvice,
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
import { adviseEpisodicSearch } from "./escalation.js";
import { asHeldThen, eligibilityFilter } from "./hard-filter.js";
import type { RetrievalPolicy } from "./policy.js";
import { effectiveQuery, lexicalTerms, type RequestedQuery } from "./query-former.js";
import { confidenceBand, isCarried, score } from "./rank.js";
import { RENDER_FOOTER, renderBlock, renderHeader, renderLine, type RenderLine } from "./render.js";
import { scanStatement, withheldText } from "./safety.js";
import { countTokens } from "./tokens.js";
import { runArms } from "./run-arms.js";
import { SEARCH_TOOL_ID } from "./search.js";

/**
 * The read path, steps 1-9 in the spec's order. The store is touched only
 * to expand aliases, read the head, run the arms and record the trace;
 * everything between is pure.
 */

export interface PipelineDeps {
  store: MemoryStore;
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
  const [head, subjectGroups] = await Promise.all([
    store.head(run.principal),
    store.expandSubjectsEach(run.principal, query.subjects),
  ]);
  // Every name of every named subject (alias-expanded); the groups also serve the escalation check.
  const namedSubjects = [...new Set([...subjectGroups.values()].flat())].sort();
  // Ranking and rendering are pinned to as_of: the query's, or else the time
  // of the principal's last write, so an unchanged store renders the same bytes.
  const asOf = query.asOf ?? head.updatedAt ?? new Date(0);

  // 2. Hard filter (applied inside every arm's SQL).
  const filter = eligibilityFilter(run.principal, query, run.context.surface.sensitivityCeiling, namedSubjects, {
    now,
    excludePersonaHeld: run.kind === "snapshot",
  });
  // The bounded ownership lookup is versioned: its queries say so in the header and the trace.
  const policyVersion = query.includeOwnedResources ? `${policy.version}${policy.ownedResources.tag}` : policy.version;

  // 3. Arms, concurrently, one deadline.
  const structuredTypes =
    query.profile === "core" && query.structuredBeliefTypes.length === 0 ? policy.durableTypes : query.structuredBeliefTypes;
  const arms: RecallArm[] = [
    structuredArm(
      store,
      filter,
      {
        subjects: namedSubjects,
        types: structuredTypes,
        typeWeight: policy.typeAnchorWeight,
        owned: query.includeOwnedResources ? policy.ownedResources : null,
      },
      policy.candidateCap,
    ),
    lexicalArm(store, filter, lexicalTerms(query.text), policy.candidateCap),
  ];
  const outcomes: ArmOutcome[] = [];
  for await (const outcome of runArms(arms.map((arm) => withDelay(arm, deps.armDelayMs?.[arm.name] ?? 0)), { deadlineAt: run.deadlineAt - deadlineMarginMs(run.deadlineAt - Date.now(), policy), signal: run.signal, onArmError: deps.onArmError })) {
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
      // A historical query ranks a belief with the lifecycle it had at as_of.
      score: score(asHeldThen(belief, filter.historical), matchFromFused(f.fused, armsRun, policy.rrfK), { currentScope: query.currentScope, at: asOf, weights }, policy),
    };
  });
  ranked.sort((a, b) => b.score - a.score || (a.beliefId < b.beliefId ? -1 : 1));

  // 6. Collapse and diversify.
  const collapsed = collapse(ranked, policy.perSubjectCap);

  // 7. Safety pass, per item, and the line each item would render as.
  const candidates = collapsed.kept.map((b) => {
    const verdict = scanStatement(b.statement, b.beliefType);
    const conflictsWith = collapsed.conflicts.get(b.beliefId) ?? [];
    const line: RenderLine = {
      beliefId: b.beliefId,
      statement: b.statement,
      authority: b.authority,
      band: confidenceBand(asHeldThen(b, filter.historical), b.carried, policy),
      learnedIn: b.carried ? b.originScope : null,
      conflictsWith,
      withheld: verdict.ok ? null : withheldText(verdict.reason),
    };
    return { belief: b, beliefId: b.beliefId, score: b.score, conflictsWith, renderLine: line, line: renderLine(line) };
  });

  // 8. Assemble to budget and render.
  const header = renderHeader(asOf, policyVersion, query.knownAt);
  const assembled = assemble(candidates, {
    maxItems: query.maxItems,
    budgetTokens: query.budgetTokens,
    floor: query.minScore,
    frameTokens: countTokens(header) + countTokens(RENDER_FOOTER) + 2,
  });
  const rendered = renderBlock(asOf, policyVersion, assembled.admitted.map((c) => c.renderLine), query.knownAt);
  const items: RecalledBelief[] = assembled.admitted.map((c) => toRecalled(c.belief, c.renderLine));

  // Escalation: advise (never run) episodic search. A snapshot has no question to escalate.
  let episodeAdvice: EpisodeSearchAdvice | null = null;
  if (run.kind !== "snapshot") {
    const answered = answeredSubjects(query.subjects, subjectGroups, items);
    episodeAdvice = adviseEpisodicSearch({
      text: query.text,
      subjects: query.subjects,
      answered: (subject) => answered.has(subject),
      sessionId: run.context.sessionId,
      reference: query.asOf ?? now,
    });
  }

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
    asOf,
    knownAt: query.knownAt,
    episodeAdvice,
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
    carriedIn: items.filter((i) => i.carried && !i.blocked).map((i) => i.beliefId),
    retrievalPolicyVersion: policyVersion,
    createdAt: now,
    operatorFieldsExpireAt: new Date(now.getTime() + deps.traceRetentionHours * 3_600_000),
    ranked: candidates.map((c) => toRecalled(c.belief, c.renderLine)),
    asOf,
    tool: run.kind === "search" ? SEARCH_TOOL_ID : "",
    episodeAdvice,
  };
  await store.recordTrace(run.principal, trace);
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
