import { describe, expect, it } from "vitest";
import { assemble, byScoreThenId, type Assemblable } from "../../src/recall/render/assemble.js";
import { countTokens } from "../../src/recall/render/tokens.js";

/** An item whose line is `words` tokens long, so it costs words + 1 (the newline). */
function item(beliefId: string, score: number, words = 4, conflictsWith: string[] = []): Assemblable {
  return { beliefId, score, line: Array.from({ length: words }, (_, i) => `w${"x".repeat(i % 3)}`).join(" "), conflictsWith };
}

const roomy = { maxItems: 100, budgetTokens: 10_000, floor: 0.5, frameTokens: 10 };
const ids = (items: readonly Assemblable[]) => items.map((i) => i.beliefId);

describe("test fixture", () => {
  it("builds lines of exactly `words` tokens", () => {
    expect(countTokens(item("a", 1, 4).line)).toBe(4);
    expect(countTokens(item("a", 1, 9).line)).toBe(9);
  });
});

describe("byScoreThenId", () => {
  it("orders by score descending, then belief id ascending", () => {
    const sorted = [
      { beliefId: "b", score: 0.5 },
      { beliefId: "c", score: 0.9 },
      { beliefId: "a", score: 0.5 },
    ].sort(byScoreThenId);
    expect(sorted.map((s) => s.beliefId)).toEqual(["c", "a", "b"]);
  });
});

describe("assemble", () => {
  it("admits in score desc / belief_id asc order whatever the input order", () => {
    const out = assemble([item("b", 0.7), item("a", 0.7), item("c", 0.9), item("d", 0.6)], roomy);
    expect(ids(out.admitted)).toEqual(["c", "a", "b", "d"]);
    expect(out.droppedForBudget).toEqual([]);
    expect(out.belowFloor).toBe(0);
  });

  it("counts tokens as the frame plus each line and its newline", () => {
    const out = assemble([item("a", 0.9, 4), item("b", 0.8, 7)], roomy);
    expect(out.tokens).toBe(10 + 5 + 8);
  });

  it("returns only the frame for no candidates", () => {
    const out = assemble([], roomy);
    expect(out).toEqual({ admitted: [], droppedForBudget: [], belowFloor: 0, notShown: [], tokens: 10 });
  });

  describe("relevance floor", () => {
    it("drops candidates below the floor even with budget left", () => {
      const out = assemble([item("a", 0.9), item("b", 0.49999), item("c", 0.1)], roomy);
      expect(ids(out.admitted)).toEqual(["a"]);
      expect(out.belowFloor).toBe(2);
      expect(out.droppedForBudget).toEqual([]);
    });

    it("admits a candidate exactly at the floor", () => {
      const out = assemble([item("a", 0.5)], roomy);
      expect(ids(out.admitted)).toEqual(["a"]);
    });
  });

  describe("item cap", () => {
    it("admits at most maxItems and reports the rest as dropped for budget, in rank order", () => {
      const out = assemble([item("d", 0.6), item("a", 0.9), item("c", 0.7), item("b", 0.8)], { ...roomy, maxItems: 2 });
      expect(ids(out.admitted)).toEqual(["a", "b"]);
      expect(out.droppedForBudget).toEqual(["c", "d"]);
    });

    it("does not report below-floor candidates as dropped for budget", () => {
      const out = assemble([item("a", 0.9), item("b", 0.8), item("c", 0.2)], { ...roomy, maxItems: 1 });
      expect(out.droppedForBudget).toEqual(["b"]);
      expect(out.belowFloor).toBe(1);
    });
  });

  describe("token budget", () => {
    it("admits an item that exactly fills the budget", () => {
      // frame 10 + (4 + 1) + (4 + 1) = 20
      const out = assemble([item("a", 0.9), item("b", 0.8)], { ...roomy, budgetTokens: 20 });
      expect(ids(out.admitted)).toEqual(["a", "b"]);
      expect(out.tokens).toBe(20);
    });

    it("stops at the first item that does not fit: nothing ranked after it jumps the queue", () => {
      // a costs 5 (fits: 15), b costs 9 (24 > 20), c costs 2 and would fit but ranks after b.
      const out = assemble([item("a", 0.9, 4), item("b", 0.8, 8), item("c", 0.7, 1), item("d", 0.6, 1)], {
        ...roomy,
        budgetTokens: 20,
      });
      expect(ids(out.admitted)).toEqual(["a"]);
      expect(out.droppedForBudget).toEqual(["b", "c", "d"]);
      expect(out.tokens).toBe(15);
    });

    it("drops everything when the frame alone exceeds the budget", () => {
      const out = assemble([item("a", 0.9), item("b", 0.8)], { ...roomy, budgetTokens: 9 });
      expect(out.admitted).toEqual([]);
      expect(out.droppedForBudget).toEqual(["a", "b"]);
      expect(out.tokens).toBe(10);
    });
  });

  describe("conflict partners", () => {
    it("admits a partner together with its belief even below the floor", () => {
      const out = assemble([item("a", 0.9, 4, ["b"]), item("b", 0.1, 4, ["a"]), item("c", 0.2)], roomy);
      expect(ids(out.admitted)).toEqual(["a", "b"]);
      expect(out.belowFloor).toBe(1);
      expect(out.tokens).toBe(10 + 5 + 5);
    });

    it("admits the partner when only the higher-ranked item names it", () => {
      const out = assemble([item("a", 0.9, 4, ["b"]), item("b", 0.1)], roomy);
      expect(ids(out.admitted)).toEqual(["a", "b"]);
    });

    it("keeps admitted output in score order even when a partner came in early", () => {
      const out = assemble([item("a", 0.9, 4, ["z"]), item("m", 0.8), item("z", 0.3, 4, ["a"])], roomy);
      expect(ids(out.admitted)).toEqual(["a", "m", "z"]);
    });

    it("admits both or neither when the pair does not fit the budget", () => {
      // frame 10 + a 5 + b 5 = 20 > 19.
      const out = assemble([item("a", 0.9, 4, ["b"]), item("b", 0.8, 4, ["a"])], { ...roomy, budgetTokens: 19 });
      expect(out.admitted).toEqual([]);
      expect(out.droppedForBudget).toEqual(["a", "b"]);
    });

    it("admits both or neither under the item cap", () => {
      const out = assemble([item("a", 0.9, 4, ["b"]), item("b", 0.2, 4, ["a"])], { ...roomy, maxItems: 1 });
      expect(out.admitted).toEqual([]);
      expect(out.droppedForBudget).toEqual(["a"]);
      expect(out.belowFloor).toBe(1);
    });

    it("ignores partners that are not candidates", () => {
      const out = assemble([item("a", 0.9, 4, ["ghost"])], { ...roomy, maxItems: 1 });
      expect(ids(out.admitted)).toEqual(["a"]);
    });

    it("counts a mutually linked pair once", () => {
      const out = assemble([item("a", 0.9, 4, ["b"]), item("b", 0.8, 4, ["a"])], { ...roomy, maxItems: 2 });
      expect(ids(out.admitted)).toEqual(["a", "b"]);
      expect(out.tokens).toBe(20);
      expect(out.droppedForBudget).toEqual([]);
    });
  });

  it("does not mutate its input", () => {
    const input = [item("b", 0.6), item("a", 0.9)];
    const copy = structuredClone(input);
    assemble(input, roomy);
    expect(input).toEqual(copy);
  });

  describe("held back by the floor's relative part", () => {
    it("counts them below the floor, not as dropped for budget, even with room and score to spare", () => {
      const out = assemble([item("a", 0.9), item("b", 0.85), item("c", 0.6)], { ...roomy, heldBack: new Set(["b"]) });
      expect(ids(out.admitted)).toEqual(["a", "c"]);
      expect(out.belowFloor).toBe(1);
      expect(out.droppedForBudget).toEqual([]);
    });

    it("still brings a held-back conflict partner with the belief it conflicts with", () => {
      const out = assemble([item("a", 0.9, 4, ["b"]), item("b", 0.85, 4, ["a"]), item("c", 0.6)], { ...roomy, heldBack: new Set(["b", "c"]) });
      expect(ids(out.admitted)).toEqual(["a", "b"]);
    });
  });
});

describe("assemble: one reason for each item left out", () => {
  const reasons = (out: { notShown: { beliefId: string; reason: string }[] }) => Object.fromEntries(out.notShown.map((n) => [n.beliefId, n.reason]));

  it("names the floor, its relative part, the item cap and the budget", () => {
    const floor = assemble([item("a", 0.9), item("b", 0.85), item("c", 0.3)], { ...roomy, heldBack: new Set(["b"]) });
    expect(reasons(floor)).toEqual({ b: "relative_floor", c: "floor" });
    const cap = assemble([item("a", 0.9), item("b", 0.8), item("c", 0.7)], { ...roomy, maxItems: 1 });
    expect(reasons(cap)).toEqual({ b: "item_cap", c: "item_cap" });
    const budget = assemble([item("a", 0.9, 4), item("b", 0.8, 9), item("c", 0.7, 1)], { ...roomy, budgetTokens: 10 + 5 + 5 });
    expect(reasons(budget)).toEqual({ b: "budget", c: "budget" });
  });

  it("gives what stopped the block to everything ranked below it, and none to an admitted conflict partner", () => {
    const out = assemble([item("a", 0.9, 4, ["z"]), item("z", 0.2, 4, ["a"]), item("b", 0.8, 30), item("c", 0.75, 1), item("d", 0.1)], { ...roomy, budgetTokens: 40 });
    expect(ids(out.admitted)).toEqual(["a", "z"]);
    expect(reasons(out)).toEqual({ b: "budget", c: "budget", d: "floor" });
    expect(out.notShown.length + out.admitted.length).toBe(5);
  });
});
