import { describe, expect, it } from "vitest";
import { lexicalTerms } from "../../src/recall/query-former.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { ascendingUuids, filterFor, lexicalIds, lexicalQuery, UNANCHORED, useStore } from "./store-helpers.js";

describe.each(STORE_KINDS)("recall arms ($kind)", ({ open }) => {
  const store = useStore(open);

  describe("lexical", () => {
    it("has OR semantics: one matching content word of a question is enough", async () => {
      const p = newPrincipal();
      const b = belief({ subject: "Andy", statement: "Andy deploys the service on Fridays." });
      await store().putBeliefs(p, [b, belief({ subject: "Bob", statement: "Bob likes tea." })]);
      const terms = lexicalTerms("When does the team usually ship kubernetes deploys?");
      expect(terms).toEqual(["team", "usually", "ship", "kubernetes", "deploys"]);
      expect(await lexicalIds(store(), p, terms)).toEqual([b.beliefId]);
    });

    it("matches nothing when no term matches, and nothing for no terms", async () => {
      const p = newPrincipal();
      await store().putBeliefs(p, [belief()]);
      expect(await lexicalIds(store(), p, ["kubernetes", "zebra"])).toEqual([]);
      expect(await lexicalIds(store(), p, [])).toEqual([]);
    });

    it("stems: 'deploying' finds 'deploys' and the other way round", async () => {
      const p = newPrincipal();
      const deploys = belief({ subject: "Andy", statement: "Andy deploys on Fridays." });
      const deploying = belief({ subject: "Bob", statement: "Bob is deploying the new release." });
      await store().putBeliefs(p, [deploys, deploying]);
      const both = [deploys.beliefId, deploying.beliefId].sort();
      expect((await lexicalIds(store(), p, ["deploying"])).sort()).toEqual(both);
      expect((await lexicalIds(store(), p, ["deploys"])).sort()).toEqual(both);
      expect((await lexicalIds(store(), p, ["deployed"])).sort()).toEqual(both);
    });

    it("orders by BM25F: a subject hit and more hits rank higher", async () => {
      const p = newPrincipal();
      const inSubject = belief({ subject: "Postgres", statement: "Postgres with pgvector backs memory." });
      const twice = belief({ subject: "Andy", statement: "Andy runs postgres at home and postgres at work." });
      const once = belief({ subject: "Andy", statement: "Andy once mentioned postgres." });
      await store().putBeliefs(p, [once, twice, inSubject]);
      const rows = await store().lexicalCandidates(filterFor(p), lexicalQuery(["postgres"]), 10);
      expect(rows.map((c) => c.belief.beliefId)).toEqual([inSubject.beliefId, twice.beliefId, once.beliefId]);
      const scores = rows.map((c) => c.armScore);
      expect(scores.every((s) => typeof s === "number" && s > 0)).toBe(true);
      expect(scores[0]!).toBeGreaterThan(scores[1]!);
      expect(scores[1]!).toBeGreaterThan(scores[2]!);
    });

    it("breaks score ties by belief_id, whatever the insertion order, also under a cap", async () => {
      const p = newPrincipal();
      const ids = ascendingUuids(5);
      const twins = [...ids].reverse().map((beliefId) => belief({ beliefId, statement: "Andy prefers concise writing." }));
      for (const b of twins) await store().putBeliefs(p, [b]);
      const rows = await store().lexicalCandidates(filterFor(p), lexicalQuery(["concise"]), 10);
      expect(rows.map((c) => c.belief.beliefId)).toEqual(ids);
      expect(new Set(rows.map((c) => c.armScore)).size).toBe(1);
      const capped = await store().lexicalCandidates(filterFor(p), lexicalQuery(["concise"]), 2);
      expect(capped.map((c) => c.belief.beliefId)).toEqual(ids.slice(0, 2));
    });
  });

  describe("structured", () => {
    it("scores an exact, case-insensitive subject match 1.0 and ranks it before type-only anchors", async () => {
      const p = newPrincipal();
      const subject = belief({ subject: "ANDY", beliefType: "fact", authority: "inferred", confidence: 0.2 });
      const typeOnly = belief({ subject: "Bob", beliefType: "preference", authority: "user", confidence: 1 });
      const substring = belief({ subject: "Andy's laptop", beliefType: "fact" });
      const neither = belief({ subject: "Carol", beliefType: "fact" });
      await store().putBeliefs(p, [typeOnly, substring, neither, subject]);
      const rows = await store().structuredCandidates(filterFor(p), { subjects: ["andy"], types: ["preference"], typeWeight: 0.25 }, 10);
      expect(rows.map((c) => [c.belief.beliefId, c.armScore])).toEqual([
        [subject.beliefId, 1],
        [typeOnly.beliefId, 0.25],
      ]);
    });

    it("uses the given typeWeight for type-only anchors", async () => {
      const p = newPrincipal();
      const b = belief({ beliefType: "skill", subject: "Rust" });
      await store().putBeliefs(p, [b]);
      const rows = await store().structuredCandidates(filterFor(p), { subjects: [], types: ["skill"], typeWeight: 0.4 }, 10);
      expect(rows.map((c) => c.armScore)).toEqual([0.4]);
    });

    it("within one anchor score, ranks by authority, then confidence, then evidence, then id", async () => {
      const p = newPrincipal();
      const [id1, id2] = ascendingUuids(2) as [string, string];
      const inferredHigh = belief({ authority: "inferred", confidence: 0.99 });
      const affirmed = belief({ authority: "affirmed", confidence: 0.5 });
      const userLow = belief({ authority: "user", confidence: 0.3 });
      const userHigh = belief({ authority: "user", confidence: 0.8, evidenceCount: 1 });
      const userHighMoreEvidence = belief({ authority: "user", confidence: 0.8, evidenceCount: 4 });
      const tieB = belief({ beliefId: id2, authority: "inferred", confidence: 0.1 });
      const tieA = belief({ beliefId: id1, authority: "inferred", confidence: 0.1 });
      await store().putBeliefs(p, [tieB, inferredHigh, userLow, affirmed, userHigh, tieA, userHighMoreEvidence]);
      const expected = [userHighMoreEvidence, userHigh, userLow, affirmed, inferredHigh, tieA, tieB].map((b) => b.beliefId);

      const unanchored = await store().structuredCandidates(filterFor(p), UNANCHORED, 100);
      expect(unanchored.map((c) => c.belief.beliefId)).toEqual(expected);
      expect(unanchored.every((c) => c.armScore === 0)).toBe(true);
      const bySubject = await store().structuredCandidates(filterFor(p), { subjects: ["andy"], types: [], typeWeight: 0.25 }, 100);
      expect(bySubject.map((c) => c.belief.beliefId)).toEqual(expected);
    });

    it("an unanchored call returns every eligible belief, and only those, up to the cap", async () => {
      const p = newPrincipal();
      const eligible = [belief({ subject: "X", beliefType: "a" }), belief({ subject: "Y", beliefType: "b", confidence: 0.5 })];
      await store().putBeliefs(p, [...eligible, belief({ status: "expired" })]);
      const rows = await store().structuredCandidates(filterFor(p), UNANCHORED, 100);
      expect(rows.map((c) => c.belief.beliefId)).toEqual(eligible.map((b) => b.beliefId));
      expect(await store().structuredCandidates(filterFor(p), UNANCHORED, 1)).toHaveLength(1);
    });
  });

  describe("subject aliases", () => {
    it("expands an alias to its canonical subject and all of the subject's aliases, lower-cased", async () => {
      const p = newPrincipal();
      const aliases = [
        { alias: "Acme", subject: "Acme Corp" },
        { alias: "ACME Inc", subject: "Acme Corp" },
        { alias: "AcmeCo", subject: "acme corp" },
        { alias: "Globex", subject: "Globex Corporation" },
      ];
      expect(await store().putSubjectAliases(p, aliases)).toEqual({ written: 4 });
      const expected = ["acme", "acme corp", "acme inc", "acmeco"];
      expect(await store().expandSubjects(p, ["Acme"])).toEqual(expected);
      expect(await store().expandSubjects(p, ["acme corp"])).toEqual(expected);
      expect(await store().expandSubjects(p, ["ACMECO", "acme"])).toEqual(expected);
      expect(await store().expandSubjects(p, ["Unknown Thing"])).toEqual(["unknown thing"]);
      expect(await store().expandSubjects(p, [])).toEqual([]);
    });

    it("re-putting identical aliases writes nothing; re-pointing an alias moves it", async () => {
      const p = newPrincipal();
      await store().putSubjectAliases(p, [{ alias: "Acme", subject: "Acme Corp" }]);
      expect(await store().putSubjectAliases(p, [{ alias: "Acme", subject: "Acme Corp" }])).toEqual({ written: 0 });
      expect(await store().putSubjectAliases(p, [{ alias: "acme", subject: "Acme Labs" }])).toEqual({ written: 1 });
      expect(await store().expandSubjects(p, ["Acme"])).toEqual(["acme", "acme labs"]);
    });

    it("the expanded names find a belief stored under the canonical subject", async () => {
      const p = newPrincipal();
      const b = belief({ subject: "Acme Corp", statement: "Acme Corp pays net 30." });
      await store().putBeliefs(p, [b]);
      await store().putSubjectAliases(p, [{ alias: "Acme", subject: "Acme Corp" }]);
      const named = await store().expandSubjects(p, ["Acme"]);
      const rows = await store().structuredCandidates(filterFor(p, { named }), { subjects: named, types: [], typeWeight: 0.25 }, 10);
      expect(rows.map((c) => [c.belief.beliefId, c.armScore])).toEqual([[b.beliefId, 1]]);
    });
  });
});
