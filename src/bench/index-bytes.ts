import v8 from "node:v8";
import vm from "node:vm";
import { setTimeout as delay } from "node:timers/promises";
import type { Principal } from "../domain/model.js";
import { lexemeLookup, loadIndex } from "../principal-index/freshness.js";
import { HOT_ROWS } from "../principal-index/hot-rows.js";
import type { IndexLookups } from "../principal-index/one-principal-index.js";
import type { EligibilityFilter } from "../domain/hard-filter.js";
import type { SqlClient } from "../store/sql-client.js";

/**
 * What one principal's index costs in memory, measured in the bench's own
 * process: the heap (and the typed arrays' backing stores, which live
 * outside it) after a forced full collection, with the index loaded, minus
 * the same before it was loaded. A measurement of retained bytes, not of
 * RSS: the collector's slack and freed pages the allocator kept do not count.
 * The index is measured loaded, and with its hot rows full (the rows it
 * keeps as objects once arms return them, hot-rows.ts; their memos, which
 * recall fills, are not filled here).
 */

export interface IndexBytes {
  label: string;
  beliefs: number;
  /** Retained with the hot rows full: the figure the target is judged on. */
  bytes: number;
  perBelief: number;
  /** Retained as loaded, before any arm returned a row. */
  loadedBytes: number;
  loadMs: number;
}

/** A full collection on demand: --expose-gc set at run time, and the gc function read from a fresh context. */
export function forcedCollection(): () => void {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (exposed) return exposed;
  v8.setFlagsFromString("--expose-gc");
  return vm.runInNewContext("gc") as () => void;
}

/** Heap used plus memory outside the heap that objects hold (ArrayBuffers of typed columns), after two full collections. */
export function retainedNow(gc: () => void): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

export async function retainedIndexBytes(db: SqlClient, principals: readonly { label: string; principal: Principal }[]): Promise<IndexBytes[]> {
  const gc = forcedCollection();
  const lookups = { lexemes: lexemeLookup(db) };
  // One unmeasured load first: the driver's buffers, the code's compiled forms and its caches are not the index's.
  const first = principals[0];
  if (first) await measureOne(db, first.principal, lookups, gc);
  const out: IndexBytes[] = [];
  for (const { label, principal } of principals) out.push({ label, ...(await measureOne(db, principal, lookups, gc)) });
  return out;
}

/**
 * One load, measured in a frame of its own: a suspended async function can
 * keep the last value it awaited alive until it awaits again, so the index
 * is only ever held here, and gone once this returns.
 */
async function measureOne(db: SqlClient, principal: Principal, lookups: IndexLookups, gc: () => void): Promise<Omit<IndexBytes, "label">> {
  await delay(0);
  const before = retainedNow(gc);
  const started = performance.now();
  const index = await loadIndex(db, principal, lookups);
  const loadMs = performance.now() - started;
  const loadedBytes = retainedNow(gc) - before;
  // Every row is eligible to this filter and the arm unanchored: it returns HOT_ROWS rows, which the index then keeps.
  await index.structuredCandidates(everything(principal), { subjects: [], types: [], typeWeight: 1 }, HOT_ROWS);
  const bytes = retainedNow(gc) - before;
  const beliefs = index.size;
  return { beliefs, bytes, perBelief: beliefs > 0 ? bytes / beliefs : NaN, loadedBytes, loadMs };
}

/** A hard filter every row passes. */
function everything(principal: Principal): EligibilityFilter {
  const end = new Date("9999-01-01T00:00:00Z");
  return {
    principal,
    sensitivityCeiling: 4,
    asOf: end,
    knownAt: end,
    statuses: ["active", "provisional", "superseded", "expired"],
    historical: false,
    currentScope: "",
    namedSubjects: [],
    beliefTypes: [],
    excludePersonaHeld: false,
    excludeExpiredDated: false,
  };
}

export function formatIndexBytes(rows: readonly IndexBytes[]): string[] {
  return rows.map(
    (r) =>
      `  ${r.label}: ${r.beliefs.toLocaleString("en-US")} beliefs, ${(r.bytes / 1024 ** 2).toFixed(1)} MiB retained, ` +
      `${r.perBelief.toFixed(0)} bytes per belief with its hot rows full (${(r.loadedBytes / Math.max(1, r.beliefs)).toFixed(0)} as loaded; ` +
      `loaded in-process in ${(r.loadMs / 1000).toFixed(1)} s)`,
  );
}
