import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Belief, Principal, RecallContext } from "../../src/domain/model.js";
import { SENSITIVITY } from "../../src/domain/model.js";
import { recall, type RecallOutcome } from "../../src/recall/pipeline.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import type { RequestedQuery } from "../../src/recall/query-former.js";
import type { MemoryStore } from "../../src/store/memory-store.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { requested } from "../support/pipeline.js";
import { eligibleIds, lexicalIds, NOW, sortedIds, useStore } from "./store-helpers.js";

const at = (iso: string) => new Date(iso);

/** The full pipeline on a real store, at a fixed "now". */
async function search(store: MemoryStore, p: Principal, query: Partial<RequestedQuery>, now = NOW): Promise<RecallOutcome> {
  const effective = requested(query);
  const context: RecallContext = {
    moment: "in_turn",
    sessionType: "interactive",
    contextWindowTokens: 0,
    snapshotWatermark: null,
    sessionId: "s1",
    runId: "",
    turnId: "",
    surface: { surfaceId: "", sensitivityCeiling: SENSITIVITY.personal },
  };
  const traces = { record: async (principal: typeof p, t: Parameters<typeof store.recordTrace>[1]) => void (await store.recordTrace(principal, t)) };
  const pipeline = recall(
    { store, traces, heads: store, policy: RETRIEVAL_POLICY, clock: () => now, traceRetentionHours: 1 },
    { principal: p, query: effective, context, kind: "search", deadlineAt: Date.now() + 20_000, signal: new AbortController().signal },
  );
  let step = await pipeline.next();
  while (!step.done) step = await pipeline.next();
  return step.value;
}

const home = (overrides: Partial<Belief>) =>
  belief({ subject: "Andy", beliefType: "user_model_attr", predicateKey: "home_city", authority: "user", confidence: 0.95, ...overrides });

/**
 * Historical correctness (the spec's hard gate): as_of returns what held
 * then, known_at returns what had been recorded by then, and the two combine.
 * A belief's status is today's lifecycle; history is decided by its validity
 * interval and its transaction-time interval.
 */
describe.each(STORE_KINDS)("historical queries ($kind)", ({ open }) => {
  const store = useStore(open);

  describe("as_of (valid time)", () => {
    /** Madrid until March, then Berlin: formation superseded Madrid and closed its validity. */
    async function moved(p: Principal) {
      const madrid = home({ statement: "Andy lives in Madrid.", status: "superseded", validFrom: at("2026-01-01T00:00:00Z"), validTo: at("2026-03-01T00:00:00Z") });
      const berlin = home({ statement: "Andy lives in Berlin.", validFrom: at("2026-03-01T00:00:00Z"), supersedes: [madrid.beliefId] });
      await store().putBeliefs(p, [madrid, berlin]);
      return { madrid, berlin };
    }

    it("admits the superseded belief valid then, and not its successor (filter, both arms)", async () => {
      const p = newPrincipal();
      const { madrid, berlin } = await moved(p);
      expect(await eligibleIds(store(), p, { query: { asOf: at("2026-02-01T00:00:00Z") } })).toEqual([madrid.beliefId]);
      expect(await lexicalIds(store(), p, ["lives"], { query: { asOf: at("2026-02-01T00:00:00Z") } })).toEqual([madrid.beliefId]);
      expect(await eligibleIds(store(), p, { query: { asOf: at("2026-04-01T00:00:00Z") } })).toEqual([berlin.beliefId]);
      // Live recall still excludes superseded beliefs.
      expect(await eligibleIds(store(), p)).toEqual([berlin.beliefId]);
    });

    it("returns what held then through the whole pipeline, at the band it had then", async () => {
      const p = newPrincipal();
      const { madrid, berlin } = await moved(p);
      const then = await search(store(), p, { text: "where does Andy live", subjects: ["Andy"], asOf: at("2026-02-01T00:00:00Z") });
      expect(then.result.items.map((i) => i.beliefId)).toEqual([madrid.beliefId]);
      expect(then.result.items[0]).toMatchObject({ status: "superseded", confidenceBand: "high" });
      expect(then.result.rendered).toContain("Andy lives in Madrid.  (user-stated, high)");
      expect(then.result.rendered).not.toContain("Berlin");
      expect(then.result.rendered.split("\n")[0]).toBe('<memory as_of="2026-02-01T00:00:00Z" policy="retrieval@6">');
      expect(then.result.asOf).toEqual(at("2026-02-01T00:00:00Z"));
      expect(then.trace.query.asOf).toEqual(at("2026-02-01T00:00:00Z"));

      const today = await search(store(), p, { text: "where does Andy live", subjects: ["Andy"] });
      expect(today.result.items.map((i) => i.beliefId)).toEqual([berlin.beliefId]);
    });

    it("keeps a supersession pair collapsed when formation left the old validity open", async () => {
      const p = newPrincipal();
      const vim = home({ predicateKey: "editor", statement: "Andy's editor is Vim.", status: "superseded", validFrom: at("2026-01-01T00:00:00Z") });
      const helix = home({ predicateKey: "editor", statement: "Andy's editor is Helix.", validFrom: at("2026-03-01T00:00:00Z"), supersedes: [vim.beliefId] });
      await store().putBeliefs(p, [vim, helix]);
      const before = await search(store(), p, { text: "editor", subjects: ["Andy"], asOf: at("2026-02-01T00:00:00Z") });
      expect(before.result.items.map((i) => i.beliefId)).toEqual([vim.beliefId]);
      const after = await search(store(), p, { text: "editor", subjects: ["Andy"], asOf: at("2026-04-01T00:00:00Z") });
      expect(after.result.items.map((i) => i.beliefId)).toEqual([helix.beliefId]);
    });

    it("admits an expired dated fact only within its validity", async () => {
      const p = newPrincipal();
      const trip = home({ predicateKey: "trip", statement: "Andy is in Lisbon for a conference.", status: "expired", validFrom: at("2026-02-10T00:00:00Z"), validTo: at("2026-02-14T00:00:00Z") });
      await store().putBeliefs(p, [trip]);
      expect(await eligibleIds(store(), p, { query: { asOf: at("2026-02-12T00:00:00Z") } })).toEqual([trip.beliefId]);
      expect(await eligibleIds(store(), p, { query: { asOf: at("2026-02-20T00:00:00Z") } })).toEqual([]);
      expect(await eligibleIds(store(), p)).toEqual([]);
    });
  });

  describe("known_at (transaction time)", () => {
    it("returns what had been recorded by then, even though it was corrected later", async () => {
      const p = newPrincipal();
      // Recorded in January as Lisbon; on 2026-04-01 formation retracted that record and recorded the correction.
      const wrong = home({ statement: "Andy lives in Lisbon.", status: "superseded", recordedAt: at("2026-01-05T00:00:00Z"), retractedAt: at("2026-04-01T00:00:00Z") });
      const fixed = home({ statement: "Andy lives in Porto.", validFrom: at("2026-01-01T00:00:00Z"), recordedAt: at("2026-04-01T00:00:00Z"), supersedes: [wrong.beliefId] });
      await store().putBeliefs(p, [wrong, fixed]);

      expect(await eligibleIds(store(), p, { query: { knownAt: at("2026-02-01T00:00:00Z") } })).toEqual([wrong.beliefId]);
      expect(await eligibleIds(store(), p, { query: { knownAt: at("2026-05-01T00:00:00Z") } })).toEqual([fixed.beliefId]);
      expect(await eligibleIds(store(), p, { query: { knownAt: at("2026-01-01T00:00:00Z") } })).toEqual([]);
      expect(await eligibleIds(store(), p)).toEqual([fixed.beliefId]);

      const then = await search(store(), p, { text: "where does Andy live", subjects: ["Andy"], knownAt: at("2026-02-01T00:00:00Z") });
      expect(then.result.items.map((i) => i.statement)).toEqual(["Andy lives in Lisbon."]);
      expect(then.result.knownAt).toEqual(at("2026-02-01T00:00:00Z"));
      expect(then.result.rendered.split("\n")[0]).toMatch(/^<memory as_of="[^"]+Z" known_at="2026-02-01T00:00:00Z" policy="retrieval@6">$/);
      expect(then.trace.query.knownAt).toEqual(at("2026-02-01T00:00:00Z"));
    });

    it("keeps a belief rejected as not true out from the moment of the rejection", async () => {
      const p = newPrincipal();
      const rumour = home({ predicateKey: "employer", statement: "Andy works at Initech.", recordedAt: at("2026-01-05T00:00:00Z") });
      await store().putBeliefs(p, [rumour]);
      await store().rejectBelief(p, { rejectionId: randomUUID(), beliefId: rumour.beliefId, kind: "not_true", correction: null, scope: "", reason: "" });
      // The rejection is a durable event with its own transaction time; pin it for the test.
      await store().db.query("UPDATE rejections SET created_at = $3::timestamptz WHERE tenant_id = $1 AND principal_id = $2", [
        p.tenantId,
        p.principalId,
        "2026-03-01T00:00:00Z",
      ]);
      const asOfFeb = { asOf: at("2026-02-01T00:00:00Z") };
      // What held in February by today's knowledge: it never held.
      expect(await eligibleIds(store(), p, { query: asOfFeb })).toEqual([]);
      // What was recorded as known in February: it was.
      expect(await eligibleIds(store(), p, { query: { ...asOfFeb, knownAt: at("2026-02-15T00:00:00Z") } })).toEqual([rumour.beliefId]);
      expect(await eligibleIds(store(), p, { query: { ...asOfFeb, knownAt: at("2026-03-02T00:00:00Z") } })).toEqual([]);
      expect(await eligibleIds(store(), p)).toEqual([]);
    });
  });

  describe("as_of and known_at together", () => {
    /**
     * In January Andy was recorded as living in Madrid. On 2026-05-01 we learned
     * he had moved to Berlin on 2026-03-01: formation retracted the open-ended
     * Madrid record, re-recorded Madrid closed at March, and recorded Berlin.
     */
    async function learnedLate(p: Principal) {
      const madridAsBelieved = home({ statement: "Andy lives in Madrid.", status: "superseded", validFrom: at("2026-01-01T00:00:00Z"), recordedAt: at("2026-01-02T00:00:00Z"), retractedAt: at("2026-05-01T00:00:00Z") });
      const madridClosed = home({ statement: "Andy lived in Madrid.", status: "superseded", validFrom: at("2026-01-01T00:00:00Z"), validTo: at("2026-03-01T00:00:00Z"), recordedAt: at("2026-05-01T00:00:00Z") });
      const berlin = home({ statement: "Andy lives in Berlin.", validFrom: at("2026-03-01T00:00:00Z"), recordedAt: at("2026-05-01T00:00:00Z"), supersedes: [madridAsBelieved.beliefId, madridClosed.beliefId] });
      await store().putBeliefs(p, [madridAsBelieved, madridClosed, berlin]);
      return { madridAsBelieved, madridClosed, berlin };
    }

    it("answers each combination of the two axes", async () => {
      const p = newPrincipal();
      const { madridAsBelieved, madridClosed, berlin } = await learnedLate(p);
      const ids = (asOf: string, knownAt?: string) =>
        eligibleIds(store(), p, { query: { asOf: at(asOf), knownAt: knownAt ? at(knownAt) : null } });

      // April, as believed in April: still Madrid (the move was not yet known).
      expect(await ids("2026-04-01T00:00:00Z", "2026-04-01T00:00:00Z")).toEqual([madridAsBelieved.beliefId]);
      // April, as known today: Berlin.
      expect(await ids("2026-04-01T00:00:00Z")).toEqual([berlin.beliefId]);
      // February, as known today: Madrid, closed at March.
      expect(await ids("2026-02-01T00:00:00Z")).toEqual([madridClosed.beliefId]);
      // February, as believed in February: the open-ended Madrid record.
      expect(await ids("2026-02-01T00:00:00Z", "2026-02-01T00:00:00Z")).toEqual([madridAsBelieved.beliefId]);
      // Before anything was recorded: nothing.
      expect(await ids("2026-02-01T00:00:00Z", "2026-01-01T00:00:00Z")).toEqual([]);
      // Live: Berlin.
      expect(await eligibleIds(store(), p)).toEqual([berlin.beliefId]);

      const both = await search(store(), p, {
        text: "where does Andy live",
        subjects: ["Andy"],
        asOf: at("2026-04-01T00:00:00Z"),
        knownAt: at("2026-04-01T00:00:00Z"),
      });
      expect(both.result.items.map((i) => i.statement)).toEqual(["Andy lives in Madrid."]);
      expect(both.result.rendered.split("\n")[0]).toBe('<memory as_of="2026-04-01T00:00:00Z" known_at="2026-04-01T00:00:00Z" policy="retrieval@6">');
      expect(sortedIds(...both.trace.returned)).toEqual([madridAsBelieved.beliefId]);
    });
  });
});
