import type { Belief, StoredBelief } from "../../src/domain/model.js";
import { belief } from "../support/fixtures.js";

/**
 * Shared helpers for the pure-module unit tests (not a test file itself).
 */

/** A StoredBelief: a valid fixture belief plus the read-path fields. */
export function storedBelief(overrides: Partial<StoredBelief> = {}): StoredBelief {
  const { utility, lastUsedAt, storePosition, ...rest } = overrides;
  const base: Belief = belief(rest);
  return {
    ...base,
    utility: utility ?? 0,
    lastUsedAt: lastUsedAt ?? null,
    storePosition: storePosition ?? 1,
  };
}

/** A deterministic UUID whose short id (first 8 hex digits) is `hex8`. */
export function uuidWithPrefix(hex8: string, n = 0): string {
  if (!/^[0-9a-f]{8}$/.test(hex8)) throw new Error(`bad prefix ${hex8}`);
  return `${hex8}-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

/** A deterministic UUID numbered n; ids sort in numeric order. */
export function uid(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, "0")}`;
}

export const DAY_MS = 86_400_000;

/** mulberry32: a tiny seeded PRNG, so property tests are reproducible. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(rand: () => number, items: readonly T[]): T {
  const item = items[Math.floor(rand() * items.length)];
  if (item === undefined) throw new Error("pick from empty list");
  return item;
}

/** Fisher-Yates shuffle into a new array. */
export function shuffle<T>(rand: () => number, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
