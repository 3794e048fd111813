import type { Principal } from "../domain/model.js";
import { HEAD_CHANNEL } from "./memory-store.js";
import type { SqlClient } from "./sql-client.js";

/**
 * Erasure of one principal: every row of it, in one transaction, in every
 * table that holds per-principal rows. The head row is the exception: it is
 * moved forward and NOTIFYed, never deleted, because snapshot caches are keyed
 * by head position; a head that restarted at 0 would, after new writes, reach
 * a position some sidecar still holds a cached snapshot of erased memory for.
 */

/**
 * Tables with per-principal rows, in delete order: dependants before what they
 * reference (embeddings before beliefs), and principal_lexicon after beliefs,
 * whose delete trigger updates it. test/store/erase.test.ts checks this list
 * against every table of the schema that has a principal_id column.
 */
export const ERASED_TABLES = [
  "belief_embeddings",
  "citations",
  "recalled_events",
  "recall_traces",
  "rederivation_hints",
  "rejections",
  "persona_entries",
  "subject_aliases",
  "episodes",
  "beliefs",
  "principal_lexicon",
] as const;

/** Tables that exist only with optional storage (sql/optional/): skipped where absent. */
const OPTIONAL_TABLES: ReadonlySet<string> = new Set(["belief_embeddings"]);

/** Payload marker on HEAD_CHANNEL: [tenant, principal, position, updated_at, "erased"]. */
export const ERASED_MARKER = "erased";

export interface Erasure {
  /** Rows deleted per table; every table of ERASED_TABLES that exists is listed. */
  deleted: Record<string, number>;
  /** The head position after the erase. */
  position: number;
}

export async function erasePrincipal(db: SqlClient, p: Principal): Promise<Erasure> {
  return db.transaction(async (tx) => {
    // The head lock first: a write of this principal racing the erase commits
    // wholly before it (and is erased) or wholly after it.
    const heads = await tx.query<{ position: number }>(
      `INSERT INTO principal_heads (tenant_id, principal_id) VALUES ($1, $2)
       ON CONFLICT (tenant_id, principal_id) DO UPDATE SET position = principal_heads.position
       RETURNING position`,
      [p.tenantId, p.principalId],
    );
    const present = await existingTables(tx);
    const deleted: Record<string, number> = {};
    for (const table of ERASED_TABLES) {
      if (!present.has(table)) continue;
      const rows = await tx.query<{ n: number }>(
        `WITH gone AS (DELETE FROM ${table} WHERE tenant_id = $1 AND principal_id = $2 RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [p.tenantId, p.principalId],
      );
      deleted[table] = Number(rows[0]?.n ?? 0);
    }
    const erasedAnything = Object.values(deleted).some((n) => n > 0);
    const current = Number(heads[0]?.position ?? 0);
    if (!erasedAnything) {
      // Idempotent: a second erase finds nothing and leaves the head where it is; an erase of a
      // principal that never wrote anything leaves no head row behind either.
      if (current === 0) await tx.query("DELETE FROM principal_heads WHERE tenant_id = $1 AND principal_id = $2", [p.tenantId, p.principalId]);
      return { deleted, position: current };
    }
    const position = current + 1;
    await tx.query(`UPDATE principal_heads SET position = $3, erased_position = $3, updated_at = now() WHERE tenant_id = $1 AND principal_id = $2`, [
      p.tenantId,
      p.principalId,
      position,
    ]);
    // Delivered at commit to every sidecar listening: head trackers move on, and the marker
    // tells in-process indexes and caches that state below the new head was deleted, not superseded.
    await tx.query("SELECT pg_notify($1, json_build_array($2::text, $3::text, $4::bigint, now(), $5::text)::text)", [
      HEAD_CHANNEL,
      p.tenantId,
      p.principalId,
      position,
      ERASED_MARKER,
    ]);
    return { deleted, position };
  });
}

/** The tables of ERASED_TABLES in this schema (optional storage only where applied). */
export async function existingTables(tx: SqlClient): Promise<Set<string>> {
  const optional = [...OPTIONAL_TABLES];
  const rows = await tx.query<{ name: string }>(
    `SELECT t AS name FROM unnest($1::text[]) AS t WHERE to_regclass(t) IS NOT NULL`,
    [optional],
  );
  const found = new Set(rows.map((r) => r.name));
  return new Set(ERASED_TABLES.filter((t) => !OPTIONAL_TABLES.has(t) || found.has(t)));
}
