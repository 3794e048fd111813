import type { Principal, RecallQuery, SensitivityLevel, SessionType } from "../domain/model.js";
import { assemble, byScoreThenId, type Assemblable, type Assembled } from "../recall/assemble.js";

/**
 * The session-open snapshot's own rules. About two-thirds of its items are
 * reserved for durable user-model and preference beliefs ("who you are
 * talking to"), the rest for the opening goal's priming set, so a burst of
 * project beliefs cannot evict the core. Unused priming slots are not
 * backfilled; the relevance floor still applies to both.
 */

export function snapshotSlots(maxItems: number, durableShare: number): { durable: number; priming: number } {
  const durable = Math.round(maxItems * durableShare);
  return { durable, priming: maxItems - durable };
}

export function assembleSnapshot<T extends Assemblable & { beliefType: string }>(
  ranked: readonly T[],
  limits: { maxItems: number; budgetTokens: number; floor: number; frameTokens: number; durableShare: number; durableTypes: readonly string[] },
): Assembled<T> {
  const slots = snapshotSlots(limits.maxItems, limits.durableShare);
  const durableTypes = new Set(limits.durableTypes);
  const durable = ranked.filter((c) => durableTypes.has(c.beliefType));
  const priming = ranked.filter((c) => !durableTypes.has(c.beliefType));
  // Durable beliefs are placed first: they get the token budget before the priming set does.
  const core = assemble(durable, { ...limits, maxItems: slots.durable });
  const goal = assemble(priming, { ...limits, maxItems: slots.priming, frameTokens: core.tokens });
  return {
    admitted: [...core.admitted, ...goal.admitted].sort(byScoreThenId),
    droppedForBudget: [...core.droppedForBudget, ...goal.droppedForBudget],
    belowFloor: core.belowFloor + goal.belowFloor,
    tokens: goal.tokens,
  };
}

/** Everything that changes a snapshot's bytes, with the watermark, as one cache key. */
export function snapshotCacheKey(
  principal: Principal,
  query: RecallQuery,
  context: { sessionType: SessionType; contextWindowTokens: number; sensitivityCeiling: SensitivityLevel },
  watermark: number,
  policyVersion: string,
): string {
  return JSON.stringify([
    principal.tenantId,
    principal.principalId,
    watermark,
    policyVersion,
    context.sessionType,
    context.contextWindowTokens,
    context.sensitivityCeiling,
    query,
  ]);
}

/** Approximate memory held by a cached snapshot: its text, twice (result and trace), plus ids. */
export function cachedSnapshotBytes(entry: { result: { rendered: string; items: { statement: string }[] } }): number {
  const statements = entry.result.items.reduce((sum, i) => sum + i.statement.length * 2 + 400, 0);
  return entry.result.rendered.length * 2 * 2 + statements * 2;
}
