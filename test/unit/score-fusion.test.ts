import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY as P } from "../../src/recall/policy.js";
import { convexMatch, normalised } from "../../src/recall/rank/score-fusion.js";
import { fuseArms, type FusionInput } from "../../src/recall/rank/fuse-arms.js";
import { matchFromFused } from "../../src/recall/rank/fuse.js";
import { heldBackByFloors, heldBelowRelativeFloor } from "../../src/recall/rank/relative-floor.js";
import type { SemanticRanking } from "../../src/domain/semantic-calibration.js";

/** Convex fusion of normalised scores (the semantic arm's, issue 45), and its floors. */

const K = P.rrfK;
const arm = (name: string, hits: [string, number][], degraded = false): FusionInput & { candidates: { belief: { beliefId: string; beliefType: string }; armScore: number }[] } => ({
  arm: name,
  degraded,
  candidates: hits.map(([beliefId, armScore]) => ({ belief: { beliefId, beliefType: "preference" }, armScore })),
});
const convex = (weight: number, normalise: SemanticRanking["normalise"] = "min-max"): SemanticRanking => ({ method: "convex", normalise, candidateCap: 50, weight });
const asObject = (m: Map<string, number>) => Object.fromEntries([...m].sort(([a], [b]) => (a < b ? -1 : 1)));

describe("normalised scores within one recall", () => {
  it("min-max maps the best to 1 and the worst to 0, keeping the distances between", () => {
    expect(asObject(normalised(new Map([["a", 0.8], ["b", 0.5], ["c", 0.35]]), "min-max"))).toEqual({ a: 1, b: 1 / 3, c: 0 });
  });

  it("min-max of equal scores (or one) is 1 for each, never a division by zero", () => {
    expect(asObject(normalised(new Map([["a", 0.4], ["b", 0.4]]), "min-max"))).toEqual({ a: 1, b: 1 });
    expect(asObject(normalised(new Map([["a", 7]]), "min-max"))).toEqual({ a: 1 });
    expect(normalised(new Map(), "min-max").size).toBe(0);
  });

  it("rank gives (n − rank + 1) / n, tied scores sharing their mean rank, whatever order the map was filled in", () => {
    const scores = new Map([["c", 0.1], ["a", 0.9], ["b", 0.5], ["d", 0.5]]);
    expect(asObject(normalised(scores, "rank"))).toEqual({ a: 1, b: (4 - 2.5 + 1) / 4, d: (4 - 2.5 + 1) / 4, c: 1 / 4 });
  });
});

describe("convex match", () => {
  it("mixes the two sides as (1 − α)·lexical + α·semantic; a side that did not find a belief counts 0", () => {
    const lexical = new Map([["a", 0.9], ["b", 0.5]]);
    const cosine = new Map([["b", 0.7], ["s", 0.4]]);
    expect(asObject(convexMatch(lexical, cosine, 0.4, "min-max"))).toEqual({ a: 0.6, b: 0.4, s: 0 });
    expect(asObject(convexMatch(lexical, cosine, 0.5, "min-max"))).toEqual({ a: 0.5, b: 0.5, s: 0 });
  });

  it("a semantic match between the extremes keeps its distance, where a rank would not", () => {
    const cosine = new Map([["x", 0.62], ["y", 0.6], ["z", 0.3]]);
    const m = convexMatch(new Map(), cosine, 1, "min-max");
    expect(m.get("y")).toBeCloseTo(0.9375, 9);
    expect(convexMatch(new Map(), cosine, 1, "rank").get("y")).toBeCloseTo(2 / 3, 9);
  });

  it("with no candidates from the other arms the semantic side is the whole match", () => {
    expect(asObject(convexMatch(new Map(), new Map([["v", 0.46], ["w", 0.31]]), 0.4, "min-max"))).toEqual({ v: 1, w: 0 });
  });

  it("with no semantic candidates returns the lexical side as it came, so the recall ranks as with the arm off", () => {
    const lexical = new Map([["a", 0.5], ["b", 0.4]]);
    expect(convexMatch(lexical, new Map(), 0.4, "min-max")).toEqual(lexical);
  });
});

describe("fuseArms", () => {
  const lexical = arm("lexical", [["a", 9], ["b", 5], ["c", 1]]);
  const structured = arm("structured", [["b", 1]]);

  it("with the arm off is the reciprocal rank fusion of the others, matched as before", () => {
    const fused = fuseArms([lexical, structured], K);
    expect(fused.map((f) => f.beliefId)).toEqual(["b", "a", "c"]);
    expect(fused[0]).toEqual({ beliefId: "b", match: matchFromFused(1 / (K + 2) + 1 / (K + 1), 2, K), arms: ["lexical", "structured"] });
  });

  it("a degraded or empty semantic arm fuses exactly as the arm off, by either method", () => {
    const off = fuseArms([lexical, structured], K);
    for (const how of [convex(0.4), { ...convex(0.4), lexicalSide: "scores" as const }, { method: "rrf" as const, normalise: "min-max" as const, candidateCap: 20, weight: 0.25 }]) {
      expect(fuseArms([lexical, structured, arm("semantic", [["c", 0.7]], true)], K, how)).toEqual(off);
      expect(fuseArms([lexical, structured, arm("semantic", [])], K, how)).toEqual(off);
    }
  });

  it("rank fusion: the semantic ranks join the others' with its weight, the best share counting it", () => {
    const semantic = arm("semantic", [["c", 0.7]]);
    const fused = fuseArms([lexical, structured, semantic], K, { method: "rrf", normalise: "min-max", candidateCap: 20, weight: 0.25 });
    const c = fused.find((f) => f.beliefId === "c")!;
    expect(c.arms).toEqual(["lexical", "semantic"]);
    expect(c.match).toBeCloseTo(matchFromFused(1 / (K + 3) + 0.25 / (K + 1), 2.25, K), 12);
  });

  it("convex: the semantic arm stays out of the rank fusion and is mixed by normalised score", () => {
    const semantic = arm("semantic", [["s", 0.72], ["c", 0.6], ["a", 0.32]]);
    const fused = fuseArms([lexical, structured, semantic], K, convex(0.4));
    const byId = Object.fromEntries(fused.map((f) => [f.beliefId, f]));
    const side = Object.fromEntries(fuseArms([lexical, structured], K).map((f) => [f.beliefId, f.match]));
    const lo = side.c!;
    const hi = side.b!;
    const l = (id: string) => (side[id]! - lo) / (hi - lo);
    const s = (cos: number) => (cos - 0.32) / (0.72 - 0.32);
    expect(byId.a!.match).toBeCloseTo(0.6 * l("a") + 0.4 * s(0.32), 9);
    expect(byId.c!.match).toBeCloseTo(0.6 * 0 + 0.4 * s(0.6), 9);
    // A belief only the semantic arm found comes in by its own similarity, named by its arm alone.
    expect(byId.s).toEqual({ beliefId: "s", match: 0.4, arms: ["semantic"] });
    expect(byId.b!.arms).toEqual(["lexical", "structured"]);
    expect(byId.c!.arms).toEqual(["lexical", "semantic"]);
    // Best match first, ties by belief id.
    expect(fused.map((f) => f.match)).toEqual([...fused.map((f) => f.match)].sort((x, y) => y - x));
  });

  it("convex by the arms' own scores: each other arm min-max normalised, averaged over the arms that ran", () => {
    const semantic = arm("semantic", [["c", 0.7], ["a", 0.3]]);
    const fused = fuseArms([lexical, structured, semantic], K, { ...convex(0.5), lexicalSide: "scores" });
    const byId = Object.fromEntries(fused.map((f) => [f.beliefId, f.match]));
    // lexical: a 1, b 0.5, c 0; structured: b 1 (one score: 1). Mean over the two arms: a 0.5, b 0.75, c 0,
    // which the mix normalises again (a 2/3, b 1, c 0); cosine: c 1, a 0.
    expect(byId.a).toBeCloseTo(0.5 * (2 / 3), 9);
    expect(byId.b).toBe(0.5);
    expect(byId.c).toBe(0.5);
  });

  it("convex with a degraded or empty semantic arm ranks exactly as the arm off", () => {
    const off = fuseArms([lexical, structured], K);
    expect(fuseArms([lexical, structured, arm("semantic", [], true)], K, convex(0.4))).toEqual(off);
    expect(fuseArms([lexical, structured, arm("semantic", [])], K, convex(0.4))).toEqual(off);
  });
});

describe("floors under convex fusion", () => {
  const similarity = { min: 0.3, full: 0.6 };
  const convexFloor = { similarity, floor: 0.45 };
  const ranked = (fused: { beliefId: string; arms: string[] }[], score: number) => fused.map((f) => ({ ...f, score }));

  it("a belief the semantic arm alone found is held back when its score, gated by its similarity, is below the floor", () => {
    const outcomes = [arm("lexical", [["a", 9]]), arm("semantic", [["weak", 0.45], ["strong", 0.66]])];
    const fused = fuseArms(outcomes, K, convex(0.4));
    // weak: 0.6 × (0.45 − 0.3) / 0.3 = 0.3 < 0.45; strong: 0.6 × 1.
    expect([...heldBackByFloors(outcomes, ranked(fused, 0.6), 0.4, P.typeAnchorWeight, convexFloor)].sort()).toEqual(["weak"]);
    // The same bar rank fusion puts in the score: a higher score clears it at the same similarity.
    expect([...heldBackByFloors(outcomes, ranked(fused, 0.95), 0.4, P.typeAnchorWeight, convexFloor)]).toEqual([]);
  });

  it("weak semantic evidence no longer exempts a weak lexical match from the relative floor; strong evidence does", () => {
    const outcomes = [arm("lexical", [["a", 9], ["b", 1], ["c", 1]]), arm("semantic", [["b", 0.4], ["c", 0.7]])];
    const fused = fuseArms(outcomes, K, convex(0.4));
    expect([...heldBackByFloors(outcomes, ranked(fused, 0.6), 0.4, P.typeAnchorWeight, convexFloor)]).toEqual(["b"]);
  });

  it("under rank fusion (no similarity given) it is the relative floor alone, as before", () => {
    const outcomes = [arm("lexical", [["a", 9], ["b", 1]]), arm("semantic", [["b", 0.4], ["s", 0.31]])];
    const fused = fuseArms(outcomes, K, { method: "rrf", normalise: "min-max", candidateCap: 20, weight: 1 });
    expect(heldBackByFloors(outcomes, ranked(fused, 0.6), 0.4, P.typeAnchorWeight)).toEqual(heldBelowRelativeFloor(outcomes, 0.4, P.typeAnchorWeight));
  });
});
