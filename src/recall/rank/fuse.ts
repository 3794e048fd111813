/**
 * Step 4: reciprocal rank fusion. score(b) = Σ_arms weight_arm / (k + rank_arm(b)),
 * every weight 1 but the semantic arm's (its calibration's, semantic-calibration.ts).
 * Ranks, not scores, are combined, so arms never need calibrating against
 * each other and an arm can be added or removed without retuning the rest.
 */

export interface ArmRanking {
  arm: string;
  /** Belief ids in the arm's own order, best first. */
  ids: readonly string[];
  /**
   * The arm's own scores, same order. Equal scores share their mean rank
   * ("1 2.5 2.5 4"): the structured arm scores every exact-subject match 1.0,
   * an order among them that the arm does not have must not leak into the
   * fusion, and an anchor matching a hundred beliefs says less about each
   * than one matching a single belief.
   */
  scores?: readonly number[];
  /** Multiplies the arm's reciprocal ranks (default 1). */
  weight?: number;
}

export interface Fused {
  beliefId: string;
  fused: number;
  arms: string[];
}

export function reciprocalRankFusion(rankings: readonly ArmRanking[], k: number): Fused[] {
  const byId = new Map<string, Fused>();
  for (const { arm, ids, scores, weight = 1 } of rankings) {
    const ranks = tiedRanks(ids.length, scores);
    ids.forEach((id, index) => {
      const entry = byId.get(id) ?? { beliefId: id, fused: 0, arms: [] };
      entry.fused += weight / (k + ranks[index]!);
      if (!entry.arms.includes(arm)) entry.arms.push(arm);
      byId.set(id, entry);
    });
  }
  return [...byId.values()]
    .map((f) => ({ ...f, arms: [...f.arms].sort() }))
    .sort((a, b) => b.fused - a.fused || (a.beliefId < b.beliefId ? -1 : a.beliefId > b.beliefId ? 1 : 0));
}

/** Normalises a fused score to 0..1 by the best score possible with arms weighing `armCount` in all (rank 1 in each). */
export function matchFromFused(fused: number, armCount: number, k: number): number {
  if (armCount === 0) return 0;
  return Math.min(1, fused / (armCount / (k + 1)));
}

/** 1-based ranks in list order; runs of equal scores get the mean of the ranks they span. */
export function tiedRanks(length: number, scores?: readonly number[]): number[] {
  const ranks = Array.from({ length }, (_, i) => i + 1);
  if (!scores) return ranks;
  let start = 0;
  for (let i = 1; i <= length; i++) {
    if (i < length && scores[i] === scores[start]) continue;
    const mean = (start + 1 + i) / 2;
    for (let j = start; j < i; j++) ranks[j] = mean;
    start = i;
  }
  return ranks;
}
