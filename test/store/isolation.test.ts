import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, episode, newPrincipal } from "../support/fixtures.js";
import { episodeQuery, filterFor, lexicalQuery, recallTrace, sortedIds, useStore } from "./store-helpers.js";

/**
 * Tenant and principal are isolation boundaries: principal B of A's tenant and
 * A's principal id in another tenant must see none of A's rows through any
 * read path, and must not be able to touch them through any write path.
 */
describe.each(STORE_KINDS)("isolation ($kind)", ({ open }) => {
  const store = useStore(open);

  const a = newPrincipal("a");
  const outsiders: [string, Principal][] = [
    ["principal B in the same tenant", { tenantId: a.tenantId, principalId: `b-${randomUUID().slice(0, 8)}` }],
    ["A's principal id in another tenant", { tenantId: `other-${randomUUID().slice(0, 8)}`, principalId: a.principalId }],
  ];

  const acme = belief({ subject: "Acme Corp", statement: "Acme Corp deploys with kubernetes.", beliefType: "fact" });
  const andy = belief({ subject: "Andy", statement: "Andy prefers concise writing.", beliefType: "preference" });
  const secret = belief({ subject: "Andy", statement: "Andy's vault passphrase lives in 1password.", sensitivity: 4 });
  const ids = [acme.beliefId, andy.beliefId, secret.beliefId];
  const session = `session-${randomUUID()}`;
  const episodes = [episode({ sessionId: session, sequence: 1 }), episode({ sessionId: session, sequence: 2 })];
  const trace = recallTrace({ returned: [acme.beliefId, andy.beliefId] });
  const anchors = { subjects: ["acme corp", "andy"], types: ["fact", "preference"], typeWeight: 0.25 };
  const words = ["acme", "kubernetes", "concise", "writing", "passphrase"];
  let headOfA = 0;

  beforeAll(async () => {
    const s = store();
    await s.putBeliefs(a, [acme, andy, secret]);
    await s.appendEpisodes(a, episodes);
    await s.putSubjectAliases(a, [{ alias: "Acme", subject: "Acme Corp" }]);
    await s.setPersonaEntry(a, andy.beliefId);
    await s.recordTrace(a, trace);
    headOfA = (await s.head(a)).position;
  });

  it("A sees its own rows through every read path", async () => {
    const s = store();
    const f = filterFor(a);
    expect((await s.structuredCandidates(f, anchors, 100)).map((c) => c.belief.beliefId).sort()).toEqual(sortedIds(...ids));
    expect((await s.lexicalCandidates(f, lexicalQuery(words), 100)).map((c) => c.belief.beliefId).sort()).toEqual(sortedIds(...ids));
    expect((await s.beliefsById(a, ids)).map((b) => b.beliefId)).toEqual(sortedIds(...ids));
    expect(await s.expandSubjects(a, ["Acme"])).toEqual(["acme", "acme corp"]);
    expect(await s.episodes(a, episodeQuery({ sessionId: session }))).toEqual(episodes);
    expect((await s.getTrace(a, trace.id))?.returned).toEqual(trace.returned);
    expect((await s.head(a)).position).toBe(headOfA);
  });

  describe.each(outsiders)("%s", (_label, other) => {
    it("sees none of A's beliefs in the structured arm, anchored or not", async () => {
      expect(await store().structuredCandidates(filterFor(other), anchors, 100)).toEqual([]);
      expect(await store().structuredCandidates(filterFor(other), { subjects: [], types: [], typeWeight: 0.25 }, 100)).toEqual([]);
    });

    it("sees none of A's beliefs in the lexical arm", async () => {
      expect(await store().lexicalCandidates(filterFor(other), lexicalQuery(words), 100)).toEqual([]);
    });

    it("gets nothing from beliefsById with A's ids", async () => {
      expect(await store().beliefsById(other, ids)).toEqual([]);
    });

    it("does not expand subjects through A's aliases", async () => {
      expect(await store().expandSubjects(other, ["Acme"])).toEqual(["acme"]);
      expect(await store().expandSubjects(other, ["Acme Corp"])).toEqual(["acme corp"]);
    });

    it("sees none of A's episodes", async () => {
      expect(await store().episodes(other, episodeQuery({ sessionId: session, includeArchival: true }))).toEqual([]);
      expect(await store().episodes(other, episodeQuery({ includeArchival: true }))).toEqual([]);
    });

    it("does not find A's trace, and cannot cite through it", async () => {
      expect(await store().getTrace(other, trace.id)).toBeNull();
      await expect(store().recordCitations(other, trace.id, [acme.beliefId])).rejects.toMatchObject({
        name: "NotFoundError",
      });
      const [back] = await store().beliefsById(a, [acme.beliefId]);
      expect(back).toMatchObject({ utility: 0, lastUsedAt: null });
    });

    it("cannot set a persona entry on, or reject, A's belief", async () => {
      await expect(store().setPersonaEntry(other, acme.beliefId)).rejects.toMatchObject({ name: "NotFoundError" });
      await expect(
        store().rejectBelief(other, {
          rejectionId: randomUUID(),
          beliefId: acme.beliefId,
          kind: "not_true",
          correction: null,
          scope: "",
          reason: "",
        }),
      ).rejects.toMatchObject({ name: "NotFoundError" });
      expect(await store().removePersonaEntry(other, andy.beliefId)).toMatchObject({ removed: false });
      const [back] = await store().beliefsById(a, [acme.beliefId]);
      expect(back?.status).toBe("active");
    });

    it("has a head of its own, untouched by A's writes", async () => {
      // Only the position: the no-op removePersonaEntry above created an empty head row (see writes.test.ts).
      expect((await store().head(other)).position).toBe(0);
    });
  });

  it("after all of the above, A's rows and head are exactly as written", async () => {
    const s = store();
    expect((await s.head(a)).position).toBe(headOfA);
    const back = await s.beliefsById(a, ids);
    expect(back.map((b) => b.status)).toEqual(["active", "active", "active"]);
    // A's persona entry still stands (B's removePersonaEntry did nothing).
    const snapshot = await s.structuredCandidates(filterFor(a, { excludePersonaHeld: true }), anchors, 100);
    expect(snapshot.map((c) => c.belief.beliefId).sort()).toEqual(sortedIds(acme.beliefId, secret.beliefId));
  });

  it("the same belief id under another principal of the tenant is a separate row in both directions", async () => {
    const s = store();
    const b: Principal = { tenantId: a.tenantId, principalId: `twin-${randomUUID().slice(0, 8)}` };
    const twin = { ...andy, statement: "B's own belief, same id as A's persona-held one." };
    expect(await s.putBeliefs(b, [twin])).toEqual({ written: 1, position: 1 });
    expect((await s.beliefsById(a, [andy.beliefId]))[0]?.statement).toBe(andy.statement);
    expect((await s.beliefsById(b, [andy.beliefId]))[0]?.statement).toBe(twin.statement);
    // A's persona entry does not hide B's belief from B's snapshot.
    const snapshot = await s.structuredCandidates(filterFor(b, { excludePersonaHeld: true }), anchors, 100);
    expect(snapshot.map((c) => c.belief.beliefId)).toEqual([andy.beliefId]);
    expect((await s.head(a)).position).toBe(headOfA);
  });
});
