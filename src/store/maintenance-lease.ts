import { randomUUID } from "node:crypto";
import type { SqlClient } from "./sql-client.js";

/**
 * Fleet-wide maintenance runs once per interval across every sidecar sharing
 * the database, not once per sidecar: each sidecar's timer asks for the
 * lease, and the one whose claim finds it expired runs the work; the others
 * skip the interval at the cost of this one statement. The claim is a single
 * upsert on one row, so two claims at once serialise on its row lock and the
 * second sees the first's lease. No advisory lock: a session lock does not
 * survive a transaction-mode pooler, and a transaction lock would pin a
 * connection for the whole run. The work itself still takes its rows with
 * SKIP LOCKED, so a run that outlives its lease shares rows, never repeats them.
 */

/** This process, as a lease holder. */
export const SIDECAR_INSTANCE = randomUUID();

/** Takes (or renews) lease `name` for `ms` when it is free or expired; true when this holder now has it. */
export async function claimLease(db: SqlClient, name: string, ms: number, holder: string = SIDECAR_INSTANCE): Promise<boolean> {
  const rows = await db.query(
    `INSERT INTO maintenance_leases AS l (name, holder, expires_at)
     VALUES ($1, $2, clock_timestamp() + $3::float8 * interval '1 millisecond')
     ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE l.expires_at <= clock_timestamp()
     RETURNING holder`,
    [name, holder, ms],
  );
  return rows.length > 0;
}
