import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * A sentence-transformers model folder with an ONNX export, as
 * `npm run model:fetch` lays it out (scripts/model-fetch.sh):
 *
 *   model.onnx                inputs input_ids, attention_mask, token_type_ids; output last_hidden_state
 *   tokenizer.json            the Hugging Face tokenizer (run by @huggingface/tokenizers)
 *   tokenizer_config.json
 *   config.json               hidden_size: the vector's dimension
 *   1_Pooling/config.json     must ask for mean pooling (the only pooling implemented)
 *   sentence_bert_config.json max_seq_length: longer texts are truncated
 *
 * Read synchronously at start-up, before the worker loads the model, so a
 * wrong folder is a configuration error naming the file, not a failed recall.
 */

export interface LocalModelFolder {
  dir: string;
  /** The folder's name: it names the model in the embedder id, so another model belongs in another folder. */
  name: string;
  modelFile: string;
  tokenizerFile: string;
  tokenizerConfigFile: string;
  dimensions: number;
  /** Tokens per text, [CLS] and [SEP] included; the rest is cut. */
  maxTokens: number;
}

/** The folder could not serve as a model (missing or malformed file); the message names the file and the fix. */
export class ModelFolderError extends Error {
  override readonly name = "ModelFolderError";
}

const FETCH_HINT = "run `npm run model:fetch` (or set RECALL_EMBEDDING_MODEL_DIR to a folder laid out as docs/semantic-recall.md says)";

export function readModelFolder(dir: string): LocalModelFolder {
  const file = (name: string) => {
    const path = join(dir, name);
    if (!existsSync(path)) throw new ModelFolderError(`model folder ${dir} has no ${name}: ${FETCH_HINT}`);
    return path;
  };
  const json = (name: string): Record<string, unknown> => {
    const path = file(name);
    try {
      return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
    } catch (error) {
      throw new ModelFolderError(`model folder ${dir}: ${name} is not JSON (${(error as Error).message})`);
    }
  };
  const config = json("config.json");
  const dimensions = config.hidden_size;
  if (!Number.isInteger(dimensions) || (dimensions as number) < 1) {
    throw new ModelFolderError(`model folder ${dir}: config.json has no positive integer hidden_size`);
  }
  const pooling = json(join("1_Pooling", "config.json"));
  if (pooling.pooling_mode_mean_tokens !== true) {
    throw new ModelFolderError(`model folder ${dir}: 1_Pooling/config.json does not ask for mean pooling, the only pooling recall implements`);
  }
  const positions = Number.isInteger(config.max_position_embeddings) ? (config.max_position_embeddings as number) : 512;
  const sbert = existsSync(join(dir, "sentence_bert_config.json")) ? json("sentence_bert_config.json") : {};
  const maxSeq = Number.isInteger(sbert.max_seq_length) ? (sbert.max_seq_length as number) : positions;
  return {
    dir,
    name: basename(dir.replace(/[\\/]+$/, "")),
    modelFile: file("model.onnx"),
    tokenizerFile: file("tokenizer.json"),
    tokenizerConfigFile: file("tokenizer_config.json"),
    dimensions: dimensions as number,
    maxTokens: Math.max(2, Math.min(maxSeq, positions)),
  };
}
