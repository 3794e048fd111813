/**
 * The one small port both stores implement. Everything above it speaks one
 * SQL dialect (accepted by PostgreSQL 15 and PGlite) with $n parameters.
 */

export type Row = Record<string, unknown>;

export interface QueryOptions {
  /** Cancels the statement when aborted (PostgreSQL only; PGlite cannot cancel a running statement). */
  signal?: AbortSignal;
  /** The store deadline (epoch ms): not sent after it, answered by it (store/store-deadline.ts). Absent: unbounded. */
  deadline?: number;
}

export interface TransactionOptions {
  /** The store deadline (epoch ms): no statement and no COMMIT after it, answered by it. Absent: unbounded. */
  deadline?: number;
}

export interface SqlClient {
  readonly kind: "postgres" | "pglite";
  /** One parameterised statement. int8 columns come back as JS numbers in both stores. */
  query<T extends Row = Row>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<T[]>;
  /** A script of several statements without parameters (migrations). */
  exec(script: string): Promise<void>;
  /**
   * Runs `work` in one transaction: all or nothing. The transaction's
   * deadline bounds every statement of `work` (`tx` ignores any of its own).
   */
  transaction<T>(work: (tx: SqlClient) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /**
   * LISTEN on a channel. `onConnect` runs whenever the listening connection is
   * (re)established, so a subscriber can drop state it may have missed.
   * Resolves to an unsubscribe function.
   */
  listen(channel: string, onNotify: (payload: string) => void, onConnect?: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}
