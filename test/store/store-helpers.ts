import { randomUUID } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import {
  SENSITIVITY,
  type Principal,
  type RecallQuery,
  type RecallTrace,
  type RecalledBelief,
  type SensitivityLevel,
} from "../../src/domain/model.js";
import { eligibilityFilter, type EligibilityFilter } from "../../src/domain/hard-filter.js";
import type { EpisodeQuery, LexicalQuery, MemoryStore } from "../../src/store/memory-store.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import type { TestStore } from "../support/stores.js";
import { T0, recallQuery } from "../support/fixtures.js";

export { recallQuery };

/**
 * Shared helpers of the store suites (test/store/*.test.ts). Every suite runs
 * on both stores via `describe.each(STORE_KINDS)` and opens one store per
 * describe with `useStore`.
 */

/** "Now" of the eligibility filters: well after T0, when the fixtures' beliefs start. */
export const NOW = new Date("2026-06-01T00:00:00Z");

/** Opens one store for the enclosing describe; returns an accessor for its MemoryStore. */
export function useStore(open: () => Promise<TestStore>): () => MemoryStore {
  let t: TestStore | undefined;
  beforeAll(async () => {
    t = await open();
  });
  afterAll(async () => {
    await t?.dispose();
    // Every statement the store issued must be routable by tenant (docs/scale-out.md).
    const problems = t?.routing.problems ?? [];
    if (problems.length > 0) {
      throw new Error(`statements not routed by tenant_id:\n${problems.map((p) => `  ${p.problems.join("; ")}\n    ${p.text.replace(/\s+/g, " ").slice(0, 300)}`).join("\n")}`);
    }
  });
  return () => {
    if (!t) throw new Error("store not open");
    return t.store;
  };
}

export interface FilterOptions {
  query?: Partial<RecallQuery>;
  /** Surface sensitivity ceiling; defaults to the highest level. */
  ceiling?: SensitivityLevel;
  /** Lower-cased, alias-expanded named subjects. */
  named?: string[];
  now?: Date;
  excludePersonaHeld?: boolean;
}

/** The hard filter exactly as the pipeline builds it. */
export function filterFor(p: Principal, o: FilterOptions = {}): EligibilityFilter {
  return eligibilityFilter(p, recallQuery(o.query), o.ceiling ?? SENSITIVITY.restricted, o.named ?? [], {
    now: o.now ?? NOW,
    excludePersonaHeld: o.excludePersonaHeld ?? false,
  });
}

/** No anchors: the structured arm returns every eligible belief. */
export const UNANCHORED = { subjects: [], types: [], typeWeight: 0.25 } as const;

/** Ids of every belief that passes the filter (unanchored structured arm), sorted. */
export async function eligibleIds(store: MemoryStore, p: Principal, o: FilterOptions = {}): Promise<string[]> {
  const rows = await store.structuredCandidates(filterFor(p, o), UNANCHORED, 1000);
  return rows.map((c) => c.belief.beliefId).sort();
}

/** Ids of the lexical arm's candidates for `terms`, in arm order. */
export async function lexicalIds(
  store: MemoryStore,
  p: Principal,
  terms: string[],
  o: FilterOptions = {},
): Promise<string[]> {
  const rows = await store.lexicalCandidates(filterFor(p, o), lexicalQuery(terms), 1000);
  return rows.map((c) => c.belief.beliefId);
}

export function sortedIds(...ids: string[]): string[] {
  return [...ids].sort();
}

/** `n` fresh uuids in ascending order (uuid order in SQL is the lower-case hex string order). */
export function ascendingUuids(n: number): string[] {
  return Array.from({ length: n }, () => randomUUID()).sort();
}

export function episodeQuery(overrides: Partial<EpisodeQuery> = {}): EpisodeQuery {
  return {
    sessionId: null,
    startTime: null,
    endTime: null,
    includeArchival: false,
    sensitivityCeiling: SENSITIVITY.restricted,
    after: null,
    limit: 100,
    ...overrides,
  };
}

export function recalledBelief(beliefId: string, overrides: Partial<RecalledBelief> = {}): RecalledBelief {
  return {
    beliefId,
    subject: "Andy",
    statement: "Andy prefers concise writing.",
    beliefType: "preference",
    status: "active",
    confidenceBand: "high",
    authority: "user",
    originScope: "veetbot",
    portability: "portable",
    carried: false,
    validFrom: T0,
    validTo: null,
    score: 0.75,
    arms: ["structured", "lexical"],
    conflictWith: [],
    blocked: false,
    ...overrides,
  };
}

/** A complete trace (operator fields present); `cited` is derived on read, so it starts empty. */
export function recallTrace(overrides: Partial<RecallTrace> = {}): RecallTrace {
  const returned = overrides.returned ?? [];
  return {
    id: randomUUID(),
    sessionId: "s1",
    runId: "run-1",
    turnId: "turn-1",
    moment: "in_turn",
    query: recallQuery({ text: "how should I write?", subjects: ["Andy"], asOf: new Date("2026-03-04T05:06:07.089Z") }),
    surfaceId: "cli",
    sensitivityCeiling: SENSITIVITY.confidential,
    renderedSha256: "a".repeat(64),
    armLatenciesMs: { structured: 3, lexical: 5 },
    candidates: returned.length,
    returned,
    cited: [],
    droppedForBudget: [],
    droppedForBudgetCount: 0,
    blocked: [],
    carriedIn: [],
    retrievalPolicyVersion: "retrieval@5",
    createdAt: new Date("2026-03-04T05:06:08.123Z"),
    operatorFieldsExpireAt: new Date("2026-03-11T05:06:08.123Z"),
    ranked: returned.map((id) => recalledBelief(id)),
    asOf: new Date("2026-03-04T05:06:07.089Z"),
    snapshotWatermark: 0,
    deltaAfter: null,
    corrected: [],
    consideredNotShown: 0,
    carried: [],
    returnedBands: returned.map(() => "high" as const),
    tool: "",
    episodeQuery: null,
    returnedEpisodes: [],
    episodeAdvice: null,
    ...overrides,
  };
}

/** A lexical arm query for these terms, scored by the current policy, no names or dates. */
export function lexicalQuery(terms: readonly string[], overrides: Partial<LexicalQuery> = {}): LexicalQuery {
  const { trigram: _trigram, ...scoring } = RETRIEVAL_POLICY.lexical;
  return { terms, names: [], dates: { years: [], months: [] }, scoring, ...overrides };
}
