import { ERASED_MARKER, ERASED_TABLES, existingTables } from "../store/erase-principal.js";
import { HEAD_CHANNEL } from "../store/memory-store.js";
import type { SqlClient } from "../store/sql-client.js";

/**
 * The testing sidecar's reset: every principal erased at once, in one
 * transaction. Like ErasePrincipal, heads move forward and are NOTIFYed with
 * the erased marker instead of being deleted, so no snapshot cached before
 * the reset is served after it. It spans principals: it exists only for the
 * testing entry point's throw-away stores.
 */
export async function eraseEveryPrincipal(db: SqlClient): Promise<void> {
  await db.transaction(async (tx) => {
    const present = await existingTables(tx);
    for (const table of ERASED_TABLES) if (present.has(table)) await tx.exec(`DELETE FROM ${table}`);
    await tx.query(
      `WITH moved AS (UPDATE principal_heads SET position = position + 1, erased_position = position + 1, updated_at = now() RETURNING tenant_id, principal_id, position, updated_at)
       SELECT pg_notify($1, json_build_array(tenant_id, principal_id, position, updated_at, $2::text)::text) FROM moved`,
      [HEAD_CHANNEL, ERASED_MARKER],
    );
  });
}
