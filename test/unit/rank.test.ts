import { describe, expect, it } from "vitest";
import { RETRIEVAL_POLICY as P } from "../../src/recall/policy.js";
import {
  authority,
  conf,
  confidenceBand,
  isCarried,
  penalty,
  reinforce,
  scopeAffinity,
  score,
} from "../../src/recall/rank.js";
import { DAY_MS, storedBelief } from "./unit-helpers.js";

const AT = new Date("2026-07-24T09:00:00Z");
const daysBefore = (days: number) => new Date(AT.getTime() - days * DAY_MS);

describe("conf", () => {
  it("is confidence x 1.0 for active beliefs", () => {
    expect(conf(storedBelief({ status: "active", confidence: 0.9 }))).toBe(0.9);
  });

  it("is confidence x 0.4 for provisional beliefs", () => {
    expect(conf(storedBelief({ status: "provisional", confidence: 0.9 }))).toBeCloseTo(0.36, 12);
    expect(conf(storedBelief({ status: "provisional", confidence: 1 }))).toBe(0.4);
  });

  it("is 0 for superseded and expired beliefs", () => {
    expect(conf(storedBelief({ status: "superseded", confidence: 1 }))).toBe(0);
    expect(conf(storedBelief({ status: "expired", confidence: 1 }))).toBe(0);
  });
});

describe("reinforce", () => {
  const fresh = { lastEvidenceAt: AT };

  it("is log1p(n) / log1p(10) for fresh evidence", () => {
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 1 }), AT, P)).toBeCloseTo(Math.log(2) / Math.log(11), 12);
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 4 }), AT, P)).toBeCloseTo(Math.log(5) / Math.log(11), 12);
  });

  it("saturates at C_max = 10", () => {
    expect(P.reinforceSaturation).toBe(10);
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 10 }), AT, P)).toBe(1);
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 500 }), AT, P)).toBe(1);
  });

  it("is 0 without evidence", () => {
    expect(reinforce(storedBelief({ ...fresh, evidenceCount: 0 }), AT, P)).toBe(0);
  });

  it("decays as exp(-Δt/τ) with τ from the belief type", () => {
    const pref = storedBelief({ beliefType: "preference", evidenceCount: 10, lastEvidenceAt: daysBefore(365) });
    expect(reinforce(pref, AT, P)).toBeCloseTo(Math.exp(-1), 12);
    const status = storedBelief({ beliefType: "status", evidenceCount: 10, lastEvidenceAt: daysBefore(7) });
    expect(reinforce(status, AT, P)).toBeCloseTo(Math.exp(-1), 12);
    const decision = storedBelief({ beliefType: "decision", evidenceCount: 10, lastEvidenceAt: daysBefore(60) });
    expect(reinforce(decision, AT, P)).toBeCloseTo(Math.exp(-0.5), 12);
  });

  it("combines corroboration and decay multiplicatively", () => {
    const b = storedBelief({ beliefType: "project_fact", evidenceCount: 2, lastEvidenceAt: daysBefore(30) });
    expect(reinforce(b, AT, P)).toBeCloseTo((Math.log(3) / Math.log(11)) * Math.exp(-30 / 60), 12);
  });

  it("uses the default τ of 90 days for unknown types", () => {
    expect(P.defaultDecayDays).toBe(90);
    const b = storedBelief({ beliefType: "something_new", evidenceCount: 10, lastEvidenceAt: daysBefore(90) });
    expect(reinforce(b, AT, P)).toBeCloseTo(Math.exp(-1), 12);
  });

  it("decays situational facts faster than stable preferences", () => {
    const at30 = (beliefType: string) =>
      reinforce(storedBelief({ beliefType, evidenceCount: 10, lastEvidenceAt: daysBefore(30) }), AT, P);
    const order = ["preference", "decision", "project_fact", "event", "status"].map(at30);
    for (let i = 1; i < order.length; i++) expect(order[i]!).toBeLessThan(order[i - 1]!);
  });

  it("does not grow past the corroboration for evidence dated after the reference time", () => {
    const b = storedBelief({ evidenceCount: 10, lastEvidenceAt: new Date(AT.getTime() + 5 * DAY_MS) });
    expect(reinforce(b, AT, P)).toBe(1);
  });
});

describe("authority", () => {
  it("orders user > affirmed > inferred with the policy's values", () => {
    expect(authority(storedBelief({ authority: "user" }), P)).toBe(1);
    expect(authority(storedBelief({ authority: "affirmed" }), P)).toBe(0.8);
    expect(authority(storedBelief({ authority: "inferred" }), P)).toBe(0.5);
  });
});

describe("isCarried and scopeAffinity", () => {
  it("scores a belief learned in the current project at 1 and does not carry it", () => {
    const b = storedBelief({ scopeLevel: "project", originScope: "veetbot", portability: "local" });
    expect(isCarried(b, "veetbot")).toBe(false);
    expect(scopeAffinity(b, "veetbot", P)).toBe(1);
  });

  it("scores user and global beliefs at parity with the current project, wherever they came from", () => {
    for (const scopeLevel of ["user", "global"] as const) {
      for (const portability of ["portable", "contextual", "local"] as const) {
        const b = storedBelief({ scopeLevel, originScope: "atlas", portability });
        expect(isCarried(b, "veetbot")).toBe(false);
        expect(scopeAffinity(b, "veetbot", P)).toBe(1);
      }
    }
  });

  it("discounts a carried belief by portability: portable > contextual > local", () => {
    const carried = (portability: "portable" | "contextual" | "local") =>
      storedBelief({ scopeLevel: "project", originScope: "atlas", portability });
    expect(isCarried(carried("portable"), "veetbot")).toBe(true);
    expect(scopeAffinity(carried("portable"), "veetbot", P)).toBe(0.85);
    expect(scopeAffinity(carried("contextual"), "veetbot", P)).toBe(0.5);
    expect(scopeAffinity(carried("local"), "veetbot", P)).toBe(0.15);
  });

  it("treats origin scope as case-sensitive text", () => {
    expect(isCarried(storedBelief({ scopeLevel: "project", originScope: "Veetbot" }), "veetbot")).toBe(true);
  });
});

describe("penalty", () => {
  it("is 0 for a clean belief", () => {
    expect(penalty(storedBelief(), AT, P)).toBe(0);
  });

  it("is 0.5 for a belief flagged for review", () => {
    expect(penalty(storedBelief({ flaggedForReview: true }), AT, P)).toBe(0.5);
  });

  it("is 0.3 once past expires_hint, including at the exact instant", () => {
    expect(penalty(storedBelief({ expiresHint: daysBefore(1) }), AT, P)).toBe(0.3);
    expect(penalty(storedBelief({ expiresHint: AT }), AT, P)).toBe(0.3);
  });

  it("is 0 before expires_hint", () => {
    expect(penalty(storedBelief({ expiresHint: new Date(AT.getTime() + 1) }), AT, P)).toBe(0);
  });

  it("adds both penalties", () => {
    expect(penalty(storedBelief({ flaggedForReview: true, expiresHint: daysBefore(1) }), AT, P)).toBe(0.8);
  });
});

describe("score", () => {
  const strong = () =>
    storedBelief({
      status: "active",
      confidence: 0.9,
      authority: "user",
      evidenceCount: 10,
      lastEvidenceAt: AT,
      scopeLevel: "project",
      originScope: "veetbot",
      utility: 0.5,
    });
  const ctx = (weights: typeof P.profiles.task) => ({ currentScope: "veetbot", at: AT, weights });

  it("applies the task weights: 0.45 match + 0.15 conf + 0.05 reinforce + 0.1 authority + 0.2 scope + 0.05 utility", () => {
    // 0.45*0.8 + 0.15*0.9 + 0.05*1 + 0.1*1 + 0.2*1 + 0.05*0.5 = 0.87
    expect(score(strong(), 0.8, ctx(P.profiles.task), P)).toBeCloseTo(0.87, 9);
  });

  it("applies the core weights, where match has no weight", () => {
    // 0.3*0.9 + 0.15*1 + 0.3*1 + 0.15*1 + 0.1*0.5 = 0.92
    expect(score(strong(), 0, ctx(P.profiles.core), P)).toBeCloseTo(0.92, 9);
    expect(score(strong(), 1, ctx(P.profiles.core), P)).toBe(score(strong(), 0, ctx(P.profiles.core), P));
  });

  it("applies the deep weights", () => {
    // 0.5*1 + 0.15*0.9 + 0.05*1 + 0.1*1 + 0.15*1 + 0.05*0.5 = 0.96
    expect(score(strong(), 1, ctx(P.profiles.deep), P)).toBeCloseTo(0.96, 9);
  });

  it("subtracts the weighted penalty", () => {
    const flagged = { ...strong(), flaggedForReview: true };
    // 0.87 - 0.3 * 0.5
    expect(score(flagged, 0.8, ctx(P.profiles.task), P)).toBeCloseTo(0.72, 9);
    const expired = { ...strong(), expiresHint: daysBefore(1) };
    // 0.87 - 0.3 * 0.3
    expect(score(expired, 0.8, ctx(P.profiles.task), P)).toBeCloseTo(0.78, 9);
  });

  it("discounts a carried belief by w_scope x (1 - carried affinity)", () => {
    const local = score(strong(), 0.8, ctx(P.profiles.task), P);
    const carried = score({ ...strong(), originScope: "atlas", portability: "contextual" }, 0.8, ctx(P.profiles.task), P);
    expect(local - carried).toBeCloseTo(0.2 * 0.5, 9);
  });

  it("ranks provisional below an otherwise identical active belief", () => {
    const active = score(strong(), 0.8, ctx(P.profiles.task), P);
    const provisional = score({ ...strong(), status: "provisional" }, 0.8, ctx(P.profiles.task), P);
    expect(active - provisional).toBeCloseTo(0.15 * 0.9 * 0.6, 9);
  });

  it("ranks by authority: user > affirmed > inferred", () => {
    const s = (a: "user" | "affirmed" | "inferred") => score({ ...strong(), authority: a }, 0.5, ctx(P.profiles.core), P);
    expect(s("user")).toBeGreaterThan(s("affirmed"));
    expect(s("affirmed")).toBeGreaterThan(s("inferred"));
    expect(s("user") - s("inferred")).toBeCloseTo(0.3 * 0.5, 9);
  });

  it("is rounded to 1e-9 so float noise never reorders equal beliefs", () => {
    const value = score({ ...strong(), confidence: 0.1 + 0.2 }, 1 / 3, ctx(P.profiles.task), P);
    expect(Math.round(value * 1e9) / 1e9).toBe(value);
  });

  it("is pinned to the reference time, not the wall clock", () => {
    const b = { ...strong(), lastEvidenceAt: daysBefore(100) };
    const first = score(b, 0.5, ctx(P.profiles.task), P);
    const second = score(b, 0.5, ctx(P.profiles.task), P);
    expect(second).toBe(first);
    const later = score(b, 0.5, { ...ctx(P.profiles.task), at: new Date(AT.getTime() + 100 * DAY_MS) }, P);
    expect(later).toBeLessThan(first);
  });
});

describe("confidenceBand", () => {
  const band = (confidence: number, carried = false, status: "active" | "provisional" = "active") =>
    confidenceBand(storedBelief({ confidence, status }), carried, P);

  it("bands at the policy thresholds: high >= 0.8, medium >= 0.5, else low", () => {
    expect(P.bands).toEqual({ high: 0.8, medium: 0.5 });
    expect(band(1)).toBe("high");
    expect(band(0.8)).toBe("high");
    expect(band(0.79)).toBe("medium");
    expect(band(0.5)).toBe("medium");
    expect(band(0.49)).toBe("low");
    expect(band(0)).toBe("low");
  });

  it("shows a carried belief one band lower, never below low", () => {
    expect(band(0.95, true)).toBe("medium");
    expect(band(0.6, true)).toBe("low");
    expect(band(0.2, true)).toBe("low");
  });

  it("bands on lifecycle-weighted confidence, so provisional beliefs read lower", () => {
    // 0.9 x 0.4 = 0.36
    expect(band(0.9, false, "provisional")).toBe("low");
    expect(band(1, false, "provisional")).toBe("low");
  });
});
