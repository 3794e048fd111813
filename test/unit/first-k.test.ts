import { describe, expect, it } from "vitest";
import { firstK } from "../../src/principal-index/first-k.js";
import { prng } from "./unit-helpers.js";

describe("firstK", () => {
  it("is sort-then-slice for a total order, at every k, with ties broken by id", () => {
    const rand = prng(11);
    for (let round = 0; round < 200; round++) {
      const items = Array.from({ length: Math.floor(rand() * 300) }, (_, i) => ({ score: Math.floor(rand() * 20), id: `b${i}` }));
      const order = (a: (typeof items)[number], b: (typeof items)[number]) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      const k = Math.floor(rand() * 60);
      expect(firstK(items, k, order)).toEqual([...items].sort(order).slice(0, k));
    }
  });
});
