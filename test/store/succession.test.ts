import { describe, expect, it } from "vitest";
import type { Belief, Principal } from "../../src/domain/model.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { eligibleIds, lexicalIds, recallTrace, useStore } from "./store-helpers.js";

const at = (iso: string) => new Date(iso);
const MARCH = at("2026-03-01T00:00:00Z");
/** The store helpers' "now" is 2026-06-01: after MARCH. */
const BEFORE_MARCH = at("2026-02-01T00:00:00Z");

/**
 * Succession written on its own: formation may write only the new belief,
 * with `supersedes = [old]`, and leave the old row ACTIVE with an open
 * validity. The old belief is superseded for every query whose as_of is at
 * or after the successor's valid_from (and whose known_at sees the
 * successor on record), whichever of the two rows was written last.
 */
describe.each(STORE_KINDS)("succession by a successor alone ($kind)", ({ open }) => {
  const store = useStore(open);

  const pair = () => {
    const old = belief({ statement: "Andy indents TypeScript with tabs.", beliefType: "preference", predicateKey: "indent" });
    const successor = belief({
      statement: "Andy switched to two spaces.",
      beliefType: "preference",
      predicateKey: "indent",
      validFrom: MARCH,
      recordedAt: MARCH,
      supersedes: [old.beliefId],
    });
    return { old, successor };
  };

  /** Writes the two rows in the given order, as two separate writes. */
  async function written(order: "old first" | "successor first", overrides: Partial<Belief> = {}) {
    const p = newPrincipal();
    const { old, successor } = pair();
    const s = { ...successor, ...overrides };
    const rows = order === "old first" ? [old, s] : [s, old];
    for (const row of rows) await store().putBeliefs(p, [row]);
    return { p, old, successor: s };
  }

  for (const order of ["old first", "successor first"] as const) {
    describe(order, () => {
      it("live recall sees only the successor, in every arm, though the old row is still active", async () => {
        const { p, old, successor } = await written(order);
        expect((await store().beliefsById(p, [old.beliefId]))[0]!.status).toBe("active");
        expect(await eligibleIds(store(), p)).toEqual([successor.beliefId]);
        // Words that match the old statement only: the old belief is still not a candidate.
        expect(await lexicalIds(store(), p, ["tabs"])).toEqual([]);
      });

      it("a historical query before the successor's valid_from returns the old belief, after it the successor", async () => {
        const { p, old, successor } = await written(order);
        expect(await eligibleIds(store(), p, { query: { asOf: BEFORE_MARCH } })).toEqual([old.beliefId]);
        expect(await lexicalIds(store(), p, ["tabs"], { query: { asOf: BEFORE_MARCH } })).toEqual([old.beliefId]);
        expect(await eligibleIds(store(), p, { query: { asOf: at("2026-04-01T00:00:00Z") } })).toEqual([successor.beliefId]);
        expect(await eligibleIds(store(), p, { query: { includeSuperseded: true } })).toEqual([successor.beliefId]);
      });

      it("a known_at before the successor was recorded still sees the old belief", async () => {
        const { p, old } = await written(order);
        expect(await eligibleIds(store(), p, { query: { knownAt: BEFORE_MARCH } })).toEqual([old.beliefId]);
      });
    });
  }

  it("a successor that has not begun yet does not supersede: live recall keeps the old belief until then", async () => {
    const { p, old } = await written("old first", { validFrom: at("2026-09-01T00:00:00Z") });
    expect(await eligibleIds(store(), p)).toEqual([old.beliefId]);
  });

  it("a successor that has since ended (superseded in turn, validity closed) still keeps the old belief out", async () => {
    const p = newPrincipal();
    const { old, successor } = pair();
    const third = belief({ statement: "Andy uses four spaces.", validFrom: at("2026-05-01T00:00:00Z"), supersedes: [successor.beliefId] });
    await store().putBeliefs(p, [old, { ...successor, status: "superseded", validTo: third.validFrom }, third]);
    expect(await eligibleIds(store(), p)).toEqual([third.beliefId]);
    expect(await eligibleIds(store(), p, { query: { asOf: at("2026-04-01T00:00:00Z") } })).toEqual([successor.beliefId]);
  });

  it("a retracted or retired successor supersedes nothing", async () => {
    const retracted = await written("old first", { retractedAt: at("2026-04-01T00:00:00Z") });
    expect(await eligibleIds(store(), retracted.p)).toEqual([retracted.old.beliefId]);
    const retired = await written("old first", { status: "expired" });
    expect(await eligibleIds(store(), retired.p)).toEqual([retired.old.beliefId]);
  });

  it("only the principal's own successor counts: another principal naming the id changes nothing", async () => {
    const p = newPrincipal();
    const { old, successor } = pair();
    await store().putBeliefs(p, [old]);
    const neighbour: Principal = { tenantId: p.tenantId, principalId: `${p.principalId}-n` };
    await store().putBeliefs(neighbour, [successor]);
    await store().putBeliefs({ tenantId: `${p.tenantId}-x`, principalId: p.principalId }, [successor]);
    expect(await eligibleIds(store(), p)).toEqual([old.beliefId]);
  });

  it("a belief naming itself in supersedes is not its own successor", async () => {
    const p = newPrincipal();
    const b = belief();
    await store().putBeliefs(p, [{ ...b, supersedes: [b.beliefId] }]);
    expect(await eligibleIds(store(), p)).toEqual([b.beliefId]);
  });

  describe("snapshot corrections", () => {
    const now = at("2026-06-01T00:00:00Z");

    async function snapshotOf(old: Belief) {
      const p = newPrincipal();
      await store().putBeliefs(p, [old]);
      await store().recordTrace(p, recallTrace({ sessionId: "sess", moment: "snapshot", returned: [old.beliefId] }));
      return { p, watermark: (await store().head(p)).position };
    }

    it("a snapshot belief superseded by a successor written after the watermark gets a correction line", async () => {
      const { old, successor } = pair();
      const { p, watermark } = await snapshotOf(old);
      await store().putBeliefs(p, [successor]);
      expect(await store().snapshotCorrections(p, "sess", watermark, now)).toEqual([
        { beliefId: old.beliefId, supersededBy: successor.beliefId, noLongerHoldsAsOf: MARCH },
      ]);
      // A session whose snapshot came after the successor was written has nothing to correct.
      expect(await store().snapshotCorrections(p, "sess", watermark + 1, now)).toEqual([]);
    });

    it("the correction stands when the old row is written again after its successor", async () => {
      const { old, successor } = pair();
      const { p, watermark } = await snapshotOf(old);
      await store().putBeliefs(p, [successor]);
      await store().putBeliefs(p, [{ ...old, evidenceCount: 4 }]);
      expect(await store().snapshotCorrections(p, "sess", watermark, now)).toEqual([
        { beliefId: old.beliefId, supersededBy: successor.beliefId, noLongerHoldsAsOf: MARCH },
      ]);
    });

    it("no correction while the successor has not begun", async () => {
      const { old, successor } = pair();
      const { p, watermark } = await snapshotOf(old);
      await store().putBeliefs(p, [{ ...successor, validFrom: at("2026-09-01T00:00:00Z") }]);
      expect(await store().snapshotCorrections(p, "sess", watermark, now)).toEqual([]);
    });
  });
});
