import { gateSemanticOnly, semanticOnly, type SemanticSimilarity } from "../../domain/semantic-calibration.js";

/**
 * The relevance floor's relative part (retrieval@6): a candidate must be
 * about as relevant as the best one of this recall, not merely above an
 * absolute score. The absolute floor cannot do this alone: rank fusion
 * gives the lexical arm's 12th match 0.85 of its 1st's match share however
 * far apart their BM25 scores are, and confidence, authority and scope add
 * the same to every belief of one kind, so a loosely matching belief clears
 * the floor on its non-match features and the block fills to its item cap.
 *
 * Held back (treated as below the floor, never deleted from the ranking):
 *
 * - a belief the lexical arm alone found, with a lexical score below
 *   `share` × the best lexical score of the recall ("what editor does Andy
 *   use": "Andy is the maintainer of veetbot" matches only "Andy", at a
 *   third of "Andy's editor is Helix");
 * - a belief found only through a type-only anchor (structured score no
 *   higher than the type weight) and at most weakly by the lexical arm, when
 *   another candidate of its type is a strong lexical match: the question's
 *   own words have answered it ("How do I take my coffee?" finds the coffee
 *   preference; tabs and padel are preferences too, and stay out). When no
 *   belief of the anchored type matches the words, the anchor still brings
 *   the paraphrase ("Andy takes espresso black" for "How do I like my
 *   coffee?"), as the spec's bounded profile lookup requires.
 *
 * Evidence from any other arm keeps a belief: a named subject or an
 * ownership statement (structured score above the type weight), the recall
 * delta, the semantic arm (calibrated on its own). Only scores within one
 * arm are compared, never across arms. Pure: the same arm outcomes give the
 * same answer on either candidate source.
 */

export interface FloorArmOutcome {
  arm: string;
  candidates: readonly { belief: { beliefId: string; beliefType: string }; armScore: number }[];
}

export function heldBelowRelativeFloor(outcomes: readonly FloorArmOutcome[], share: number, typeAnchorWeight: number): Set<string> {
  const held = new Set<string>();
  if (share <= 0) return held;
  const lexical = new Map<string, number>();
  const structured = new Map<string, number>();
  const otherArms = new Set<string>();
  const types = new Map<string, string>();
  for (const o of outcomes) {
    for (const c of o.candidates) {
      const id = c.belief.beliefId;
      types.set(id, c.belief.beliefType);
      if (o.arm === "lexical") lexical.set(id, c.armScore);
      else if (o.arm === "structured") structured.set(id, Math.max(structured.get(id) ?? 0, c.armScore));
      else otherArms.add(id);
    }
  }
  let best = 0;
  for (const s of lexical.values()) if (s > best) best = s;
  const strong = (id: string) => best > 0 && (lexical.get(id) ?? 0) >= share * best;
  // Types the question's words have answered: some belief of the type is a strong lexical match.
  const answered = new Set<string>();
  for (const id of lexical.keys()) if (strong(id)) answered.add(types.get(id)!);
  for (const id of types.keys()) {
    if (strong(id) || otherArms.has(id)) continue;
    const s = structured.get(id) ?? 0;
    if (s > typeAnchorWeight) continue;
    if (s > 0 && !answered.has(types.get(id)!)) continue;
    held.add(id);
  }
  return held;
}

/**
 * The relative floor, and under convex fusion of the semantic arm
 * (`convexSimilarity` set) the semantic arm's absolute one: its evidence
 * exempts a belief from the relative floor only at `full` similarity, and a
 * belief it alone found is held back when its score, gated by its semantic
 * relevance as rank fusion gates it (gateSemanticOnly), is below `floor`: the
 * same bar a semantic-only belief met under rank fusion, applied to admission
 * only, so the ranking itself keeps the fused score. Under rank fusion the
 * gate is in the score already, and the arm exempts as any other arm does.
 */
export function heldBackByFloors(
  outcomes: readonly FloorArmOutcome[],
  ranked: readonly { beliefId: string; arms: readonly string[]; score: number }[],
  share: number,
  typeAnchorWeight: number,
  convex?: { similarity: SemanticSimilarity; floor: number },
): Set<string> {
  if (!convex) return heldBelowRelativeFloor(outcomes, share, typeAnchorWeight);
  const { full } = convex.similarity;
  const strongOnly = outcomes.map((o) => (o.arm === "semantic" ? { ...o, candidates: o.candidates.filter((c) => c.armScore >= full) } : o));
  const held = heldBelowRelativeFloor(strongOnly, share, typeAnchorWeight);
  const cosine = new Map(outcomes.filter((o) => o.arm === "semantic").flatMap((o) => o.candidates.map((c) => [c.belief.beliefId, c.armScore] as const)));
  for (const r of ranked) {
    if (!semanticOnly(r.arms)) continue;
    if (gateSemanticOnly(r.score, r.arms, cosine.get(r.beliefId) ?? 0, convex.similarity) < convex.floor) held.add(r.beliefId);
  }
  return held;
}
