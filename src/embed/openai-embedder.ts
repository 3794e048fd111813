import { createHash } from "node:crypto";
import { EmbedderError, type Embedder } from "../ports/embedder.js";

/**
 * An OpenAI-compatible embeddings endpoint: POST {baseUrl}/embeddings with
 * {model, input: [...]} and a Bearer key, answered by {data: [{index,
 * embedding}]}. OpenAI, Azure-style gateways, vLLM, Ollama and llama.cpp's
 * server all speak it. Every answer is checked: one finite vector of the
 * configured dimension per input, or an EmbedderError. A model trained with
 * prefixes (e5's "query: " / "passage: ", nomic's "search_query: ") gets the
 * configured one before each text of that purpose.
 */
export interface OpenAiEmbedderOptions {
  baseUrl: string;
  model: string;
  dimensions: number;
  apiKey?: string | undefined;
  /** Bounds each request, on top of the caller's signal. */
  timeoutMs: number;
  /** Put before each query's / each document text's input (default none). */
  prefixes?: { query: string; document: string } | undefined;
}

export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/embeddings`;
  const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  const prefixes = options.prefixes ?? { query: "", document: "" };
  return {
    id: `openai:${options.model}:${options.dimensions}${prefixVariant(prefixes)}`,
    dimensions: options.dimensions,
    async embed(input, signal, purpose = "document") {
      if (input.length === 0) return [];
      const prefix = prefixes[purpose];
      const texts = prefix === "" ? input : input.map((t) => prefix + t);
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const aborted = signal ? AbortSignal.any([signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await fetch(url, {
          method: "POST",
          headers,
          body: JSON.stringify({ model: options.model, input: texts, encoding_format: "float" }),
          signal: aborted,
        });
      } catch (error) {
        // The caller's own abort (the recall's deadline) propagates as it is.
        if (signal?.aborted) throw signal.reason;
        if (timeout.aborted) throw new EmbedderError(`embeddings endpoint did not answer within ${options.timeoutMs} ms`);
        throw new EmbedderError(`embeddings endpoint unreachable: ${(error as Error).cause ?? (error as Error).message}`);
      }
      let body: unknown;
      try {
        if (!response.ok) {
          const text = (await response.text()).slice(0, 200);
          throw new EmbedderError(`embeddings endpoint answered ${response.status}: ${text}`, response.status);
        }
        body = await response.json();
      } catch (error) {
        if (signal?.aborted) throw signal.reason;
        if (error instanceof EmbedderError) throw error;
        throw new EmbedderError(`embeddings endpoint sent an unreadable answer: ${(error as Error).message}`);
      }
      return vectorsFrom(body, texts.length, options.dimensions);
    },
  };
}

/**
 * The id's suffix for prefixed inputs: vectors embedded under other prefixes
 * are another embedder's, so the background embedder embeds them again. None
 * without prefixes, so an unprefixed deployment's stored vectors stay current.
 */
function prefixVariant(p: { query: string; document: string }): string {
  if (p.query === "" && p.document === "") return "";
  return `:prefixed-${createHash("sha256").update(`${p.query}\u0000${p.document}`).digest("hex").slice(0, 8)}`;
}

/** The vectors of an answer, in input order, or an EmbedderError saying what is wrong with it. */
export function vectorsFrom(body: unknown, count: number, dimensions: number): number[][] {
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length !== count) {
    throw new EmbedderError(`embeddings answer has ${Array.isArray(data) ? data.length : "no"} vectors for ${count} inputs`);
  }
  const vectors = new Array<number[] | undefined>(count);
  data.forEach((item: { index?: unknown; embedding?: unknown }, position) => {
    // `index` says which input a vector belongs to; answers are not promised in order.
    const index = typeof item?.index === "number" ? item.index : position;
    const embedding = item?.embedding;
    if (!Number.isInteger(index) || index < 0 || index >= count || vectors[index] !== undefined) {
      throw new EmbedderError(`embeddings answer has a bad or repeated index ${String(index)}`);
    }
    if (!Array.isArray(embedding) || embedding.length !== dimensions) {
      throw new EmbedderError(
        `embeddings answer has a vector of ${Array.isArray(embedding) ? embedding.length : "no"} dimensions; ${dimensions} configured (RECALL_EMBEDDING_DIMENSIONS)`,
      );
    }
    if (!embedding.every((x) => typeof x === "number" && Number.isFinite(x))) {
      throw new EmbedderError("embeddings answer has a vector with a non-numeric value");
    }
    vectors[index] = embedding as number[];
  });
  return vectors as number[][];
}
