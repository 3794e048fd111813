import { tiedRanks } from "./fuse.js";

/**
 * Convex fusion of normalised scores, for the semantic arm (policy
 * `semantic.method: "convex"`): the other arms are fused by reciprocal rank
 * as always, giving each belief a match share; that share and the semantic
 * arm's cosine are each normalised within the recall, then mixed:
 *
 *   match(b) = (1 − α) · norm(lexical side)(b) + α · norm(cosine)(b)
 *
 * A belief one side did not find counts 0 there. When the other arms found
 * nothing at all, the semantic side is the whole match (as rank fusion
 * normalises by the arms that found something). Rank fusion gives an
 * arm's 20th candidate most of its 1st's share however far apart their
 * similarities are; normalised scores keep the distances, so a weak
 * semantic neighbour no longer weighs like a strong one.
 */

export type Normalisation = "min-max" | "rank";

/**
 * One side's scores mapped to 0..1 within the recall. `min-max`: (s − min) /
 * (max − min), every score 1 when they are all equal. `rank`: (n − rank + 1) / n
 * with tied scores sharing their mean rank, so the best is 1 and the last 1/n.
 */
export function normalised(scores: ReadonlyMap<string, number>, how: Normalisation): Map<string, number> {
  const out = new Map<string, number>();
  if (scores.size === 0) return out;
  if (how === "min-max") {
    let min = Infinity;
    let max = -Infinity;
    for (const s of scores.values()) {
      if (s < min) min = s;
      if (s > max) max = s;
    }
    for (const [id, s] of scores) out.set(id, max > min ? (s - min) / (max - min) : 1);
    return out;
  }
  // Best first, ties by id, so the ranks never depend on the order the map was filled in.
  const entries = [...scores].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const ranks = tiedRanks(
    entries.length,
    entries.map(([, s]) => s),
  );
  const n = entries.length;
  entries.forEach(([id], i) => out.set(id, (n - ranks[i]! + 1) / n));
  return out;
}

/**
 * The convex mix of the two sides' normalised scores, for every belief either
 * side found, rounded as scores are (so float noise never reorders). With no
 * semantic candidates at all the lexical side is returned as it came, not
 * normalised: a recall the arm added nothing to ranks as it would with the arm off.
 */
export function convexMatch(
  lexicalSide: ReadonlyMap<string, number>,
  cosine: ReadonlyMap<string, number>,
  alpha: number,
  how: Normalisation,
): Map<string, number> {
  if (cosine.size === 0) return new Map(lexicalSide);
  const l = normalised(lexicalSide, how);
  const s = normalised(cosine, how);
  if (l.size === 0) return s;
  const out = new Map<string, number>();
  for (const id of new Set([...l.keys(), ...s.keys()])) {
    out.set(id, Math.round(((1 - alpha) * (l.get(id) ?? 0) + alpha * (s.get(id) ?? 0)) * 1e9) / 1e9);
  }
  return out;
}
