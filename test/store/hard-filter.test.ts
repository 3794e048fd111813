import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { SENSITIVITY, type Belief, type Principal } from "../../src/domain/model.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { eligibleIds, filterFor, lexicalIds, lexicalQuery, sortedIds, useStore } from "./store-helpers.js";

const at = (iso: string) => new Date(iso);

/** Step 2 of the pipeline, as SQL: what a belief must satisfy to be seen at all. */
describe.each(STORE_KINDS)("hard filter in SQL ($kind)", ({ open }) => {
  const store = useStore(open);

  it("excludes superseded and expired unless the query is historical; provisional only when asked", async () => {
    const p = newPrincipal();
    const active = belief({ status: "active" });
    const provisional = belief({ status: "provisional" });
    const superseded = belief({ status: "superseded" });
    const expired = belief({ status: "expired" });
    await store().putBeliefs(p, [active, provisional, superseded, expired]);
    const ids = (...bs: { beliefId: string }[]) => sortedIds(...bs.map((b) => b.beliefId));

    expect(await eligibleIds(store(), p)).toEqual(ids(active, provisional));
    expect(await eligibleIds(store(), p, { query: { includeProvisional: false } })).toEqual(ids(active));
    expect(await eligibleIds(store(), p, { query: { includeSuperseded: true } })).toEqual(
      ids(active, provisional, superseded, expired),
    );
    expect(await eligibleIds(store(), p, { query: { includeSuperseded: true, includeProvisional: false } })).toEqual(
      ids(active, superseded, expired),
    );
    // The lexical arm applies the same predicate.
    expect((await lexicalIds(store(), p, ["concise"])).sort()).toEqual(ids(active, provisional));
  });

  it("admits a belief at asOf only when valid_from <= asOf < valid_to", async () => {
    const p = newPrincipal();
    const b = belief({ validFrom: at("2026-02-01T00:00:00Z"), validTo: at("2026-03-01T00:00:00Z") });
    const open = belief({ validFrom: at("2026-02-01T00:00:00Z"), validTo: null });
    await store().putBeliefs(p, [b, open]);
    const seenAt = (iso: string) => eligibleIds(store(), p, { query: { asOf: at(iso) } });

    expect(await seenAt("2026-01-31T23:59:59.999Z")).toEqual([]);
    expect(await seenAt("2026-02-01T00:00:00Z")).toEqual(sortedIds(b.beliefId, open.beliefId));
    expect(await seenAt("2026-02-28T23:59:59.999Z")).toEqual(sortedIds(b.beliefId, open.beliefId));
    expect(await seenAt("2026-03-01T00:00:00Z")).toEqual([open.beliefId]);
    // Without asOf, validity is judged at "now" (NOW is after valid_to).
    expect(await eligibleIds(store(), p)).toEqual([open.beliefId]);
    expect(await lexicalIds(store(), p, ["concise"], { query: { asOf: at("2026-02-15T00:00:00Z") } })).toHaveLength(2);
  });

  it("admits a belief at knownAt only when recorded_at <= knownAt < retracted_at", async () => {
    const p = newPrincipal();
    const b = belief({ recordedAt: at("2026-02-01T00:00:00Z"), retractedAt: at("2026-03-01T00:00:00Z") });
    await store().putBeliefs(p, [b]);
    const knownAt = (iso: string) => eligibleIds(store(), p, { query: { knownAt: at(iso) } });

    expect(await knownAt("2026-01-31T23:59:59.999Z")).toEqual([]);
    expect(await knownAt("2026-02-01T00:00:00Z")).toEqual([b.beliefId]);
    expect(await knownAt("2026-02-28T23:59:59.999Z")).toEqual([b.beliefId]);
    expect(await knownAt("2026-03-01T00:00:00Z")).toEqual([]);
    expect(await eligibleIds(store(), p)).toEqual([]);
    // Valid time and transaction time are independent axes.
    const knownButNotYetValid = { knownAt: at("2026-02-15T00:00:00Z"), asOf: at("2025-12-31T00:00:00Z") };
    expect(await eligibleIds(store(), p, { query: knownButNotYetValid })).toEqual([]);
  });

  it("never returns a belief above the sensitivity ceiling, in either arm", async () => {
    const p = newPrincipal();
    const levels = [SENSITIVITY.public, SENSITIVITY.personal, SENSITIVITY.confidential, SENSITIVITY.restricted];
    const bs = levels.map((sensitivity) => belief({ sensitivity, confidence: 1 - sensitivity / 10 }));
    await store().putBeliefs(p, bs);
    for (const ceiling of levels) {
      const expected = sortedIds(...bs.filter((b) => b.sensitivity <= ceiling).map((b) => b.beliefId));
      expect(await eligibleIds(store(), p, { ceiling })).toEqual(expected);
      expect((await lexicalIds(store(), p, ["andy", "concise"], { ceiling })).sort()).toEqual(expected);
      // Naming the subject does not lift the ceiling.
      const anchors = { subjects: ["andy"], types: [], typeWeight: 0.25 };
      const named = await store().structuredCandidates(filterFor(p, { ceiling, named: ["andy"] }), anchors, 100);
      expect(named.map((c) => c.belief.beliefId).sort()).toEqual(expected);
    }
  });

  it("excludes local beliefs of another project unless their subject is named; they stay eligible at home", async () => {
    const p = newPrincipal();
    const local = belief({
      subject: "Staging DB",
      statement: "Staging DB is at 10.0.0.5.",
      originScope: "billing",
      portability: "local",
    });
    const localHere = belief({
      subject: "Build",
      statement: "Build runs on port 8080.",
      originScope: "veetbot",
      portability: "local",
    });
    const contextual = belief({
      subject: "Storage",
      statement: "Storage is Postgres.",
      originScope: "billing",
      portability: "contextual",
    });
    await store().putBeliefs(p, [local, localHere, contextual]);

    // Project is a relevance boundary: the contextual belief carries, the local one does not.
    expect(await eligibleIds(store(), p)).toEqual(sortedIds(localHere.beliefId, contextual.beliefId));
    expect(await lexicalIds(store(), p, ["staging", "build", "storage"])).not.toContain(local.beliefId);
    // Named explicitly (lower-cased, as expandSubjects returns it): it is eligible.
    expect(await eligibleIds(store(), p, { named: ["staging db"] })).toEqual(
      sortedIds(local.beliefId, localHere.beliefId, contextual.beliefId),
    );
    expect(await lexicalIds(store(), p, ["staging"], { named: ["staging db"] })).toEqual([local.beliefId]);
    // In its own project it needs no naming; veetbot's local belief is now the foreign one.
    expect(await eligibleIds(store(), p, { query: { currentScope: "billing" } })).toEqual(
      sortedIds(local.beliefId, contextual.beliefId),
    );
  });

  it("applies beliefTypes as an AND filter on top of the anchors", async () => {
    const p = newPrincipal();
    const pref = belief({ beliefType: "preference" });
    const fact = belief({ beliefType: "fact" });
    const skill = belief({ beliefType: "skill" });
    await store().putBeliefs(p, [pref, fact, skill]);
    expect(await eligibleIds(store(), p, { query: { beliefTypes: ["fact", "skill"] } })).toEqual(
      sortedIds(fact.beliefId, skill.beliefId),
    );
    const anchored = await store().structuredCandidates(
      filterFor(p, { query: { beliefTypes: ["fact"] } }),
      { subjects: ["andy"], types: ["preference"], typeWeight: 0.25 },
      100,
    );
    expect(anchored.map((c) => c.belief.beliefId)).toEqual([fact.beliefId]);
    expect(await lexicalIds(store(), p, ["concise"], { query: { beliefTypes: ["preference"] } })).toEqual([pref.beliefId]);
  });

  it("excludePersonaHeld hides persona-held beliefs until the entry is removed", async () => {
    const p = newPrincipal();
    const held = belief();
    const other = belief();
    await store().putBeliefs(p, [held, other]);
    await store().setPersonaEntry(p, held.beliefId);
    expect(await eligibleIds(store(), p, { excludePersonaHeld: true })).toEqual([other.beliefId]);
    expect(await lexicalIds(store(), p, ["concise"], { excludePersonaHeld: true })).toEqual([other.beliefId]);
    expect(await eligibleIds(store(), p)).toEqual(sortedIds(held.beliefId, other.beliefId));
    await store().removePersonaEntry(p, held.beliefId);
    expect(await eligibleIds(store(), p, { excludePersonaHeld: true })).toEqual(sortedIds(held.beliefId, other.beliefId));
  });

  describe("applies before the candidate cap", () => {
    /** 20 beliefs that would outrank everything (subject, authority, confidence, word count) but are ineligible. */
    function ineligibleFlood(): Belief[] {
      const loud = { subject: "Andy", statement: "Andy andy concise concise writing writing.", authority: "user" as const, confidence: 1 };
      return [
        ...Array.from({ length: 5 }, () => belief({ ...loud, status: "superseded" })),
        ...Array.from({ length: 3 }, () => belief({ ...loud, status: "expired" })),
        ...Array.from({ length: 3 }, () => belief({ ...loud, sensitivity: SENSITIVITY.restricted })),
        ...Array.from({ length: 3 }, () => belief({ ...loud, validTo: at("2026-02-01T00:00:00Z") })),
        ...Array.from({ length: 2 }, () => belief({ ...loud, retractedAt: at("2026-02-01T00:00:00Z") })),
        ...Array.from({ length: 2 }, () => belief({ ...loud, portability: "local", originScope: "billing" })),
        ...Array.from({ length: 2 }, () => belief({ ...loud, status: "provisional" })),
      ];
    }

    async function seed(): Promise<{ p: Principal; eligible: string[] }> {
      const p = newPrincipal();
      const neighbour: Principal = { tenantId: p.tenantId, principalId: `n-${randomUUID().slice(0, 8)}` };
      const flood = ineligibleFlood();
      expect(flood).toHaveLength(20);
      const eligible = Array.from({ length: 3 }, () =>
        belief({ statement: "Andy mentioned writing once.", authority: "inferred", confidence: 0.3 }),
      );
      // The neighbour's loud beliefs (all eligible for the neighbour) must not fill p's cap either.
      const loudButEligible = { status: "active", validTo: null, retractedAt: null, sensitivity: 1, portability: "portable" } as const;
      await store().putBeliefs(neighbour, ineligibleFlood().map((b) => ({ ...b, ...loudButEligible })));
      await store().putBeliefs(p, [...flood, ...eligible]);
      return { p, eligible: sortedIds(...eligible.map((b) => b.beliefId)) };
    }

    const options = { ceiling: SENSITIVITY.confidential, query: { includeProvisional: false } };

    it("in the structured arm", async () => {
      const { p, eligible } = await seed();
      const anchors = { subjects: ["andy"], types: ["preference"], typeWeight: 0.25 };
      const rows = await store().structuredCandidates(filterFor(p, options), anchors, 5);
      expect(rows.map((c) => c.belief.beliefId).sort()).toEqual(eligible);
    });

    it("in the lexical arm", async () => {
      const { p, eligible } = await seed();
      const rows = await store().lexicalCandidates(filterFor(p, options), lexicalQuery(["andy", "concise", "writing"]), 5);
      expect(rows.map((c) => c.belief.beliefId).sort()).toEqual(eligible);
    });
  });
});
