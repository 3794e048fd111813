import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";

/**
 * A sentence-transformers model folder with an ONNX export, as
 * `npm run model:fetch` lays it out (scripts/model-fetch.sh):
 *
 *   model.onnx                inputs input_ids, attention_mask, token_type_ids; output last_hidden_state
 *                             (or onnx/model.onnx, the Hugging Face hub's layout of an export)
 *   tokenizer.json            the Hugging Face tokenizer (run by @huggingface/tokenizers)
 *   tokenizer_config.json
 *   config.json               hidden_size: the vector's dimension
 *   1_Pooling/config.json     mean pooling or the [CLS] token's vector
 *   sentence_bert_config.json max_seq_length: longer texts are truncated (optional)
 *   config_sentence_transformers.json  prompts.query / prompts.document: prefixes (optional,
 *                             e.g. "query: " and "passage: " for e5, "search_query: " for nomic)
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
  /** How token vectors become the text's: their mean over the attention mask, or the first ([CLS]) token's. */
  pooling: "mean" | "cls";
  /** Put before a query's text and a belief's document's texts, as the model was trained (often empty). */
  prefixes: { query: string; document: string };
}

/** The folder could not serve as a model (missing or malformed file); the message names the file and the fix. */
export class ModelFolderError extends Error {
  override readonly name = "ModelFolderError";
}

const FETCH_HINT = "run `npm run model:fetch` (or set RECALL_EMBEDDING_MODEL_DIR to a folder laid out as docs/semantic-arm.md says)";

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
  const poolingConfig = json(join("1_Pooling", "config.json"));
  const pooling = poolingConfig.pooling_mode_mean_tokens === true ? "mean" : poolingConfig.pooling_mode_cls_token === true ? "cls" : null;
  if (pooling === null) {
    throw new ModelFolderError(`model folder ${dir}: 1_Pooling/config.json asks for neither mean pooling nor the CLS token, the poolings recall implements`);
  }
  const st = existsSync(join(dir, "config_sentence_transformers.json")) ? json("config_sentence_transformers.json") : {};
  const prompts = (st.prompts ?? {}) as Record<string, unknown>;
  const prompt = (name: string, ...aliases: string[]) => {
    for (const key of [name, ...aliases]) {
      const v = prompts[key];
      if (v === undefined) continue;
      if (typeof v !== "string") throw new ModelFolderError(`model folder ${dir}: config_sentence_transformers.json prompts.${key} is not a string`);
      return v;
    }
    return "";
  };
  const positions = Number.isInteger(config.max_position_embeddings) ? (config.max_position_embeddings as number) : 512;
  const sbert = existsSync(join(dir, "sentence_bert_config.json")) ? json("sentence_bert_config.json") : {};
  const maxSeq = Number.isInteger(sbert.max_seq_length) ? (sbert.max_seq_length as number) : positions;
  return {
    dir,
    name: basename(dir.replace(/[\\/]+$/, "")),
    modelFile: existsSync(join(dir, "model.onnx")) || !existsSync(join(dir, "onnx", "model.onnx")) ? file("model.onnx") : join(dir, "onnx", "model.onnx"),
    tokenizerFile: file("tokenizer.json"),
    tokenizerConfigFile: file("tokenizer_config.json"),
    dimensions: dimensions as number,
    maxTokens: Math.max(2, Math.min(maxSeq, positions)),
    pooling,
    prefixes: { query: prompt("query", "search_query"), document: prompt("document", "passage", "search_document") },
  };
}
