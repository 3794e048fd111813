import type { Principal, RecallQuery, SensitivityLevel, SessionType } from "../../domain/model.js";
import { assemble, byScoreThenId, type Assemblable, type Assembled } from "../render/assemble.js";

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
    // Within a snapshot, the item cap a part meets is its share of the snapshot's items.
    notShown: [...core.notShown, ...goal.notShown].map((n) => (n.reason === "item_cap" ? { ...n, reason: "snapshot_share" } : n)),
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

/** The start of every snapshotCacheKey of the principal (for dropping them when it is erased). */
export function snapshotKeyPrefix(principal: Principal): string {
  return `${JSON.stringify([principal.tenantId, principal.principalId]).slice(0, -1)},`;
}

/**
 * Approximate heap held by a cached snapshot, for the cache's byte bound. Most
 * of it is the trace's ranked list (every candidate considered, hundreds at
 * 10k beliefs), not the rendered block. Per belief: its text as UTF-16 plus
 * about 420 bytes of object, dates and ids (measured with the heap on the
 * 1M-belief bench store: about 211 KB per entry, 323 ranked and 40 items).
 */
export function cachedSnapshotBytes(entry: {
  result: { rendered: string; items: readonly SizedBelief[] };
  trace?: { ranked: readonly SizedBelief[] | null };
}): number {
  const beliefs = (list: readonly SizedBelief[]) =>
    list.reduce((sum, b) => sum + (b.statement.length + (b.subject?.length ?? 0)) * 2 + PER_BELIEF_BYTES, 0);
  return entry.result.rendered.length * 2 * 2 + beliefs(entry.result.items) + beliefs(entry.trace?.ranked ?? []);
}

interface SizedBelief {
  statement: string;
  subject?: string;
}

const PER_BELIEF_BYTES = 420;
