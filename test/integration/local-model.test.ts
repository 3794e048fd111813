import { existsSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { defaultModelDir } from "../../src/config/model-cache.js";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * The real model end to end: a sidecar with RECALL_EMBEDDER=local loads
 * all-MiniLM-L6-v2 from the model cache (`npm run model:fetch`, which .ci/run
 * runs), embeds a write in its worker thread, and the semantic arm finds a
 * belief that shares no word with the question. Without the cache the test
 * is skipped, and says so loudly: it is the only test of the real model.
 */
const MODEL_DIR = process.env.RECALL_EMBEDDING_MODEL_DIR || defaultModelDir(process.env.RECALL_MODEL_CACHE);
const haveModel = existsSync(join(MODEL_DIR, "model.onnx"));
if (!haveModel) {
  console.warn(
    `\n*** SKIPPED test/integration/local-model.test.ts: no model at ${MODEL_DIR}. ` +
      "Run `npm run model:fetch` (CI does) to test the local embedder with the real model. ***\n",
  );
}

describe.skipIf(!haveModel)("semantic arm with the local model, in a real sidecar over gRPC (pglite)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  const violin = beliefMsg({ subject: "Melanie", statement: "Melanie plays the violin in a string quartet.", belief_type: "skill" });
  const unrelated = beliefMsg({ subject: "deploys", statement: "The release pipeline deploys on Tuesdays.", belief_type: "project_fact" });

  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", { RECALL_SEMANTIC: "on", RECALL_EMBEDDER: "local", RECALL_EMBEDDING_MODEL_DIR: MODEL_DIR });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [violin, unrelated] }, me);
    // Generous: the sidecar starts while ONNX Runtime loads the model beside it, on two busy cores.
  }, 180_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  it("finds a paraphrase no word of the question matches, and not the unrelated belief", async () => {
    // No word in common with the statement: only a trained embedding knows a violin is an instrument.
    const query = { text: "Which musical instrument does she practise?" };
    const result = await vi.waitFor(
      async () => {
        const events = await serverStream(c.memory, "Recall", { query }, me, 10_000);
        const r = events[events.length - 1]!.result as Json;
        expect(r.items.map((i: Json) => i.belief_id)).toContain(violin.belief_id);
        return r;
      },
      { timeout: 120_000, interval: 250 },
    );
    expect(result.arms_degraded).toEqual([]);
    const items = result.items as Json[];
    expect(items.find((i) => i.belief_id === violin.belief_id)!.arms).toEqual(["semantic"]);
    expect(items.map((i) => i.belief_id)).not.toContain(unrelated.belief_id);
    expect(sidecar.logs()).toContain('"embedder":"local:all-MiniLM-L6-v2-int8:384"');
  }, 180_000);
});
