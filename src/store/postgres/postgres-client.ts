import postgres from "postgres";
import type { QueryOptions, Row, SqlClient, TransactionOptions } from "../sql-client.js";
import { Reservations, type Pool } from "./reservations.js";
import { assertBefore, beforeDeadline, remainingMs, StoreTimeoutError, WriteOutcomeUnknownError } from "../store-deadline.js";

type Sql = postgres.Sql<Record<string, never>>;
type Reserved = postgres.ReservedSql<Record<string, never>>;
/** A statement sent (or queued) through postgres.js: a promise with a cancel(). */
type Pending = PromiseLike<unknown>;

/**
 * PostgreSQL through postgres.js: a pool, prepared statements (unless told
 * otherwise), cancellable
 * queries, every call bounded by its store deadline (store/store-deadline.ts).
 *
 * Transactions are our own, on a reserved connection, not postgres.js's
 * `sql.begin`: when begin's connection closes mid-transaction (a reset after a
 * stall), begin still sends its ROLLBACK on the closed connection, and
 * postgres.js 3.4.9 then writes to a null socket from a setImmediate, an
 * uncatchable TypeError that ends the process (porsager/postgres#1208). Here
 * a connection that failed at the connection level is never written to again,
 * nor released (the pool has already taken it back as closed). Two more of
 * its faults when a connection closes: a transaction waiting for a connection
 * is dropped (reservations.ts asks again), and one whose own connection
 * closed between statements would go on, outside it, on the re-opened one
 * (each transaction checks its session after any close; ADR 0003).
 */
export interface PostgresClientOptions {
  /**
   * Named prepared statements (the default). Off sends every statement
   * unnamed, as a transaction-mode pooler without prepared-statement support
   * (PgBouncer before 1.21) needs: a named statement prepared on one server
   * connection is unknown on the next.
   */
  prepare?: boolean;
}

export function createPostgresClient(url: string, poolMax: number, options: PostgresClientOptions = {}): SqlClient {
  const prepare = options.prepare ?? true;
  // The pool's close handler needs the reservations, which reserve from the pool (only once it exists).
  const reservations = new Reservations(() => sql);
  const sql = postgres(url, {
    max: poolMax,
    prepare,
    onnotice: () => {},
    onclose: () => reservations.connectionClosed(),
    // int8 as a JS number, as PGlite returns it: positions and counts stay far below 2^53.
    types: {
      bigint: { to: 20, from: [20], serialize: (x: number) => String(x), parse: (x: string) => Number(x) },
    },
    connection: { application_name: "recall" },
  }) as unknown as Sql;
  return {
    kind: "postgres",
    query: (text, params, options) => bounded(sql, text, params, options, prepare, options?.deadline),
    async exec(script: string) {
      await sql.unsafe(script);
    },
    transaction: (work, options?: TransactionOptions) => transaction(reservations, work, prepare, options?.deadline),
    async listen(channel, onNotify, onConnect) {
      const { unlisten } = await sql.listen(channel, (payload) => onNotify(payload), () => onConnect?.());
      return unlisten;
    },
    async close() {
      await sql.end({ timeout: 5 });
    },
  };
}

/** One statement, not sent after the deadline, answered by it. */
async function bounded<T extends Row>(
  sql: Sql | Reserved,
  text: string,
  params: readonly unknown[] = [],
  options: QueryOptions | undefined,
  prepare: boolean,
  at: number | undefined,
): Promise<T[]> {
  assertBefore(at);
  const pending = sql.unsafe(text, params as postgres.ParameterOrJSON<never>[], { prepare });
  const signal = options?.signal;
  if (signal) {
    if (signal.aborted) cancelQuietly(pending);
    else signal.addEventListener("abort", () => cancelQuietly(pending), { once: true });
  }
  const rows = await beforeDeadline(pending as Promise<postgres.Row[]>, at, () => new StoreTimeoutError());
  return withoutLeadingHoles(rows) as unknown as T[];
}

/**
 * postgres.js 3.4.9 resets its row counter only when a statement completes: after one that
 * failed mid-result (an error at row n, a cancel, a statement timeout), the next statement on
 * that connection stores its rows from index n on, behind n holes. The rows themselves are
 * whole and in order, so dropping the holes gives exactly the statement's result
 * (test/store/failed-statement-rows.test.ts).
 */
function withoutLeadingHoles(rows: postgres.Row[]): postgres.Row[] {
  return rows.length === 0 || 0 in rows ? rows : rows.filter(() => true);
}

/**
 * BEGIN (with statement, lock and idle timeouts set to what is left of the
 * deadline), `work`, then COMMIT only if the deadline has not passed. A
 * COMMIT whose reply is lost or late is reported as an unknown outcome.
 */
async function transaction<T>(pool: Pool, work: (tx: SqlClient) => Promise<T>, prepare: boolean, at: number | undefined): Promise<T> {
  assertBefore(at);
  const state = { commitSent: false };
  const attempt = (async () => {
    for (let attempts = 1; ; attempts++) {
      try {
        return await runTransaction(pool, work, at, state, prepare);
      } catch (error) {
        if (!(error instanceof LostBeforeBegin)) throw error;
        if (attempts >= BEGIN_ATTEMPTS) throw error.cause;
      }
    }
  })();
  return beforeDeadline(attempt, at, () => (state.commitSent ? new WriteOutcomeUnknownError() : new StoreTimeoutError()));
}

/**
 * A transaction whose connection was lost before its BEGIN was answered
 * starts again on another: none of its statements ran, so nothing is
 * written twice. That is a pool connection closed by a restart or a reset
 * that postgres.js had not yet noticed when it handed it out, which a burst
 * of writes right after a reset meets (test/integration/connection-setup-cut.test.ts).
 * Three attempts in all, within the deadline: a store that is really gone
 * still fails fast, as UNAVAILABLE.
 */
const BEGIN_ATTEMPTS = 3;

class LostBeforeBegin extends Error {
  constructor(override readonly cause: unknown) {
    super("transaction connection lost before BEGIN was answered");
  }
}

const connectionClosed = () => Object.assign(new Error("transaction connection closed"), { code: "CONNECTION_CLOSED" });

async function runTransaction<T>(
  pool: Pool,
  work: (tx: SqlClient) => Promise<T>,
  at: number | undefined,
  state: { commitSent: boolean },
  prepare: boolean,
): Promise<T> {
  const reserved = await pool.reserve();
  let usable = true;
  let begun = false;
  let sessionPid = 0;
  let closesSeen = pool.closes;
  const send = async <R extends Row>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]> => {
    if (!usable) throw connectionClosed();
    try {
      return await bounded<R>(reserved, text, params, options, prepare, at);
    } catch (error) {
      if (!answeredByServer(error) && !(error instanceof StoreTimeoutError)) usable = false;
      throw error;
    }
  };
  // When a pool connection closed since the last statement, it may have been this one, already
  // re-opened by postgres.js behind the same handle: the session (its pid) must still be the one
  // that began, or the next statement would run outside the transaction and commit on its own.
  const confirmSession = async () => {
    if (pool.closes === closesSeen) return;
    closesSeen = pool.closes;
    const [row] = await send<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    if (Number(row?.pid) === sessionPid) return;
    usable = false;
    throw connectionClosed();
  };
  // Every statement of the transaction goes through here: a connection-level failure retires the connection.
  const run = async <R extends Row>(text: string, params?: readonly unknown[], options?: QueryOptions): Promise<R[]> => {
    await confirmSession();
    return send<R>(text, params, options);
  };
  try {
    // A connection that arrives after the deadline goes back unused.
    assertBefore(at);
    const timeouts =
      at === undefined
        ? ""
        : ["statement_timeout", "lock_timeout", "idle_in_transaction_session_timeout"]
            .map((name) => `; SET LOCAL ${name} = ${remainingMs(at)}`)
            .join("");
    begun = true;
    // Without parameters, one simple-protocol round trip for every statement; one result each.
    const results = (await send(`BEGIN${timeouts}; SELECT pg_backend_pid() AS pid`).catch((error: unknown) => {
      throw usable ? error : new LostBeforeBegin(error);
    })) as unknown as { pid: number }[][];
    sessionPid = Number(results[results.length - 1]![0]!.pid);
    const result = await work(transactionClient(run));
    assertBefore(at);
    await confirmSession();
    state.commitSent = true;
    try {
      await reserved.unsafe("COMMIT");
    } catch (error) {
      if (answeredByServer(error)) throw error;
      usable = false;
      throw new WriteOutcomeUnknownError();
    }
    return result;
  } catch (error) {
    if (usable && begun && !state.commitSent) {
      await reserved.unsafe("ROLLBACK").catch(() => {
        usable = false;
      });
    }
    throw error;
  } finally {
    if (usable) reserved.release();
  }
}

function transactionClient(run: <R extends Row>(text: string, params?: readonly unknown[], options?: QueryOptions) => Promise<R[]>): SqlClient {
  const tx: SqlClient = {
    kind: "postgres",
    query: run,
    async exec(script: string) {
      await run(script);
    },
    // Nested: the same transaction.
    transaction: (work) => work(tx),
    listen() {
      return Promise.reject(new Error("LISTEN is not available inside a transaction"));
    },
    close: () => Promise.resolve(),
  };
  return tx;
}

/** The server answered (a statement error): the connection itself is fine and in a known state. */
function answeredByServer(error: unknown): boolean {
  return error instanceof postgres.PostgresError && error.severity !== "FATAL" && error.severity !== "PANIC";
}

/**
 * Cancels a statement that is queued or running, working around two faults
 * of postgres.js 3.4.9's `cancel()`:
 * - it sends the cancel request on a new connection and drops that request's
 *   promise: when the server cannot be reached, the rejection is unhandled
 *   and ends the process. So the canceller is called here, its failure caught;
 * - a statement already sent but still waiting behind others in the
 *   connection's pipeline is skipped when its turn comes, while the server
 *   still runs it: its rows are then handed to the next statement (seen as a
 *   Search ranking another query's rows after a stall). Such a statement is
 *   left to finish; its answer is simply not waited for.
 */
function cancelQuietly(pending: Pending): void {
  const query = pending as unknown as {
    canceller?: ((q: unknown) => Promise<unknown>) | null;
    state: unknown;
    active: boolean;
  };
  const canceller = query.canceller;
  if (!canceller || (query.state && !query.active)) return;
  query.canceller = null;
  canceller(pending).catch(() => {});
}
