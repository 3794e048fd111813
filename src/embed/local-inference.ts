import { readFile } from "node:fs/promises";
import { Tokenizer } from "@huggingface/tokenizers";
import * as ort from "onnxruntime-node";
import type { LocalModelFolder } from "./local-model-folder.js";
import { clsPoolNormalized, meanPoolNormalized } from "./mean-pool.js";

/**
 * One loaded model: the folder's tokenizer (Hugging Face's own tokenizer.json,
 * run by @huggingface/tokenizers) and its ONNX graph (ONNX Runtime's CPU
 * provider). Synchronous work of tens of milliseconds per call: it runs in
 * the embedder's worker thread (local-embedder-worker.ts), never on the
 * sidecar's event loop; tests may load it directly.
 */
export class LocalInference {
  private constructor(
    private readonly tokenizer: Tokenizer,
    private readonly session: ort.InferenceSession,
    private readonly folder: LocalModelFolder,
  ) {}

  /** `threads`: ONNX Runtime's intra-op threads (the sidecar's machine has other work; 1 by default). */
  static async load(folder: LocalModelFolder, threads: number): Promise<LocalInference> {
    const [tokenizerJson, tokenizerConfig] = await Promise.all([
      readFile(folder.tokenizerFile, "utf8").then(JSON.parse),
      readFile(folder.tokenizerConfigFile, "utf8").then(JSON.parse),
    ]);
    const tokenizer = new Tokenizer(tokenizerJson, tokenizerConfig);
    const session = await ort.InferenceSession.create(folder.modelFile, {
      executionProviders: ["cpu"],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
    });
    for (const name of ["input_ids", "attention_mask"]) {
      if (!session.inputNames.includes(name)) throw new Error(`${folder.modelFile} has no input ${name} (inputs: ${session.inputNames.join(", ")})`);
    }
    return new LocalInference(tokenizer, session, folder);
  }

  /** The token ids of one text, [CLS] … [SEP], cut to the model's length (the last id, [SEP], kept). */
  tokenIds(text: string): number[] {
    const ids = this.tokenizer.encode(text).ids;
    const max = this.folder.maxTokens;
    return ids.length <= max ? ids : [...ids.slice(0, max - 1), ids[ids.length - 1]!];
  }

  /** Unit vectors of the texts, in order; one forward pass, padded to the longest text. */
  async embed(texts: readonly string[]): Promise<Float32Array[]> {
    if (texts.length === 0) return [];
    const encoded = texts.map((t) => this.tokenIds(t));
    const batch = encoded.length;
    const sequence = Math.max(...encoded.map((ids) => ids.length));
    const ids = new BigInt64Array(batch * sequence);
    const mask = new BigInt64Array(batch * sequence);
    encoded.forEach((row, b) => {
      row.forEach((id, s) => {
        ids[b * sequence + s] = BigInt(id);
        mask[b * sequence + s] = 1n;
      });
    });
    const dims = [batch, sequence];
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor("int64", ids, dims),
      attention_mask: new ort.Tensor("int64", mask, dims),
    };
    if (this.session.inputNames.includes("token_type_ids")) feeds.token_type_ids = new ort.Tensor("int64", new BigInt64Array(batch * sequence), dims);
    const output = await this.session.run(feeds);
    const hidden = output[this.session.outputNames[0]!]!;
    try {
      const data = hidden.data as Float32Array;
      return this.folder.pooling === "cls"
        ? clsPoolNormalized(data, batch, sequence, this.folder.dimensions)
        : meanPoolNormalized(data, mask, batch, sequence, this.folder.dimensions);
    } finally {
      hidden.dispose();
    }
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}
