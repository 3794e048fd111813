import { randomUUID } from "node:crypto";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadMigrations, migrate } from "../../src/store/migrate.js";
import { createPostgresClient } from "../../src/store/postgres/postgres-client.js";
import type { SqlClient } from "../../src/store/sql-client.js";
import { StoreTimeoutError, WriteOutcomeUnknownError } from "../../src/store/store-deadline.js";
import { FaultProxy } from "../support/fault-proxy.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * Issue 12, defect 3, the one case where a write's outcome is truly unknown:
 * the COMMIT was sent and its reply did not come back before the deadline.
 * The caller is told exactly that; whether it landed depends on the network,
 * which is why retries must be (and are) idempotent. PostgreSQL only: an
 * in-process PGlite cannot lose a reply.
 */
describe("a write whose COMMIT goes unanswered (postgres)", () => {
  let proxy: FaultProxy;
  let direct: SqlClient;
  let viaProxy: SqlClient;
  let viaProxyUrl: string;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const db = await freshPostgresDatabase();
    drop = db.drop;
    direct = createPostgresClient(db.url, 2);
    await migrate(direct, await loadMigrations());
    await direct.query("CREATE TABLE outcome_probe (id uuid PRIMARY KEY)");
    proxy = await FaultProxy.for(db.url);
    viaProxyUrl = proxy.via(db.url);
  });
  // A fresh pool per test: a connection a test left broken must not answer the next one.
  beforeEach(() => {
    viaProxy = createPostgresClient(viaProxyUrl, 2);
  });
  afterEach(async () => {
    await viaProxy.close();
  });
  afterAll(async () => {
    await proxy?.close();
    await direct?.close();
    await drop?.();
  });

  /** A transaction that inserts `id` and stalls the path just before its COMMIT is sent. */
  const writeThenStall = (id: string, stall: { repliesOnly?: boolean }) =>
    viaProxy.transaction(
      async (tx) => {
        await tx.query("INSERT INTO outcome_probe (id) VALUES ($1)", [id]);
        proxy.stall(stall);
      },
      { deadline: Date.now() + 700 },
    );
  const landed = async (id: string) => (await direct.query("SELECT 1 FROM outcome_probe WHERE id = $1", [id])).length === 1;

  it("reports the outcome as unknown when the COMMIT arrived and its reply was lost: it landed", async () => {
    const id = randomUUID();
    const error = await writeThenStall(id, { repliesOnly: true }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WriteOutcomeUnknownError);
    expect((error as Error).message).toMatch(/may or may not have been applied; retrying is safe/);
    await proxy.restore();
    expect(await landed(id)).toBe(true);
  });

  it("reports the outcome as unknown when the COMMIT itself was held up: the server ends the transaction", async () => {
    const id = randomUUID();
    const error = await writeThenStall(id, {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WriteOutcomeUnknownError);
    // The transaction's idle timeout (what was left of the deadline) ends it before the COMMIT arrives.
    await new Promise((r) => setTimeout(r, 300));
    await proxy.restore({ resume: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(await landed(id)).toBe(false);
  });

  it("a statement stalled before the COMMIT fails as not written, and is rolled back when the reply comes", async () => {
    const id = randomUUID();
    const error = await viaProxy
      .transaction(
        async (tx) => {
          proxy.stall();
          await tx.query("INSERT INTO outcome_probe (id) VALUES ($1)", [id]);
        },
        { deadline: Date.now() + 700 },
      )
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StoreTimeoutError);
    await proxy.restore({ resume: true });
    await new Promise((r) => setTimeout(r, 500));
    expect(await landed(id)).toBe(false);
    // The connection is fine afterwards.
    expect(await viaProxy.query("SELECT 1 AS ok")).toEqual([{ ok: 1 }]);
  });
});
