import { AsyncLocalStorage } from "node:async_hooks";
import { UnavailableError } from "../domain/errors.js";

/**
 * The time by which the store must have answered the current call, carried
 * implicitly (AsyncLocalStorage) from the RPC layer to the SQL adapters, so
 * that every store call of a request is bounded without threading a deadline
 * through each store method. See docs/adr/0003-store-deadlines.md.
 *
 * The adapters honour it the same way on both stores:
 * - no statement is sent once it has passed, and in particular no COMMIT;
 * - the caller is answered when it passes, even if a statement is still out:
 *   StoreTimeoutError when no COMMIT was sent (nothing was written), or
 *   WriteOutcomeUnknownError when a COMMIT was sent and its reply is missing.
 */

const scope = new AsyncLocalStorage<number>();

/** Runs `work` with store calls bounded by `at` (epoch ms). */
export function withStoreDeadline<T>(at: number, work: () => T): T {
  return scope.run(at, work);
}

/** Runs `work` unbounded: for background work a call starts but does not wait for (trace retries). */
export function withoutStoreDeadline<T>(work: () => T): T {
  return scope.exit(work);
}

/** The current call's store deadline, or undefined outside any call. */
export function storeDeadline(): number | undefined {
  return scope.getStore();
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
