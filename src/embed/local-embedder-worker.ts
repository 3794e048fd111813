import { parentPort, workerData } from "node:worker_threads";
import { LocalInference } from "./local-inference.js";
import type { LocalModelFolder } from "./local-model-folder.js";

/**
 * The local embedder's thread: loads the model once, then answers one
 * message at a time (local-embedder.ts sends the next only after the answer):
 *   { id, texts } → { id, vectors }   vectors: one Float32Array of texts × dims, transferred
 *                 → { id, error }
 * and says { ready } or { failed } once the model is loaded or not.
 */
export interface LocalWorkerData {
  folder: LocalModelFolder;
  threads: number;
}

export type LocalWorkerMessage =
  | { type: "ready" }
  | { type: "failed"; message: string }
  | { type: "vectors"; id: number; vectors: Float32Array }
  | { type: "error"; id: number; message: string };

const port = parentPort!;
const { folder, threads } = workerData as LocalWorkerData;
const send = (m: LocalWorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

let model: LocalInference;
try {
  model = await LocalInference.load(folder, threads);
  send({ type: "ready" });
} catch (error) {
  send({ type: "failed", message: (error as Error).message });
  process.exit(1);
}

port.on("message", async ({ id, texts }: { id: number; texts: string[] }) => {
  try {
    const vectors = await model.embed(texts);
    const flat = new Float32Array(vectors.length * folder.dimensions);
    vectors.forEach((v, i) => flat.set(v, i * folder.dimensions));
    send({ type: "vectors", id, vectors: flat }, [flat.buffer]);
  } catch (error) {
    send({ type: "error", id, message: (error as Error).message });
  }
});
