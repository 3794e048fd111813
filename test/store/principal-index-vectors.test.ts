import { randomUUID } from "node:crypto";
import { pino } from "pino";
import { beforeAll, describe, expect, it } from "vitest";
import { SENSITIVITY, type Belief, type Principal, type SensitivityLevel } from "../../src/domain/model.js";
import { EmbeddingBackfill } from "../../src/embed/embedding-backfill.js";
import { PrincipalIndexes } from "../../src/principal-index/index-router.js";
import type { Embedder } from "../../src/ports/embedder.js";
import type { ArmCandidate, CandidateSource } from "../../src/ports/candidate-source.js";
import { documentWeights, RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { HeadTracker } from "../../src/recall/moments/head-tracker.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { enableSemantic, SemanticStore } from "../../src/store/candidates/semantic-store.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { counting, until } from "../support/counting-client.js";
import { pipelineDeps, requested, runRecall } from "../support/pipeline.js";
import { freshPglite, freshPgliteWithVector } from "../support/stores.js";
import { prng } from "../unit/unit-helpers.js";
import { filterFor, useStore, type FilterOptions } from "./store-helpers.js";

/**
 * The semantic arm served from the principal index's int8 vectors
 * (principal-index/vector-slab.ts): the same candidates as the SQL scan, in
 * the same order; only the principal's own eligible beliefs; vectors that
 * follow their documents (a changed one is absent until embedded again, a
 * saved one arrives by the rows channel); none read or held with the arm off;
 * and no statement on the recall's path once the index serves. On PGlite,
 * which has pgvector (PostgreSQL here has none).
 */

const DIMS = 24;

/** Seeded pseudo-random unit-free vectors by text: identical texts tie exactly, different ones almost never nearly. */
const embedder: Embedder = {
  id: `test-random:${DIMS}`,
  dimensions: DIMS,
  embed: async (texts) => texts.map((t) => vectorOf(t)),
};

function vectorOf(text: string): number[] {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  const rand = prng(h >>> 0);
  return Array.from({ length: DIMS }, () => rand() * 2 - 1);
}

function backfill(store: SemanticStore): EmbeddingBackfill {
  return new EmbeddingBackfill(
    store,
    embedder,
    { batch: 50, pollIntervalMs: 60_000, retryMinMs: 10, retryMaxMs: 20, sensitivityCeiling: SENSITIVITY.restricted },
    pino({ level: "silent" }),
  );
}

async function embedAll(b: EmbeddingBackfill): Promise<void> {
  while ((await b.embedBatch()) > 0);
}

const summary = (cs: readonly ArmCandidate[]) => cs.map((c) => ({ id: c.belief.beliefId, score: c.armScore }));

describe("semantic arm from the principal index (pglite with pgvector)", () => {
  const store = useStore(freshPgliteWithVector);
  let semantic: SemanticStore;
  let embedderId: string;

  beforeAll(async () => {
    await enableSemantic(store().db);
    semantic = new SemanticStore(store().db, documentWeights(RETRIEVAL_POLICY));
    embedderId = semantic.storedId(embedder.id);
  });

  const indexesWithVectors = (maxBytes = 64 * 1024 * 1024) => {
    const indexes = new PrincipalIndexes(store(), { maxBytes, headCheckMs: 60_000, loadDelayMs: 10 });
    indexes.holdVectors(embedderId);
    return indexes;
  };

  const served = async (indexes: PrincipalIndexes, p: Principal): Promise<CandidateSource> => {
    await indexes.load(p);
    const source = await indexes.sourceFor(p, await store().head(p));
    expect(source).not.toBe(store().candidates);
    return source;
  };

  const bySql = async (p: Principal, text: string, cap: number, min: number, o: FilterOptions = {}) =>
    summary(await semantic.semanticCandidates(filterFor(p, o), embedder.id, vectorOf(text), cap, min));

  const byIndex = async (source: CandidateSource, p: Principal, text: string, cap: number, min: number, o: FilterOptions = {}) => {
    const rows = await source.semanticCandidates!(filterFor(p, o), { embedderId, vector: vectorOf(text), minSimilarity: min }, cap);
    expect(rows).not.toBeNull();
    return summary(rows!);
  };

  describe("parity with the SQL scan", () => {
    const p = newPrincipal("parity");
    const texts = Array.from({ length: 12 }, (_, i) => `statement number ${i} about the deploy`);
    const beliefs: Belief[] = [];

    beforeAll(async () => {
      const rand = prng(45);
      const past = new Date("2026-03-01T00:00:00Z");
      const levels: SensitivityLevel[] = [SENSITIVITY.public, SENSITIVITY.personal, SENSITIVITY.confidential, SENSITIVITY.restricted];
      for (let i = 0; i < 60; i++) {
        // Every fifth text repeats an earlier one: exact ties, broken by belief id.
        const statement = texts[i % 5 === 4 ? Math.floor(rand() * 3) : i % texts.length]!;
        const kind = i % 10;
        beliefs.push(
          belief({
            statement,
            sensitivity: levels[Math.floor(rand() * levels.length)]!,
            ...(kind === 1 ? { status: "superseded" as const } : {}),
            ...(kind === 2 ? { status: "expired" as const } : {}),
            ...(kind === 3 ? { validTo: past } : {}),
            ...(kind === 6 ? { retractedAt: past } : {}),
          }),
        );
      }
      await store().putBeliefs(p, beliefs);
      await embedAll(backfill(semantic));
    });

    it("the same candidates in the same order: ties, minimum similarity, cap, the hard filter and the ceiling", async () => {
      const source = await served(indexesWithVectors(), p);
      const ceilings = [SENSITIVITY.public, SENSITIVITY.personal, SENSITIVITY.restricted] as const;
      let compared = 0;
      let ties = 0;
      for (const text of [...texts.slice(0, 4), "what is the deploy schedule", texts[0]!]) {
        for (const min of [-1, 0, 0.2]) {
          for (const cap of [3, 100]) {
            for (const ceiling of ceilings) {
              for (const query of [{}, { includeSuperseded: true }]) {
                const o = { ceiling, query };
                const sql = await bySql(p, text, cap, min, o);
                const index = await byIndex(source, p, text, cap, min, o);
                // The index sums in double, the SQL in float32: scores agree within 1e-6, ids and order exactly.
                expect(index.map((c) => c.id)).toEqual(sql.map((c) => c.id));
                index.forEach((c, i) => expect(Math.abs(c.score - sql[i]!.score)).toBeLessThan(1e-6));
                compared += sql.length;
                ties += sql.filter((c, i) => i > 0 && c.score === sql[i - 1]!.score).length;
              }
            }
          }
        }
      }
      // The fixture exercised what it is for: many candidates, exact ties among them.
      expect(compared).toBeGreaterThan(500);
      expect(ties).toBeGreaterThan(10);
    });

    it("counts its vectors in the index's bytes: about dim + 4 bytes per belief after a load", async () => {
      const indexes = indexesWithVectors();
      await indexes.load(p);
      expect(indexes.stats.vectors).toBe(beliefs.length);
      expect(indexes.stats.vectorBytes).toBe(beliefs.length * (DIMS + 4));
      expect(indexes.stats.bytes).toBeGreaterThan(indexes.stats.vectorBytes);
    });
  });

  describe("isolation: identical vectors of other tenants and principals never come back", () => {
    const a = newPrincipal("a");
    const sameTenant: Principal = { tenantId: a.tenantId, principalId: `b-${randomUUID().slice(0, 8)}` };
    const otherTenant: Principal = { tenantId: `other-${randomUUID().slice(0, 8)}`, principalId: a.principalId };
    const statement = "veetbot deploys to kubernetes";
    const own = belief({ statement });
    const ownSecret = belief({ statement, sensitivity: SENSITIVITY.restricted });
    const outsiders = new Map<string, Belief[]>();

    beforeAll(async () => {
      await store().putBeliefs(a, [own, ownSecret]);
      for (const other of [sameTenant, otherTenant]) {
        // The same ids as A's, and more of the same vector: only the principal key tells them apart.
        const theirs = [belief({ beliefId: own.beliefId, statement }), belief({ statement }), belief({ statement })];
        outsiders.set(other.principalId + other.tenantId, theirs);
        await store().putBeliefs(other, theirs);
      }
      await embedAll(backfill(semantic));
    });

    it("each principal's index returns its own eligible beliefs only, the ceiling before the cap", async () => {
      const indexes = indexesWithVectors();
      const fromA = await byIndex(await served(indexes, a), a, statement, 10, -1, { ceiling: SENSITIVITY.personal });
      expect(fromA.map((c) => c.id)).toEqual([own.beliefId]);
      for (const other of [sameTenant, otherTenant]) {
        const source = await served(indexes, other);
        const rows = (await source.semanticCandidates!(filterFor(other), { embedderId, vector: vectorOf(statement), minSimilarity: -1 }, 10))!;
        expect(rows.map((c) => c.belief.beliefId).sort()).toEqual(outsiders.get(other.principalId + other.tenantId)!.map((b) => b.beliefId).sort());
        expect(rows.map((c) => c.belief.beliefId)).not.toContain(ownSecret.beliefId);
        // One principal's index refuses another's filter outright.
        await expect(source.semanticCandidates!(filterFor(a), { embedderId, vector: vectorOf(statement), minSimilarity: -1 }, 10)).rejects.toThrow(
          /another principal/,
        );
      }
    });
  });

  it("a changed document's vector is absent until embedded again; the new one arrives by the rows channel", async () => {
    const p = newPrincipal("stale");
    const b = belief({ statement: "Andy's editor is Vim" });
    await store().putBeliefs(p, [b]);
    await embedAll(backfill(semantic));
    const indexes = indexesWithVectors();
    await indexes.start();
    try {
      const source = await served(indexes, p);
      expect((await byIndex(source, p, "Andy's editor is Vim", 10, -1)).map((c) => c.id)).toEqual([b.beliefId]);

      await store().putBeliefs(p, [{ ...b, statement: "Andy's editor is Helix" }]);
      const after = await indexes.sourceFor(p, await store().head(p));
      expect(after).toBe(source);
      expect(await byIndex(source, p, "Andy's editor is Helix", 10, -1)).toEqual([]);
      expect(indexes.stats.vectors).toBe(0);

      await embedAll(backfill(semantic));
      await until(() => indexes.stats.vectors === 1);
      const sql = await bySql(p, "Andy's editor is Helix", 10, -1);
      const index = await byIndex(source, p, "Andy's editor is Helix", 10, -1);
      expect(index.map((c) => c.id)).toEqual([b.beliefId]);
      expect(Math.abs(index[0]!.score - sql[0]!.score)).toBeLessThan(1e-6);
      // Its own document: a cosine of 1 but for the int8 rounding.
      expect(index[0]!.score).toBeCloseTo(1, 3);
    } finally {
      await indexes.stop();
    }
  });

  it("a vector saved while the index loads, after its row's page was read, is read once the index is in", async () => {
    const p = newPrincipal("during-load");
    const b = belief({ statement: "The user runs on Tuesdays" });
    await store().putBeliefs(p, [b]);
    // The load's page is read, then held until the vector is saved and announced.
    let pageRead!: () => void;
    const paged = new Promise<void>((resolve) => (pageRead = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const db = store().db;
    const gated = {
      ...db,
      kind: db.kind,
      query: async (text: string, params?: readonly unknown[], options?: object) => {
        const rows = await db.query(text, params, options);
        if (text.includes("vector_send") && text.includes("LIMIT")) {
          pageRead();
          await gate;
        }
        return rows;
      },
    } as typeof db;
    const indexes = new PrincipalIndexes({ db: gated, candidates: store().candidates, head: (q, d) => store().head(q, d) }, { maxBytes: 1 << 26, headCheckMs: 60_000 });
    indexes.holdVectors(embedderId);
    await indexes.start();
    try {
      const loading = indexes.load(p);
      await paged;
      await embedAll(backfill(semantic));
      // The rows channel's notification of the save (delivered to the listener; called here too, so the test needs no wait).
      await indexes.refresh(p, [b.beliefId]);
      release();
      await loading;
      await until(() => indexes.stats.vectors === 1);
    } finally {
      await indexes.stop();
    }
  });

  it("an evicted index reloads with its vectors", async () => {
    const p = newPrincipal("evicted");
    const other = newPrincipal("evictor");
    const beliefs = Array.from({ length: 20 }, (_, i) => belief({ statement: `fact ${i} about espresso` }));
    await store().putBeliefs(p, beliefs);
    await store().putBeliefs(other, beliefs.map((b) => ({ ...b, beliefId: randomUUID() })));
    await embedAll(backfill(semantic));
    const probe = indexesWithVectors();
    await probe.load(p);
    // Room for one of the two indexes.
    const indexes = indexesWithVectors(Math.floor(probe.stats.bytes * 1.5));
    const before = await byIndex(await served(indexes, p), p, "fact 3 about espresso", 5, -1);
    await indexes.load(other);
    expect(indexes.stats.evictions).toBe(1);
    expect(await indexes.sourceFor(p, await store().head(p))).toBe(store().candidates);
    const reloaded = await byIndex(await served(indexes, p), p, "fact 3 about espresso", 5, -1);
    expect(reloaded).toEqual(before);
    expect(reloaded[0]!.id).toBe(beliefs[3]!.beliefId);
  });

  it("an index of another embedder's vectors does not answer: the arm asks SQL", async () => {
    const p = newPrincipal("other-embedder");
    await store().putBeliefs(p, [belief()]);
    const source = await served(indexesWithVectors(), p);
    expect(await source.semanticCandidates!(filterFor(p), { embedderId: "another", vector: vectorOf("x"), minSimilarity: -1 }, 10)).toBeNull();
  });

  it("an in-turn recall the index serves sends no statement, the semantic arm included; before it loads, SQL answers", async () => {
    const db = counting(store().db);
    const tracked = new MemoryStore(db);
    const p = newPrincipal("hot-path");
    const b = belief({ subject: "Andy", statement: "Andy keeps bees on the roof" });
    await store().putBeliefs(p, [b, belief({ statement: "Andy writes in Helix" })]);
    await embedAll(backfill(semantic));
    const heads = new HeadTracker(tracked);
    await heads.start();
    const indexes = new PrincipalIndexes(tracked, { maxBytes: 64 * 1024 * 1024, headCheckMs: 60_000, loadDelayMs: 10 });
    indexes.holdVectors(embedderId);
    const deps = {
      ...pipelineDeps(tracked, { record: async () => {} }),
      heads,
      candidates: indexes,
      semantic: { embedder, store: new SemanticStore(db, documentWeights(RETRIEVAL_POLICY)), similarity: { min: 0.5, full: 0.8 } },
    };
    const ask = () => runRecall(deps, p, requested({ text: "Andy keeps bees on the roof" }));
    const semanticIds = (o: Awaited<ReturnType<typeof ask>>) => (o.trace.ranked ?? []).filter((r) => r.arms.includes("semantic")).map((r) => r.beliefId);
    try {
      let start = db.statements.length;
      const cold = await ask();
      expect(db.statements.slice(start).some((s) => s.includes("belief_embeddings"))).toBe(true);
      await until(() => indexes.stats.loads === 1);
      await ask();
      start = db.statements.length;
      const warm = await ask();
      expect(db.statements.slice(start)).toEqual([]);
      expect(semanticIds(warm)).toEqual([b.beliefId]);
      expect(warm.result.rendered).toBe(cold.result.rendered);
    } finally {
      await heads.stop();
    }
  });
});

describe("principal index with the semantic arm off (pglite)", () => {
  const store = useStore(freshPglite);

  it("reads no vector and holds none: no statement names belief_embeddings, no vector bytes", async () => {
    const db = counting(store().db);
    const p = newPrincipal("off");
    await store().putBeliefs(p, [belief(), belief({ statement: "Andy writes in Helix" })]);
    const indexes = new PrincipalIndexes(new MemoryStore(db), { maxBytes: 64 * 1024 * 1024, headCheckMs: 60_000 });
    await indexes.load(p);
    await store().putBeliefs(p, [belief({ statement: "Andy drinks espresso" })]);
    const source = await indexes.sourceFor(p, await store().head(p));
    await indexes.refresh(p, []);
    expect(db.statements.length).toBeGreaterThan(0);
    expect(db.statements.filter((s) => /belief_embeddings|vector/.test(s))).toEqual([]);
    expect(indexes.stats.vectorBytes).toBe(0);
    expect(indexes.stats.vectors).toBe(0);
    expect(await source.semanticCandidates!(filterFor(p), { embedderId: "any", vector: [1, 0], minSimilarity: -1 }, 10)).toBeNull();
  });
});
