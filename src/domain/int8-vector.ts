/**
 * Symmetric int8 quantisation of an embedding, one scale per vector: each
 * value is round(x / scale) with scale = max |x| / 127. The principal index
 * keeps vectors as these int8 values (a quarter of float32); the store keeps
 * the same values dequantised (int8 × scale), so the SQL scan and the index
 * rank the very same vectors (docs/adr/0031).
 */

/** The largest magnitude an int8 value takes here (symmetric: -128 is never used). */
const LEVELS = 127;

/**
 * Writes `vector`'s int8 values into `out` from `at`; returns the scale (0 for
 * a zero vector, whose values are all 0). Quantising a vector this module
 * dequantised gives back the same int8 values: its largest value is exactly
 * 127 scales, and float32 rounding moves the others far less than half a step.
 */
export function quantiseInt8(vector: ArrayLike<number>, out: Int8Array, at = 0): number {
  let max = 0;
  for (let i = 0; i < vector.length; i++) max = Math.max(max, Math.abs(vector[i]!));
  if (max === 0 || !Number.isFinite(max)) {
    out.fill(0, at, at + vector.length);
    return 0;
  }
  const scale = max / LEVELS;
  for (let i = 0; i < vector.length; i++) out[at + i] = Math.round(vector[i]! / scale);
  return scale;
}

/** `vector` as the int8 values × scale it quantises to: what the store saves, so SQL and index agree. */
export function int8Rounded(vector: readonly number[]): number[] {
  const q = new Int8Array(vector.length);
  const scale = quantiseInt8(vector, q);
  return Array.from(q, (v) => v * scale);
}
