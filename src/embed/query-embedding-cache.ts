import type { Embedder } from "../ports/embedder.js";

/**
 * The semantic arm's query embeddings, remembered per query text (the
 * `size` most recent): an agent asks the same question more than once in a
 * session (a retry, a child run, Search after Recall), and a cached query
 * costs the arm no inference at all. Only queries are cached; the background
 * embedder's documents pass through.
 */
export function withQueryCache(embedder: Embedder, size: number): Embedder {
  const recent = new Map<string, number[]>();
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    async embed(texts, signal, purpose) {
      if (texts.length !== 1 || purpose !== "query") return embedder.embed(texts, signal, purpose);
      const text = texts[0]!;
      const hit = recent.get(text);
      if (hit) {
        // Most recent last: the first key is the one to forget.
        recent.delete(text);
        recent.set(text, hit);
        return [hit];
      }
      const [vector] = await embedder.embed(texts, signal, purpose);
      recent.set(text, vector!);
      if (recent.size > size) recent.delete(recent.keys().next().value!);
      return [vector!];
    },
    close: () => embedder.close?.() ?? Promise.resolve(),
  };
}
