import { describe, expect, it } from "vitest";
import type { RecalledBelief } from "../../src/domain/model.js";
import { RANKED_FIELDS, rankedJson } from "../../src/store/traces/ranked-json.js";
import { pick, prng, uid } from "./unit-helpers.js";

// Strings a statement or subject may hold: quotes, backslashes, control characters, non-BMP and lone surrogates.
const PIECES = ["plain", 'say "hi"', "back\\slash", "tab\there", "line\nbreak", "\u0000\u001f\u007f", "caf\u00e9", "\u{1f600}", "\ud800", "\udc00x", "</script>", "\u2028\u2029", ""];

function text(rand: () => number): string {
  return Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, PIECES)).join(pick(rand, [" ", "", "-"]));
}

function date(rand: () => number): Date {
  return pick(rand, [new Date(Math.floor(rand() * 4e12)), new Date(Number.NaN), new Date(-8.64e15), new Date(0)]);
}

/** A ranked item with its fields in the order the pipeline builds them (pipeline.ts toRecalled). */
function item(rand: () => number, n: number): RecalledBelief {
  return {
    beliefId: uid(n),
    subject: text(rand),
    statement: text(rand),
    beliefType: pick(rand, ["preference", "fact", text(rand)]),
    status: pick(rand, ["active", "provisional", "superseded"]) as RecalledBelief["status"],
    confidenceBand: pick(rand, ["high", "medium", "low"]) as RecalledBelief["confidenceBand"],
    authority: pick(rand, ["user", "affirmed", "inferred"]) as RecalledBelief["authority"],
    originScope: text(rand),
    portability: pick(rand, ["portable", "contextual", "local"]) as RecalledBelief["portability"],
    carried: rand() < 0.5,
    validFrom: date(rand),
    validTo: rand() < 0.4 ? null : date(rand),
    score: pick(rand, [rand(), -rand() * 1e-9, 0, -0, 1e21, 123.456789012, Number.NaN, Number.POSITIVE_INFINITY]),
    arms: Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, ["lexical", "structured", "delta", "semantic", text(rand)])),
    conflictWith: Array.from({ length: Math.floor(rand() * 3) }, (_, k) => uid(n * 10 + k)),
    blocked: rand() < 0.2,
  };
}

describe("a trace's ranked list as JSON text", () => {
  it("is byte for byte JSON.stringify of the list (property, seeded)", () => {
    const rand = prng(20261204);
    for (let round = 0; round < 300; round++) {
      const ranked = Array.from({ length: Math.floor(rand() * 12) }, (_, i) => item(rand, round * 100 + i));
      expect(rankedJson(ranked)).toBe(JSON.stringify(ranked));
      // Twice: the second time from the texts kept the first time.
      expect(rankedJson(ranked)).toBe(JSON.stringify(ranked));
    }
  });

  it("writes a date kept by its time for every Date of that time, and past the bound of those it keeps", () => {
    const rand = prng(20261207);
    const base = item(rand, 1);
    // More distinct times than the texts kept (16,384), each written from a new Date object twice.
    for (let n = 0; n < 20_000; n += 1) {
      const ms = 1.7e12 + n * 86_400_123;
      const ranked = [{ ...base, validFrom: new Date(ms), validTo: new Date(ms + 1) }];
      expect(rankedJson(ranked)).toBe(JSON.stringify(ranked));
      const again = [{ ...base, validFrom: new Date(ms), validTo: null }];
      expect(rankedJson(again)).toBe(JSON.stringify(again));
    }
  });

  it("writes every field RANKED_FIELDS names (which the type checks against RecalledBelief), in that order", () => {
    const written = JSON.parse(rankedJson([item(prng(1), 1)])) as Record<string, unknown>[];
    expect(Object.keys(written[0]!)).toEqual([...RANKED_FIELDS]);
  });
});
