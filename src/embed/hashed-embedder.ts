import type { Embedder } from "../ports/embedder.js";

/**
 * A deterministic, local embedder: a feature-hashed bag of normalised,
 * lightly stemmed words, L2-normalised. Two texts are similar exactly as far
 * as they share content words, so it knows no paraphrase; it exists so tests
 * and demos exercise the real semantic path (storage, SQL, fusion, outages)
 * with no model and no network, byte for byte the same on every run.
 */

/** Bump when tokenising, stemming or hashing changes: stored vectors are keyed by the id. */
const VERSION = 1;

/** Words that say nothing about content (its own list: the stored vectors must not move when the lexical arm's does). */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    "a an the this that these those is are was were be been being am do does did have has had " +
    "i me my we our you your he him his she her it its they them their of to in on at by for with " +
    "from as and or but if so than then there here what which who whom how when where why"
  ).split(" "),
);

export function hashedEmbedder(dimensions: number): Embedder {
  return {
    id: `hashed@${VERSION}:${dimensions}`,
    dimensions,
    async embed(texts, signal) {
      signal?.throwIfAborted();
      return texts.map((t) => hashedVector(t, dimensions));
    },
  };
}

/** The vector of one text. Never all zeros: a text with no content words hashes its raw words, or the empty word. */
export function hashedVector(text: string, dimensions: number): number[] {
  const words = text.toLowerCase().normalize("NFKC").match(/[\p{L}\p{N}]+/gu) ?? [];
  const content = words.filter((w) => !STOP_WORDS.has(w)).map(stem);
  const features = content.length > 0 ? content : words.length > 0 ? words : [""];
  const v = new Array<number>(dimensions).fill(0);
  for (const feature of features) {
    // Unsigned: a collision can only add similarity, never cancel a shared word (signed hashing can).
    v[fnv1a(feature) % dimensions]! += 1;
  }
  const norm = Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));
  return v.map((x) => x / norm);
}

/** A few English suffixes, so "deploys", "deployed" and "deploying" share a feature. */
export function stem(word: string): string {
  if (word.length <= 3) return word;
  for (const [suffix, keep] of SUFFIXES) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, word.length - suffix.length) + keep;
  }
  return word;
}

const SUFFIXES: readonly (readonly [string, string])[] = [
  ["ies", "y"],
  ["ing", ""],
  ["ed", ""],
  ["s", ""],
];

/** 32-bit FNV-1a over UTF-16 code units: small, fast and the same everywhere. */
function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
