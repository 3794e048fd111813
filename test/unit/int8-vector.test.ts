import { describe, expect, it } from "vitest";
import { int8Rounded, quantiseInt8 } from "../../src/domain/int8-vector.js";
import { VectorSlab } from "../../src/principal-index/vector-slab.js";
import { prng } from "./unit-helpers.js";

/**
 * The int8 vectors of the principal index (docs/adr/0031): the store saves
 * int8 × scale, which comes back as float32; quantising that again must give
 * the very same int8 values, or the index and the SQL scan would rank
 * different vectors.
 */

const randomVector = (rand: () => number, dims: number) => Array.from({ length: dims }, () => (rand() * 2 - 1) * (0.01 + rand()));

describe("int8 quantisation", () => {
  it("maps the largest magnitude to ±127 and the rest by the same scale", () => {
    const q = new Int8Array(4);
    const scale = quantiseInt8([0.5, -1, 0.25, 0], q);
    expect(scale).toBeCloseTo(1 / 127, 12);
    expect([...q]).toEqual([64, -127, 32, 0]);
  });

  it("gives the same int8 values back from the saved vector as float32, for any vector", () => {
    const rand = prng(31);
    for (let n = 0; n < 500; n++) {
      const v = randomVector(rand, 384);
      const first = new Int8Array(384);
      quantiseInt8(v, first);
      const again = new Int8Array(384);
      quantiseInt8(Float32Array.from(int8Rounded(v)), again);
      expect(again).toEqual(first);
    }
  });

  it("a zero vector is all zeros with scale 0", () => {
    const q = new Int8Array(3).fill(5);
    expect(quantiseInt8([0, 0, 0], q)).toBe(0);
    expect([...q]).toEqual([0, 0, 0]);
    expect(int8Rounded([0, 0, 0])).toEqual([0, 0, 0]);
  });
});

describe("vector slab", () => {
  const cosine = (a: readonly number[], b: readonly number[]) => {
    const dot = a.reduce((s, x, i) => s + x * b[i]!, 0);
    return dot / Math.sqrt(a.reduce((s, x) => s + x * x, 0) * b.reduce((s, x) => s + x * x, 0));
  };

  it("scores each row by the cosine of its int8 vector; an absent row or a zero vector scores NaN", () => {
    const rand = prng(7);
    const slab = new VectorSlab();
    const rows = Array.from({ length: 300 }, () => int8Rounded(randomVector(rand, 32)));
    slab.set(0, null);
    rows.forEach((v, o) => o > 0 && slab.set(o, Float32Array.from(v)));
    slab.set(5, Float32Array.from(new Array(32).fill(0)));
    expect(slab.held).toBe(298);
    const query = Float32Array.from(randomVector(rand, 32));
    const queryNorm = Math.sqrt(query.reduce((s, x) => s + x * x, 0));
    expect(slab.cosine(0, query, queryNorm)).toBeNaN();
    expect(slab.cosine(5, query, queryNorm)).toBeNaN();
    for (let o = 1; o < rows.length; o++) if (o !== 5) expect(slab.cosine(o, query, queryNorm)).toBeCloseTo(cosine(rows[o]!, [...query]), 6);
  });

  it("a vector set again replaces the row's; marked absent, the row stops counting", () => {
    const slab = new VectorSlab();
    slab.set(0, Float32Array.from([1, 0]));
    slab.set(0, Float32Array.from([0, 1]));
    expect(slab.cosine(0, Float32Array.from([0, 1]), 1)).toBeCloseTo(1, 6);
    expect(slab.held).toBe(1);
    slab.set(0, null);
    expect(slab.held).toBe(0);
  });

  it("after fit, holds dim + 4 bytes per row and no spare capacity", () => {
    const slab = new VectorSlab();
    for (let o = 0; o < 1000; o++) slab.set(o, Float32Array.from({ length: 384 }, (_, i) => Math.sin(o + i)));
    expect(slab.bytes).toBeGreaterThan(1000 * 388);
    slab.fit(1000);
    expect(slab.bytes).toBe(1000 * 388);
    expect(slab.cosine(999, Float32Array.from({ length: 384 }, (_, i) => Math.sin(999 + i)), Math.sqrt(192))).toBeGreaterThan(0.99);
  });
});
