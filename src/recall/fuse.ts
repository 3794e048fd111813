/**
 * Step 4: reciprocal rank fusion. score(b) = Σ_arms 1 / (k + rank_arm(b)).
 * Ranks, not scores, are combined, so arms never need calibrating against
 * each other and an arm can be added or removed without retuning the rest.
 */

export interface ArmRanking {
  arm: string;
  /** Belief ids in the arm's own order, best first. */
  ids: readonly string[];
}

export interface Fused {
  beliefId: string;
  fused: number;
  arms: string[];
}

export function reciprocalRankFusion(rankings: readonly ArmRanking[], k: number): Fused[] {
  const byId = new Map<string, Fused>();
  for (const { arm, ids } of rankings) {
    ids.forEach((id, index) => {
      const entry = byId.get(id) ?? { beliefId: id, fused: 0, arms: [] };
      entry.fused += 1 / (k + index + 1);
      if (!entry.arms.includes(arm)) entry.arms.push(arm);
      byId.set(id, entry);
    });
  }
  return [...byId.values()]
    .map((f) => ({ ...f, arms: [...f.arms].sort() }))
    .sort((a, b) => b.fused - a.fused || (a.beliefId < b.beliefId ? -1 : a.beliefId > b.beliefId ? 1 : 0));
}

/** Normalises a fused score to 0..1 by the best score possible with `armCount` arms (rank 1 in each). */
export function matchFromFused(fused: number, armCount: number, k: number): number {
  if (armCount === 0) return 0;
  return Math.min(1, fused / (armCount / (k + 1)));
}
