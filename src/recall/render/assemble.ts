import type { NotShown } from "../../domain/model.js";
import { countTokens } from "./tokens.js";

/**
 * Step 8a, assemble: highest score first into the item cap and the token
 * budget, stopping at the relevance floor. Filling the budget is not the
 * goal: nothing below the floor is admitted even when room is left, except
 * the conflict partner of an admitted belief, which always comes with it.
 * The floor is the absolute score and its relative part: the ids held back
 * by relative-floor.ts count as below it.
 */

export interface Assemblable {
  beliefId: string;
  score: number;
  /** The rendered line (placeholder text for withheld items). */
  line: string;
  /** Kept conflict partners. */
  conflictsWith: readonly string[];
}

export interface Assembled<T> {
  /** Admitted items in render order: score desc, belief_id asc. */
  admitted: T[];
  /** Above the floor but left out by the item cap or the token budget. */
  droppedForBudget: string[];
  /** Considered but below the relevance floor. */
  belowFloor: number;
  /** Every item not admitted, with the one reason it was not (the trace records it). */
  notShown: NotShown[];
  tokens: number;
}

export function byScoreThenId(a: { score: number; beliefId: string }, b: { score: number; beliefId: string }): number {
  return b.score - a.score || (a.beliefId < b.beliefId ? -1 : a.beliefId > b.beliefId ? 1 : 0);
}

export function assemble<T extends Assemblable>(
  ranked: readonly T[],
  limits: { maxItems: number; budgetTokens: number; floor: number; frameTokens: number; heldBack?: ReadonlySet<string> },
): Assembled<T> {
  const ordered = [...ranked].sort(byScoreThenId);
  const byId = new Map(ordered.map((item) => [item.beliefId, item]));
  const admitted = new Map<string, T>();
  const droppedForBudget: string[] = [];
  let tokens = limits.frameTokens;
  let belowFloor = 0;
  // What stopped the block: everything ranked below it is left out for that reason too.
  let full: "item_cap" | "budget" | null = null;
  const notShown: NotShown[] = [];

  // Counted once per item: a group is costed to see whether it fits, then again as it is admitted.
  const costs = new Map<T, number>();
  const cost = (item: T) => {
    let c = costs.get(item);
    if (c === undefined) {
      c = countTokens(item.line) + 1; // +1 for the newline
      costs.set(item, c);
    }
    return c;
  };
  const overflow = (group: T[]): "item_cap" | "budget" | null =>
    admitted.size + group.length > limits.maxItems
      ? "item_cap"
      : tokens + group.reduce((sum, item) => sum + cost(item), 0) > limits.budgetTokens
        ? "budget"
        : null;

  for (const item of ordered) {
    if (admitted.has(item.beliefId)) continue;
    if (item.score < limits.floor || limits.heldBack?.has(item.beliefId)) {
      belowFloor += 1;
      notShown.push({ beliefId: item.beliefId, reason: item.score < limits.floor ? "floor" : "relative_floor" });
      continue;
    }
    // A belief and its unresolved conflict partners enter together or not at all.
    const group = [item, ...item.conflictsWith.map((id) => byId.get(id)).filter((p): p is T => !!p && !admitted.has(p.beliefId))];
    // Stop at the budget: once something does not fit, nothing ranked below it jumps the queue.
    full ??= overflow(group);
    if (full) {
      droppedForBudget.push(item.beliefId);
      notShown.push({ beliefId: item.beliefId, reason: full });
      continue;
    }
    for (const member of group) {
      admitted.set(member.beliefId, member);
      tokens += cost(member);
    }
  }
  const dropped = droppedForBudget.filter((id) => !admitted.has(id));
  return {
    admitted: [...admitted.values()].sort(byScoreThenId),
    droppedForBudget: dropped,
    belowFloor,
    notShown: notShown.filter((n) => !admitted.has(n.beliefId)),
    tokens,
  };
}
