import postgres from "postgres";
import type { QueryOptions, Row, SqlClient } from "./sql-client.js";

type Sql = postgres.Sql<Record<string, never>>;

export interface PostgresClientOptions {
  /**
   * Named prepared statements (the default). Off sends every statement
   * unnamed, as a transaction-mode pooler without prepared-statement support
   * (PgBouncer before 1.21) needs: a named statement prepared on one server
   * connection is unknown on the next.
   */
  prepare?: boolean;
}

/** PostgreSQL through postgres.js: a pool, prepared statements (unless told otherwise), cancellable queries. */
export function createPostgresClient(url: string, poolMax: number, options: PostgresClientOptions = {}): SqlClient {
  const prepare = options.prepare ?? true;
  const sql = postgres(url, {
    max: poolMax,
    prepare,
    onnotice: () => {},
    // int8 as a JS number, as PGlite returns it: positions and counts stay far below 2^53.
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
    },
    connection: { application_name: "recall" },
  }) as unknown as Sql;
  return wrap(sql, prepare, async () => {
    await sql.end({ timeout: 5 });
  });
}

function wrap(sql: Sql | postgres.TransactionSql<Record<string, never>>, prepare: boolean, close: () => Promise<void>): SqlClient {
  return {
    kind: "postgres",
    async query<T extends Row>(text: string, params: readonly unknown[] = [], options?: QueryOptions) {
      const pending = sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare });
      const signal = options?.signal;
      if (signal) {
        if (signal.aborted) pending.cancel();
        else signal.addEventListener("abort", () => pending.cancel(), { once: true });
      }
      const rows = await pending;
      return rows as unknown as T[];
    },
    async exec(script: string) {
      await sql.unsafe(script);
    },
    async transaction<T>(work: (tx: SqlClient) => Promise<T>): Promise<T> {
      if (!("begin" in sql)) return work(wrap(sql, prepare, close));
      return (await sql.begin((tx) => work(wrap(tx, prepare, close)))) as T;
    },
    async listen(channel, onNotify, onConnect) {
      if (!("listen" in sql)) throw new Error("LISTEN is not available inside a transaction");
      const { unlisten } = await sql.listen(channel, (payload) => onNotify(payload), () => onConnect?.());
      return unlisten;
    },
    close,
  };
}
