import { describe, expect, it } from "vitest";
import type { RecalledBelief } from "../../src/domain/model.js";
import { rankedJson } from "../../src/store/ranked-json.js";
import { pick, prng, randomRecalledBelief, uid } from "./unit-helpers.js";

/**
 * Property: the trace's ranked text is exactly JSON.stringify of the ranked
 * list, whichever of an item's fields changed since its belief's JSON was kept.
 */

const TEXTS = ["", "Andy prefers concise writing.", 'Quotes " and \\ backslashes', "Ünïcödé — 日本語 🚀", "line\nbreak\u2028sep\u0001", "lone \ud800 surrogate", "x".repeat(300)];

describe("ranked list JSON", () => {
  it("is JSON.stringify(ranked), byte for byte, as beliefs recur with the recall's fields or their own changed", () => {
    const rand = prng(23);
    // Keys in the order pipeline.ts builds a ranked item (randomRecalledBelief keeps it).
    const item = (beliefId: string): RecalledBelief =>
      randomRecalledBelief(rand, {
        beliefId,
        texts: TEXTS,
        id: () => uid(Math.floor(rand() * 50)),
        score: () => pick(rand, [0, -0, 1, rand() * 3 - 1, 1e-7 * rand(), 123456789.123]),
      });
    const beliefs = Array.from({ length: 15 }, (_, i) => item(uid(i)));
    const fields = Object.keys(beliefs[0]!).filter((k) => k !== "beliefId") as (keyof RecalledBelief)[];
    // The same belief as before, or with one field (its own or the recall's) taken from another item;
    // a copied date is a new object holding the same instant.
    const variant = (b: RecalledBelief): RecalledBelief => {
      const copy = { ...b, validFrom: new Date(b.validFrom.getTime()) };
      if (rand() < 0.4) return copy;
      const field = pick(rand, fields);
      return { ...copy, [field]: item(b.beliefId)[field] };
    };
    for (let i = 0; i < 500; i++) {
      const ranked = Array.from({ length: Math.floor(rand() * 25) }, () => variant(pick(rand, beliefs)));
      expect(rankedJson(ranked)).toBe(JSON.stringify(ranked));
    }
  });
});
