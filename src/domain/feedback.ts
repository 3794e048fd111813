import type { RecallTrace } from "./model.js";

/**
 * Step 9's feedback into formation, as pure rules (the store applies them):
 * - a cited belief gains utility and last_used_at, never evidence or confidence;
 * - a belief returned and never cited within the window loses utility, so one
 *   that keeps winning the ranking without ever mattering stops winning it;
 * - a subject queried with nothing about it held is a recall miss, and
 *   repeated misses make a re-derivation hint for formation (counted by the
 *   store with the trace, store/traces/trace-rows.ts).
 *
 * Utility lives in [-1, 1] and starts at 0: a gain moves it a share of the way
 * to 1, a loss a share of the way to -1, so neither can leave the range.
 * These steps change stored utility, not the ranking function, so they are
 * not part of the retrieval policy's version.
 */
export const FEEDBACK = Object.freeze({
  /** Share of the distance to 1 a citation adds. */
  citationGain: 0.2,
  /** Share of the distance to -1 one uncited return takes away: weaker than a citation. */
  uncitedLoss: 0.05,
  /** Misses after which a subject is listed as a re-derivation hint ("repeatedly"). */
  hintMinMisses: 2,
});

/** Utility after `n` uncited returns: each step is u -> u - (1 + u) * loss. */
export function utilityAfterUncited(utility: number, n: number, loss = FEEDBACK.uncitedLoss): number {
  return (1 + utility) * (1 - loss) ** n - 1;
}

/** Utility after one citation: u -> u + (1 - u) * gain. */
export function utilityAfterCitation(utility: number, gain = FEEDBACK.citationGain): number {
  return utility + (1 - utility) * gain;
}

/** What the store counts a trace's recall misses from, in the trace's own write (store/traces/trace-rows.ts). */
export interface MissEvidence {
  /** The subjects the query named, as it named them. */
  named: readonly string[];
  /** Lower-cased subjects of the beliefs the recall held. */
  held: string[];
}

/**
 * Held: rendered (blocked ones too: they exist, formation cannot fix them by
 * re-deriving), or ranked above the floor and dropped only for the item or
 * token budget. The store has a belief about those subjects, so re-deriving
 * them would ask formation for what it has. A trace without its ranked list
 * cannot tell, and counts nothing.
 */
export function missEvidence(trace: RecallTrace): MissEvidence {
  if (trace.query.subjects.length === 0 || trace.ranked === null) return { named: [], held: [] };
  const held = new Set([...trace.returned, ...(trace.droppedForBudget ?? [])]);
  return { named: trace.query.subjects, held: trace.ranked.filter((r) => held.has(r.beliefId)).map((r) => r.subject.toLowerCase()) };
}
