import { describe, expect, it } from "vitest";
import { EmbedderError, type Embedder } from "../../src/ports/embedder.js";
import { withBreaker } from "../../src/embed/embedder-breaker.js";

function fakeEmbedder(): Embedder & { calls: number; failing: boolean } {
  const e = {
    id: "fake:1",
    dimensions: 2,
    calls: 0,
    failing: false,
    async embed(texts: readonly string[]) {
      e.calls++;
      if (e.failing) throw new EmbedderError("down");
      return texts.map(() => [1, 0]);
    },
  };
  return e;
}

describe("withBreaker", () => {
  it("passes calls through while the embedder works, keeping its id", async () => {
    const inner = fakeEmbedder();
    const e = withBreaker(inner, 1000, () => 0);
    expect(e.id).toBe("fake:1");
    expect(await e.embed(["a"])).toEqual([[1, 0]]);
    expect(await e.embed(["b"])).toEqual([[1, 0]]);
    expect(inner.calls).toBe(2);
  });

  it("after a failure, fails at once without calling the embedder until the cooldown ends, then tries again", async () => {
    let now = 10_000;
    const inner = fakeEmbedder();
    const e = withBreaker(inner, 1000, () => now);
    inner.failing = true;
    await expect(e.embed(["a"])).rejects.toThrow("down");
    expect(inner.calls).toBe(1);

    now += 999;
    await expect(e.embed(["a"])).rejects.toThrow("skipped until its cooldown ends");
    expect(inner.calls).toBe(1);

    now += 1;
    inner.failing = false;
    expect(await e.embed(["a"])).toEqual([[1, 0]]);
    expect(inner.calls).toBe(2);
  });

  it("counts an abort (the recall's deadline reached while waiting) as a failure", async () => {
    let now = 0;
    const slow: Embedder = {
      id: "slow",
      dimensions: 2,
      embed: (_texts, signal) =>
        new Promise((_resolve, reject) => signal!.addEventListener("abort", () => reject(signal!.reason), { once: true })),
    };
    const e = withBreaker(slow, 1000, () => now);
    const abort = new AbortController();
    const pending = e.embed(["a"], abort.signal);
    abort.abort(new Error("recall deadline reached"));
    await expect(pending).rejects.toThrow("recall deadline reached");
    now = 500;
    await expect(e.embed(["a"], new AbortController().signal)).rejects.toThrow("skipped until its cooldown ends");
  });
});
