import { describe, expect, it } from "vitest";
import { documentParts, documentVector } from "../../src/embed/document-vector.js";
import { withQueryCache } from "../../src/embed/query-embedding-cache.js";
import { documentEmbedderId, type Embedder } from "../../src/ports/embedder.js";
import { documentWeights, RETRIEVAL_POLICY } from "../../src/recall/policy.js";

/** The semantic arm's document: statement and source context, as the lexical fields (issue 45). */

const W = documentWeights(RETRIEVAL_POLICY);

describe("the embedded document", () => {
  it("has the lexical fields' weights", () => {
    const f = RETRIEVAL_POLICY.lexical.fieldWeights;
    expect(W).toEqual({ statement: f.statement, source: f.source, neighbours: f.neighbours });
  });

  it("is the statement, its source episodes and their neighbours; an empty part is left out", () => {
    const context = { source: "I take my daughter Mia to cello lessons.", neighbours: "How was your week? Busy!" };
    expect(documentParts({ statement: "Andy's daughter plays the cello.", context }, W)).toEqual([
      { text: "Andy's daughter plays the cello.", weight: W.statement },
      { text: context.source, weight: W.source },
      { text: context.neighbours, weight: W.neighbours },
    ]);
    expect(documentParts({ statement: "Andy prefers tabs.", context: { source: "", neighbours: "  " } }, W)).toEqual([
      { text: "Andy prefers tabs.", weight: W.statement },
    ]);
  });

  it("is the weighted sum of the parts' vectors at unit length", () => {
    const v = documentVector([[1, 0], [0, 1]], [1, 0.5]);
    expect(v[0]).toBeCloseTo(1 / Math.hypot(1, 0.5), 12);
    expect(v[1]).toBeCloseTo(0.5 / Math.hypot(1, 0.5), 12);
    expect(documentVector([[3, 4]], [1])).toEqual([0.6, 0.8]);
  });

  it("names its composition in the stored id, so a change of weights embeds again", () => {
    expect(documentEmbedderId("local:all-MiniLM-L6-v2-int8:384", W)).toBe("local:all-MiniLM-L6-v2-int8:384+doc(1,0.7,0.5)");
    expect(documentEmbedderId("x", { ...W, source: 1 })).not.toBe(documentEmbedderId("x", W));
  });
});

describe("the query embedding cache", () => {
  function counting(): Embedder & { calls: string[][] } {
    const calls: string[][] = [];
    return { id: "count:1", dimensions: 1, calls, embed: async (texts) => (calls.push([...texts]), texts.map((t) => [t.length])) };
  }

  it("embeds a query text once while it is among the most recent, and forgets the least recent", async () => {
    const inner = counting();
    const cached = withQueryCache(inner, 2);
    expect(await cached.embed(["does Andy have kids"], undefined, "query")).toEqual([[19]]);
    await cached.embed(["does Andy have kids"], undefined, "query");
    await cached.embed(["keep it short"], undefined, "query");
    await cached.embed(["does Andy have kids"], undefined, "query");
    await cached.embed(["third"], undefined, "query");
    await cached.embed(["keep it short"], undefined, "query");
    expect(inner.calls).toEqual([["does Andy have kids"], ["keep it short"], ["third"], ["keep it short"]]);
  });

  it("passes the background embedder's documents through, one or many", async () => {
    const inner = counting();
    const cached = withQueryCache(inner, 8);
    await cached.embed(["a", "b"]);
    await cached.embed(["a", "b"]);
    await cached.embed(["a"], undefined, "document");
    await cached.embed(["a"], undefined, "document");
    expect(inner.calls).toHaveLength(4);
  });
});
