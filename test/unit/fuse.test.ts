import { describe, expect, it } from "vitest";
import { matchFromFused, reciprocalRankFusion, tiedRanks } from "../../src/recall/rank/fuse.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";

const K = 60;

describe("reciprocalRankFusion", () => {
  it("uses k = 60 in the retrieval policy", () => {
    expect(RETRIEVAL_POLICY.rrfK).toBe(60);
  });

  it("scores a single arm as 1 / (k + rank), rank starting at 1", () => {
    const fused = reciprocalRankFusion([{ arm: "lexical", ids: ["a", "b", "c"] }], K);
    expect(fused).toEqual([
      { beliefId: "a", fused: 1 / 61, arms: ["lexical"] },
      { beliefId: "b", fused: 1 / 62, arms: ["lexical"] },
      { beliefId: "c", fused: 1 / 63, arms: ["lexical"] },
    ]);
  });

  it("sums the reciprocal ranks of every arm a belief appears in", () => {
    const fused = reciprocalRankFusion(
      [
        { arm: "structured", ids: ["a", "b"] },
        { arm: "lexical", ids: ["b", "c", "a"] },
      ],
      K,
    );
    expect(fused.map((f) => f.beliefId)).toEqual(["b", "a", "c"]);
    const byId = new Map(fused.map((f) => [f.beliefId, f]));
    expect(byId.get("a")!.fused).toBe(1 / 61 + 1 / 63);
    expect(byId.get("b")!.fused).toBe(1 / 62 + 1 / 61);
    expect(byId.get("c")!.fused).toBe(1 / 62);
  });

  it("prefers agreement: rank 2 in two arms beats rank 1 in one arm", () => {
    const fused = reciprocalRankFusion(
      [
        { arm: "structured", ids: ["solo", "both"] },
        { arm: "lexical", ids: ["other", "both"] },
      ],
      K,
    );
    expect(fused[0]!.beliefId).toBe("both");
    expect(fused[0]!.fused).toBe(2 / 62);
  });

  it("honours the k parameter", () => {
    const fused = reciprocalRankFusion([{ arm: "x", ids: ["a", "b"] }], 0);
    expect(fused.map((f) => f.fused)).toEqual([1, 1 / 2]);
  });

  it("breaks exact ties by belief id ascending, whatever the input order", () => {
    const one = reciprocalRankFusion(
      [
        { arm: "structured", ids: ["z", "m"] },
        { arm: "lexical", ids: ["a", "q"] },
      ],
      K,
    );
    const two = reciprocalRankFusion(
      [
        { arm: "lexical", ids: ["a", "q"] },
        { arm: "structured", ids: ["z", "m"] },
      ],
      K,
    );
    expect(one.map((f) => f.beliefId)).toEqual(["a", "z", "m", "q"]);
    expect(two).toEqual(one);
  });

  it("lists the arms that produced each belief, sorted and without repeats", () => {
    const fused = reciprocalRankFusion(
      [
        { arm: "structured", ids: ["a"] },
        { arm: "lexical", ids: ["a", "b"] },
        { arm: "semantic", ids: ["b"] },
      ],
      K,
    );
    const arms = Object.fromEntries(fused.map((f) => [f.beliefId, f.arms]));
    expect(arms).toEqual({ a: ["lexical", "structured"], b: ["lexical", "semantic"] });
  });

  it("multiplies an arm's reciprocal ranks by its weight (the semantic arm's calibration); 1 by default", () => {
    const fused = reciprocalRankFusion(
      [
        { arm: "lexical", ids: ["a", "b"] },
        { arm: "semantic", ids: ["b", "a"], weight: 0.5 },
      ],
      K,
    );
    expect(fused.map((f) => [f.beliefId, f.fused])).toEqual([
      ["a", 1 / (K + 1) + 0.5 / (K + 2)],
      ["b", 1 / (K + 2) + 0.5 / (K + 1)],
    ]);
    expect(reciprocalRankFusion([{ arm: "lexical", ids: ["a"], weight: 1 }], K)).toEqual(reciprocalRankFusion([{ arm: "lexical", ids: ["a"] }], K));
    // Normalised by the weight of the arms that ran: rank 1 in both is a full match.
    expect(matchFromFused(1 / (K + 1) + 0.5 / (K + 1), 1.5, K)).toBeCloseTo(1, 12);
  });

  it("returns nothing for no arms or empty arms", () => {
    expect(reciprocalRankFusion([], K)).toEqual([]);
    expect(reciprocalRankFusion([{ arm: "lexical", ids: [] }], K)).toEqual([]);
  });

  it("does not let one call's arms lists leak into another", () => {
    const rankings = [{ arm: "lexical", ids: ["a"] }];
    const first = reciprocalRankFusion(rankings, K);
    first[0]!.arms.push("mutated");
    expect(reciprocalRankFusion(rankings, K)[0]!.arms).toEqual(["lexical"]);
  });
});

describe("matchFromFused", () => {
  it("is 0 when no arm ran", () => {
    expect(matchFromFused(0.5, 0, K)).toBe(0);
  });

  it("is 1 for rank 1 in every arm that ran", () => {
    expect(matchFromFused(1 / 61, 1, K)).toBe(1);
    expect(matchFromFused(2 / 61, 2, K)).toBe(1);
  });

  it("is 0.5 for rank 1 in one of two arms", () => {
    expect(matchFromFused(1 / 61, 2, K)).toBe(0.5);
  });

  it("scales lower ranks by the best possible score", () => {
    expect(matchFromFused(1 / 62, 1, K)).toBeCloseTo(61 / 62, 12);
    expect(matchFromFused(1 / 161, 1, K)).toBeCloseTo(61 / 161, 12);
  });

  it("is clamped to 1", () => {
    // A belief found by more arms than were counted as having run.
    expect(matchFromFused(2 / 61, 1, K)).toBe(1);
  });

  it("is 0 for a fused score of 0", () => {
    expect(matchFromFused(0, 2, K)).toBe(0);
  });

  it("is monotone in the fused score", () => {
    const values = [1, 2, 3, 5, 10, 50, 200].map((rank) => matchFromFused(1 / (K + rank), 1, K));
    for (let i = 1; i < values.length; i++) expect(values[i]!).toBeLessThan(values[i - 1]!);
  });
});

describe("reciprocalRankFusion with tied arm scores", () => {
  it("gives equal arm scores their mean rank, so an arbitrary order inside a tie cannot leak", () => {
    const fused = reciprocalRankFusion(
      [
        { arm: "structured", ids: ["z", "y", "x"], scores: [1, 1, 0.25] },
        { arm: "lexical", ids: ["y"], scores: [0.3] },
      ],
      60,
    );
    expect(fused.map((f) => f.beliefId)).toEqual(["y", "z", "x"]);
    expect(fused.find((f) => f.beliefId === "z")!.fused).toBeCloseTo(1 / 61.5, 12);
    expect(fused.find((f) => f.beliefId === "x")!.fused).toBeCloseTo(1 / 63, 12);
  });

  it("computes mean ranks over runs of equal scores", () => {
    expect(tiedRanks(4, [0.9, 0.5, 0.5, 0.1])).toEqual([1, 2.5, 2.5, 4]);
    expect(tiedRanks(3, [1, 1, 1])).toEqual([2, 2, 2]);
    expect(tiedRanks(3)).toEqual([1, 2, 3]);
    expect(tiedRanks(0, [])).toEqual([]);
  });
});
