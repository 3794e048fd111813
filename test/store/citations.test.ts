import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { InvalidArgumentError, NotFoundError } from "../../src/domain/errors.js";
import type { Belief, Principal } from "../../src/domain/model.js";
import { STORE_KINDS } from "../support/stores.js";
import { T0, belief, newPrincipal } from "../support/fixtures.js";
import { recallQuery, recallTrace, recalledBelief, useStore } from "./store-helpers.js";

describe.each(STORE_KINDS)("traces and citations ($kind)", ({ open }) => {
  const store = useStore(open);

  /** Three beliefs; a trace that returned the first two and blocked the third. */
  async function seed() {
    const p = newPrincipal();
    const [b1, b2, b3] = [belief(), belief({ subject: "Bob" }), belief({ subject: "Carol" })] as [Belief, Belief, Belief];
    await store().putBeliefs(p, [b1, b2, b3]);
    const trace = recallTrace({ returned: [b1.beliefId, b2.beliefId], blocked: [b3.beliefId] });
    await store().recordTrace(p, trace);
    return { p, b1, b2, b3, trace };
  }

  const stored = async (p: Principal, id: string) => (await store().beliefsById(p, [id]))[0]!;

  describe("recordTrace / getTrace", () => {
    it("round-trips every field, the query's asOf as a Date included", async () => {
      const p = newPrincipal();
      const [r1, r2, r3, blocked] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
      const trace = recallTrace({
        moment: "snapshot",
        query: recallQuery({
          text: "what does Andy prefer?",
          subjects: ["Andy"],
          beliefTypes: ["preference"],
          asOf: new Date("2026-02-03T04:05:06.789Z"),
          knownAt: new Date("2026-02-04T00:00:00.001Z"),
          includeSuperseded: true,
          minScore: 0.15,
        }),
        returned: [r3, r1, r2],
        blocked: [blocked],
        carriedIn: [r2],
        droppedForBudget: [r1],
        droppedForBudgetCount: 1,
        candidates: 42,
        armLatenciesMs: { structured: 2, lexical: 7 },
        renderedSha256: "0123456789abcdef".repeat(4),
        ranked: [recalledBelief(r3, { score: 0.9, validTo: new Date("2026-12-01T00:00:00Z"), carried: true }), recalledBelief(r1)],
      });
      await store().recordTrace(p, trace);
      const back = await store().getTrace(p, trace.id);
      expect(back).toEqual(trace);
      expect(back?.query.asOf).toBeInstanceOf(Date);
      expect(back?.query.asOf?.toISOString()).toBe("2026-02-03T04:05:06.789Z");
      expect(back?.returned).toEqual([r3, r1, r2]);
    });

    it("round-trips a trace whose operator fields are gone, and an empty one", async () => {
      const p = newPrincipal();
      const trace = recallTrace({ returned: [], armLatenciesMs: null, candidates: null, droppedForBudget: null, ranked: null });
      await store().recordTrace(p, trace);
      expect(await store().getTrace(p, trace.id)).toEqual(trace);
      expect(await store().getTrace(p, randomUUID())).toBeNull();
    });
  });

  describe("recordCitations", () => {
    it("raises utility and sets last_used_at, but never last_evidence_at or confidence", async () => {
      const { p, b1, b2, trace } = await seed();
      const head = await store().head(p);
      const before = Date.now();
      expect(await store().recordCitations(p, trace.id, [b1.beliefId])).toEqual({ recorded: 1 });
      const cited = await stored(p, b1.beliefId);
      expect(cited.utility).toBeCloseTo(0.2, 10);
      expect(cited.lastUsedAt).toBeInstanceOf(Date);
      expect(Math.abs(cited.lastUsedAt!.getTime() - before)).toBeLessThan(60_000);
      expect(cited.lastEvidenceAt).toEqual(T0);
      expect(cited.confidence).toBe(b1.confidence);
      expect(cited.evidenceCount).toBe(b1.evidenceCount);
      // Feedback is not a content change: neither the head nor the row's position moves.
      expect(cited.storePosition).toBe(1);
      expect(await store().head(p)).toEqual(head);
      // The uncited belief is untouched.
      expect(await stored(p, b2.beliefId)).toMatchObject({ utility: 0, lastUsedAt: null });
      expect((await store().getTrace(p, trace.id))?.cited).toEqual([b1.beliefId]);
    });

    it("a repeat citation records nothing and does not raise utility again", async () => {
      const { p, b1, trace } = await seed();
      await store().recordCitations(p, trace.id, [b1.beliefId]);
      const first = await stored(p, b1.beliefId);
      expect(await store().recordCitations(p, trace.id, [b1.beliefId])).toEqual({ recorded: 0 });
      const second = await stored(p, b1.beliefId);
      expect(second.utility).toBe(first.utility);
      expect(second.lastUsedAt).toEqual(first.lastUsedAt);
    });

    it("counts an id repeated within one call once", async () => {
      const { p, b1, b2, trace } = await seed();
      expect(await store().recordCitations(p, trace.id, [b2.beliefId, b1.beliefId, b2.beliefId])).toEqual({ recorded: 2 });
      expect((await stored(p, b2.beliefId)).utility).toBeCloseTo(0.2, 10);
      expect((await store().getTrace(p, trace.id))?.cited).toEqual([b1.beliefId, b2.beliefId].sort());
    });

    it("a citation through a second trace raises utility again (x + (1 - x) * 0.2)", async () => {
      const { p, b1, trace } = await seed();
      const again = recallTrace({ returned: [b1.beliefId] });
      await store().recordTrace(p, again);
      await store().recordCitations(p, trace.id, [b1.beliefId]);
      await store().recordCitations(p, again.id, [b1.beliefId]);
      expect((await stored(p, b1.beliefId)).utility).toBeCloseTo(0.2 + 0.8 * 0.2, 10);
    });

    it("rejects an id the trace did not return, naming belief_ids[i], and records nothing", async () => {
      const { p, b1, b2, b3, trace } = await seed();
      const call = store().recordCitations(p, trace.id, [b2.beliefId, b3.beliefId, b1.beliefId]);
      await expect(call).rejects.toBeInstanceOf(InvalidArgumentError);
      await expect(call).rejects.toMatchObject({ field: "belief_ids[1]" });
      await expect(store().recordCitations(p, trace.id, [randomUUID()])).rejects.toMatchObject({ field: "belief_ids[0]" });
      expect(await stored(p, b2.beliefId)).toMatchObject({ utility: 0, lastUsedAt: null });
      expect((await store().getTrace(p, trace.id))?.cited).toEqual([]);
    });

    it("an unknown trace is NotFound", async () => {
      const { p, b1 } = await seed();
      await expect(store().recordCitations(p, randomUUID(), [b1.beliefId])).rejects.toBeInstanceOf(NotFoundError);
    });
  });
});
