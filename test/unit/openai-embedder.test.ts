import { setTimeout as delay } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EmbedderError } from "../../src/ports/embedder.js";
import { hashedVector } from "../../src/embed/hashed-embedder.js";
import { openAiEmbedder, vectorsFrom } from "../../src/embed/openai-embedder.js";
import { startEmbeddingsServer, type EmbeddingsServer } from "../support/embeddings-server.js";

/** The OpenAI-compatible client against a real HTTP server on 127.0.0.1. */
describe("openAiEmbedder", () => {
  let server: EmbeddingsServer;
  beforeAll(async () => {
    server = await startEmbeddingsServer(16);
  });
  afterEach(() => {
    server.respond = null;
    server.requests.length = 0;
  });
  afterAll(async () => {
    await server.close();
  });

  const client = (o: { dimensions?: number; timeoutMs?: number; apiKey?: string; baseUrl?: string; prefixes?: { query: string; document: string } } = {}) =>
    openAiEmbedder({
      baseUrl: o.baseUrl ?? server.baseUrl,
      model: "test-embed",
      dimensions: o.dimensions ?? 16,
      timeoutMs: o.timeoutMs ?? 5_000,
      ...(o.apiKey ? { apiKey: o.apiKey } : {}),
      ...(o.prefixes ? { prefixes: o.prefixes } : {}),
    });

  it("puts the configured prefix before each text of its purpose, documents by default", async () => {
    const prefixed = client({ prefixes: { query: "search_query: ", document: "search_document: " } });
    await prefixed.embed(["does Andy have kids"], undefined, "query");
    await prefixed.embed(["Andy's daughter Mia plays the cello", "Mia"]);
    expect(server.requests.map((r) => r.body.input)).toEqual([
      ["search_query: does Andy have kids"],
      ["search_document: Andy's daughter Mia plays the cello", "search_document: Mia"],
    ]);
  });

  it("names prefixed vectors apart, so stored vectors of other prefixes are embedded again", () => {
    const plain = client().id;
    const a = client({ prefixes: { query: "query: ", document: "passage: " } }).id;
    const b = client({ prefixes: { query: "query: ", document: "" } }).id;
    expect(plain).toBe("openai:test-embed:16");
    expect(new Set([plain, a, b]).size).toBe(3);
    expect(client({ prefixes: { query: "", document: "" } }).id).toBe(plain);
  });

  it("POSTs {model, input} to {base}/embeddings with the Bearer key, and returns the vectors in input order", async () => {
    const vectors = await client({ apiKey: "sk-test-123", baseUrl: `${server.baseUrl}/` }).embed(["alpha beta", "gamma"]);
    expect(vectors).toEqual([hashedVector("alpha beta", 16), hashedVector("gamma", 16)]);
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]!.authorization).toBe("Bearer sk-test-123");
    expect(server.requests[0]!.body).toMatchObject({ model: "test-embed", input: ["alpha beta", "gamma"] });
  });

  it("sends no Authorization header without a key (local servers)", async () => {
    await client().embed(["x"]);
    expect(server.requests[0]!.authorization).toBeUndefined();
  });

  it("orders vectors by their index, not by their position in the answer", async () => {
    server.respond = (req, res) => {
      const data = req.body.input.map((t, index) => ({ index, embedding: hashedVector(t, 16) })).reverse();
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ data }));
      return true;
    };
    expect(await client().embed(["one", "two", "three"])).toEqual(["one", "two", "three"].map((t) => hashedVector(t, 16)));
  });

  it("turns a non-2xx answer into an EmbedderError naming the status", async () => {
    server.respond = (_req, res) => {
      res.writeHead(429, { "content-type": "application/json" }).end('{"error":{"message":"rate limited"}}');
      return true;
    };
    const error = await client().embed(["x"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as Error).message).toMatch(/answered 429: .*rate limited/);
  });

  it("rejects vectors of the wrong dimension", async () => {
    const error = await client({ dimensions: 8 }).embed(["x"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as Error).message).toContain("16 dimensions; 8 configured");
  });

  it("rejects an answer that is not JSON", async () => {
    server.respond = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" }).end("<html>oops</html>");
      return true;
    };
    await expect(client().embed(["x"])).rejects.toBeInstanceOf(EmbedderError);
  });

  it("gives up after its own timeout", async () => {
    server.respond = async (_req, res) => {
      await delay(2_000);
      res.destroy();
      return true;
    };
    const error = await client({ timeoutMs: 100 }).embed(["x"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as Error).message).toContain("did not answer within 100 ms");
  });

  it("honours the caller's abort signal (the recall's deadline) with the caller's reason", async () => {
    server.respond = async (_req, res) => {
      await delay(2_000);
      res.destroy();
      return true;
    };
    const abort = new AbortController();
    const reason = new Error("recall deadline reached");
    setTimeout(() => abort.abort(reason), 50);
    await expect(client().embed(["x"], abort.signal)).rejects.toBe(reason);
  });

  it("turns an unreachable endpoint into an EmbedderError", async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused.
    const error = await client({ baseUrl: "http://127.0.0.1:1/v1" }).embed(["x"]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EmbedderError);
    expect((error as Error).message).toContain("unreachable");
  });

  it("sends nothing for no texts", async () => {
    expect(await client().embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });
});

describe("vectorsFrom", () => {
  it("rejects a missing, short, repeated or non-numeric answer", () => {
    expect(() => vectorsFrom({}, 1, 2)).toThrow("no vectors for 1 inputs");
    expect(() => vectorsFrom({ data: [{ index: 0, embedding: [1, 0] }] }, 2, 2)).toThrow("1 vectors for 2 inputs");
    expect(() => vectorsFrom({ data: [{ index: 0, embedding: [1, 0] }, { index: 0, embedding: [0, 1] }] }, 2, 2)).toThrow(
      "repeated index",
    );
    expect(() => vectorsFrom({ data: [{ index: 0, embedding: [1, "x"] }] }, 1, 2)).toThrow("non-numeric");
    expect(() => vectorsFrom({ data: [{ index: 0, embedding: [1, null] }] }, 1, 2)).toThrow("non-numeric");
  });
});
