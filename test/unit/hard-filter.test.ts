import { describe, expect, it } from "vitest";
import type { RecallQuery } from "../../src/domain/model.js";
import { SENSITIVITY } from "../../src/domain/model.js";
import { eligibilityFilter } from "../../src/domain/hard-filter.js";
import { recallQuery } from "../support/fixtures.js";

const NOW = new Date("2026-07-24T09:00:00Z");
const principal = { tenantId: "tenant-a", principalId: "andy" };

const query = (overrides: Partial<RecallQuery> = {}) =>
  recallQuery({ budgetTokens: 600, maxItems: 12, minScore: 0.45, ...overrides });

const filter = (q: RecallQuery, excludePersonaHeld = false) =>
  eligibilityFilter(principal, q, SENSITIVITY.personal, ["andy"], { now: NOW, excludePersonaHeld });

describe("eligibilityFilter: statuses", () => {
  it("admits active and provisional by default", () => {
    expect(filter(query()).statuses).toEqual(["active", "provisional"]);
  });

  it("admits only active when provisional is excluded", () => {
    expect(filter(query({ includeProvisional: false })).statuses).toEqual(["active"]);
  });

  it("adds superseded and expired for historical queries", () => {
    expect(filter(query({ includeSuperseded: true })).statuses).toEqual(["active", "provisional", "superseded", "expired"]);
    expect(filter(query({ includeSuperseded: true, includeProvisional: false })).statuses).toEqual([
      "active",
      "superseded",
      "expired",
    ]);
  });

  it("never admits superseded or expired for live recall", () => {
    const statuses = filter(query({ includeSuperseded: false })).statuses;
    expect(statuses).not.toContain("superseded");
    expect(statuses).not.toContain("expired");
  });
});

describe("eligibilityFilter: time", () => {
  it("defaults as_of and known_at to now", () => {
    const f = filter(query());
    expect(f.asOf).toEqual(NOW);
    expect(f.knownAt).toEqual(NOW);
  });

  it("keeps explicit as_of and known_at independently", () => {
    const asOf = new Date("2025-01-01T00:00:00Z");
    const knownAt = new Date("2025-06-01T00:00:00Z");
    expect(filter(query({ asOf })).asOf).toEqual(asOf);
    expect(filter(query({ asOf })).knownAt).toEqual(NOW);
    expect(filter(query({ knownAt })).knownAt).toEqual(knownAt);
    expect(filter(query({ knownAt })).asOf).toEqual(NOW);
  });
});

describe("eligibilityFilter: isolation and anchors", () => {
  it("carries the principal, ceiling, scope, named subjects, types and persona rule", () => {
    const f = eligibilityFilter(principal, query({ beliefTypes: ["preference"], currentScope: "atlas" }), SENSITIVITY.confidential, ["andy", "acme corp"], {
      now: NOW,
      excludePersonaHeld: true,
    });
    expect(f).toEqual({
      principal,
      sensitivityCeiling: 3,
      asOf: NOW,
      knownAt: NOW,
      statuses: ["active", "provisional"],
      historical: false,
      currentScope: "atlas",
      namedSubjects: ["andy", "acme corp"],
      beliefTypes: ["preference"],
      excludePersonaHeld: true,
      // A current snapshot also leaves out dated facts past their expires_hint.
      excludeExpiredDated: true,
    });
  });

  it("passes excludePersonaHeld = false through", () => {
    expect(filter(query(), false).excludePersonaHeld).toBe(false);
  });
});
