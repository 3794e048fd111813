import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/config.js";
import { createEmbedder } from "../../src/embed/create-embedder.js";
import { readModelFolder } from "../../src/embed/local-model-folder.js";
import { clsPoolNormalized, meanPoolNormalized } from "../../src/embed/mean-pool.js";

/** The local model's folder is checked at start-up, each problem named with its file and the fix. */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(files: Record<string, unknown>, name = "mini-model"): string {
  const dir = join(mkdtempSync(join(tmpdir(), "recall-model-")), name);
  dirs.push(dir);
  mkdirSync(join(dir, "1_Pooling"), { recursive: true });
  for (const [file, content] of Object.entries(files)) writeFileSync(join(dir, file), typeof content === "string" ? content : JSON.stringify(content));
  return dir;
}

const complete = {
  "model.onnx": "not read here",
  "tokenizer.json": {},
  "tokenizer_config.json": {},
  "config.json": { hidden_size: 384, max_position_embeddings: 512 },
  "1_Pooling/config.json": { pooling_mode_mean_tokens: true },
  "sentence_bert_config.json": { max_seq_length: 256 },
};

describe("readModelFolder", () => {
  it("reads the dimension, the token limit and the name the embedder id carries", () => {
    const dir = folder(complete);
    expect(readModelFolder(dir)).toMatchObject({ name: "mini-model", dimensions: 384, maxTokens: 256, modelFile: join(dir, "model.onnx") });
  });

  it("caps the token limit at the model's positions, and takes them when sentence_bert_config.json is absent", () => {
    const { "sentence_bert_config.json": _, ...rest } = complete;
    expect(readModelFolder(folder({ ...rest, "config.json": { hidden_size: 8, max_position_embeddings: 128 } })).maxTokens).toBe(128);
  });

  it.each(["model.onnx", "tokenizer.json", "config.json", "1_Pooling/config.json"])("names a missing %s and how to fetch the model", (file) => {
    const files: Record<string, unknown> = { ...complete };
    delete files[file];
    expect(() => readModelFolder(folder(files))).toThrow(new RegExp(`has no ${file.replace(".", "\\.")}: run \`npm run model:fetch\``));
  });

  it("reads mean or CLS pooling and the query and document prompts; no prompts, no prefixes", () => {
    expect(readModelFolder(folder(complete))).toMatchObject({ pooling: "mean", prefixes: { query: "", document: "" } });
    const bgeLike = folder({
      ...complete,
      "1_Pooling/config.json": { pooling_mode_cls_token: true, pooling_mode_mean_tokens: false },
      "config_sentence_transformers.json": { prompts: { query: "query: ", passage: "passage: " } },
    });
    expect(readModelFolder(bgeLike)).toMatchObject({ pooling: "cls", prefixes: { query: "query: ", document: "passage: " } });
    const nomicLike = folder({ ...complete, "config_sentence_transformers.json": { prompts: { search_query: "search_query: ", search_document: "search_document: " } } });
    expect(readModelFolder(nomicLike).prefixes).toEqual({ query: "search_query: ", document: "search_document: " });
    expect(() => readModelFolder(folder({ ...complete, "config_sentence_transformers.json": { prompts: { query: 3 } } }))).toThrow(/prompts\.query is not a string/);
  });

  it("takes the hub's onnx/model.onnx when the folder has no model.onnx of its own", () => {
    const { "model.onnx": _, ...rest } = complete;
    const dir = folder(rest);
    mkdirSync(join(dir, "onnx"));
    writeFileSync(join(dir, "onnx", "model.onnx"), "not read here");
    expect(readModelFolder(dir).modelFile).toBe(join(dir, "onnx", "model.onnx"));
  });

  it("refuses a pooling it does not implement, and a config without hidden_size", () => {
    expect(() => readModelFolder(folder({ ...complete, "1_Pooling/config.json": { pooling_mode_max_tokens: true } }))).toThrow(/neither mean pooling nor the CLS token/);
    expect(() => readModelFolder(folder({ ...complete, "config.json": { hidden_size: "big" } }))).toThrow(/hidden_size/);
    expect(() => readModelFolder(folder({ ...complete, "config.json": "{not json" }))).toThrow(/config.json is not JSON/);
  });
});

describe("createEmbedder with RECALL_EMBEDDER=local", () => {
  const semantic = (modelDir: string, expectedDimensions?: number) => ({
    embedder: { kind: "local" as const, modelDir, threads: 1, expectedDimensions },
    dimensions: 256,
    timeoutMs: 1000,
    batch: 64,
    pollIntervalMs: 60_000,
    sensitivityCeiling: "confidential" as const,
    similarity: { min: 0.3, full: 0.6 },
  });

  it("a missing folder is a ConfigError naming RECALL_EMBEDDING_MODEL_DIR and the fix", () => {
    const error = (() => {
      try {
        createEmbedder(semantic("/nowhere/at/all"));
      } catch (e) {
        return e as Error;
      }
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.message).toMatch(/^RECALL_EMBEDDING_MODEL_DIR: model folder \/nowhere\/at\/all has no config\.json: run `npm run model:fetch`/);
  });

  it("a RECALL_EMBEDDING_DIMENSIONS that is not the model's is a ConfigError", () => {
    expect(() => createEmbedder(semantic(folder(complete), 1536))).toThrow(/RECALL_EMBEDDING_DIMENSIONS: 1536, but the model in .* has 384/);
  });
});

describe("clsPoolNormalized", () => {
  it("takes each text's first token's vector at unit length", () => {
    const hidden = new Float32Array([3, 4, 9, 9, /* text 2 */ 0, 2, 5, 5]);
    const [a, b] = clsPoolNormalized(hidden, 2, 2, 2);
    expect(Array.from(a!).map((x) => +x.toFixed(6))).toEqual([0.6, 0.8]);
    expect(Array.from(b!)).toEqual([0, 1]);
  });
});

describe("meanPoolNormalized", () => {
  it("averages the real tokens only (padding masked out) and scales to unit length", () => {
    // Two texts, three positions, two dimensions; the second text's last position is padding.
    const hidden = new Float32Array([1, 0, 3, 0, 2, 0, /* text 2 */ 0, 2, 0, 4, 100, 100]);
    const [a, b] = meanPoolNormalized(hidden, [1, 1, 1, 1, 1, 0], 2, 3, 2);
    expect(Array.from(a!)).toEqual([1, 0]);
    expect(Array.from(b!)).toEqual([0, 1]);
    const [c] = meanPoolNormalized(new Float32Array([3, 4]), [1n], 1, 1, 2);
    expect(Array.from(c!).map((x) => +x.toFixed(6))).toEqual([0.6, 0.8]);
  });
});
