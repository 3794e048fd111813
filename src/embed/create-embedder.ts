import type { SemanticConfig } from "../config/config.js";
import type { Embedder } from "../ports/embedder.js";
import { hashedEmbedder } from "./hashed-embedder.js";
import { openAiEmbedder } from "./openai-embedder.js";

/** The configured embedder: an OpenAI-compatible endpoint in production, the hashed one for tests and demos. */
export function createEmbedder(config: SemanticConfig): Embedder {
  const e = config.embedder;
  if (e.kind === "hashed") return hashedEmbedder(config.dimensions);
  return openAiEmbedder({ baseUrl: e.baseUrl, model: e.model, apiKey: e.apiKey, dimensions: config.dimensions, timeoutMs: config.timeoutMs });
}
