import { EmbedderError, type Embedder } from "../ports/embedder.js";

/**
 * The semantic arm's query embeddings behind a circuit breaker: after a
 * failure (an error, or the recall's deadline reached while waiting), the
 * arm fails at once for `cooldownMs`, then tries again. A slow or dead
 * endpoint then costs one recall per cooldown its full deadline, not every
 * recall; the arm is named in arms_degraded either way.
 */
export function withBreaker(embedder: Embedder, cooldownMs: number, now: () => number = Date.now): Embedder {
  let openUntil = 0;
  return {
    id: embedder.id,
    dimensions: embedder.dimensions,
    async embed(texts, signal, purpose) {
      if (now() < openUntil) throw new EmbedderError("embedder failed recently; skipped until its cooldown ends");
      try {
        return await embedder.embed(texts, signal, purpose);
      } catch (error) {
        openUntil = now() + cooldownMs;
        throw error;
      }
    },
    close: () => embedder.close?.() ?? Promise.resolve(),
  };
}
