import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPostgresClient } from "../../src/store/postgres/postgres-client.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * A transaction waiting for a pool connection when a connection is lost
 * (terminated by the server, cut): postgres.js 3.4.9 re-opens the lost
 * connection for the first waiting request, and when that request is a
 * reserved connection, the new connection's set-up drops it, so it would
 * wait for ever (here: until its deadline, then fail). It must get the next
 * connection instead. And the transaction whose connection was lost must not
 * go on, outside itself, on the connection re-opened behind its handle.
 * PostgreSQL only: PGlite has no pool.
 */
describe("transactions when a pool connection is lost (postgres)", () => {
  let db: SqlClient;
  let admin: postgres.Sql;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const fresh = await freshPostgresDatabase();
    drop = fresh.drop;
    // One connection: the second transaction waits for the first's.
    db = createPostgresClient(fresh.url, 1);
    admin = postgres(fresh.url, { max: 1, onnotice: () => {} });
  });
  afterAll(async () => {
    await db?.close();
    await admin?.end();
    await drop?.();
  });

  it("gets the next connection and commits", async () => {
    let pid = 0;
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const first = db
      .transaction(
        async (tx) => {
          pid = Number((await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0]!.pid);
          holding();
          // Idle on its connection (not in a statement) when the server ends it.
          await new Promise((r) => setTimeout(r, 1000));
        },
        { deadline: Date.now() + 5000 },
      )
      .catch((e: unknown) => e);
    await held;
    const second = db.transaction(async (tx) => (await tx.query<{ one: number }>("SELECT 1 AS one"))[0]!.one, { deadline: Date.now() + 5000 });
    await new Promise((r) => setTimeout(r, 100));
    await admin`SELECT pg_terminate_backend(${pid})`;

    // Dropped by the pool, it would fail at its deadline instead.
    expect(await second).toBe(1);
    // The holder's session is gone: its next statement must fail, not run on the re-opened connection.
    expect(await first).toBeInstanceOf(Error);
  });

  it("never runs a transaction's later statements outside it, on the connection re-opened after its session ended", async () => {
    await db.query("CREATE TABLE IF NOT EXISTS session_probe (n int)");
    let pid = 0;
    let idle!: () => void;
    const waiting = new Promise<void>((r) => (idle = r));
    const writer = db
      .transaction(
        async (tx) => {
          await tx.query("INSERT INTO session_probe VALUES (1)");
          pid = Number((await tx.query<{ pid: number }>("SELECT pg_backend_pid() AS pid"))[0]!.pid);
          idle();
          await new Promise((r) => setTimeout(r, 1000));
          await tx.query("INSERT INTO session_probe VALUES (2)");
        },
        { deadline: Date.now() + 5000 },
      )
      .catch((e: unknown) => e);
    await waiting;
    // A transaction queued behind it makes the pool re-open the connection at once.
    const queued = db.transaction(async (tx) => tx.query("SELECT 1"), { deadline: Date.now() + 5000 });
    await new Promise((r) => setTimeout(r, 100));
    await admin`SELECT pg_terminate_backend(${pid})`;
    await queued;

    expect(await writer).toBeInstanceOf(Error);
    // All or nothing: the server rolled back the first insert; the second never ran.
    expect(await admin`SELECT n FROM session_probe`).toEqual([]);
  });
});
