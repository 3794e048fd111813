import { earlier } from "../domain/deadline.js";
import { UnavailableError } from "../domain/errors.js";
import type { QueryOptions, Row, SqlClient, TransactionOptions } from "./sql-client.js";

/**
 * The time by which the store must have answered (epoch ms), carried
 * explicitly: a statement takes it in its options, a transaction in its own,
 * and `boundTo` gives a client (and so a MemoryStore) that adds it to every
 * call. The RPC layer computes it once per call (server/store-deadline.ts);
 * background work uses the unbounded client or a bound of its own. See
 * docs/adr/0003-store-deadlines.md (it was an AsyncLocalStorage scope once;
 * on Node 20 that hooks every promise the process makes).
 *
 * The adapters honour it the same way on both stores:
 * - no statement is sent once it has passed, and in particular no COMMIT;
 * - the caller is answered when it passes, even if a statement is still out:
 *   StoreTimeoutError when no COMMIT was sent (nothing was written), or
 *   WriteOutcomeUnknownError when a COMMIT was sent and its reply is missing.
 */

/**
 * `db` with every statement and transaction bounded by `at` (an earlier
 * deadline a caller passes itself still wins). Undefined: `db` unbounded.
 */
export function boundTo(db: SqlClient, at: number | undefined): SqlClient {
  if (at === undefined) return db;
  return {
    kind: db.kind,
    query: <T extends Row>(text: string, params?: readonly unknown[], options?: QueryOptions) =>
      db.query<T>(text, params, { ...options, deadline: earlier(at, options?.deadline) }),
    exec: (script) => db.exec(script),
    transaction: (work, options?: TransactionOptions) => db.transaction(work, { deadline: earlier(at, options?.deadline) }),
    listen: (channel, onNotify, onConnect) => db.listen(channel, onNotify, onConnect),
    close: () => db.close(),
  };
}

/** The store did not answer before the deadline, and nothing was committed. */
export class StoreTimeoutError extends UnavailableError {
  constructor() {
    super("memory store did not answer before the deadline; nothing was written; retry later");
  }
}

/** A COMMIT was sent and its reply did not come back in time: the write may or may not have landed. */
export class WriteOutcomeUnknownError extends UnavailableError {
  constructor() {
    super(
      "memory store did not confirm the commit before the deadline: the write may or may not have been applied; " +
        "retrying is safe (writes are idempotent by id)",
    );
  }
}

/** Throws StoreTimeoutError once `at` has passed: the check before every statement. */
export function assertBefore(at: number | undefined): void {
  if (at !== undefined && Date.now() >= at) throw new StoreTimeoutError();
}

/** Whole milliseconds left before `at` (at least 1), for statement and lock timeouts. */
export function remainingMs(at: number): number {
  return Math.max(1, Math.floor(at - Date.now()));
}

/**
 * Settles as `work` does, or rejects with `late()` when `at` passes first.
 * `work` goes on; its eventual failure is expected and ignored here (the
 * adapter that started it cleans up after it).
 */
export function beforeDeadline<T>(work: Promise<T>, at: number | undefined, late: () => Error): Promise<T> {
  if (at === undefined) return work;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), Math.max(0, at - Date.now()));
    timer.unref();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
