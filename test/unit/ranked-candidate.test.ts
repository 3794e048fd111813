import { describe, expect, it } from "vitest";
import { contentWords } from "../../src/recall/rank.js";
import { rankedCandidate } from "../../src/recall/ranked-candidate.js";
import { storedBelief } from "./unit-helpers.js";

/** The reply path's cheaper forms must give exactly what the plain ones gave. */
describe("the reply path's cheap forms", () => {
  it("a ranked candidate is the belief with its ranking, every field kept", () => {
    const b = storedBelief({
      conflictsWith: ["c0ffee00-0000-4000-8000-000000000001"],
      supersedes: ["c0ffee00-0000-4000-8000-000000000002"],
      expiresHint: new Date("2027-01-01T00:00:00Z"),
      lastUsedAt: new Date("2026-05-01T00:00:00Z"),
      utility: 0.25,
      storePosition: 42,
    });
    const c = rankedCandidate(b, ["lexical", "structured"], true, 1.25);
    expect(c).toEqual({ ...b, arms: ["lexical", "structured"], carried: true, score: 1.25 });
    expect(Object.keys(c).sort()).toEqual([...Object.keys(b), "arms", "carried", "score"].sort());
  });

  it("content words are the same when asked again, and differ by subject", () => {
    const first = contentWords("Andy prefers concise, prose-first writing.", "Andy");
    expect(contentWords("Andy prefers concise, prose-first writing.", "Andy")).toEqual(first);
    expect([...first]).toEqual(["prefers", "concise", "prose", "first", "writing"]);
    expect(contentWords("Andy prefers concise, prose-first writing.", "writing")).toEqual(new Set(["andy", "prefers", "concise", "prose", "first"]));
  });
});
