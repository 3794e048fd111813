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
 * Where the semantic arm's candidates enter the fusion: at most
 * `candidateCap` of them (the nearest first), each reciprocal rank
 * multiplied by `weight` (every other arm weighs 1). The defaults leave the
 * arm an equal among the arms with the others' cap, as it always was.
 */
export interface SemanticRanking {
  readonly candidateCap: number;
  readonly weight: number;
}

export const DEFAULT_SEMANTIC_RANKING: SemanticRanking = Object.freeze({ candidateCap: 200, weight: 1 });

export function semanticRelevance(cosine: number, s: SemanticSimilarity): number {
  if (s.full <= s.min) return cosine >= s.min ? 1 : 0;
  return Math.min(1, Math.max(0, (cosine - s.min) / (s.full - s.min)));
}

/** The score of a ranked belief: gated by its semantic relevance when the semantic arm alone found it. */
export function gateSemanticOnly(score: number, arms: readonly string[], cosine: number | undefined, s: SemanticSimilarity | undefined): number {
  if (s === undefined || cosine === undefined || arms.length !== 1 || arms[0] !== "semantic") return score;
  return Math.round(score * semanticRelevance(cosine, s) * 1e9) / 1e9;
}
