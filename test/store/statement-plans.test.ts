import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { SqlCandidateSource } from "../../src/store/candidates/sql-candidates.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { filterFor, useStore } from "./store-helpers.js";

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

/** The plan's text lines, with sequential scans priced out for the statement; `analyze` runs it and reports what each step did. */
async function planOf(db: SqlClient, statement: { text: string; params: readonly unknown[] }, options = { analyze: false }): Promise<string[]> {
  return db.transaction(async (tx) => {
    await tx.exec("SET LOCAL enable_seqscan = off");
    const explain = options.analyze ? "EXPLAIN (ANALYZE, COSTS OFF)" : "EXPLAIN";
    const rows = await tx.query<{ "QUERY PLAN": string }>(`${explain} ${statement.text}`, statement.params);
    return rows.map((r) => r["QUERY PLAN"]);
  });
}

/** Rows an analysed plan's scans of the beliefs table returned or filtered out, over all their loops. */
function beliefRowsRead(plan: readonly string[]): number {
  let total = 0;
  let loops = 0;
  for (const line of plan) {
    const scan = /(?:Seq Scan|Index (?:Only )?Scan using \w+|Bitmap Heap Scan) on beliefs\b.*rows=([\d.]+) loops=(\d+)/.exec(line);
    if (scan) {
      loops = Number(scan[2]);
      total += Number(scan[1]) * loops;
    } else if (/->/.test(line)) {
      loops = 0;
    } else {
      const removed = /Rows Removed by (?:Filter|Index Recheck): (\d+)/.exec(line);
      if (removed) total += Number(removed[1]) * loops;
    }
  }
  return total;
}

/**
 * `count` copies of one belief under new ids, made by one statement (a
 * thousand writes through the store take seconds), then fresh statistics.
 */
async function copies(db: SqlClient, p: Principal, beliefId: string, count: number): Promise<void> {
  const columns = (
    await db.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
       WHERE table_name = 'beliefs' AND is_generated = 'NEVER' AND column_name <> 'belief_id' ORDER BY ordinal_position`,
    )
  ).map((c) => c.column_name);
  await db.query(
    `INSERT INTO beliefs (belief_id, ${columns.join(", ")}) SELECT gen_random_uuid(), ${columns.map((c) => `b.${c}`).join(", ")}
     FROM beliefs b CROSS JOIN generate_series(1, $4::int)
     WHERE b.tenant_id = $1 AND b.principal_id = $2 AND b.belief_id = $3`,
    [p.tenantId, p.principalId, beliefId, count],
  );
  await db.exec("ANALYZE beliefs");
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
    await copies(store().db, p, filler.beliefId, 1000);
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

  it("the lexical arm's name lookup asks the subject index for each name, never reads every row of the principal", async () => {
    const p: Principal = newPrincipal();
    // A common subject (a large principal's "User" group) and a rare one; their copies
    // outnumber the rest, so a statement that reads the rows in subject order reads them all.
    const common = belief({ subject: "User", statement: "User noted a fact." });
    await store().putBeliefs(p, [common, belief({ subject: "Melanie", statement: "Melanie paints landscapes." })]);
    await copies(store().db, p, common.beliefId, 1000);
    const db = recording(store().db);
    const names = await new SqlCandidateSource(db).resolveNamedSubjects(filterFor(p), ["user", "which user"], ["melanei", "usr"], 0.4);
    expect(names).toEqual({ exact: ["user"], fuzzy: ["melanie"] });

    // The statement as it ran: the rows it read from the beliefs table, whatever plan PostgreSQL chose.
    // Reading the rows of the common subject to find its one name, or the principal's rows in subject
    // order, reads a thousand; a lookup per name reads a few. (The successor check's partial index
    // holds only rows that name a predecessor: none here.)
    const plan = await planOf(store().db, db.last(), { analyze: true });
    expect(beliefRowsRead(plan), plan.join("\n")).toBeLessThan(50);
  });
});
