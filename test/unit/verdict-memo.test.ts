import { describe, expect, it } from "vitest";
import { SENSITIVITY, type Principal, type StoredBelief } from "../../src/domain/model.js";
import { PrincipalIndex } from "../../src/principal-index/one-principal-index.js";
import type { IndexedBelief, SideTables } from "../../src/principal-index/loading.js";
import { eligibilityFilter } from "../../src/domain/hard-filter.js";
import { requestedQuery } from "../../src/recall/query-former.js";
import { effectiveQuery } from "../../src/recall/query-former.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { storedBelief, uid } from "./unit-helpers.js";

/**
 * The principal index remembers live hard-filter verdicts between recalls
 * (verdict-memo.ts). These recalls ask the same filter at later instants,
 * and after writes, and must see what a fresh judgement would.
 */

const P: Principal = { tenantId: "t-memo", principalId: "p-memo" };
const T0 = Date.parse("2026-03-01T00:00:00Z");

function indexed(b: StoredBelief): IndexedBelief {
  return {
    belief: b,
    subjectKey: b.subject.toLowerCase(),
    terms: [],
    lengths: [0, 0, 0, 0],
    notTrueSinceUs: null,
    lastRejectedAt: null,
    vector: null,
    ord: -1,
  };
}

function side(persona: string[] = []): SideTables {
  return { position: 1, persona: new Set(persona), aliases: new Map() };
}

const belief = (n: number, overrides: Partial<StoredBelief>) =>
  storedBelief({ beliefId: uid(n), subject: "Andy", status: "active", recordedAt: new Date(T0 - 1000), validFrom: new Date(T0 - 1000), validTo: null, ...overrides });

async function shown(index: PrincipalIndex, at: number, options: { scope?: string; excludePersonaHeld?: boolean; named?: string[] } = {}): Promise<number[]> {
  const query = effectiveQuery(requestedQuery({ currentScope: options.scope ?? "veetbot" }), "in_turn", RETRIEVAL_POLICY, {
    sessionType: "interactive",
    contextWindowTokens: 0,
  });
  const f = eligibilityFilter(P, query, SENSITIVITY.personal, options.named ?? [], { now: new Date(at), excludePersonaHeld: options.excludePersonaHeld ?? false });
  const found = await index.structuredCandidates(f, { subjects: ["andy"], types: [], typeWeight: 0.25 }, 100);
  return found.map((c) => Number.parseInt(c.belief.beliefId.slice(-12), 16)).sort((a, b) => a - b);
}

describe("remembered hard-filter verdicts", () => {
  it("follow time: a belief enters at its valid_from and leaves at its valid_to, recorded_at and retracted_at count too", async () => {
    const index = new PrincipalIndex(P, side(), [
      indexed(belief(1, { validTo: new Date(T0 + 1000) })),
      indexed(belief(2, { validFrom: new Date(T0 + 500) })),
      indexed(belief(3, { recordedAt: new Date(T0 + 700), validFrom: new Date(T0 - 1000) })),
      indexed(belief(4, { retractedAt: new Date(T0 + 800) })),
    ], { lexemes: async () => [] });
    expect(await shown(index, T0)).toEqual([1, 4]);
    expect(await shown(index, T0 + 499)).toEqual([1, 4]);
    expect(await shown(index, T0 + 500)).toEqual([1, 2, 4]);
    expect(await shown(index, T0 + 700)).toEqual([1, 2, 3, 4]);
    expect(await shown(index, T0 + 800)).toEqual([1, 2, 3]);
    expect(await shown(index, T0 + 1000)).toEqual([2, 3]);
    // An instant before the ones remembered (another call's clock, or a clock set back) is judged afresh.
    expect(await shown(index, T0)).toEqual([1, 4]);
  });

  it("follow writes: a replaced row, a new successor and a persona change are judged again", async () => {
    const index = new PrincipalIndex(P, side(), [indexed(belief(1, {})), indexed(belief(2, {}))], { lexemes: async () => [] });
    expect(await shown(index, T0, { excludePersonaHeld: true })).toEqual([1, 2]);
    index.upsert([indexed(belief(1, { status: "expired" }))]);
    expect(await shown(index, T0, { excludePersonaHeld: true })).toEqual([2]);
    index.upsert([indexed(belief(5, { supersedes: [uid(2)] }))]);
    expect(await shown(index, T0, { excludePersonaHeld: true })).toEqual([5]);
    index.setSideTables(side([uid(5)]));
    expect(await shown(index, T0, { excludePersonaHeld: true })).toEqual([]);
    expect(await shown(index, T0)).toEqual([5]);
  });

  it("settle the named-subject exception per recall: a local belief of another project shows only when its subject is named", async () => {
    const index = new PrincipalIndex(P, side(), [indexed(belief(1, { portability: "local", originScope: "other-project" }))], { lexemes: async () => [] });
    expect(await shown(index, T0)).toEqual([]);
    expect(await shown(index, T0, { named: ["andy"] })).toEqual([1]);
    expect(await shown(index, T0)).toEqual([]);
    expect(await shown(index, T0, { scope: "other-project" })).toEqual([1]);
  });
});
