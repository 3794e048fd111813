import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Belief, Principal, Rejection, RejectionKind } from "../../src/domain/model.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { eligibleIds, filterFor, lexicalIds, sortedIds, useStore } from "./store-helpers.js";

function rejection(beliefId: string, kind: RejectionKind, overrides: Partial<Rejection> = {}): Rejection {
  return { rejectionId: randomUUID(), beliefId, kind, correction: null, scope: "", reason: "", ...overrides };
}

const APRIL = new Date("2026-04-01T00:00:00Z");

/** "Rejection is the correction path": rejections apply now, and replay on every later write. */
describe.each(STORE_KINDS)("rejections ($kind)", ({ kind, open }) => {
  const store = useStore(open);
  const stored = async (p: Principal, id: string) => (await store().beliefsById(p, [id]))[0]!;

  async function seed(overrides: Partial<Belief> = {}) {
    const p = newPrincipal();
    const b = belief(overrides);
    await store().putBeliefs(p, [b]);
    return { p, b };
  }

  it("not_true retires the belief: status expired, out of live recall, visible historically", async () => {
    const { p, b } = await seed();
    expect(await store().rejectBelief(p, rejection(b.beliefId, "not_true"))).toEqual({ position: 2 });
    expect(await stored(p, b.beliefId)).toMatchObject({ status: "expired", storePosition: 2 });
    expect(await eligibleIds(store(), p)).toEqual([]);
    expect(await eligibleIds(store(), p, { query: { includeSuperseded: true } })).toEqual([b.beliefId]);
  });

  it("unspecified only flags the belief for review; it stays active and eligible", async () => {
    const { p, b } = await seed();
    await store().rejectBelief(p, rejection(b.beliefId, "unspecified"));
    expect(await stored(p, b.beliefId)).toMatchObject({ status: "active", flaggedForReview: true, portability: "portable" });
    expect(await eligibleIds(store(), p)).toEqual([b.beliefId]);
  });

  it("not_here makes the belief local to where it was learned", async () => {
    const { p, b } = await seed({ originScope: "veetbot", portability: "portable", scopeLevel: "user" });
    await store().rejectBelief(p, rejection(b.beliefId, "not_here", { scope: "billing" }));
    expect(await stored(p, b.beliefId)).toMatchObject({
      status: "active",
      portability: "local",
      scopeLevel: "project",
      originScope: "veetbot",
    });
    expect(await eligibleIds(store(), p, { query: { currentScope: "billing" } })).toEqual([]);
    expect(await eligibleIds(store(), p, { query: { currentScope: "veetbot" } })).toEqual([b.beliefId]);
    expect(await eligibleIds(store(), p, { query: { currentScope: "billing" }, named: ["andy"] })).toEqual([b.beliefId]);
  });

  it("changed supersedes the belief with the correction, in one write", async () => {
    const { p, b } = await seed();
    const earlier = randomUUID();
    const correction = belief({ statement: "Andy now prefers detailed writing.", validFrom: APRIL, supersedes: [earlier] });
    expect(await store().rejectBelief(p, rejection(b.beliefId, "changed", { correction }))).toEqual({ position: 2 });

    expect(await stored(p, b.beliefId)).toMatchObject({ status: "superseded", validTo: APRIL, storePosition: 2 });
    const written = await stored(p, correction.beliefId);
    expect(written).toMatchObject({ status: "active", statement: correction.statement, storePosition: 2 });
    expect(written.supersedes.sort()).toEqual(sortedIds(earlier, b.beliefId));
    // Live recall sees only the correction; history sees the old belief while it held.
    expect(await eligibleIds(store(), p)).toEqual([correction.beliefId]);
    const historical = (iso: string) => eligibleIds(store(), p, { query: { includeSuperseded: true, asOf: new Date(iso) } });
    expect(await historical("2026-03-15T00:00:00Z")).toEqual([b.beliefId]);
    expect(await historical("2026-05-15T00:00:00Z")).toEqual([correction.beliefId]);
  });

  it("changed keeps an earlier valid_to of the old belief", async () => {
    const { p, b } = await seed({ validTo: new Date("2026-03-01T00:00:00Z") });
    const correction = belief({ statement: "Andy now prefers detailed writing.", validFrom: APRIL });
    await store().rejectBelief(p, rejection(b.beliefId, "changed", { correction }));
    expect((await stored(p, b.beliefId)).validTo).toEqual(new Date("2026-03-01T00:00:00Z"));
  });

  it("the same rejection_id twice is a no-op, even with another kind", async () => {
    const { p, b } = await seed();
    const r = rejection(b.beliefId, "unspecified");
    expect(await store().rejectBelief(p, r)).toEqual({ position: 2 });
    expect(await store().rejectBelief(p, r)).toEqual({ position: 2 });
    expect(await store().rejectBelief(p, { ...r, kind: "not_true" })).toEqual({ position: 2 });
    expect(await stored(p, b.beliefId)).toMatchObject({ status: "active", flaggedForReview: true });
    expect((await store().head(p)).position).toBe(2);
  });

  // Regression: the "already recorded?" check once ran before the head lock, so a retry
  // racing its original failed on PostgreSQL with a duplicate key instead of being a no-op.
  it("the same rejection retried concurrently succeeds twice and applies once", async () => {
    for (let i = 0; i < 5; i++) {
      const { p, b } = await seed();
      const r = rejection(b.beliefId, "not_true");
      const results = await Promise.allSettled([store().rejectBelief(p, r), store().rejectBelief(p, r)]);
      expect(results.map((x) => x.status)).toEqual(["fulfilled", "fulfilled"]);
      expect((await store().head(p)).position).toBe(2);
      expect((await stored(p, b.beliefId)).status).toBe("expired");
    }
  });

  it("rejecting an unknown belief is NotFound and records nothing", async () => {
    const { p } = await seed();
    const ghost = belief();
    await expect(store().rejectBelief(p, rejection(ghost.beliefId, "not_true"))).rejects.toMatchObject({
      name: "NotFoundError",
    });
    expect((await store().head(p)).position).toBe(1);
    // No rejection event was kept: the belief, once written, is live.
    await store().putBeliefs(p, [ghost]);
    expect((await stored(p, ghost.beliefId)).status).toBe("active");
  });

  describe("replay on re-derivation", () => {
    it("a belief rejected as not_true and re-put as active stays expired and never returns", async () => {
      const { p, b } = await seed();
      await store().rejectBelief(p, rejection(b.beliefId, "not_true"));
      const head = await store().head(p);
      // A re-derivation re-emits the original, status active.
      expect(await store().putBeliefs(p, [b])).toEqual({ written: 0, position: head.position });
      expect((await stored(p, b.beliefId)).status).toBe("expired");
      const anchors = { subjects: ["andy"], types: ["preference"], typeWeight: 0.25 };
      const anchored = await store().structuredCandidates(filterFor(p, { named: ["andy"] }), anchors, 100);
      expect(anchored).toEqual([]);
      expect(await eligibleIds(store(), p)).toEqual([]);
      expect(await lexicalIds(store(), p, ["andy", "concise", "writing"])).toEqual([]);
    });

    it("a re-derivation with new evidence still stays expired", async () => {
      const { p, b } = await seed();
      await store().rejectBelief(p, rejection(b.beliefId, "not_true"));
      const rederived = { ...b, confidence: 0.97, evidenceCount: 5, lastEvidenceAt: APRIL, status: "active" as const };
      expect((await store().putBeliefs(p, [belief(), rederived])).written).toBe(2);
      expect(await stored(p, b.beliefId)).toMatchObject({ status: "expired", evidenceCount: 5 });
      expect(await eligibleIds(store(), p)).not.toContain(b.beliefId);
    });

    it("replays unspecified and not_here, in order, on every write", async () => {
      const { p, b } = await seed({ portability: "portable", scopeLevel: "user" });
      await store().rejectBelief(p, rejection(b.beliefId, "unspecified"));
      await store().rejectBelief(p, rejection(b.beliefId, "not_here"));
      await store().putBeliefs(p, [{ ...b, statement: "Andy prefers short, concise writing." }]);
      expect(await stored(p, b.beliefId)).toMatchObject({
        status: "active",
        flaggedForReview: true,
        portability: "local",
        scopeLevel: "project",
        statement: "Andy prefers short, concise writing.",
      });
    });

    it("a belief rejected as changed and re-put stays superseded, out of live recall", async () => {
      const { p, b } = await seed();
      const correction = belief({ statement: "Andy now prefers detailed writing.", validFrom: APRIL });
      await store().rejectBelief(p, rejection(b.beliefId, "changed", { correction }));
      await store().putBeliefs(p, [b]);
      expect((await stored(p, b.beliefId)).status).toBe("superseded");
      expect(await eligibleIds(store(), p)).toEqual([correction.beliefId]);
    });

    // Regression: the replay once set only status = superseded, so a re-derivation wiped
    // valid_to and historical recall returned the rejected belief beside its correction.
    it("a belief rejected as changed keeps its closed validity after re-derivation", async () => {
      const { p, b } = await seed();
      const correction = belief({ statement: "Andy now prefers detailed writing.", validFrom: APRIL });
      await store().rejectBelief(p, rejection(b.beliefId, "changed", { correction }));
      await store().putBeliefs(p, [b]);
      expect((await stored(p, b.beliefId)).validTo).toEqual(APRIL);
      const may = await eligibleIds(store(), p, { query: { includeSuperseded: true, asOf: new Date("2026-05-15T00:00:00Z") } });
      expect(may).toEqual([correction.beliefId]);
    });

    it("rejections replay only for the principal that made them", async () => {
      const { p, b } = await seed();
      await store().rejectBelief(p, rejection(b.beliefId, "not_true"));
      const neighbour: Principal = { tenantId: p.tenantId, principalId: `n-${randomUUID().slice(0, 8)}` };
      await store().putBeliefs(neighbour, [b]);
      expect((await stored(neighbour, b.beliefId)).status).toBe("active");
    });
  });
});
