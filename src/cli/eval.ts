import { parseArgs } from "node:util";
import { Progress } from "./progress.js";
import { UsageError } from "./usage-error.js";
import { runBenchmark } from "../eval/benchmark.js";
import { baselineDifferences, readBaseline, recordDecision, toBaseline, writeBaseline } from "../eval/benchmark-baseline.js";
import { readBenchmarkFixture } from "../eval/benchmark-fixture.js";
import { formatBenchmark } from "../eval/benchmark-report.js";
import { DEFAULT_HASHED_DIMENSIONS, type Config } from "../config/config.js";
import { createEmbedder } from "../embed/create-embedder.js";
import { hashedEmbedder } from "../embed/hashed-embedder.js";
import { evaluateLocomo, formatLocomoReport } from "../eval/locomo-eval.js";
import { DEFAULT_SEMANTIC_SIMILARITY, type SemanticRanking } from "../domain/semantic-calibration.js";
import { formatParaphrase, paraphraseJson, runParaphrase } from "../eval/paraphrase.js";
import { RETRIEVAL_POLICY } from "../recall/policy.js";
import { cachedEmbedder } from "../embed/embedding-file-cache.js";
import { MemoryStore } from "../store/memory-store.js";
import { loadMigrations, migrate } from "../store/migrate.js";
import { createPgliteClient, openPglite } from "../store/pglite/pglite-client.js";

export const BENCHMARK_FIXTURE = "test/fixtures/benchmark/fixture.json";
export const BENCHMARK_BASELINE = "test/fixtures/benchmark/baseline.json";
export const PARAPHRASE_FIXTURE = "test/fixtures/benchmark/paraphrase.json";

/**
 * `recall eval locomo …` and `recall eval benchmark …`. For locomo, --semantic adds the semantic arm with
 * the configured embedder (RECALL_EMBEDDER…), or the hashed one when RECALL_SEMANTIC is off.
 */
export async function runEval(args: string[], config?: Config): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      conversations: { type: "string" },
      questions: { type: "string" },
      json: { type: "boolean", default: false },
      subjects: { type: "boolean", default: false },
      fixture: { type: "string" },
      baseline: { type: "string", default: BENCHMARK_BASELINE },
      record: { type: "boolean", default: false },
      "accept-regression": { type: "string" },
      semantic: { type: "boolean", default: false },
      items: { type: "string" },
      budget: { type: "string" },
      details: { type: "string" },
      "semantic-cap": { type: "string" },
      "semantic-weight": { type: "string" },
      "semantic-fusion": { type: "string" },
      "semantic-normalise": { type: "string" },
      "semantic-lexical-side": { type: "string" },
      "embedding-cache": { type: "string" },
    },
  });
  const [suite, file] = positionals;
  if (suite === "paraphrase") {
    // With RECALL_SEMANTIC=on, the configured embedder; otherwise the hashed one (which knows no paraphrase).
    const embedder = config?.semantic ? createEmbedder(config.semantic) : hashedEmbedder(DEFAULT_HASHED_DIMENSIONS);
    const similarity = config?.semantic?.similarity ?? DEFAULT_SEMANTIC_SIMILARITY.hashed;
    const result = await runParaphrase(await readBenchmarkFixture(values.fixture ?? PARAPHRASE_FIXTURE), embedder, similarity).finally(() => embedder.close?.());
    process.stdout.write(values.json ? `${JSON.stringify(paraphraseJson(result), null, 2)}\n` : `${formatParaphrase(result)}\n`);
    return 0;
  }
  if (suite === "benchmark") {
    return benchmark(values.fixture ?? BENCHMARK_FIXTURE, values.baseline, { record: values.record, json: values.json, acceptRegression: values["accept-regression"] ?? null });
  }
  if (suite !== "locomo") throw new UsageError(suite === undefined ? "name a suite, locomo, benchmark or paraphrase" : `unknown suite "${suite}"`);
  if (!file) throw new UsageError("the LoCoMo FILE is missing");
  let progress: Progress | undefined;
  for (const flag of ["items", "budget"] as const) {
    const v = values[flag];
    if (v !== undefined && !(Number.isInteger(Number(v)) && Number(v) > 0)) throw new UsageError(`--${flag} must be a positive integer`);
  }
  const semanticRanking = rankingOption(values["semantic-cap"], values["semantic-weight"], values["semantic-fusion"], values["semantic-normalise"], values["semantic-lexical-side"]);
  if ((semanticRanking || values["embedding-cache"]) && !values.semantic) {
    throw new UsageError("--semantic-cap, --semantic-weight, --semantic-fusion, --semantic-normalise, --semantic-lexical-side and --embedding-cache need --semantic");
  }
  const configured = values.semantic ? (config?.semantic ? createEmbedder(config.semantic) : hashedEmbedder(DEFAULT_HASHED_DIMENSIONS)) : undefined;
  const embedder = configured && values["embedding-cache"] ? await cachedEmbedder(configured, values["embedding-cache"]) : configured;
  const report = await evaluateLocomo(file, {
    semanticRanking,
    conversations: count(values.conversations, "--conversations"),
    questionsPerConversation: count(values.questions, "--questions"),
    subjects: values.subjects,
    onQuestion: (_answered, total) => {
      progress ??= new Progress({ label: "recall eval locomo", unit: "questions", total });
      progress.tick();
    },
    injectedItems: values.items ? Number(values.items) : undefined,
    injectedBudget: values.budget ? Number(values.budget) : undefined,
    details: values.details,
    ...(embedder ? { semantic: embedder, ...(config?.semantic ? { semanticSimilarity: config.semantic.similarity } : {}) } : {}),
  }).finally(() => embedder?.close?.());
  progress?.done();
  process.stdout.write(values.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatLocomoReport(report)}\n`);
  return 0;
}

/** The semantic arm's cap and fusion for tuning (each unset part the policy's in-turn one), or undefined. */
function rankingOption(cap?: string, weight?: string, fusion?: string, normalise?: string, side?: string): SemanticRanking | undefined {
  if (cap === undefined && weight === undefined && fusion === undefined && normalise === undefined && side === undefined) return undefined;
  const policy = RETRIEVAL_POLICY.semantic;
  const w = weight === undefined ? policy.weight.task : Number(weight);
  if (!(Number.isFinite(w) && w > 0)) throw new UsageError("--semantic-weight must be a positive number");
  const method = fusion ?? policy.method;
  if (method !== "convex" && method !== "rrf") throw new UsageError("--semantic-fusion must be convex or rrf");
  if (method === "convex" && w > 1) throw new UsageError("--semantic-weight must be at most 1 with --semantic-fusion convex (it is α)");
  const how = normalise ?? policy.normalise;
  if (how !== "min-max" && how !== "rank") throw new UsageError("--semantic-normalise must be min-max or rank");
  const lexicalSide = side ?? policy.lexicalSide;
  if (lexicalSide !== "rrf" && lexicalSide !== "scores") throw new UsageError("--semantic-lexical-side must be rrf or scores");
  return { method, normalise: how, lexicalSide, candidateCap: count(cap, "--semantic-cap") ?? policy.candidateCap, weight: w };
}

function count(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${option} must be a positive integer`);
  return n;
}

/**
 * Runs the deterministic benchmark on a fresh embedded store and compares
 * it with the committed baseline: exit 0 when equal (or after --record),
 * 1 with the differences when not. --record refuses a triple regression
 * (hard gate 9) unless --accept-regression gives the reason.
 */
async function benchmark(
  fixtureFile: string,
  baselineFile: string,
  o: { record: boolean; json: boolean; acceptRegression: string | null },
): Promise<number> {
  const fixture = await readBenchmarkFixture(fixtureFile);
  const client = createPgliteClient(await openPglite(undefined));
  let result;
  try {
    await migrate(client, await loadMigrations());
    result = await runBenchmark(fixture, new MemoryStore(client));
  } finally {
    await client.close();
  }
  process.stdout.write(o.json ? `${JSON.stringify(toBaseline(result), null, 2)}\n` : `${formatBenchmark(result)}\n\n`);
  const committed = await readBaseline(baselineFile);
  if (o.record) {
    const decision = recordDecision(committed, result, o.acceptRegression);
    if (!decision.ok) {
      process.stderr.write(
        `not recorded: a triple regression against ${baselineFile} (hard gate 9):\n${decision.regressions.map((r) => `  ${r}`).join("\n")}\n` +
          'If it is intended, say why: npm run eval -- --record --accept-regression "<reason>"\n',
      );
      return 1;
    }
    await writeBaseline(baselineFile, decision.baseline);
    process.stderr.write(`recorded ${baselineFile}${decision.regressions.length > 0 ? ` (accepted ${decision.regressions.length} regression(s))` : ""}\n`);
    return 0;
  }
  if (committed === null) {
    process.stderr.write(`no baseline at ${baselineFile}: record one with \`npm run eval -- --record\`\n`);
    return 1;
  }
  const differences = baselineDifferences(committed, result);
  if (differences.length === 0) {
    process.stderr.write(`matches the baseline ${baselineFile}\n`);
    return 0;
  }
  process.stderr.write(
    `differs from the baseline ${baselineFile} (committed → measured):\n${differences.map((d) => `  ${d}`).join("\n")}\n` +
      "If the change is intended, re-record it in the same commit: npm run eval -- --record\n",
  );
  return 1;
}
