/**
 * Sentence-transformers' "mean pooling + normalize" over a batch of a
 * transformer's token vectors: a text's vector is the mean of its real
 * tokens' vectors (padding masked out), scaled to unit length, so a dot
 * product of two is their cosine similarity.
 *
 * `hidden` is the model's last_hidden_state, row-major [batch, sequence, dims];
 * `mask` the attention mask, [batch, sequence], 1 for a token and 0 for padding.
 */
export function meanPoolNormalized(hidden: Float32Array, mask: ArrayLike<number | bigint>, batch: number, sequence: number, dims: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const v = new Float32Array(dims);
    let tokens = 0;
    for (let s = 0; s < sequence; s++) {
      if (Number(mask[b * sequence + s]) === 0) continue;
      tokens++;
      const row = (b * sequence + s) * dims;
      for (let d = 0; d < dims; d++) v[d]! += hidden[row + d]!;
    }
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      v[d]! /= Math.max(1, tokens);
      norm += v[d]! * v[d]!;
    }
    // A zero vector stays zero (no token at all cannot happen: [CLS] and [SEP] are always there).
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < dims; d++) v[d]! /= norm;
    out.push(v);
  }
  return out;
}

/** [CLS] pooling: each text's first token's vector, scaled to unit length (BGE, GTE and other CLS-pooled models). */
export function clsPoolNormalized(hidden: Float32Array, batch: number, sequence: number, dims: number): Float32Array[] {
  const out: Float32Array[] = [];
  for (let b = 0; b < batch; b++) {
    const v = hidden.slice(b * sequence * dims, b * sequence * dims + dims);
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += v[d]! * v[d]!;
    norm = Math.sqrt(norm) || 1;
    for (let d = 0; d < dims; d++) v[d]! /= norm;
    out.push(v);
  }
  return out;
}
