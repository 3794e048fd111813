import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PARAPHRASE_FIXTURE } from "../../src/cli/eval.js";
import { defaultModelDir } from "../../src/config/model-cache.js";
import { DEFAULT_SEMANTIC_SIMILARITY } from "../../src/domain/semantic-calibration.js";
import { createEmbedder } from "../../src/embed/create-embedder.js";
import { hashedEmbedder } from "../../src/embed/hashed-embedder.js";
import { readBenchmarkFixture } from "../../src/eval/benchmark-fixture.js";
import { runParaphrase } from "../../src/eval/paraphrase.js";
import { lexicalTerms } from "../../src/recall/query-former.js";

/**
 * The paraphrase set (issue 45): queries that share no content word with
 * the beliefs they need, run with the semantic arm off and on. The words
 * alone miss them; the hashed embedder, which knows no paraphrase, adds
 * nothing; the real model (when fetched) finds some.
 */

const MODEL_DIR = process.env.RECALL_EMBEDDING_MODEL_DIR || defaultModelDir(process.env.RECALL_MODEL_CACHE);
const haveModel = existsSync(join(MODEL_DIR, "model.onnx"));

describe("the paraphrase set", () => {
  it("pairs each query with beliefs it shares no content word with (the subject's name aside)", async () => {
    const fixture = await readBenchmarkFixture(PARAPHRASE_FIXTURE);
    const beliefs = fixture.principals.flatMap((p) => p.beliefs);
    const probes = fixture.sessions.flatMap((s) => s.steps.filter((s) => s.kind === "probe"));
    expect(probes.length).toBeGreaterThanOrEqual(8);
    for (const probe of probes) {
      for (const k of probe.expected) {
        const b = beliefs.find((x) => fixture.keyOf.get(x.beliefId) === k)!;
        const own = new Set(lexicalTerms(b.subject, Infinity));
        const words = new Set(lexicalTerms(b.statement, Infinity).filter((w) => !own.has(w)));
        const shared = lexicalTerms(probe.text, Infinity).filter((w) => words.has(w));
        expect(shared, `${probe.id} shares ${shared.join(", ")} with ${k}`).toEqual([]);
      }
    }
  });

  it("the hashed embedder adds nothing to the ranking of paraphrases: arm on measures what arm off does", async () => {
    const r = await runParaphrase(await readBenchmarkFixture(PARAPHRASE_FIXTURE), hashedEmbedder(256), DEFAULT_SEMANTIC_SIMILARITY.hashed);
    expect(r.rankedOff.metrics.recallAt5).toBeLessThan(0.5);
    expect(r.rankedOn.metrics.recallAt5).toBe(r.rankedOff.metrics.recallAt5);
    expect(r.on.metrics.policyFailures.total).toBe(0);
    expect(r.on.policy).toBe(r.off.policy);
  }, 240_000);

  it.skipIf(!haveModel)("all-MiniLM-L6-v2 ranks paraphrases the words cannot find", async () => {
    const embedder = createEmbedder({
      embedder: { kind: "local", modelDir: MODEL_DIR, threads: 1, expectedDimensions: undefined },
      dimensions: 384,
      timeoutMs: 10_000,
      batch: 64,
      pollIntervalMs: 60_000,
      sensitivityCeiling: "confidential",
      similarity: DEFAULT_SEMANTIC_SIMILARITY.local,
    });
    try {
      const r = await runParaphrase(await readBenchmarkFixture(PARAPHRASE_FIXTURE), embedder, DEFAULT_SEMANTIC_SIMILARITY.local);
      expect(r.rankedOn.metrics.recallAt5).toBeGreaterThan(r.rankedOff.metrics.recallAt5);
    } finally {
      await embedder.close?.();
    }
  }, 300_000);
});
