import type { SemanticRanking } from "../../domain/semantic-calibration.js";
import { matchFromFused, reciprocalRankFusion } from "./fuse.js";
import { convexMatch, normalised, type Normalisation } from "./score-fusion.js";

/** One arm's outcome as the fusion reads it: its candidates' ids and scores, best first. */
export interface FusionInput {
  arm: string;
  degraded: boolean;
  candidates: readonly { belief: { beliefId: string }; armScore: number }[];
}

/** A fused candidate: its match share (0..1) and the arms that found it, sorted. */
export interface FusedMatch {
  beliefId: string;
  match: number;
  arms: string[];
}

/**
 * Step 4: every arm's candidates as one list with a match share each. The
 * arms other than `semantic` are always combined by reciprocal rank fusion
 * (fuse.ts). The semantic arm joins them there (`rrf`, its ranks × its
 * weight), or is mixed with their fused share by normalised score
 * (`convex`, score-fusion.ts). `semantic` undefined: the arm is off.
 * Ordered by match, then belief id.
 */
export function fuseArms(outcomes: readonly FusionInput[], rrfK: number, semantic?: SemanticRanking): FusedMatch[] {
  // A degraded or empty semantic arm fuses as the arm off: its mix would only rescale the
  // others' shares (min-max puts their weakest at 0, below the floor).
  const semanticFound = outcomes.some((o) => o.arm === "semantic" && !o.degraded && o.candidates.length > 0);
  if (semantic !== undefined && !semanticFound) return fuseArms(outcomes.filter((o) => o.arm !== "semantic"), rrfK);
  const convex = semantic?.method === "convex";
  const weightOf = (arm: string) => (arm === "semantic" ? (semantic?.weight ?? 1) : 1);
  const ranked = outcomes.filter((o) => !(convex && o.arm === "semantic"));
  // The best share possible: rank 1 in every arm that found something.
  const armsRun = ranked.filter((o) => !o.degraded && o.candidates.length > 0).reduce((sum, o) => sum + weightOf(o.arm), 0);
  const fused = reciprocalRankFusion(
    ranked.map((o) => ({ arm: o.arm, ids: o.candidates.map((c) => c.belief.beliefId), scores: o.candidates.map((c) => c.armScore), weight: weightOf(o.arm) })),
    rrfK,
  );
  const byId = new Map(fused.map((f) => [f.beliefId, { beliefId: f.beliefId, match: matchFromFused(f.fused, armsRun, rrfK), arms: f.arms }]));
  if (!convex) return [...byId.values()];

  const cosine = new Map(outcomes.filter((o) => o.arm === "semantic").flatMap((o) => o.candidates.map((c) => [c.belief.beliefId, c.armScore] as const)));
  const lexicalSide = semantic.lexicalSide === "scores" ? meanArmScores(ranked, semantic.normalise) : new Map([...byId.values()].map((f) => [f.beliefId, f.match]));
  const mixed = convexMatch(lexicalSide, cosine, semantic.weight, semantic.normalise);
  return [...mixed]
    .map(([beliefId, match]) => {
      const arms = byId.get(beliefId)?.arms ?? [];
      return { beliefId, match, arms: cosine.has(beliefId) ? [...arms, "semantic"].sort() : arms };
    })
    .sort((a, b) => b.match - a.match || (a.beliefId < b.beliefId ? -1 : a.beliefId > b.beliefId ? 1 : 0));
}

/**
 * The other arms' side by their own scores: each arm's scores normalised
 * within the recall, averaged over the arms that found something (a belief
 * an arm did not find counts 0 there), so BM25's distances reach the mix.
 */
function meanArmScores(outcomes: readonly FusionInput[], how: Normalisation): Map<string, number> {
  const ran = outcomes.filter((o) => !o.degraded && o.candidates.length > 0);
  const sum = new Map<string, number>();
  for (const o of ran) {
    const best = new Map<string, number>();
    for (const c of o.candidates) best.set(c.belief.beliefId, Math.max(best.get(c.belief.beliefId) ?? -Infinity, c.armScore));
    for (const [id, v] of normalised(best, how)) sum.set(id, (sum.get(id) ?? 0) + v);
  }
  return new Map([...sum].map(([id, v]) => [id, v / ran.length]));
}
