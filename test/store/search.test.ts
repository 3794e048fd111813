import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Belief } from "../../src/domain/model.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { filterFor, recallQuery, recallTrace, useStore } from "./store-helpers.js";

const OWNED = RETRIEVAL_POLICY.ownedResources;
const anchors = (types: string[] = []) => ({ subjects: [], types, typeWeight: 0.25, owned: OWNED });

describe.each(STORE_KINDS)("search support in SQL ($kind)", ({ open }) => {
  const store = useStore(open);

  describe("the ownership lookup (structured arm)", () => {
    const attr = (statement: string, overrides: Partial<Belief> = {}) =>
      belief({ subject: "User", statement, beliefType: "user_model_attr", ...overrides });

    it("finds direct, affirmative ownership and use statements, and only those", async () => {
      const p = newPrincipal();
      const car = attr("User has a 2026 Aster S8.");
      const drives = attr("The user drives a blue Aster to work.");
      const uses = attr("User uses a Kobo e-reader.", { beliefType: "resource" });
      const owns = attr("user owns the veetbot domain.", { beliefType: "project_fact" });
      const negative = [
        attr("User does not have a bike."),
        attr("User has never owned a boat."),
        attr("User has no garage."),
        attr("User used to drive a Golf."),
        attr("User no longer owns a motorbike."),
        attr("Andy has a cat."),
        // Ownership-shaped, but a type outside the lookup.
        attr("User has a dog called Pixel.", { beliefType: "relationship" }),
      ];
      await store().putBeliefs(p, [car, drives, uses, owns, ...negative]);
      const rows = await store().structuredCandidates(filterFor(p), anchors(), 100);
      expect(rows.map((c) => c.belief.beliefId).sort()).toEqual([car, drives, uses, owns].map((b) => b.beliefId).sort());
      expect(rows.every((c) => c.armScore === 0.5)).toBe(true);
    });

    it("ranks ownership (0.5) above a type-only anchor (0.25) and below an exact subject (1.0), before the candidate cap", async () => {
      const p = newPrincipal();
      const car = attr("User has a 2026 Aster S8.", { authority: "inferred", confidence: 0.3 });
      // A flood of louder user-model beliefs that only match the type anchor.
      const flood = Array.from({ length: 30 }, (_, i) => attr(`User prefers option ${i}.`, { authority: "user", confidence: 1 }));
      const named = belief({ subject: "Aster", statement: "Aster is a car brand.", beliefType: "fact" });
      await store().putBeliefs(p, [...flood, car, named]);
      const rows = await store().structuredCandidates(filterFor(p), { ...anchors(["user_model_attr"]), subjects: ["aster"] }, 3);
      expect(rows.map((c) => [c.belief.beliefId, c.armScore])).toEqual([
        [named.beliefId, 1],
        [car.beliefId, 0.5],
        [expect.any(String), 0.25],
      ]);
    });

    it("is off unless asked, and obeys the hard filter", async () => {
      const p = newPrincipal();
      const car = attr("User has a 2026 Aster S8.");
      const old = attr("User has a 2019 Aster S3.", { status: "superseded", validTo: new Date("2026-02-01T00:00:00Z") });
      await store().putBeliefs(p, [car, old]);
      // Anchored on something else, without the lookup: the ownership statements are not candidates.
      expect(await store().structuredCandidates(filterFor(p), { subjects: ["andy"], types: ["preference"], typeWeight: 0.25 }, 100)).toEqual([]);
      expect((await store().structuredCandidates(filterFor(p), anchors(), 100)).map((c) => c.belief.beliefId)).toEqual([car.beliefId]);
      // Historical revisions come back for a historical query.
      const then = await store().structuredCandidates(filterFor(p, { query: { asOf: new Date("2026-01-15T00:00:00Z") } }), anchors(), 100);
      expect(then.map((c) => c.belief.beliefId).sort()).toEqual([car.beliefId, old.beliefId].sort());
      // Another principal's ownership statements are never candidates.
      expect(await store().structuredCandidates(filterFor(newPrincipal()), anchors(), 100)).toEqual([]);
    });
  });

  describe("expandSubjectsEach", () => {
    it("groups each named subject's names; expandSubjects is their sorted union", async () => {
      const p = newPrincipal();
      await store().putSubjectAliases(p, [
        { alias: "Acme", subject: "Acme Corp" },
        { alias: "ACME Inc", subject: "Acme Corp" },
        { alias: "Zed", subject: "Zanzibar" },
      ]);
      const asked = ["Acme", "Zanzibar", "Nobody"];
      const groups = await store().expandSubjectsEach(p, asked);
      expect(Object.fromEntries(groups)).toEqual({
        acme: ["acme", "acme corp", "acme inc"],
        zanzibar: ["zanzibar", "zed"],
        nobody: ["nobody"],
      });
      expect(await store().expandSubjects(p, asked)).toEqual(["acme", "acme corp", "acme inc", "nobody", "zanzibar", "zed"]);
      // Another principal's aliases expand nothing.
      expect(Object.fromEntries(await store().expandSubjectsEach(newPrincipal(), ["Acme"]))).toEqual({ acme: ["acme"] });
      expect(await store().expandSubjectsEach(p, [])).toEqual(new Map());
    });
  });

  describe("sessionSnapshotScope", () => {
    it("is the scope of the session's first snapshot trace, for this principal only", async () => {
      const p = newPrincipal();
      const session = `s-${randomUUID()}`;
      expect(await store().sessionSnapshotScope(p, session)).toBeNull();
      await store().recordTrace(p, recallTrace({ sessionId: session, moment: "in_turn", query: recallQuery({ currentScope: "other" }) }));
      expect(await store().sessionSnapshotScope(p, session)).toBeNull();
      await store().recordTrace(
        p,
        recallTrace({ sessionId: session, moment: "snapshot", query: recallQuery({ currentScope: "atlas" }), createdAt: new Date("2026-03-01T00:00:00Z") }),
      );
      await store().recordTrace(
        p,
        recallTrace({ sessionId: session, moment: "snapshot", query: recallQuery({ currentScope: "later" }), createdAt: new Date("2026-03-02T00:00:00Z") }),
      );
      expect(await store().sessionSnapshotScope(p, session)).toBe("atlas");
      expect(await store().sessionSnapshotScope({ tenantId: p.tenantId, principalId: `${p.principalId}-x` }, session)).toBeNull();
      expect(await store().sessionSnapshotScope({ tenantId: `${p.tenantId}-x`, principalId: p.principalId }, session)).toBeNull();
    });
  });

  describe("search and episode traces", () => {
    it("round-trip the tool, the episode query, the returned episodes and the escalation signal", async () => {
      const p = newPrincipal();
      const episodes = [randomUUID(), randomUUID()];
      const trace = recallTrace({
        tool: "memory.recall_episodes@1",
        returnedEpisodes: episodes,
        episodeQuery: {
          sessionId: null,
          startTime: new Date("2026-07-21T00:00:00Z"),
          endTime: new Date("2026-07-22T00:00:00Z"),
          includeArchival: true,
          pageSize: 50,
          budgetTokens: 4000,
          archivalBudgetTokens: 1500,
          continued: false,
        },
        episodeAdvice: {
          reason: "event_query",
          scope: { sessionId: "", startTime: new Date("2026-07-21T00:00:00Z"), endTime: new Date("2026-07-22T00:00:00Z"), subjects: ["veetbot"] },
        },
      });
      await store().recordTrace(p, trace);
      expect(await store().getTrace(p, trace.id)).toEqual(trace);
      expect(await store().getTrace(newPrincipal(), trace.id)).toBeNull();
    });
  });
});
