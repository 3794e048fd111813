import type { Principal } from "../domain/model.js";
import { ROWS_CHANNEL } from "../store/beliefs/belief-writes.js";
import type { SqlClient } from "../store/sql-client.js";

/**
 * Changes the head does not announce, from every sidecar sharing the
 * database: rows whose utility feedback changed (citations, the uncited
 * sweep), and principals whose rows were deleted (an erasure NOTIFYs with
 * ids null). Deleted rows are no delta above a position, so they can only
 * reach an index this way. When the listening connection is re-established,
 * notifications may have been missed: `onReconnect` lets the caller drop
 * what it holds.
 */
export interface RowChanges {
  /** Rows to re-read, or null for "drop the principal's index". */
  onRows(p: Principal, beliefIds: string[] | null): void;
  onReconnect(): void;
}

export async function listenForRowChanges(db: SqlClient, handler: RowChanges): Promise<() => Promise<void>> {
  let connected = false;
  return db.listen(
    ROWS_CHANNEL,
    (payload) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(payload);
      } catch {
        return;
      }
      if (!Array.isArray(parsed) || typeof parsed[0] !== "string" || typeof parsed[1] !== "string") return;
      const ids = Array.isArray(parsed[2]) ? parsed[2].filter((x): x is string => typeof x === "string") : null;
      handler.onRows({ tenantId: parsed[0], principalId: parsed[1] }, ids);
    },
    () => {
      if (connected) handler.onReconnect();
      connected = true;
    },
  );
}
