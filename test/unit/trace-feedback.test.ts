import { describe, expect, it } from "vitest";
import type { RecallTrace, RecalledBelief } from "../../src/domain/model.js";
import { FEEDBACK, missEvidence, utilityAfterCitation, utilityAfterUncited } from "../../src/domain/feedback.js";

describe("utility feedback", () => {
  it("a citation moves utility a share of the way to 1; uncited returns a smaller share toward -1", () => {
    expect(utilityAfterCitation(0)).toBeCloseTo(FEEDBACK.citationGain, 12);
    expect(utilityAfterCitation(0.2)).toBeCloseTo(0.36, 12);
    expect(utilityAfterUncited(0, 1)).toBeCloseTo(-FEEDBACK.uncitedLoss, 12);
    expect(FEEDBACK.uncitedLoss).toBeLessThan(FEEDBACK.citationGain);
  });

  it("n uncited returns equal n single steps, and utility never leaves [-1, 1]", () => {
    let u = 0.5;
    for (let i = 0; i < 7; i++) u = utilityAfterUncited(u, 1);
    expect(utilityAfterUncited(0.5, 7)).toBeCloseTo(u, 12);
    expect(utilityAfterUncited(0.5, 0)).toBe(0.5);
    expect(utilityAfterUncited(1, 10_000)).toBeGreaterThanOrEqual(-1);
    expect(utilityAfterCitation(utilityAfterUncited(-1, 3))).toBeLessThanOrEqual(1);
    let v = -1;
    for (let i = 0; i < 1000; i++) v = utilityAfterCitation(v);
    expect(v).toBeLessThanOrEqual(1);
  });
});

describe("missEvidence", () => {
  const ranked = (beliefId: string, subject: string) => ({ beliefId, subject }) as RecalledBelief;
  const trace = (overrides: Partial<RecallTrace>) =>
    ({ query: { subjects: ["Acme", "Andy"] }, returned: ["r"], droppedForBudget: ["d"], ranked: [ranked("r", "Andy"), ranked("d", "ACME Inc"), ranked("x", "Bea")], ...overrides }) as RecallTrace;

  it("names the query's subjects as named, and holds the lower-cased subjects of what was rendered or dropped only for the budget", () => {
    expect(missEvidence(trace({}))).toEqual({ named: ["Acme", "Andy"], held: ["andy", "acme inc"] });
    expect(missEvidence(trace({ droppedForBudget: null }))).toEqual({ named: ["Acme", "Andy"], held: ["andy"] });
  });

  it("no named subjects, or no ranked list to tell what was held: nothing to count", () => {
    expect(missEvidence(trace({ query: { subjects: [] } as unknown as RecallTrace["query"] }))).toEqual({ named: [], held: [] });
    expect(missEvidence(trace({ ranked: null }))).toEqual({ named: [], held: [] });
  });
});
