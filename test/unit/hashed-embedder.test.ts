import { describe, expect, it } from "vitest";
import { hashedEmbedder, hashedVector, stem } from "../../src/embed/hashed-embedder.js";

function cosine(a: readonly number[], b: readonly number[]): number {
  return a.reduce((sum, x, i) => sum + x * b[i]!, 0);
}

function norm(v: readonly number[]): number {
  return Math.sqrt(v.reduce((s, x) => s + x * x, 0));
}

describe("hashed embedder", () => {
  it("is deterministic: the same text gives the same vector, byte for byte", async () => {
    const e = hashedEmbedder(64);
    const [a] = await e.embed(["veetbot deploys to Fly.io"]);
    const [b] = await hashedEmbedder(64).embed(["veetbot deploys to Fly.io"]);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
  });

  it("gives L2-normalised vectors of the configured dimension", () => {
    for (const text of ["Andy prefers concise writing.", "a", "the", "", "!!!", "Ünïcode wörds ünd mehr"]) {
      const v = hashedVector(text, 32);
      expect(v).toHaveLength(32);
      expect(norm(v)).toBeCloseTo(1, 12);
    }
  });

  it("is similar exactly as far as texts share content words", () => {
    const q = hashedVector("How does veetbot deploy?", 256);
    const same = hashedVector("veetbot deploys to the cluster", 256);
    const other = hashedVector("Andy's editor is Helix", 256);
    expect(cosine(q, same)).toBeGreaterThan(0.4);
    expect(cosine(q, other)).toBeLessThan(0.2);
    expect(cosine(q, same)).toBeGreaterThan(cosine(q, other));
  });

  it("never cancels a shared word: a hash collision can only add similarity", () => {
    // At 64 dimensions "veetbot" and "deploy" share a bucket; signed hashing would cancel them to 0.
    const q = hashedVector("veetbot deploys to kubernetes", 64);
    const b = hashedVector("veetbot deploys on fridays after review", 64);
    expect(cosine(q, b)).toBeGreaterThan(0.5);
    expect(q.every((x) => x >= 0)).toBe(true);
  });

  it("ignores case, punctuation, stop words and simple inflections", () => {
    expect(hashedVector("The user DEPLOYS services!", 128)).toEqual(hashedVector("user deploying service", 128));
  });

  it("names its version and dimension, so vectors of another configuration are never compared", () => {
    expect(hashedEmbedder(256).id).toBe("hashed@1:256");
    expect(hashedEmbedder(64).id).not.toBe(hashedEmbedder(256).id);
  });

  it("honours an aborted signal", async () => {
    const abort = new AbortController();
    abort.abort(new Error("deadline"));
    await expect(hashedEmbedder(8).embed(["x"], abort.signal)).rejects.toThrow("deadline");
  });

  it("stems the common suffixes and leaves short words alone", () => {
    expect(["deploys", "deployed", "deploying"].map(stem)).toEqual(["deploy", "deploy", "deploy"]);
    expect(stem("stories")).toBe("story");
    expect(stem("bus")).toBe("bus");
  });
});
