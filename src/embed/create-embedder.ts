import { createRequire } from "node:module";
import { ConfigError, type SemanticConfig } from "../config/config.js";
import type { Embedder } from "../ports/embedder.js";
import { hashedEmbedder } from "./hashed-embedder.js";
import { LocalEmbedder } from "./local-embedder.js";
import { ModelFolderError, readModelFolder } from "./local-model-folder.js";
import { openAiEmbedder } from "./openai-embedder.js";

/**
 * The configured embedder: an OpenAI-compatible endpoint or a model run in
 * process (local), and the hashed one for tests and demos. A local model's
 * folder is read here, so a missing or wrong one stops the start with a
 * ConfigError naming the file.
 */
export function createEmbedder(config: SemanticConfig): Embedder {
  const e = config.embedder;
  if (e.kind === "hashed") return hashedEmbedder(config.dimensions);
  if (e.kind === "local") return localEmbedder(e.modelDir, e.threads, e.expectedDimensions);
  return openAiEmbedder({ baseUrl: e.baseUrl, model: e.model, apiKey: e.apiKey, prefixes: e.prefixes, dimensions: config.dimensions, timeoutMs: config.timeoutMs });
}

function localEmbedder(dir: string, threads: number, expectedDimensions: number | undefined): LocalEmbedder {
  requireOnnxRuntime();
  let folder;
  try {
    folder = readModelFolder(dir);
  } catch (error) {
    if (error instanceof ModelFolderError) throw new ConfigError(`RECALL_EMBEDDING_MODEL_DIR: ${error.message}`);
    throw error;
  }
  if (expectedDimensions !== undefined && expectedDimensions !== folder.dimensions) {
    throw new ConfigError(`RECALL_EMBEDDING_DIMENSIONS: ${expectedDimensions}, but the model in ${dir} has ${folder.dimensions} (leave it unset with RECALL_EMBEDDER=local)`);
  }
  const embedder = new LocalEmbedder(folder, { threads });
  // The model loads while the sidecar starts: the first recall does not wait for it (a failure is the first embed's).
  embedder.start().catch(() => undefined);
  return embedder;
}

/**
 * ONNX Runtime is an optional peer of the published package (288 MB unpacked for every platform,
 * and on linux-x64 its install script fetches CUDA libraries): only RECALL_EMBEDDER=local needs it,
 * so without it the start stops here saying how to add it (docs/adr/0029).
 */
function requireOnnxRuntime(): void {
  try {
    createRequire(import.meta.url).resolve("onnxruntime-node");
  } catch {
    throw new ConfigError(
      "RECALL_EMBEDDER=local: onnxruntime-node is not installed (an optional peer dependency of @recall-memory/sidecar): " +
        "npm install onnxruntime-node@1.30.0 --ignore-scripts beside it, or use RECALL_EMBEDDER=openai",
    );
  }
}
