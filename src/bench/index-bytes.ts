import v8 from "node:v8";
import vm from "node:vm";
import { setTimeout as delay } from "node:timers/promises";
import type { Principal } from "../domain/model.js";
import { lexemeLookup, loadIndex } from "../principal-index/freshness.js";
import type { IndexLookups } from "../principal-index/one-principal-index.js";
import type { SqlClient } from "../store/sql-client.js";

/**
 * What one principal's index costs in memory, measured in the bench's own
 * process: the heap (and the typed arrays' backing stores, which live
 * outside it) after a forced full collection, with the index loaded, minus
 * the same before it was loaded. A measurement of retained bytes, not of
 * RSS: the collector's slack and freed pages the allocator kept do not count.
 * The index is measured as loaded (before any recall fills its rows' memos).
 */

export interface IndexBytes {
  label: string;
  beliefs: number;
  bytes: number;
  perBelief: number;
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
  const bytes = retainedNow(gc) - before;
  const beliefs = index.size;
  return { beliefs, bytes, perBelief: beliefs > 0 ? bytes / beliefs : NaN, loadMs };
}

export function formatIndexBytes(rows: readonly IndexBytes[]): string[] {
  return rows.map(
    (r) =>
      `  ${r.label}: ${r.beliefs.toLocaleString("en-US")} beliefs, ${(r.bytes / 1024 ** 2).toFixed(1)} MiB retained, ` +
      `${r.perBelief.toFixed(0)} bytes per belief (loaded in-process in ${(r.loadMs / 1000).toFixed(1)} s)`,
  );
}
