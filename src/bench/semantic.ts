#!/usr/bin/env node
import { documentWeights, RETRIEVAL_POLICY } from "../recall/policy.js";
import { parseArgs } from "node:util";
import { pino } from "pino";
import { SENSITIVITY } from "../domain/model.js";
import { EmbeddingBackfill } from "../embed/embedding-backfill.js";
import { LocalEmbedder } from "../embed/local-embedder.js";
import { defaultModelDir } from "../config/model-cache.js";
import { readModelFolder } from "../embed/local-model-folder.js";
import { MemoryStore } from "../store/memory-store.js";
import { loadMigrations, migrate } from "../store/migrate.js";
import { createPgliteClient, openPglite } from "../store/pglite/pglite-client.js";
import { enableSemantic, SemanticStore } from "../store/candidates/semantic-store.js";
import { lexemeLookup, loadIndex } from "../principal-index/freshness.js";
import { documentEmbedderId } from "../ports/embedder.js";
import type { SqlClient } from "../store/sql-client.js";
import { parseFixtures, writeFixtures, type Fixture } from "../testing/fixtures.js";
import { startLocalSidecar, type LocalSidecar } from "../testing/index.js";
import { OBJECTS, PREDICATES, QUALIFIERS, SUBJECTS, pick, seededRandom } from "./corpus.js";
import { connectBench, type BenchClient, type Json } from "./grpc-client.js";
import { median } from "./stats.js";

/**
 * `npm run bench:semantic`: what the semantic arm with the local model
 * (RECALL_EMBEDDER=local) costs, on one principal of synthetic beliefs. Not a
 * test: it prints figures, the median of several rounds and their spread.
 *
 * - Background embedding throughput, in process on PGlite: beliefs embedded
 *   and stored per second by the background embedder's own batches.
 * - Bytes of vector per belief, as PostgreSQL stores it, and as the
 *   principal index holds it (int8).
 * - A query's embedding (in process, through the worker) as a ratio to the
 *   gRPC floor: the health check over a channel to a real sidecar.
 * - In-turn recall over gRPC with the arm on and with it off, two sidecars
 *   holding the same beliefs, measured in alternating rounds.
 *
 * Needs the model: `npm run model:fetch`.
 */

const USAGE = `usage: npm run bench:semantic -- [--beliefs N] [--rounds R] [--iterations I] [--model-dir DIR]

  --beliefs N      beliefs of the measured principal (default 1000)
  --rounds R       rounds of each measurement; medians and spreads over them (default 5)
  --iterations I   calls per round for the latencies (default 40)
  --model-dir DIR  the model folder (default: the model cache's all-MiniLM-L6-v2-int8)`;

const TENANT = "bench";
const PRINCIPAL = "semantic";
const QUERIES = [
  "What does the team use for analytics?",
  "Which database do we prototype with?",
  "How are releases reviewed?",
  "What tools does Andy like for writing docs?",
  "Which files do the exports go to?",
  "What is the platform team's deploy schedule?",
];

function beliefRecords(n: number): Fixture["records"] {
  const random = seededRandom(40);
  return Array.from({ length: n }, (_, i) => {
    const subject = pick(random, SUBJECTS);
    return {
      belief: {
        beliefId: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
        subject,
        statement: `${subject} ${pick(random, PREDICATES)} ${pick(random, OBJECTS)} ${pick(random, QUALIFIERS)}.`,
        beliefType: "project_fact",
        status: "BELIEF_STATUS_ACTIVE",
        confidence: 0.8,
        authority: "AUTHORITY_AFFIRMED",
        originScope: "bench",
        scopeLevel: "SCOPE_LEVEL_USER",
        portability: "PORTABILITY_PORTABLE",
        recordedAt: "2026-11-01T00:00:00Z",
      },
    };
  });
}

const fmt = (xs: number[], digits = 2) => `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)})`;

async function timeEach(iterations: number, op: (i: number) => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    await op(i);
    samples.push(performance.now() - t);
  }
  return median(samples);
}

/** Background embedding of every belief, in process, `rounds` times from nothing. */
async function backfillThroughput(
  embedder: LocalEmbedder,
  fixtures: Fixture[],
  rounds: number,
): Promise<{ perSecond: number[]; bytes: number; index: { perBelief: number; vectors: number } }> {
  const client = createPgliteClient(await openPglite(undefined, { vector: true }));
  try {
    await migrate(client, await loadMigrations());
    await enableSemantic(client);
    await writeFixtures(new MemoryStore(client), await parseFixtures(fixtures, new Date()));
    const backfill = new EmbeddingBackfill(
      new SemanticStore(client, documentWeights(RETRIEVAL_POLICY)),
      embedder,
      // The sidecar's default batch (RECALL_EMBEDDINGS_BATCH).
      { batch: 64, pollIntervalMs: 60_000, retryMinMs: 1000, retryMaxMs: 1000, sensitivityCeiling: SENSITIVITY.confidential },
      pino({ level: "silent" }),
    );
    const perSecond: number[] = [];
    let bytes = 0;
    for (let r = 0; r < rounds; r++) {
      await client.exec("DELETE FROM belief_embeddings");
      const t = performance.now();
      let n = 0;
      for (let k = await backfill.embedBatch(); k > 0; k = await backfill.embedBatch()) n += k;
      perSecond.push((n * 1000) / (performance.now() - t));
      const [row] = await client.query<{ bytes: number }>("SELECT avg(pg_column_size(embedding))::float8 AS bytes FROM belief_embeddings");
      bytes = Number(row!.bytes);
    }
    return { perSecond, bytes, index: await indexVectorBytes(client, documentEmbedderId(embedder.id, documentWeights(RETRIEVAL_POLICY))) };
  } finally {
    await client.close();
  }
}

/** The principal index's vector bytes per belief (part of its byte accounting), loaded in process from the embedded store. */
async function indexVectorBytes(client: SqlClient, embedderId: string): Promise<{ perBelief: number; vectors: number }> {
  const index = await loadIndex(client, { tenantId: TENANT, principalId: PRINCIPAL }, { lexemes: lexemeLookup(client) }, embedderId);
  return { perBelief: index.vectorBytes / index.size, vectors: index.vectorRows };
}

/** Waits until the sidecar's background embedder has embedded the last belief written (it goes in write order). */
async function embedded(client: BenchClient, lastStatement: string, lastId: string): Promise<void> {
  const until = Date.now() + 15 * 60_000;
  for (;;) {
    const result = await client.recall({ moment: "MOMENT_IN_TURN", query: { current_scope: "bench", text: lastStatement } });
    if ((result.items as Json[]).some((i) => i.belief_id === lastId && (i.arms as string[]).includes("semantic"))) return;
    if (Date.now() > until) throw new Error("the sidecar's background embedder did not finish in 15 minutes");
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      beliefs: { type: "string", default: "1000" },
      rounds: { type: "string", default: "5" },
      iterations: { type: "string", default: "40" },
      "model-dir": { type: "string" },
      help: { type: "boolean", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const beliefs = Number(values.beliefs);
  const rounds = Number(values.rounds);
  const iterations = Number(values.iterations);
  const modelDir = values["model-dir"] ?? defaultModelDir(process.env.RECALL_MODEL_CACHE);
  const folder = readModelFolder(modelDir);
  const records = beliefRecords(beliefs)!;
  const fixtures: Fixture[] = [{ tenantId: TENANT, principalId: PRINCIPAL, records }];
  const last = records[records.length - 1]!.belief as Json;

  const embedder = new LocalEmbedder(folder, { threads: 1 });
  await embedder.start();
  const sidecars: LocalSidecar[] = [];
  const clients: BenchClient[] = [];
  try {
    process.stderr.write(`bench:semantic: ${beliefs} beliefs, ${rounds} rounds, model ${embedder.id}\n`);
    const throughput = await backfillThroughput(embedder, fixtures, rounds);

    process.stderr.write("bench:semantic: starting two sidecars (arm off, arm on) and waiting for the background embedder\n");
    const env = { RECALL_LOG_LEVEL: "warn" };
    const off = await startLocalSidecar({ fixtures, env });
    sidecars.push(off);
    const on = await startLocalSidecar({ fixtures, env: { ...env, RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "local", RECALL_EMBEDDING_MODEL_DIR: modelDir } });
    sidecars.push(on);
    const identity = { tenant: TENANT, principal: PRINCIPAL };
    const offClient = connectBench(off.address, identity, 10_000);
    const onClient = connectBench(on.address, identity, 10_000);
    clients.push(offClient, onClient);
    await embedded(onClient, String(last.statement), String(last.beliefId));

    const inTurn = (client: BenchClient) => (i: number) =>
      client.recall({ moment: "MOMENT_IN_TURN", turn_id: `t${i}`, query: { current_scope: "bench", text: QUERIES[i % QUERIES.length]! } });
    const floor: number[] = [];
    const query: number[] = [];
    const armOff: number[] = [];
    const armOn: number[] = [];
    const degraded: number[] = [];
    // Warm-up, then rounds that alternate every measurement, so a busy spell of the machine hits all alike.
    await timeEach(10, inTurn(onClient));
    await timeEach(10, inTurn(offClient));
    for (let r = 0; r < rounds; r++) {
      floor.push(await timeEach(iterations, () => offClient.healthCheck()));
      query.push(await timeEach(iterations, (i) => embedder.embed([QUERIES[i % QUERIES.length]!])));
      armOff.push(await timeEach(iterations, inTurn(offClient)));
      let missed = 0;
      armOn.push(
        await timeEach(iterations, async (i) => {
          const result = await inTurn(onClient)(i);
          if ((result.arms_degraded as string[]).includes("semantic")) missed++;
        }),
      );
      degraded.push(missed);
    }
    const ratio = (xs: number[], ys: number[]) => xs.map((x, i) => x / ys[i]!);
    process.stdout.write(
      [
        `semantic arm, local model ${embedder.id}: ${beliefs} synthetic beliefs of one principal; medians of ${rounds} rounds (min–max)`,
        `  background embedding (in process, PGlite, batches of 64): ${fmt(throughput.perSecond, 0)} beliefs/s`,
        `  vector per belief as stored (pgvector, float32): ${throughput.bytes.toFixed(0)} bytes`,
        `  vector per belief in the principal index (int8 + norm): ${throughput.index.perBelief.toFixed(0)} bytes (${throughput.index.vectors} vectors held)`,
        `  gRPC floor (health check, p50 of ${iterations}):      ${fmt(floor)} ms`,
        `  query embedding (in process, p50 of ${iterations}):    ${fmt(query)} ms = ${fmt(ratio(query, floor), 1)} × floor`,
        `  in-turn recall, arm off (p50 of ${iterations}):        ${fmt(armOff)} ms`,
        `  in-turn recall, arm on (p50 of ${iterations}):         ${fmt(armOn)} ms = ${fmt(ratio(armOn, armOff), 2)} × arm off`,
        `  in-turn recalls with the semantic arm degraded: ${degraded.reduce((a, b) => a + b, 0)} of ${rounds * iterations}`,
      ].join("\n") + "\n",
    );
  } finally {
    for (const c of clients) c.close();
    for (const s of sidecars) await s.stop();
    await embedder.close();
  }
}

await main();
