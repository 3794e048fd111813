import { createHash } from "node:crypto";
import { appendFile, mkdir, readFile } from "node:fs/promises";
import { dirname } from "node:path";
import type { Embedder } from "../ports/embedder.js";

/**
 * The evaluation's embedding cache (`recall eval locomo --embedding-cache
 * FILE`): vectors kept in a file keyed by sha256 of the embedder id and the
 * text, so a grid of runs over one data set embeds each text once. One JSON
 * line per vector, appended as they are computed. It holds vectors of the
 * data set's text: keep it outside the repository. Never used by a sidecar.
 */
export async function cachedEmbedder(embedder: Embedder, file: string): Promise<Embedder> {
  const known = new Map<string, number[]>();
  const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return "";
    throw error;
  });
  for (const line of text.split("\n")) {
    if (line === "") continue;
    const { k, v } = JSON.parse(line) as { k: string; v: number[] };
    known.set(k, v);
  }
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  const keyOf = (t: string, purpose?: string) =>
    createHash("sha256").update(embedder.id).update("\u0000").update(purpose === "query" ? "query\u0000" : "").update(t).digest("hex");
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    async embed(texts, signal, purpose) {
      const keys = texts.map((t) => keyOf(t, purpose));
      const missing = [...new Set(keys.filter((k) => !known.has(k)))];
      if (missing.length > 0) {
        const textOf = new Map(keys.map((k, i) => [k, texts[i]!]));
        const vectors = await embedder.embed(
          missing.map((k) => textOf.get(k)!),
          signal,
          purpose,
        );
        missing.forEach((k, i) => known.set(k, vectors[i]!));
        await appendFile(file, missing.map((k, i) => `${JSON.stringify({ k, v: vectors[i] })}\n`).join(""), { mode: 0o600 });
      }
      return keys.map((k) => known.get(k)!);
    },
    close: () => embedder.close?.() ?? Promise.resolve(),
  };
}
