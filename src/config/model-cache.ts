import { homedir } from "node:os";
import { join } from "node:path";

/** The model `npm run model:fetch` installs (scripts/model-fetch.sh), and the folder name it gets in the cache. */
export const DEFAULT_LOCAL_MODEL = "all-MiniLM-L6-v2-int8";

/** Where `npm run model:fetch` puts models: RECALL_MODEL_CACHE (`cache`), else ~/.cache/recall/models. */
export function modelCacheDir(cache?: string): string {
  return cache || join(homedir(), ".cache", "recall", "models");
}

/** The default model's folder in the cache: RECALL_EMBEDDER=local's folder unless RECALL_EMBEDDING_MODEL_DIR says another. */
export function defaultModelDir(cache?: string): string {
  return join(modelCacheDir(cache), DEFAULT_LOCAL_MODEL);
}
