import { PGlite, type PGliteInterface, type Transaction } from "@electric-sql/pglite";
import { btree_gin } from "@electric-sql/pglite/contrib/btree_gin";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { vector } from "@electric-sql/pglite-pgvector";
import type { Row, SqlClient } from "./sql-client.js";

/** The extensions the schema needs; PGlite loads them at creation. */
export const pgliteExtensions = { pg_trgm, btree_gin };

/** The same plus pgvector, loaded only for the semantic arm (it adds to start-up time and memory). */
export const pgliteVectorExtensions = { ...pgliteExtensions, vector };

/** Opens (creating if needed) an embedded PGlite database in `dataDir`; undefined means in memory. */
export async function openPglite(dataDir: string | undefined, options: { vector?: boolean } = {}): Promise<PGlite> {
  return PGlite.create(dataDir, { extensions: options.vector ? pgliteVectorExtensions : pgliteExtensions });
}

/**
 * PGlite through its own query API. PGlite runs one statement at a time in
 * process, so there is no pool and a running statement cannot be cancelled.
 */
export function createPgliteClient(db: PGliteInterface): SqlClient {
  return wrap(db, () => db.close());
}

function wrap(db: PGliteInterface | Transaction, close: () => Promise<void>): SqlClient {
  return {
    kind: "pglite",
    async query<T extends Row>(text: string, params: readonly unknown[] = []) {
      const result = await db.query<T>(text, params as unknown[]);
      return result.rows;
    },
    async exec(script: string) {
      await db.exec(script);
    },
    async transaction<T>(work: (tx: SqlClient) => Promise<T>): Promise<T> {
      if (!("transaction" in db)) return work(wrap(db, close));
      return db.transaction((tx) => work(wrap(tx, close)));
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
