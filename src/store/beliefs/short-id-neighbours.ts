import type { Principal } from "../../domain/model.js";
import { hexOf, SHORT_ID_DIGITS } from "../../domain/short-id.js";
import type { SqlClient } from "../sql-client.js";

/**
 * The principal's other beliefs whose ids share their first eight hex digits
 * (the short id a block cites, `[m:8f21a0c3]`) with each of `beliefIds`. A
 * block showing two of them cites them by longer ids; the write path warns
 * about it (PutBeliefsResponse.warnings). One range scan of the primary key
 * per id: the ids with eight given digits lie between xxxxxxxx-0000-… and
 * xxxxxxxx-ffff-…, as PostgreSQL orders UUIDs by their bytes.
 */
export async function shortIdNeighbours(db: SqlClient, p: Principal, beliefIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (beliefIds.length === 0) return out;
  const prefixes = beliefIds.map((id) => hexOf(id).slice(0, SHORT_ID_DIGITS));
  const rows = await db.query<{ belief_id: string; other: string }>(
    `SELECT n.id::text AS belief_id, b.belief_id::text AS other
       FROM unnest($3::uuid[], $4::uuid[], $5::uuid[]) AS n(id, lo, hi)
       JOIN beliefs b ON b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id BETWEEN n.lo AND n.hi AND b.belief_id <> n.id
      ORDER BY 1, 2`,
    [
      p.tenantId,
      p.principalId,
      [...beliefIds],
      prefixes.map((h) => `${h}-0000-0000-0000-000000000000`),
      prefixes.map((h) => `${h}-ffff-ffff-ffff-ffffffffffff`),
    ],
  );
  for (const r of rows) out.set(r.belief_id, [...(out.get(r.belief_id) ?? []), r.other]);
  return out;
}
