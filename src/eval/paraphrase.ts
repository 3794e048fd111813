import { pino } from "pino";
import { SENSITIVITY } from "../domain/model.js";
import type { SemanticSimilarity } from "../domain/semantic-calibration.js";
import { EmbeddingBackfill } from "../embed/embedding-backfill.js";
import { withQueryCache } from "../embed/query-embedding-cache.js";
import type { Embedder } from "../ports/embedder.js";
import { documentWeights, RETRIEVAL_POLICY } from "../recall/policy.js";
import { enableSemantic, SemanticStore } from "../store/candidates/semantic-store.js";
import { MemoryStore } from "../store/memory-store.js";
import { loadMigrations, migrate } from "../store/migrate.js";
import { createPgliteClient, openPglite } from "../store/pglite/pglite-client.js";
import { runBenchmark, type BenchmarkResult } from "./benchmark.js";
import type { BenchmarkFixture } from "./benchmark-fixture.js";

/**
 * The paraphrase set (`recall eval paraphrase`, test/fixtures/benchmark/paraphrase.json):
 * probes whose query shares no content word with the beliefs it needs
 * ("Keep your reply short." → "Andy prefers concise writing."), run through
 * the benchmark's pipeline twice, on fresh embedded stores: the semantic arm
 * off, then on with `embedder`. The words alone cannot find these beliefs;
 * the difference is what the arm adds. Not part of the committed baseline.
 */
export interface ParaphraseResult {
  embedder: string;
  /** With the in-turn relevance floor, as a runtime asks. */
  off: BenchmarkResult;
  on: BenchmarkResult;
  /** With no floor (min_score 0): the ranking alone, as the LoCoMo ranked list measures it. */
  rankedOff: BenchmarkResult;
  rankedOn: BenchmarkResult;
}

export async function runParaphrase(fixture: BenchmarkFixture, embedder: Embedder, similarity: SemanticSimilarity): Promise<ParaphraseResult> {
  const noFloor = withoutFloor(fixture);
  return {
    embedder: embedder.id,
    off: await armOff(fixture),
    on: await armOn(fixture, embedder, similarity),
    rankedOff: await armOff(noFloor),
    rankedOn: await armOn(noFloor, embedder, similarity),
  };
}

function withoutFloor(fixture: BenchmarkFixture): BenchmarkFixture {
  return {
    ...fixture,
    sessions: fixture.sessions.map((s) => ({ ...s, steps: s.steps.map((step) => (step.kind === "probe" ? { ...step, minScore: 0 } : step)) })),
  };
}

function armOff(fixture: BenchmarkFixture): Promise<BenchmarkResult> {
  return withStore(false, (store) => runBenchmark(fixture, store));
}

function armOn(fixture: BenchmarkFixture, embedder: Embedder, similarity: SemanticSimilarity): Promise<BenchmarkResult> {
  return withStore(true, async (store) => {
    await enableSemantic(store.db);
    const semanticStore = new SemanticStore(store.db, documentWeights(RETRIEVAL_POLICY));
    const backfill = new EmbeddingBackfill(
      semanticStore,
      embedder,
      { batch: 64, pollIntervalMs: 60_000, retryMinMs: 1000, retryMaxMs: 1000, sensitivityCeiling: SENSITIVITY.restricted },
      pino({ level: "silent" }),
    );
    const search = { embedder: withQueryCache(embedder, 64), store: semanticStore, similarity };
    return runBenchmark(fixture, store, RETRIEVAL_POLICY, {
      search,
      embedAll: async () => {
        while ((await backfill.embedBatch()) > 0);
      },
    });
  });
}

async function withStore<T>(vector: boolean, run: (store: MemoryStore) => Promise<T>): Promise<T> {
  const client = createPgliteClient(await openPglite(undefined, { vector }));
  try {
    await migrate(client, await loadMigrations());
    return await run(new MemoryStore(client));
  } finally {
    await client.close();
  }
}

/** Recall@5 and within budget, arm off and on, with the floor and without; then each probe's ranked beliefs both ways. */
export function formatParaphrase(r: ParaphraseResult): string {
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  const line = (name: string, b: BenchmarkResult) =>
    `  ${name.padEnd(4)} recall@5 ${pct(b.metrics.recallAt5)}, within budget ${pct(b.metrics.recallAtBudget)}, all expected shown ${pct(b.metrics.allAtBudget)}, noise ${pct(b.metrics.noiseRatio)}, tokens ${b.metrics.tokensPerRecall.in_turn.toFixed(0)}`;
  const top = (keys: string[]) => keys.slice(0, 5).join(", ");
  const rows = r.rankedOn.probes.map((p, i) => `  ${p.id}: off [${top(r.rankedOff.probes[i]!.returned)}]  on [${top(p.returned)}]`);
  return [
    `paraphrase set: ${r.on.metrics.targetProbes} probes, query and needed beliefs share no content word; semantic arm ${r.embedder}`,
    "in-turn floor on (what is injected):",
    line("off", r.off),
    line("on", r.on),
    "no floor (the ranking alone):",
    line("off", r.rankedOff),
    line("on", r.rankedOn),
    "top 5 ranked, no floor:",
    ...rows,
  ].join("\n");
}

/** The four runs' metrics, for --json. */
export function paraphraseJson(r: ParaphraseResult) {
  return {
    embedder: r.embedder,
    floor: { off: r.off.metrics, on: r.on.metrics },
    noFloor: { off: r.rankedOff.metrics, on: r.rankedOn.metrics },
  };
}
