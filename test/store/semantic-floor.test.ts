import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SENSITIVITY } from "../../src/domain/model.js";
import { EmbeddingBackfill } from "../../src/embed/embedding-backfill.js";
import { openAiEmbedder } from "../../src/embed/openai-embedder.js";
import type { Embedder } from "../../src/ports/embedder.js";
import { documentWeights, RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { DEFAULT_SEMANTIC_SIMILARITY } from "../../src/domain/semantic-calibration.js";
import { enableSemantic, SemanticStore } from "../../src/store/candidates/semantic-store.js";
import { startEmbeddingsServer, type EmbeddingsServer } from "../support/embeddings-server.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { pipelineDeps, requested, runRecall } from "../support/pipeline.js";
import { freshPgliteWithVector } from "../support/stores.js";
import { useStore } from "./store-helpers.js";

/**
 * The relevance floor with the semantic arm on (PGlite: PostgreSQL here has
 * no pgvector). A real model gives unrelated texts a small positive cosine;
 * the local OpenAI-compatible endpoint here answers deterministic vectors
 * with that shape: one component shared by every text (so any two texts are
 * at cosine ≈ 0.03 to 0.06) plus one component per topic a text is about.
 */

const DIMENSIONS = 8;
const TOPICS: readonly [number, RegExp][] = [
  [1, /\beditor|helix|vim\b/i],
  [2, /\bcoffee|espresso\b/i],
  [3, /\bdeploy|kubernetes|fly\.io\b/i],
  [4, /\bberlin|lisbon|lives?\b/i],
  [5, /\bweather|rain|forecast\b/i],
];

/** The endpoint's vector for a text: a faint shared component, then its topics. */
function topicVector(text: string): number[] {
  const v = new Array<number>(DIMENSIONS).fill(0);
  v[0] = 0.2;
  for (const [dim, re] of TOPICS) if (re.test(text)) v[dim] = 1;
  // A text about nothing known leans on a component no belief has.
  if (v.slice(1, 6).every((x) => x === 0)) v[7] = 1;
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe("semantic arm and the relevance floor (pglite, OpenAI-compatible endpoint)", () => {
  const store = useStore(freshPgliteWithVector);
  let server: EmbeddingsServer;
  let embedder: Embedder;
  let semantic: SemanticStore;
  const p = newPrincipal();
  const memory = [
    belief({ subject: "Andy", statement: "Andy's editor is Helix.", beliefType: "preference" }),
    belief({ subject: "Andy", statement: "Andy takes his coffee black.", beliefType: "preference" }),
    belief({ subject: "veetbot", statement: "veetbot deploys to Fly.io.", beliefType: "project_fact" }),
    belief({ subject: "Andy", statement: "Andy lives in Lisbon.", beliefType: "user_model_attr" }),
  ];

  beforeAll(async () => {
    server = await startEmbeddingsServer(DIMENSIONS);
    server.respond = (req, res) => {
      const data = req.body.input.map((text, index) => ({ object: "embedding", index, embedding: topicVector(text) }));
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ object: "list", data, model: req.body.model }));
      return true;
    };
    embedder = openAiEmbedder({ baseUrl: server.baseUrl, model: "topics", apiKey: undefined, dimensions: DIMENSIONS, timeoutMs: 5_000 });
    await enableSemantic(store().db);
    semantic = new SemanticStore(store().db, documentWeights(RETRIEVAL_POLICY));
    await store().putBeliefs(p, memory);
    const backfill = new EmbeddingBackfill(
      semantic,
      embedder,
      { batch: 50, pollIntervalMs: 60_000, retryMinMs: 10, retryMaxMs: 20, sensitivityCeiling: SENSITIVITY.restricted },
      pino({ level: "silent" }),
    );
    while ((await backfill.embedBatch()) > 0);
  });

  afterAll(async () => {
    await server.close();
  });

  const deps = () => ({
    ...pipelineDeps(store(), { record: async () => {} }),
    semantic: { embedder, store: semantic, similarity: DEFAULT_SEMANTIC_SIMILARITY.openai },
  });

  it("a question no stored belief is about renders nothing, though every belief is a faint semantic neighbour", async () => {
    const { result, trace } = await runRecall(deps(), p, requested({ text: "Will it be sunny on Saturday?" }));
    expect(result.armsDegraded).toEqual([]);
    expect(Object.keys(trace.armLatenciesMs ?? {})).toContain("semantic");
    expect(result.items).toEqual([]);
  });

  it("a question that only the semantic arm connects to a belief still finds it", async () => {
    // No word in common with "Andy's editor is Helix." but the topic: the lexical arm finds nothing.
    const { result } = await runRecall(deps(), p, requested({ text: "Which vim alternative is in use?" }));
    expect(result.items.map((i) => i.statement)).toEqual(["Andy's editor is Helix."]);
    expect(result.items[0]!.arms).toEqual(["semantic"]);
  });

  it("with the similarity floor at zero, a weak semantic-only match still cannot clear the relevance floor", async () => {
    const loose = { ...deps(), semantic: { ...deps().semantic, similarity: { min: 0, full: DEFAULT_SEMANTIC_SIMILARITY.openai.full } } };
    const { result, trace } = await runRecall(loose, p, requested({ text: "Will it be sunny on Saturday?" }));
    // The arm returns its faint neighbours, and the ranking keeps every one of them below the floor.
    expect(trace.ranked?.length).toBeGreaterThan(0);
    expect(result.items).toEqual([]);
  });
});
