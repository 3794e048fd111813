import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadMigrations, migrate } from "../../src/store/migrate.js";
import { createPgliteClient, openPglite } from "../../src/store/pglite/pglite-client.js";
import { createPostgresClient } from "../../src/store/postgres/postgres-client.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { STORE_KINDS, freshPostgresDatabase } from "../support/stores.js";
import { useStore } from "./store-helpers.js";

async function appliedVersions(db: SqlClient): Promise<{ version: number; n: number }[]> {
  const rows = await db.query<{ version: number; n: number }>(
    "SELECT version, count(*)::int AS n FROM schema_migrations GROUP BY version ORDER BY version",
  );
  return rows.map((r) => ({ version: Number(r.version), n: Number(r.n) }));
}

describe.each(STORE_KINDS)("migrations ($kind)", ({ open }) => {
  const store = useStore(open);

  it("applies nothing on an already-migrated database, however often it runs", async () => {
    const migrations = await loadMigrations();
    expect(migrations.length).toBeGreaterThan(0);
    expect(await migrate(store().db, migrations)).toEqual([]);
    expect(await migrate(store().db, migrations)).toEqual([]);
    expect(await appliedVersions(store().db)).toEqual(migrations.map((m) => ({ version: m.version, n: 1 })));
  });

  it("loads migrations in version order with names from the file names", async () => {
    const migrations = await loadMigrations();
    expect(migrations[0]).toMatchObject({ version: 1, name: "initial" });
    const versions = migrations.map((m) => m.version);
    expect(versions).toEqual([...versions].sort((a, b) => a - b));
  });
});

describe("migrations under concurrency (postgres)", () => {
  it("two sidecars migrating one fresh database at once both succeed, each version applied once", async () => {
    const database = await freshPostgresDatabase();
    const a = createPostgresClient(database.url, 1);
    const b = createPostgresClient(database.url, 1);
    try {
      const migrations = await loadMigrations();
      const results = await Promise.all([migrate(a, migrations), migrate(b, migrations)]);
      // The advisory lock serialises them: one applies everything, the other finds nothing to do.
      const all = migrations.map((m) => m.version);
      expect(results.map((r) => r.length).sort()).toEqual([0, all.length]);
      expect(results.flat()).toEqual(all);
      expect(await appliedVersions(a)).toEqual(all.map((version) => ({ version, n: 1 })));
      // The schema is really there and a third run is a no-op.
      expect(await b.query("SELECT count(*)::int AS n FROM beliefs")).toEqual([{ n: 0 }]);
      expect(await migrate(b, migrations)).toEqual([]);
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
      await database.drop();
    }
  });
});

/**
 * 0002 changes what carried_in means (rendered-and-carried becomes
 * carried-and-cited) and gives citations a turn; traces written before it
 * must keep their meaning.
 */
describe.each([
  {
    kind: "pglite",
    open: async () => {
      const db = createPgliteClient(await openPglite(undefined));
      return { db, dispose: () => db.close() };
    },
  },
  {
    kind: "postgres",
    open: async () => {
      const database = await freshPostgresDatabase();
      const db = createPostgresClient(database.url, 1);
      return { db, dispose: async () => (await db.close(), await database.drop()) };
    },
  },
])("migration 0002 on traces written before it ($kind)", ({ open }) => {
  it("moves rendered carried ids to carried, keeps only the cited ones in carried_in, and gives citations their trace's turn", async () => {
    const { db, dispose } = await open();
    try {
      const migrations = await loadMigrations();
      await migrate(db, migrations.filter((m) => m.version === 1));
      const [trace, citedCarried, uncitedCarried] = [randomUUID(), randomUUID(), randomUUID()];
      await db.query(
        `INSERT INTO recall_traces (tenant_id, principal_id, trace_id, session_id, turn_id, moment, query, sensitivity_ceiling,
           rendered_sha256, as_of, returned, dropped_for_budget_count, blocked, carried_in, retrieval_policy_version,
           created_at, operator_fields_expire_at)
         VALUES ('t', 'p', $1, 's', 'turn-1', 'in_turn', '{}'::jsonb, 2, 'x', now(), $2::uuid[], 0, '{}', $2::uuid[],
           'retrieval@1', now(), now())`,
        [trace, [citedCarried, uncitedCarried]],
      );
      await db.query(`INSERT INTO citations (tenant_id, principal_id, trace_id, belief_id) VALUES ('t', 'p', $1, $2)`, [trace, citedCarried]);

      expect(await migrate(db, migrations)).toEqual(migrations.filter((m) => m.version > 1).map((m) => m.version));
      const [row] = await db.query<{ carried: string[]; carried_in: string[]; returned_bands: string[]; considered_not_shown: number }>(
        `SELECT carried::text[] AS carried, carried_in::text[] AS carried_in, returned_bands, considered_not_shown FROM recall_traces`,
      );
      expect(row).toEqual({ carried: [citedCarried, uncitedCarried], carried_in: [citedCarried], returned_bands: [], considered_not_shown: 0 });
      expect(await db.query(`SELECT turn_id FROM citations`)).toEqual([{ turn_id: "turn-1" }]);
    } finally {
      await dispose();
    }
  });
});
