import { randomUUID } from "node:crypto";
import { pino } from "pino";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { ConfigError } from "../../src/config/config.js";
import { SENSITIVITY, type Principal } from "../../src/domain/model.js";
import { documentWeights, RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { EmbedderError, type Embedder } from "../../src/ports/embedder.js";
import { EmbeddingBackfill } from "../../src/embed/embedding-backfill.js";
import { hashedEmbedder } from "../../src/embed/hashed-embedder.js";
import { semanticArm } from "../../src/recall/arms/semantic.js";
import { DEFAULT_SEMANTIC_SIMILARITY } from "../../src/domain/semantic-calibration.js";
import { enableSemantic, SemanticStore } from "../../src/store/candidates/semantic-store.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { capturingLogger, pipelineDeps, requested, runRecall } from "../support/pipeline.js";
import { freshPgliteWithVector, STORE_KINDS } from "../support/stores.js";
import { ascendingUuids, filterFor, lexicalQuery, useStore, type FilterOptions } from "./store-helpers.js";

/**
 * The semantic arm's storage and query. PostgreSQL here has no pgvector, so
 * the arm itself runs on PGlite with its vector extension; on both stores,
 * enabling it where pgvector is missing must refuse with a clear message.
 */

const embedder = hashedEmbedder(256);
const silent = pino({ level: "silent" });

function backfill(store: SemanticStore, e: Embedder = embedder, ceiling: number = SENSITIVITY.restricted): EmbeddingBackfill {
  return new EmbeddingBackfill(
    store,
    e,
    { batch: 50, pollIntervalMs: 60_000, retryMinMs: 10, retryMaxMs: 20, sensitivityCeiling: ceiling as 1 | 2 | 3 | 4 },
    silent,
  );
}

/** Embeds everything missing, batch after batch. */
async function embedAll(b: EmbeddingBackfill): Promise<void> {
  while ((await b.embedBatch()) > 0);
}

const failing: Embedder = {
  id: embedder.id,
  dimensions: embedder.dimensions,
  embed: () => Promise.reject(new EmbedderError("embeddings endpoint unreachable: connect ECONNREFUSED")),
};

describe("semantic arm (pglite with pgvector)", () => {
  const store = useStore(freshPgliteWithVector);
  let semantic: SemanticStore;

  const search = async (p: Principal, text: string, o: FilterOptions & { cap?: number } = {}) => {
    const [vector] = await embedder.embed([text]);
    const rows = await semantic.semanticCandidates(filterFor(p, o), embedder.id, vector!, o.cap ?? 100, -1);
    return rows.map((r) => r.belief.beliefId);
  };

  beforeAll(async () => {
    // Idempotent: every start applies it.
    await enableSemantic(store().db);
    await enableSemantic(store().db);
    semantic = new SemanticStore(store().db, documentWeights(RETRIEVAL_POLICY));
  });

  describe("isolation: tenant, principal and ceiling hold before the candidate cap", () => {
    const a = newPrincipal("a");
    const sameTenant: Principal = { tenantId: a.tenantId, principalId: `b-${randomUUID().slice(0, 8)}` };
    const otherTenant: Principal = { tenantId: `other-${randomUUID().slice(0, 8)}`, principalId: a.principalId };
    const query = "veetbot deploys to kubernetes";
    // The outsiders hold the statement nearest to the query; A holds only more distant ones.
    const near = () => belief({ subject: "veetbot", statement: "veetbot deploys to kubernetes", beliefType: "fact" });
    const aFar = belief({ subject: "veetbot", statement: "veetbot deploys on fridays after review", beliefType: "fact" });
    const aFarther = belief({ subject: "veetbot", statement: "veetbot is written in typescript", beliefType: "fact" });
    const aSecret = belief({ subject: "veetbot", statement: "veetbot deploys to kubernetes", sensitivity: SENSITIVITY.restricted });
    const aSuperseded = belief({ subject: "veetbot", statement: "veetbot deploys to kubernetes", status: "superseded" });
    const outsiderIds: string[] = [];

    beforeAll(async () => {
      await store().putBeliefs(a, [aFar, aFarther, aSecret, aSuperseded]);
      for (const other of [sameTenant, otherTenant]) {
        const b = near();
        outsiderIds.push(b.beliefId);
        await store().putBeliefs(other, [b]);
      }
      await embedAll(backfill(semantic));
    });

    it("A sees only its own eligible beliefs, nearest first", async () => {
      expect(await search(a, query, { ceiling: SENSITIVITY.personal })).toEqual([aFar.beliefId, aFarther.beliefId]);
    });

    it("the cap applies after the hard filter: nearer outsiders and ineligible beliefs never take A's places", async () => {
      expect(await search(a, query, { ceiling: SENSITIVITY.personal, cap: 1 })).toEqual([aFar.beliefId]);
    });

    it("the surface ceiling excludes a nearer belief above it; a higher ceiling admits it", async () => {
      expect(await search(a, query, { ceiling: SENSITIVITY.personal })).not.toContain(aSecret.beliefId);
      expect((await search(a, query, { ceiling: SENSITIVITY.restricted }))[0]).toBe(aSecret.beliefId);
    });

    it("a superseded belief is out unless the query is historical", async () => {
      expect(await search(a, query)).not.toContain(aSuperseded.beliefId);
      expect(await search(a, query, { query: { includeSuperseded: true } })).toContain(aSuperseded.beliefId);
    });

    it.each([
      ["principal B in the same tenant", sameTenant],
      ["A's principal id in another tenant", otherTenant],
    ])("%s gets zero of A's beliefs, only its own", async (_label, other) => {
      const ids = await search(other, query);
      expect(ids).toHaveLength(1);
      expect(outsiderIds).toContain(ids[0]);
      for (const own of [aFar, aFarther, aSecret, aSuperseded]) expect(ids).not.toContain(own.beliefId);
    });

    it("a principal with no beliefs gets nothing", async () => {
      expect(await search(newPrincipal("nobody"), query)).toEqual([]);
    });
  });

  it("orders by cosine distance, ties by belief id, the same on every run", async () => {
    const p = newPrincipal("order");
    const [id1, id2, id3] = ascendingUuids(3);
    // Written in reverse id order: insertion order must not leak into the result.
    const tied = [id3!, id2!].map((beliefId) => belief({ beliefId, subject: "Andy", statement: "Andy prefers concise prose" }));
    const closest = belief({ beliefId: id1, subject: "Andy", statement: "Andy prefers concise prose writing" });
    await store().putBeliefs(p, [...tied, closest]);
    await embedAll(backfill(semantic));
    const first = await semantic.semanticCandidates(filterFor(p), embedder.id, (await embedder.embed(["concise prose writing"]))[0]!, 10, -1);
    expect(first.map((c) => c.belief.beliefId)).toEqual([id1, id2, id3]);
    expect(first[0]!.armScore).toBeGreaterThan(first[1]!.armScore);
    expect(first[1]!.armScore).toBe(first[2]!.armScore);
    const again = await semantic.semanticCandidates(filterFor(p), embedder.id, (await embedder.embed(["concise prose writing"]))[0]!, 10, -1);
    expect(again).toEqual(first);
  });

  it("sees only current embeddings: another embedder's vectors, or a rewritten statement's, count as missing", async () => {
    const p = newPrincipal("stale");
    const b = belief({ subject: "Andy", statement: "Andy's editor is Vim" });
    await store().putBeliefs(p, [b]);
    await embedAll(backfill(semantic));
    expect(await search(p, "editor vim")).toEqual([b.beliefId]);
    const other = hashedEmbedder(32);
    expect(await semantic.semanticCandidates(filterFor(p), other.id, (await other.embed(["editor vim"]))[0]!, 10, -1)).toEqual([]);

    await store().putBeliefs(p, [{ ...b, statement: "Andy's editor is Helix" }]);
    expect(await search(p, "editor helix")).toEqual([]);
    const missing = await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 1000, { principal: p });
    expect(missing.map((m) => m.beliefId)).toEqual([b.beliefId]);
    expect(await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 1000, { principal: newPrincipal("none") })).toEqual([]);
    expect(missing.map((m) => m.beliefId)).toContain(b.beliefId);
    await embedAll(backfill(semantic));
    expect(await search(p, "editor helix")).toEqual([b.beliefId]);
  });

  it("a principal's lookup can start after a store position: only what was written since", async () => {
    const p = newPrincipal("after");
    const first = belief({ statement: "Andy reads novels" });
    await store().putBeliefs(p, [first]);
    const head = await semantic.headPosition(p);
    const second = belief({ statement: "Andy reads poems" });
    await store().putBeliefs(p, [second]);
    const ids = async (afterPosition: number) =>
      (await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 100, { principal: p, afterPosition })).map((m) => m.beliefId);
    expect(await ids(0)).toEqual([first.beliefId, second.beliefId]);
    expect(await ids(head)).toEqual([second.beliefId]);
    expect(await semantic.headPosition(p)).toBe(head + 1);
  });

  it("never sends beliefs above its sensitivity ceiling to the embedder", async () => {
    const p = newPrincipal("ceiling");
    const open = belief({ statement: "Andy likes tea", sensitivity: SENSITIVITY.personal });
    const secret = belief({ statement: "Andy's bank pin is secret", sensitivity: SENSITIVITY.restricted });
    await store().putBeliefs(p, [open, secret]);
    const sent: string[] = [];
    const spying: Embedder = { ...embedder, embed: (texts, signal) => (sent.push(...texts), embedder.embed(texts, signal)) };
    await embedAll(backfill(semantic, spying, SENSITIVITY.confidential));
    expect(sent).toContain(open.statement);
    expect(sent).not.toContain(secret.statement);
    expect(await search(p, "Andy bank pin secret tea", { ceiling: SENSITIVITY.restricted })).toEqual([open.beliefId]);
  });

  it("an embedder outage loses no write: beliefs are stored, stay missing, and are embedded once it is back", async () => {
    const p = newPrincipal("outage");
    const b = belief({ statement: "Andy rides a bicycle to work" });
    await store().putBeliefs(p, [b]);
    await expect(backfill(semantic, failing).embedBatch()).rejects.toBeInstanceOf(EmbedderError);
    expect((await store().beliefsById(p, [b.beliefId])).map((x) => x.statement)).toEqual([b.statement]);
    expect((await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 1000, { principal: p })).map((m) => m.beliefId)).toContain(b.beliefId);
    expect(await search(p, "bicycle")).toEqual([]);

    // The running background embedder: fails, backs off, recovers when the embedder does.
    let down = true;
    let failures = 0;
    const flaky: Embedder = {
      ...embedder,
      embed: (texts, signal) => (down ? (failures++, failing.embed(texts, signal)) : embedder.embed(texts, signal)),
    };
    const worker = backfill(semantic, flaky);
    worker.start();
    try {
      await vi.waitFor(() => expect(failures).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 20 });
      expect(await search(p, "bicycle")).toEqual([]);
      down = false;
      await vi.waitFor(async () => expect(await search(p, "bicycle")).toEqual([b.beliefId]), { timeout: 10_000, interval: 50 });
    } finally {
      await worker.stop();
    }
  });

  it("a statement the endpoint refuses is skipped (and logged by id), never stalling the others", async () => {
    const p = newPrincipal("refused");
    const good = belief({ statement: "Andy collects stamps" });
    const poison = belief({ statement: "POISON statement the endpoint refuses" });
    const other = belief({ statement: "Andy grows tomatoes" });
    await store().putBeliefs(p, [good, poison, other]);
    // Like a real endpoint: one refused input fails the whole request with 400.
    const picky: Embedder = {
      ...embedder,
      embed: (texts, signal) =>
        texts.some((t) => t.startsWith("POISON"))
          ? Promise.reject(new EmbedderError("embeddings endpoint answered 400: input too long", 400))
          : embedder.embed(texts, signal),
    };
    const { logger, lines } = capturingLogger();
    const worker = new EmbeddingBackfill(
      semantic,
      picky,
      { batch: 1000, pollIntervalMs: 60_000, retryMinMs: 10, retryMaxMs: 20, sensitivityCeiling: SENSITIVITY.restricted },
      logger,
    );
    await embedAll(worker);
    expect(await search(p, "Andy stamps tomatoes POISON")).toEqual(expect.arrayContaining([good.beliefId, other.beliefId]));
    expect(await search(p, "Andy stamps tomatoes POISON")).not.toContain(poison.beliefId);
    expect(await worker.embedBatch()).toBe(0);
    const warning = lines.find((l) => l.msg.startsWith("embeddings endpoint refused a statement"));
    expect(warning).toMatchObject({ beliefId: poison.beliefId, status: 400 });
    expect(JSON.stringify(lines)).not.toContain("POISON");
  });

  it("sweeps every principal only while it holds the fleet's lease; a woken principal it embeds regardless", async () => {
    const elsewhere = newPrincipal("elsewhere");
    const mine = newPrincipal("mine");
    const [theirs, own] = [belief({ statement: "Andy rows on the river" }), belief({ statement: "Andy sails on the lake" })];
    await store().putBeliefs(elsewhere, [theirs]);
    let claims = 0;
    const worker = new EmbeddingBackfill(
      semantic,
      embedder,
      { batch: 50, pollIntervalMs: 20, retryMinMs: 10, retryMaxMs: 20, sensitivityCeiling: SENSITIVITY.restricted, claimSweep: async () => (++claims, false) },
      silent,
    );
    worker.start();
    try {
      await store().putBeliefs(mine, [own]);
      worker.wake(mine);
      await vi.waitFor(async () => expect(await search(mine, "sails")).toEqual([own.beliefId]), { timeout: 10_000, interval: 50 });
      await vi.waitFor(() => expect(claims).toBeGreaterThanOrEqual(2), { timeout: 10_000, interval: 20 });
      expect(await search(elsewhere, "rows river")).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it("wakes after a write and embeds the principal's new belief without waiting for the next sweep", async () => {
    const worker = backfill(semantic);
    worker.start();
    try {
      await vi.waitFor(async () => expect(await semantic.missingEmbeddings(embedder.id, SENSITIVITY.restricted, 1)).toEqual([]), {
        timeout: 10_000,
        interval: 50,
      });
      const p = newPrincipal("wake");
      const b = belief({ statement: "Andy plays the cello" });
      await store().putBeliefs(p, [b]);
      worker.wake(p);
      // The sweep ran at start and is next due in a minute: only the principal's wake can embed it within the wait.
      await vi.waitFor(async () => expect(await search(p, "cello")).toEqual([b.beliefId]), { timeout: 10_000, interval: 50 });

      // Later passes start from the position already covered; a rewrite moves the belief past it.
      await store().putBeliefs(p, [{ ...b, statement: "Andy plays the viola" }]);
      worker.wake(p);
      await vi.waitFor(async () => expect(await search(p, "viola")).toEqual([b.beliefId]), { timeout: 10_000, interval: 50 });
    } finally {
      await worker.stop();
    }
  });

  describe("through the pipeline", () => {
    const p = newPrincipal("pipeline");
    const b = belief({ subject: "veetbot", statement: "veetbot deploys to the team's Kubernetes cluster", beliefType: "fact" });

    beforeAll(async () => {
      await store().putBeliefs(p, [b]);
      await embedAll(backfill(semantic));
    });

    it("runs as the 'semantic' arm and is fused with the others", async () => {
      const deps = { ...pipelineDeps(store(), { record: async () => {} }), semantic: { embedder, store: semantic, similarity: DEFAULT_SEMANTIC_SIMILARITY.hashed } };
      const { result, trace } = await runRecall(deps, p, requested({ text: "How does veetbot deploy?" }));
      expect(result.armsDegraded).toEqual([]);
      expect(result.items.map((i) => i.beliefId)).toEqual([b.beliefId]);
      expect(result.items[0]!.arms).toContain("semantic");
      expect(Object.keys(trace.armLatenciesMs ?? {})).toContain("semantic");
      // The ranking that ran is named: in the trace and in the rendered header.
      expect(trace.retrievalPolicyVersion).toBe(`${RETRIEVAL_POLICY.version}+semantic@3`);
      expect(result.rendered.split("\n")[0]).toMatch(/ policy="retrieval@\d+\+semantic@3">$/);
    });

    it("an embedder outage degrades the arm, named in arms_degraded, never the recall", async () => {
      const deps = { ...pipelineDeps(store(), { record: async () => {} }), semantic: { embedder: failing, store: semantic, similarity: DEFAULT_SEMANTIC_SIMILARITY.hashed } };
      const { result } = await runRecall(deps, p, requested({ text: "How does veetbot deploy?" }));
      expect(result.armsDegraded).toEqual(["semantic"]);
      expect(result.items.map((i) => i.beliefId)).toEqual([b.beliefId]);
      expect(result.items[0]!.arms).not.toContain("semantic");
    });

    it("is not used for session snapshots, whose bytes must follow the store head alone", async () => {
      const deps = { ...pipelineDeps(store(), { record: async () => {} }), semantic: { embedder, store: semantic, similarity: DEFAULT_SEMANTIC_SIMILARITY.hashed } };
      const { trace } = await runRecall(deps, p, requested({ text: "How does veetbot deploy?" }), { kind: "snapshot" });
      expect(Object.keys(trace.armLatenciesMs ?? {})).toContain("structured");
      expect(Object.keys(trace.armLatenciesMs ?? {})).not.toContain("semantic");
      expect(trace.retrievalPolicyVersion).toBe(RETRIEVAL_POLICY.version);
    });

    it("is absent unless configured", async () => {
      const { trace } = await runRecall(pipelineDeps(store(), { record: async () => {} }), p, requested({ text: "How does veetbot deploy?" }));
      expect(Object.keys(trace.armLatenciesMs ?? {})).not.toContain("semantic");
      expect(trace.retrievalPolicyVersion).toBe(RETRIEVAL_POLICY.version);
    });

    it("the arm embeds nothing for a query without text", async () => {
      const sent: string[] = [];
      const spying: Embedder = { ...embedder, embed: (texts, signal) => (sent.push(...texts), embedder.embed(texts, signal)) };
      expect(await semanticArm({ embedder: spying, store: semantic, similarity: DEFAULT_SEMANTIC_SIMILARITY.hashed }, store().candidates, filterFor(p), "  ", 10).run(new AbortController().signal)).toEqual([]);
      expect(sent).toEqual([]);
    });
  });
});

describe.each(STORE_KINDS)("enabling the semantic arm without pgvector ($kind)", ({ kind, open }) => {
  const store = useStore(open);

  it("refuses with a message naming the fix, creates nothing, and leaves the main schema working", async () => {
    const error = await enableSemantic(store().db).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      kind === "postgres"
        ? /^RECALL_SEMANTIC=on needs the pgvector extension, which this PostgreSQL server does not have: install pgvector .* or set RECALL_SEMANTIC=off$/
        : /^RECALL_SEMANTIC=on needs the vector extension, which this PGlite database was opened without$/,
    );
    expect(await store().db.query("SELECT to_regclass('belief_embeddings') AS t")).toEqual([{ t: null }]);
    const p = newPrincipal("plain");
    await store().putBeliefs(p, [belief()]);
    expect(await store().lexicalCandidates(filterFor(p), lexicalQuery(["concise"]), 10)).toHaveLength(1);
  });
});
