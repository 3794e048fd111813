import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { SqlCandidateSource } from "../../src/store/sql-candidates.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { useStore } from "./store-helpers.js";

/**
 * Plans, not timings: a statement that tests each of a principal's rows
 * against every looked-up belief is fast on a test's few rows and takes
 * seconds on a 100k-belief principal (the corrections lookup did: 11 s, the
 * successor found by `old.belief_id = ANY(n.supersedes)`, which no index can
 * answer). With sequential scans priced out, a statement that can use the
 * supersedes index does; one that cannot still filters every row.
 * The principal gets a thousand rows and fresh statistics first, so the
 * planner weighs the two as it would on a real store.
 */

/** The client, recording the last statement and parameters it ran. */
function recording(db: SqlClient): SqlClient & { last: () => { text: string; params: readonly unknown[] } } {
  let last: { text: string; params: readonly unknown[] } | undefined;
  return {
    kind: db.kind,
    query: (text, params, options) => {
      last = { text, params: params ?? [] };
      return db.query(text, params, options);
    },
    exec: (script) => db.exec(script),
    transaction: (work, options) => db.transaction(work, options),
    listen: (channel, onNotify, onConnect) => db.listen(channel, onNotify, onConnect),
    close: () => db.close(),
    last: () => {
      if (!last) throw new Error("no statement ran");
      return last;
    },
  };
}

/** The plan's text lines, with sequential scans priced out for the statement. */
async function planOf(db: SqlClient, statement: { text: string; params: readonly unknown[] }): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.exec("SET LOCAL enable_seqscan = off");
    const rows = await tx.query<{ "QUERY PLAN": string }>(`EXPLAIN ${statement.text}`, statement.params);
    return rows.map((r) => r["QUERY PLAN"]);
  });
}

describe.each(STORE_KINDS)("statement plans ($kind)", ({ open }) => {
  const store = useStore(open);

  it("the snapshot corrections lookup finds successors through the supersedes index, never by testing every row", async () => {
    const p: Principal = newPrincipal();
    const old = belief({ statement: "Andy lives in Madrid." });
    const successor = belief({ statement: "Andy lives in Berlin.", supersedes: [old.beliefId] });
    // Enough rows that the planner prices a scan of the principal's rows above an index lookup, as on a real store:
    // copies of one belief under new ids, made by one statement (a thousand writes through the store take seconds).
    const filler = belief({ statement: "Andy noted a fact." });
    await store().putBeliefs(p, [old, filler]);
    const columns = (
      await store().db.query<{ column_name: string }>(
        `SELECT column_name FROM information_schema.columns
         WHERE table_name = 'beliefs' AND is_generated = 'NEVER' AND column_name <> 'belief_id' ORDER BY ordinal_position`,
      )
    ).map((c) => c.column_name);
    await store().db.query(
      `INSERT INTO beliefs (belief_id, ${columns.join(", ")}) SELECT gen_random_uuid(), ${columns.map((c) => `b.${c}`).join(", ")}
       FROM beliefs b CROSS JOIN generate_series(1, 1000)
       WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = $3`,
      [p.tenantId, p.principalId, filler.beliefId],
    );
    await store().db.exec("ANALYZE beliefs");
    const watermark = (await store().head(p)).position;
    await store().putBeliefs(p, [successor]);
    const db = recording(store().db);
    const corrections = await new SqlCandidateSource(db).snapshotCorrections(p, [old.beliefId], watermark, new Date("2026-08-01T00:00:00Z"));
    expect(corrections.map((c) => c.supersededBy)).toEqual([successor.beliefId]);

    const plan = await planOf(store().db, db.last());
    // Both successor lookups (the one in force, and the latest active one) ask the index for the rows naming it...
    expect(plan.filter((line) => /Index Cond:.*supersedes @>/.test(line)), plan.join("\n")).toHaveLength(2);
    // ...and no scan tests the supersedes array of each row it reads.
    expect(plan.filter((line) => /Filter:.*supersedes/.test(line)), plan.join("\n")).toEqual([]);
  });
});
