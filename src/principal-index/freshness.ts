import type { Principal } from "../domain/model.js";
import type { SqlClient } from "../store/sql-client.js";
import { indexedFromRow, loadBeliefRows, loadDelta, loadSideTables, sqlLexemes, type VectorsOf } from "./loading.js";
import { PrincipalIndex, type IndexLookups } from "./one-principal-index.js";
import { termLexeme } from "./query-lexemes.js";

/**
 * Keeping an index current to the watermark. It records the store head its
 * contents reflect (`position`); a recall brings it up to the head it read
 * before answering, by one delta statement plus the small tables.
 */

/**
 * Loads a principal's index. The head is read before the rows, so the rows
 * are at least as new as the position recorded: a later delta from that
 * position re-reads anything newer (row replacement is idempotent).
 * `vectorsOf`: whose vectors it holds (the semantic arm's), or null.
 */
export async function loadIndex(db: SqlClient, p: Principal, lookups: IndexLookups, vectorsOf: VectorsOf = null): Promise<PrincipalIndex> {
  const side = await loadSideTables(db, p);
  // Read in pages and built in slices that yield between them: 100k rows take seconds of CPU, and
  // recalls of other principals (or this one, from SQL meanwhile) must not wait behind all of it.
  const index = new PrincipalIndex(p, side, [], lookups, vectorsOf);
  for await (const rows of loadBeliefRows(db, p, vectorsOf)) {
    for (let i = 0; i < rows.length; i += BUILD_SLICE) {
      index.upsert(rows.slice(i, i + BUILD_SLICE).map(indexedFromRow));
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  index.fitVectors();
  return index;
}

/** Rows parsed and indexed between two turns of the event loop while an index loads (a few ms of work). */
const BUILD_SLICE = 500;

/**
 * Applies the delta above the index's position, and re-reads the persona
 * set and aliases (which carry no position). `target` is a head known to be
 * committed (from the head tracker), or null to read the head first (after a
 * write through this sidecar, and for aliases and feedback, which do not
 * move it). `beliefIds` are re-read whatever their position (feedback).
 */
export async function applyDelta(db: SqlClient, index: PrincipalIndex, target: number | null, beliefIds: readonly string[] = []): Promise<void> {
  const from = index.position;
  const p = index.principal;
  let position: number;
  let rows;
  let side;
  if (target === null) {
    side = await loadSideTables(db, p);
    rows = await loadDelta(db, p, from, beliefIds, index.vectorsOf);
    position = side.position;
  } else {
    [rows, side] = await Promise.all([loadDelta(db, p, from, beliefIds, index.vectorsOf), loadSideTables(db, p)]);
    position = target;
  }
  index.upsert(rows);
  index.setSideTables(side);
  index.position = Math.max(from, position);
}

/** Query lexemes: in process where query-lexemes.ts can decide, from PostgreSQL otherwise (remembered). */
export function lexemeLookup(db: SqlClient, maxRemembered = 10_000): IndexLookups["lexemes"] {
  const remembered = new Map<string, string[]>();
  return async (terms, options) => {
    const out = new Set<string>();
    const unknown: string[] = [];
    for (const term of terms) {
      const known = termLexeme(term);
      if (known === undefined) {
        const seen = remembered.get(term);
        if (seen) seen.forEach((l) => out.add(l));
        else unknown.push(term);
      } else if (known !== null) out.add(known);
    }
    if (unknown.length > 0) {
      for (const [term, lexemes] of await sqlLexemes(db, unknown, options)) {
        if (remembered.size >= maxRemembered) remembered.clear();
        remembered.set(term, lexemes);
        lexemes.forEach((l) => out.add(l));
      }
    }
    return [...out];
  };
}
