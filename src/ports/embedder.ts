/**
 * Turns statements and query texts into vectors for the semantic arm. The
 * same embedder embeds beliefs (in the background) and queries (in the
 * recall), so their vectors are comparable; `id` names it in the store, and
 * vectors stored under another id are treated as missing.
 */
export interface Embedder {
  /** Names the embedder, model and dimension, e.g. "openai:text-embedding-3-small:1536". */
  readonly id: string;
  readonly dimensions: number;
  /**
   * One vector of `dimensions` finite numbers per text, in order. Rejects when aborted.
   * `purpose`: a recall's query or a belief's document (default); a model trained with
   * prefixes (a local folder's prompts) puts the matching one before each text.
   */
  embed(texts: readonly string[], signal?: AbortSignal, purpose?: EmbedPurpose): Promise<number[][]>;
  /** Releases what it holds (the local embedder's worker thread); embed fails afterwards. */
  close?(): Promise<void>;
}

export type EmbedPurpose = "query" | "document";

/** The embedder could not produce vectors: unreachable, non-2xx, malformed or wrong-sized answer. */
export class EmbedderError extends Error {
  override readonly name = "EmbedderError";
  constructor(
    message: string,
    /** The endpoint's HTTP status, when it answered with an error. */
    readonly status?: number,
  ) {
    super(message);
  }

  /** The endpoint refused these inputs (400, 413, 422): repeating the same request cannot succeed. */
  get rejectedInput(): boolean {
    return this.status === 400 || this.status === 413 || this.status === 422;
  }
}

/** A vector as pgvector's text literal, "[0.1,-0.2,…]". */
export function vectorLiteral(vector: readonly number[]): string {
  return `[${vector.join(",")}]`;
}

/**
 * A belief's embedded document: its statement and its source context, the
 * same parts the lexical arm indexes, each embedded alone and summed with
 * these weights (the lexical fields' weights), then scaled to unit length.
 */
export interface DocumentWeights {
  statement: number;
  source: number;
  neighbours: number;
}

/** The id stored with a document's vector: the embedder's, and the document's composition. */
export function documentEmbedderId(embedder: string, w: DocumentWeights): string {
  return `${embedder}+doc(${w.statement},${w.source},${w.neighbours})`;
}
