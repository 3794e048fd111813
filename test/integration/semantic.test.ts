import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startEmbeddingsServer, type EmbeddingsServer } from "../support/embeddings-server.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

/** The semantic arm in the real sidecar process, over gRPC, on PGlite with pgvector. */

const ferry = () => beliefMsg({ subject: "harbour", statement: "The harbour ferry leaves at seven.", belief_type: "project_fact" });
const QUERY = { text: "When does the ferry leave the harbour?" };

/** `query`: another text than QUERY where the test needs the embedder asked (a query's embedding is cached per text). */
async function recallEvents(c: Clients, me: Json, deadlineMs = 5_000, query = QUERY): Promise<{ arms: Json[]; result: Json }> {
  const events = await serverStream(c.memory, "Recall", { query }, me as { tenant: string; principal: string }, deadlineMs);
  return { arms: events.filter((e) => e.event === "arm").map((e) => e.arm as Json), result: events[events.length - 1]!.result as Json };
}

describe("semantic arm with the deterministic embedder (pglite)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  const fact = ferry();

  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", { RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "hashed" });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [fact] }, me);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  it("finds the belief through the semantic arm once the background embedder has embedded it", async () => {
    // Embedding happens after the write, in the background: poll until the arm sees it.
    const { arms, result } = await vi.waitFor(
      async () => {
        const r = await recallEvents(c, me);
        expect(r.arms.find((a) => a.arm === "semantic")?.candidates?.length ?? 0).toBeGreaterThan(0);
        return r;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(arms.find((a) => a.arm === "semantic")).toMatchObject({ degraded: false });
    expect(result.arms_degraded).toEqual([]);
    expect(result.items.map((i: Json) => i.belief_id)).toEqual([fact.belief_id]);
    expect(result.items[0].arms).toContain("semantic");
    expect(sidecar.logs()).toContain('"embedder":"hashed@1:256"');
  });
});

describe("semantic arm when the embeddings endpoint is slow or down (pglite)", () => {
  let embeddings: EmbeddingsServer;
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  const fact = ferry();
  const API_KEY = "sk-integration-secret-123";

  beforeAll(async () => {
    embeddings = await startEmbeddingsServer(64);
    sidecar = await startSidecarProcess("pglite", {
      RECALL_SEMANTIC: "on",
      RECALL_EMBEDDER: "openai",
      RECALL_EMBEDDINGS_URL: embeddings.baseUrl,
      RECALL_EMBEDDINGS_MODEL: "test-embed",
      RECALL_EMBEDDING_DIMENSIONS: "64",
      RECALL_EMBEDDINGS_API_KEY: API_KEY,
      RECALL_EMBEDDINGS_TIMEOUT_MS: "2000",
    });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [fact] }, me);
    await vi.waitFor(
      async () => expect((await recallEvents(c, me)).result.items[0]?.arms ?? []).toContain("semantic"),
      { timeout: 15_000, interval: 100 },
    );
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
    await embeddings?.close();
  });

  it("sends the configured model and the key as a Bearer token", () => {
    expect(embeddings.requests.length).toBeGreaterThan(0);
    expect(embeddings.requests[0]).toMatchObject({ authorization: `Bearer ${API_KEY}`, body: { model: "test-embed" } });
  });

  it("a slow embedder: the arm is abandoned at the deadline and named in arms_degraded; the recall answers", async () => {
    embeddings.respond = async (_req, res) => {
      await delay(5_000);
      res.destroy();
      return true;
    };
    try {
      // A result that missed the client's deadline would fail this call with DEADLINE_EXCEEDED.
      // A text not asked before: QUERY's embedding is cached and would not wait for the embedder.
      const slowQuery = { text: "When does the harbour ferry leave?" };
      const { arms, result } = await recallEvents(c, me, 3_000, slowQuery);
      expect(arms.find((a) => a.arm === "semantic")).toMatchObject({ degraded: true });
      expect(result.arms_degraded).toEqual(["semantic"]);
      expect(result.items.map((i: Json) => i.belief_id)).toEqual([fact.belief_id]);
      expect(result.items[0].arms).not.toContain("semantic");

      // The breaker: the next recall skips the failing embedder at once instead of waiting for it again.
      const asked = () => embeddings.requests.filter((r) => r.body.input[0] === slowQuery.text).length;
      const before = asked();
      const next = await recallEvents(c, me, 3_000, slowQuery);
      expect(next.result.arms_degraded).toEqual(["semantic"]);
      expect(asked()).toBe(before);
    } finally {
      embeddings.respond = null;
    }
  });

  it("an unreachable embedder: writes still succeed, the arm is degraded, the recall answers, and the key is never logged", async () => {
    await embeddings.close();
    // As good an answer as the first (a statement that matched the question only weakly would be held
    // back by the relevance floor's relative part, which says nothing about the write path).
    const later = beliefMsg({ subject: "harbour", statement: "The harbour ferry leaves at nine on Sundays.", belief_type: "project_fact" });
    // The write path never waits for the embedder.
    await unary(c.write, "PutBeliefs", { beliefs: [later] }, me);
    const { result } = await recallEvents(c, me, 5_000, { text: `${QUERY.text}?` });
    expect(result.arms_degraded).toEqual(["semantic"]);
    expect(result.items.map((i: Json) => i.belief_id).sort()).toEqual([fact.belief_id, later.belief_id].sort());
    await vi.waitFor(() => expect(sidecar.logs()).toContain("background embedder failed; retrying with backoff"), { timeout: 10_000 });
    expect(sidecar.logs()).toContain("recall arm failed; degraded");
    expect(sidecar.logs()).not.toContain(API_KEY);
  });
});

describe("semantic arm on PostgreSQL without pgvector", () => {
  it("refuses to start, exit code 2, naming the missing extension and the fix", async () => {
    // Owned here: a sidecar that never listened cannot be stopped, so its database is dropped by the test.
    const database = await freshPostgresDatabase();
    const error = await startSidecarProcess("postgres", { RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "hashed" }, { databaseUrl: database.url })
      .catch((e: unknown) => e)
      .finally(() => database.drop());
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toContain("sidecar exited with 2 before listening");
    expect((error as Error).message).toContain(
      "RECALL_SEMANTIC=on needs the pgvector extension, which this PostgreSQL server does not have",
    );
  });
});
