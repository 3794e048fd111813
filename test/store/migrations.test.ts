import { describe, expect, it } from "vitest";
import { loadMigrations, migrate } from "../../src/store/migrate.js";
import { createPostgresClient } from "../../src/store/postgres-client.js";
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
