import type { Belief, RecalledBelief, StoredBelief } from "../../src/domain/model.js";
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

/**
 * A random returned item with `beliefId`: statements from `texts`, conflict ids from `id`, a blocked
 * one's statement empty; its keys in the order pipeline.ts builds a ranked item.
 */
export function randomRecalledBelief(
  rand: () => number,
  options: { beliefId: string; texts: readonly string[]; id: () => string; score?: () => number },
): RecalledBelief {
  const date = () => new Date(Date.UTC(2024, 0, 1) + Math.floor(rand() * 900 * DAY_MS) + Math.floor(rand() * 1000));
  const blocked = rand() < 0.2;
  return {
    beliefId: options.beliefId,
    subject: pick(rand, options.texts),
    statement: blocked ? "" : pick(rand, options.texts),
    beliefType: pick(rand, ["preference", "decision", "project_fact", ""]),
    status: pick(rand, ["active", "provisional", "superseded", "expired"] as const),
    confidenceBand: pick(rand, ["high", "medium", "low"] as const),
    authority: pick(rand, ["user", "affirmed", "inferred"] as const),
    originScope: pick(rand, ["veetbot", "", "atlas"]),
    portability: pick(rand, ["portable", "contextual", "local"] as const),
    carried: rand() < 0.3,
    validFrom: date(),
    validTo: rand() < 0.5 ? null : date(),
    score: options.score ? options.score() : rand() < 0.1 ? 0 : rand() * 2 - 0.5,
    arms: Array.from({ length: Math.floor(rand() * 4) }, () => pick(rand, ["structured", "lexical", "delta", "semantic"])),
    conflictWith: Array.from({ length: Math.floor(rand() * 3) }, options.id),
    blocked,
  };
}
