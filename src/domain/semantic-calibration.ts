/**
 * What a cosine similarity from the semantic arm is worth. Any embedder
 * gives unrelated texts some similarity (a real model typically 0.0–0.2,
 * the hashed one whatever a hash collision shares), and rank fusion alone
 * would give the arm's best candidate a full match share however far it is.
 *
 * - `min`: below it a belief is not a semantic candidate at all (the arm's
 *   SQL drops it before the candidate cap).
 * - `full`: at or above it the semantic evidence counts in full.
 *
 * A belief that only the semantic arm found has its score multiplied by its
 * relevance, (cosine − min) / (full − min) clamped to 0..1: a weak
 * semantic-only match cannot clear the relevance floor on the non-match
 * features (confidence, authority, scope) alone. Beliefs another arm also
 * found are scored as before.
 */

export interface SemanticSimilarity {
  readonly min: number;
  readonly full: number;
}

/**
 * Defaults per embedder kind. OpenAI-compatible: calibrated for current
 * general-purpose models (text-embedding-3, nomic, bge), whose unrelated
 * pairs fall below 0.3; models with a high baseline (text-embedding-ada-002
 * puts unrelated text near 0.7) need their own values. Hashed: a shared
 * content word in short statements gives about 0.3, two give 0.5 and more.
 */
export const DEFAULT_SEMANTIC_SIMILARITY: Readonly<Record<"openai" | "local" | "hashed", SemanticSimilarity>> = Object.freeze({
  openai: Object.freeze({ min: 0.3, full: 0.6 }),
  local: Object.freeze({ min: 0.3, full: 0.6 }),
  hashed: Object.freeze({ min: 0.2, full: 0.5 }),
});

/**
 * How the semantic arm's candidates enter the ranking: at most
 * `candidateCap` of them (the nearest first), then either
 *
 * - `convex` (rank/score-fusion.ts): the match is (1 − weight) × the other
 *   arms' rank-fused share + weight × the cosine, each side normalised
 *   within the recall by `normalise`; or
 *   The other arms' side is their rank-fused share (`lexicalSide: "rrf"`)
 *   or the mean of each arm's own scores, normalised alike (`"scores"`).
 * - `rrf`: the arm's reciprocal ranks, multiplied by `weight`, join the
 *   other arms' in the rank fusion (every other arm weighs 1).
 *
 * The policy holds the values per profile (policy.ts `semantic`); the
 * evaluation may set them for one run.
 */
export interface SemanticRanking {
  readonly method: "convex" | "rrf";
  readonly normalise: "min-max" | "rank";
  readonly lexicalSide?: "rrf" | "scores";
  readonly candidateCap: number;
  readonly weight: number;
}

export function semanticRelevance(cosine: number, s: SemanticSimilarity): number {
  if (s.full <= s.min) return cosine >= s.min ? 1 : 0;
  return Math.min(1, Math.max(0, (cosine - s.min) / (s.full - s.min)));
}

/** True when the semantic arm alone found the belief. */
export function semanticOnly(arms: readonly string[]): boolean {
  return arms.length === 1 && arms[0] === "semantic";
}

/** The score of a ranked belief under rank fusion: gated by its semantic relevance when the semantic arm alone found it. */
export function gateSemanticOnly(score: number, arms: readonly string[], cosine: number | undefined, s: SemanticSimilarity | undefined): number {
  if (s === undefined || cosine === undefined || !semanticOnly(arms)) return score;
  return Math.round(score * semanticRelevance(cosine, s) * 1e9) / 1e9;
}
