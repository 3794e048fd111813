import { setTimeout as delay } from "node:timers/promises";
import { Code } from "@connectrpc/connect";
import { toRecallError } from "./errors.js";

/**
 * One call under one deadline, retried only when that is safe: the call is a
 * read or an idempotent write (every write of this API is idempotent by id),
 * and the failure is UNAVAILABLE, which the sidecar answers when nothing was
 * done. Each attempt gets what is left of the deadline; a retry never starts
 * without time for it. DEADLINE_EXCEEDED and every other status are final.
 */

export interface RetryPolicy {
  /** Attempts in all, the first included (default 3). */
  maxAttempts: number;
  /** Backoff before the first retry, doubled each time (default 50 ms). */
  initialBackoffMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 3, initialBackoffMs: 50 };

/** A retry is not worth starting with less than this left of the deadline. */
const MIN_ATTEMPT_MS = 20;

export async function withDeadline<T>(
  method: string,
  deadlineMs: number,
  policy: RetryPolicy,
  attempt: (timeoutMs: number) => Promise<T>,
  /** False once the attempt has had an effect the caller saw (a stream's first event): then nothing is retried. */
  canRetry: () => boolean = () => true,
): Promise<T> {
  const deadlineAt = Date.now() + deadlineMs;
  for (let n = 1; ; n += 1) {
    try {
      return await attempt(Math.max(1, deadlineAt - Date.now()));
    } catch (error) {
      const failed = toRecallError(error, method, n);
      const backoff = policy.initialBackoffMs * 2 ** (n - 1);
      const retryable = failed.code === Code.Unavailable && n < policy.maxAttempts && canRetry();
      if (!retryable || deadlineAt - Date.now() - backoff < MIN_ATTEMPT_MS) throw failed;
      await delay(backoff);
    }
  }
}
