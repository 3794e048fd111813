import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresClient } from "../../src/store/postgres/postgres-client.js";
import { PGBOUNCER_MISSING, startPgBouncer, type RunningPgBouncer } from "../support/pgbouncer.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * Why RECALL_DATABASE_POOLER=transaction exists: PgBouncer 1.18 in
 * transaction mode hands each transaction whichever server connection is
 * free, so a statement prepared by name on one is unknown on the next
 * ("prepared statement ... does not exist": in 2 of 3 runs of this load with
 * named statements; not asserted, since it depends on which server
 * connection each statement lands on). Unnamed statements never fail so.
 * LISTEN through it fails too: test/integration/fleet.test.ts.
 */
describe.skipIf(PGBOUNCER_MISSING !== undefined)("the SQL client behind PgBouncer in transaction mode", () => {
  let database: { url: string; drop(): Promise<void> };
  let pooler: RunningPgBouncer;
  beforeAll(async () => {
    database = await freshPostgresDatabase();
    pooler = await startPgBouncer(database.url);
  });
  afterAll(async () => {
    await pooler?.stop();
    await database?.drop();
  });

  /**
   * Two sidecars' pools sending the same statements at once, as a fleet does:
   * pipelined statements land on server connections where they were never
   * prepared. (postgres.js re-prepares after a lone such error; not under load.)
   */
  async function underLoad(prepare: boolean): Promise<unknown> {
    const pools = [createPostgresClient(pooler.url, 10, { prepare }), createPostgresClient(pooler.url, 10, { prepare })];
    try {
      for (let round = 0; round < 10; round++) {
        await Promise.all(Array.from({ length: 100 }, (_, i) => pools[i % 2]!.query(`SELECT $1::int + ${i % 17} AS n`, [i])));
      }
      return null;
    } catch (error) {
      return error;
    } finally {
      await Promise.all(pools.map((p) => p.close()));
    }
  }

  it("serves a fleet's concurrent statements when they are unnamed (RECALL_DATABASE_POOLER=transaction)", async () => {
    expect(await underLoad(false)).toBeNull();
  });
});

describe.skipIf(PGBOUNCER_MISSING === undefined)("the SQL client behind PgBouncer in transaction mode", () => {
  it.skip(PGBOUNCER_MISSING ?? "", () => {});
});
