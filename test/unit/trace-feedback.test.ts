import { describe, expect, it } from "vitest";
import { FEEDBACK, recallMisses, utilityAfterCitation, utilityAfterUncited } from "../../src/trace/feedback.js";

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

describe("recallMisses", () => {
  const acme = { asked: "Acme", canonical: "acme corp", names: ["acme", "acme corp", "acme inc"] };
  const andy = { asked: "Andy", canonical: "andy", names: ["andy"] };

  it("a subject with nothing about it rendered is missed, keyed by its canonical subject", () => {
    expect(recallMisses([acme, andy], ["Andy"])).toEqual({ missed: [{ key: "acme corp", subject: "Acme" }], answered: ["andy"] });
  });

  it("a rendered belief about any alias answers the subject, whatever its case", () => {
    expect(recallMisses([acme], ["ACME Inc"])).toEqual({ missed: [], answered: ["acme corp"] });
  });

  it("nothing rendered misses every named subject once; two names of one subject count once", () => {
    const acmeCorp = { asked: "Acme Corp", canonical: "acme corp", names: acme.names };
    expect(recallMisses([acme, acmeCorp, andy], [])).toEqual({
      missed: [
        { key: "acme corp", subject: "Acme" },
        { key: "andy", subject: "Andy" },
      ],
      answered: [],
    });
  });

  it("no named subjects, no misses", () => {
    expect(recallMisses([], ["Andy"])).toEqual({ missed: [], answered: [] });
  });
});
