import { PGlite, type PGliteInterface, type Transaction } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { vector } from "@electric-sql/pglite-pgvector";
import type { QueryOptions, Row, SqlClient, TransactionOptions } from "../sql-client.js";
import { assertBefore, beforeDeadline, StoreTimeoutError, WriteOutcomeUnknownError } from "../store-deadline.js";

/** The extensions the schema needs; PGlite loads them at creation. */
export const pgliteExtensions = { pg_trgm, btree_gin };

/** The same plus pgvector, loaded only for the semantic arm (it adds to start-up time and memory). */
export const pgliteVectorExtensions = { ...pgliteExtensions, vector };

/**
 * Start parameters of every embedded store that size its shared memory, all
 * of which is resident in the sidecar's WebAssembly memory (docs/adr/0026).
 * PGlite runs one backend, but PostgreSQL sizes the lock tables and the
 * per-backend arrays for `max_connections` of them: the default of 100 made
 * about 10 MB of shared memory, 4 (the least above the 3 connections reserved
 * for superusers) about 6 MB, 4 MiB less resident. The lock table still has
 * room for some 2,000 locks (64 a backend slot, autovacuum's and WAL
 * senders' slots counted), all of them the one backend's. And huge pages,
 * which WebAssembly memory never has, would round the segment up to 2 MB:
 * 0.9 MiB more of zeroed memory.
 */
export const SHARED_MEMORY_PARAMS: readonly string[] = ["-c", "max_connections=4", "-c", "huge_pages=off"];

/**
 * PGlite's start parameters for a sidecar's data directory (the ephemeral
 * store's, smaller, are pglite-template.ts's). PostgreSQL's default of 128 MB of shared buffers
 * is sized for a database server; in PGlite they live in the WebAssembly
 * memory of the sidecar's process, and a data directory's idle sidecar held
 * 286–314 MiB with them against 160–175 MiB with 16 MB (measured in
 * process; docs/benchmarks.md, "What a sidecar costs"). Pages that do not fit are read from the
 * directory's files through the operating system's page cache: a cost only
 * for SQL that reads far more than a call's rows (an index load reads a
 * principal's rows once).
 */
export const SIDECAR_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB", ...SHARED_MEMORY_PARAMS];

/** Opens (creating if needed) an embedded PGlite database in `dataDir`; undefined means in memory. */
export async function openPglite(dataDir: string | undefined, options: { vector?: boolean } = {}): Promise<PGlite> {
  return PGlite.create(dataDir, {
    extensions: options.vector ? pgliteVectorExtensions : pgliteExtensions,
    ...(dataDir === undefined ? {} : { startParams: [...SIDECAR_START_PARAMS] }),
  });
}

/**
 * PGlite through its own query API. PGlite runs one statement at a time in
 * process, so there is no pool and a running statement cannot be cancelled.
 * Each call's store deadline (store/store-deadline.ts) is honoured between
 * statements: none is started after it, a transaction is not committed after
 * it, and the caller is answered when it passes while PGlite is still busy.
 */
export function createPgliteClient(db: PGliteInterface): SqlClient {
  return wrap(db, () => db.close());
}

/** `txAt`: inside a transaction, its deadline, which bounds every statement of it. */
function wrap(db: PGliteInterface | Transaction, close: () => Promise<void>, txAt?: number): SqlClient {
  const inTransaction = !("transaction" in db);
  return {
    kind: "pglite",
    async query<T extends Row>(text: string, params: readonly unknown[] = [], options?: QueryOptions) {
      const at = inTransaction ? txAt : options?.deadline;
      assertBefore(at);
      const result = await beforeDeadline(db.query<T>(text, params as unknown[]), at, () => new StoreTimeoutError());
      return result.rows;
    },
    async exec(script: string) {
      await db.exec(script);
    },
    async transaction<T>(work: (tx: SqlClient) => Promise<T>, options?: TransactionOptions): Promise<T> {
      if (inTransaction) return work(wrap(db, close, txAt));
      const at = options?.deadline;
      assertBefore(at);
      const state = { commitSent: false };
      const attempt = db.transaction(async (tx) => {
        // Queued behind other work past the deadline: nothing is run at all.
        assertBefore(at);
        const result = await work(wrap(tx, close, at));
        // PGlite commits when this callback returns: not after the deadline.
        assertBefore(at);
        state.commitSent = true;
        return result;
      });
      return beforeDeadline(attempt, at, () => (state.commitSent ? new WriteOutcomeUnknownError() : new StoreTimeoutError()));
    },
    async listen(channel, onNotify, onConnect) {
      if (!("listen" in db)) throw new Error("LISTEN is not available inside a transaction");
      const unsubscribe = await db.listen(channel, onNotify);
      // In process there is no connection to lose: "connected" exactly once.
      onConnect?.();
      return unsubscribe;
    },
    close,
  };
}
