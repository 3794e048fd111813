import { describe, expect, it } from "vitest";
import { SENSITIVITY } from "../../src/domain/model.js";
import { asHeldThen, eligibilityFilter, isHistorical } from "../../src/domain/hard-filter.js";
import { confidenceBand, conf } from "../../src/recall/rank/rank.js";
import { RETRIEVAL_POLICY as P } from "../../src/recall/policy.js";
import { renderBlock, renderHeader } from "../../src/recall/render/render.js";
import { recallQuery } from "../support/fixtures.js";
import { storedBelief } from "./unit-helpers.js";

const NOW = new Date("2026-07-24T09:00:00Z");
const PAST = new Date("2026-03-01T00:00:00Z");
const FUTURE = new Date("2026-09-01T00:00:00Z");
const principal = { tenantId: "t", principalId: "andy" };

describe("isHistorical", () => {
  it("is false for live recall: no coordinates, or coordinates at or after now", () => {
    expect(isHistorical(recallQuery(), NOW)).toBe(false);
    expect(isHistorical(recallQuery({ asOf: NOW, knownAt: NOW }), NOW)).toBe(false);
    expect(isHistorical(recallQuery({ asOf: FUTURE }), NOW)).toBe(false);
  });

  it("is true for a past as_of, a past known_at, both, or include_superseded", () => {
    expect(isHistorical(recallQuery({ asOf: PAST }), NOW)).toBe(true);
    expect(isHistorical(recallQuery({ knownAt: PAST }), NOW)).toBe(true);
    expect(isHistorical(recallQuery({ asOf: PAST, knownAt: PAST }), NOW)).toBe(true);
    expect(isHistorical(recallQuery({ includeSuperseded: true }), NOW)).toBe(true);
  });

  it("opens the status filter only for historical queries", () => {
    const f = (q = recallQuery()) => eligibilityFilter(principal, q, SENSITIVITY.personal, [], { now: NOW, excludePersonaHeld: false });
    expect(f().statuses).toEqual(["active", "provisional"]);
    expect(f().historical).toBe(false);
    expect(f(recallQuery({ asOf: PAST })).statuses).toEqual(["active", "provisional", "superseded", "expired"]);
    expect(f(recallQuery({ knownAt: PAST, includeProvisional: false })).statuses).toEqual(["active", "superseded", "expired"]);
    expect(f(recallQuery({ asOf: PAST })).historical).toBe(true);
  });
});

describe("asHeldThen", () => {
  it("ranks a belief superseded or expired since with the lifecycle it had then", () => {
    for (const status of ["superseded", "expired"] as const) {
      const b = storedBelief({ status, confidence: 0.9 });
      expect(conf(b)).toBe(0);
      expect(conf(asHeldThen(b, true))).toBeCloseTo(0.9);
      expect(confidenceBand(asHeldThen(b, true), false, P)).toBe("high");
      // The original is untouched: the caller still reports today's status.
      expect(b.status).toBe(status);
    }
  });

  it("changes nothing for live queries, or for active and provisional beliefs", () => {
    const superseded = storedBelief({ status: "superseded" });
    expect(asHeldThen(superseded, false)).toBe(superseded);
    const provisional = storedBelief({ status: "provisional" });
    expect(asHeldThen(provisional, true)).toBe(provisional);
  });
});

describe("rendering both time coordinates", () => {
  it("adds known_at to the header only when the query had one", () => {
    expect(renderHeader(PAST, "retrieval@1")).toBe('<memory as_of="2026-03-01T00:00:00Z" policy="retrieval@1">');
    expect(renderHeader(PAST, "retrieval@1", new Date("2026-04-02T03:04:05.678Z"))).toBe(
      '<memory as_of="2026-03-01T00:00:00Z" known_at="2026-04-02T03:04:05Z" policy="retrieval@1">',
    );
    const block = renderBlock(PAST, "retrieval@1", [], NOW);
    expect(block).toBe('<memory as_of="2026-03-01T00:00:00Z" known_at="2026-07-24T09:00:00Z" policy="retrieval@1">\n</memory>\n');
    expect(renderBlock(PAST, "retrieval@1", [], NOW)).toBe(block);
  });
});
