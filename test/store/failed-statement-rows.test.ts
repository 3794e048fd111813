import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresClient } from "../../src/store/postgres/postgres-client.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * A statement that fails after some of its rows arrived (a division by zero at row 5, a
 * cancel, a statement timeout) leaves postgres.js 3.4.9's row counter where it stopped: the
 * next statement on that connection came back with that many holes before its rows, which
 * an arm read as `undefined` candidates (INTERNAL in the fault suite). One connection, so the
 * second statement runs where the first failed. PostgreSQL only: PGlite has no such driver.
 */
describe("rows after a statement failed mid-result (postgres)", () => {
  let db: SqlClient;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshPostgresDatabase();
    drop = fresh.drop;
    db = createPostgresClient(fresh.url, 1);
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it("come back whole, with no holes, on the same connection", async () => {
    await expect(
      db.query("SELECT CASE WHEN g < 5 THEN g ELSE 1 / (g - g) END AS x FROM generate_series(1, 10) AS g"),
    ).rejects.toThrow(/division by zero/);
    const rows = await db.query<{ a: number }>("SELECT 1 AS a UNION ALL SELECT 2 ORDER BY a");
    expect(rows.length).toBe(2);
    expect([...rows]).toEqual([{ a: 1 }, { a: 2 }]);
    // And inside a transaction on that connection.
    const inTx = await db.transaction((tx) => tx.query<{ a: number }>("SELECT 3 AS a"));
    expect([...inTx]).toEqual([{ a: 3 }]);
  });
});
