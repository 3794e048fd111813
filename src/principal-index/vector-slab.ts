import { quantiseInt8 } from "../domain/int8-vector.js";

/**
 * The semantic arm's vectors of one principal index, by ordinal: one Int8Array
 * slab of `dim` bytes per row (symmetric per-row quantisation,
 * domain/int8-vector.ts) and one Float32Array of each row's inverse int8
 * norm. The row's scale cancels out of a cosine, so the norm is what scoring
 * needs in its place (the same 4 bytes). A row without a current vector has
 * an inverse norm of 0 and is never a candidate, like a zero vector in SQL
 * (whose cosine there is NaN, which no similarity bound admits).
 */
export class VectorSlab {
  private capacity = 0;
  private values = new Int8Array(0);
  private invNorm = new Float32Array(0);
  /** Rows holding a vector now. */
  held = 0;
  /** Fixed by the first vector: one embedder's vectors all have its dimension. */
  dim = 0;

  /** Sets row `o`'s vector (a float vector as the store returned it), or marks it absent (null). */
  set(o: number, vector: Float32Array | null): void {
    if (vector !== null && this.dim === 0) {
      this.dim = vector.length;
      this.values = new Int8Array(this.capacity * this.dim);
    }
    if (o >= this.capacity) this.resize(Math.max(o + 1, this.capacity + (this.capacity >> 3), 256));
    const had = this.invNorm[o]! > 0;
    let inv = 0;
    if (vector !== null && vector.length === this.dim) {
      const at = o * this.dim;
      quantiseInt8(vector, this.values, at);
      let squares = 0;
      for (let i = at; i < at + this.dim; i++) squares += this.values[i]! * this.values[i]!;
      inv = squares > 0 ? 1 / Math.sqrt(squares) : 0;
    }
    this.invNorm[o] = inv;
    this.held += (inv > 0 ? 1 : 0) - (had ? 1 : 0);
  }

  /**
   * The cosine similarity of row `o` to `query` (of unit-free length
   * `queryNorm`), or NaN when the row holds no vector. Summed in double:
   * the SQL sums in float32, so the two agree to about 1e-6 (docs/adr/0031).
   */
  cosine(o: number, query: Float32Array, queryNorm: number): number {
    const inv = this.invNorm[o]!;
    if (!(inv > 0)) return NaN;
    const v = this.values;
    const at = o * this.dim;
    let dot = 0;
    for (let i = 0; i < query.length; i++) dot += query[i]! * v[at + i]!;
    return (dot * inv) / queryNorm;
  }

  /** Bytes the arrays hold, for the index's byte bound. */
  get bytes(): number {
    return this.values.byteLength + this.invNorm.byteLength;
  }

  /**
   * Drops the spare capacity (after a load, whose row count was not known in
   * advance): a principal's vectors are most of its index's bytes.
   */
  fit(rows: number): void {
    if (rows < this.capacity) this.resize(rows);
  }

  /** Grown by an eighth at a time, not doubled: spare rows cost `dim` bytes each. */
  private resize(capacity: number): void {
    const values = new Int8Array(capacity * this.dim);
    values.set(this.values.subarray(0, values.length));
    const invNorm = new Float32Array(capacity);
    invNorm.set(this.invNorm.subarray(0, capacity));
    this.values = values;
    this.invNorm = invNorm;
    this.capacity = capacity;
  }
}
