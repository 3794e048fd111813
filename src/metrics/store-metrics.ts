import { Counter, Gauge, type Registry } from "prom-client";
import { isUnavailable } from "../domain/errors.js";
import type { SqlClient } from "../store/sql-client.js";

/**
 * Store pool usage and errors, measured at the SQL port: statements and
 * transactions in flight (each holds one pooled connection; beyond the pool
 * size they queue inside the driver), the pool size, and failed statements
 * by kind (unavailable: the store is down; other: the statement failed).
 * postgres.js exposes no pool state of its own, so this is counted here.
 */
export function instrumentedSqlClient(client: SqlClient, registry: Registry, poolMax: number): SqlClient {
  const inUse = new Gauge({
    name: "recall_store_pool_in_use",
    help: "Statements and transactions in flight, each holding (or waiting for) a pooled connection.",
    labelNames: ["store"],
    registers: [registry],
  });
  new Gauge({
    name: "recall_store_pool_max",
    help: "Pool size (RECALL_DB_POOL_MAX; 1 for the embedded store, which runs one statement at a time).",
    labelNames: ["store"],
    registers: [registry],
  }).set({ store: client.kind }, poolMax);
  const errors = new Counter({
    name: "recall_store_errors_total",
    help: "Failed statements and transactions, by kind: unavailable (the store cannot be reached) or other.",
    labelNames: ["store", "kind"],
    registers: [registry],
  });
  const labels = { store: client.kind };
  const tracked = async <T>(work: () => Promise<T>): Promise<T> => {
    inUse.inc(labels);
    try {
      return await work();
    } catch (error) {
      // A statement cancelled by its recall's deadline is not a store error.
      if ((error as Error).name !== "AbortError") errors.inc({ ...labels, kind: isUnavailable(error) ? "unavailable" : "other" });
      throw error;
    } finally {
      inUse.dec(labels);
    }
  };
  return {
    kind: client.kind,
    query: (text, params, options) => tracked(() => client.query(text, params, options)),
    exec: (script) => tracked(() => client.exec(script)),
    // One connection for the whole transaction: its statements are not counted again.
    transaction: (work, options) => tracked(() => client.transaction(work, options)),
    listen: (channel, onNotify, onConnect) => client.listen(channel, onNotify, onConnect),
    close: () => client.close(),
  };
}
