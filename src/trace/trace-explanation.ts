import type { ConfidenceBand, NotShownReason, RecallTrace } from "../domain/model.js";

/**
 * What became of every candidate a recall considered, read from its trace
 * alone (recorded in the render pass, never reconstructed): the ranked list
 * with each item's outcome, then the candidates collapse removed before
 * ranking into the block. Pure; the inspector applies the viewing ceiling.
 */

export type CandidateOutcome =
  | "shown"
  /** Below the floor on its own: it came in with its unresolved conflict partner. */
  | "shown_with_conflict_partner"
  | "withheld_by_safety"
  | NotShownReason
  /** An older trace: only that the budget or the item cap left it out. */
  | "budget_or_item_cap"
  /** An older trace, or one past the operator window: no reason kept. */
  | "unrecorded";

export interface ConsideredCandidate {
  beliefId: string;
  /** As the trace recorded them; null for a candidate collapse removed (the trace keeps only its id). */
  recorded: { subject: string; statement: string; score: number; arms: string[]; band: ConfidenceBand; blocked: boolean } | null;
  outcome: CandidateOutcome;
}

export interface TraceExplanation {
  considered: ConsideredCandidate[];
  /** False when the trace holds no reasons (see RecallTrace.notShown). */
  reasonsRecorded: boolean;
}

export function explainTrace(trace: RecallTrace): TraceExplanation {
  const reasons = new Map((trace.notShown ?? []).map((n) => [n.beliefId, n.reason]));
  const returned = new Set(trace.returned);
  const blocked = new Set(trace.blocked);
  const dropped = new Set(trace.droppedForBudget ?? []);
  const ranked = trace.ranked ?? [];
  const inRanked = new Set(ranked.map((r) => r.beliefId));
  const outcomeOf = (r: (typeof ranked)[number]): CandidateOutcome => {
    if (blocked.has(r.beliefId)) return "withheld_by_safety";
    if (returned.has(r.beliefId)) {
      return r.score < trace.query.minScore && r.conflictWith.length > 0 ? "shown_with_conflict_partner" : "shown";
    }
    return reasons.get(r.beliefId) ?? (dropped.has(r.beliefId) ? "budget_or_item_cap" : "unrecorded");
  };
  const considered: ConsideredCandidate[] = ranked.map((r) => ({
    beliefId: r.beliefId,
    recorded: { subject: r.subject, statement: r.statement, score: r.score, arms: r.arms, band: r.confidenceBand, blocked: r.blocked },
    outcome: outcomeOf(r),
  }));
  for (const [beliefId, reason] of reasons) {
    if (!inRanked.has(beliefId)) considered.push({ beliefId, recorded: null, outcome: reason });
  }
  return { considered, reasonsRecorded: trace.notShown != null };
}
