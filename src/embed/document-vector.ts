import type { DocumentWeights } from "../ports/embedder.js";
import type { MissingEmbedding } from "../store/candidates/semantic-store.js";

/**
 * A belief's document as texts to embed, each with its weight: the statement,
 * then its source episodes and their neighbours when it has them (an empty
 * part is left out, not embedded as an empty text).
 */
export function documentParts(m: Pick<MissingEmbedding, "statement" | "context">, w: DocumentWeights): { text: string; weight: number }[] {
  const parts = [
    { text: m.statement, weight: w.statement },
    { text: m.context.source, weight: w.source },
    { text: m.context.neighbours, weight: w.neighbours },
  ];
  return parts.filter((p, i) => i === 0 || (p.text.trim() !== "" && p.weight > 0));
}

/**
 * The weighted sum of the parts' vectors, scaled to unit length: the
 * document's vector. With one part it is that part's vector (unit already
 * for a normalising model, scaled here for any other).
 */
export function documentVector(vectors: readonly (readonly number[])[], weights: readonly number[]): number[] {
  const dims = vectors[0]!.length;
  const sum = new Array<number>(dims).fill(0);
  vectors.forEach((v, i) => {
    const w = weights[i]!;
    for (let d = 0; d < dims; d++) sum[d]! += w * v[d]!;
  });
  const norm = Math.sqrt(sum.reduce((n, x) => n + x * x, 0)) || 1;
  return sum.map((x) => x / norm);
}
