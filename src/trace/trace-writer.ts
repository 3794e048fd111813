import { setTimeout as delay } from "node:timers/promises";
import { UnavailableError } from "../domain/errors.js";
import type { Principal, RecallTrace } from "../domain/model.js";
import type { Logger } from "../logger.js";
import type { TraceRecorder } from "../recall/pipeline.js";
import { isUnavailable } from "../server/errors.js";
import { RECALLED_EVENT, recalledEvent } from "./recalled-event.js";
import { withoutStoreDeadline } from "../store/store-deadline.js";

/**
 * Records each recall's trace without letting the write hold the answer
 * back for more than a bound, and without ever losing a trace silently.
 *
 * - The recall waits for its trace write at most `timeoutMs`. A write still
 *   running then goes on in the background and the recall answers.
 * - A write that fails (at once, or later in the background) goes to a
 *   bounded in-process queue, is logged at error with its trace id, and is
 *   retried every `retryIntervalMs` and once more at shutdown. The write is
 *   idempotent by trace id, so a retry of a write that did land is harmless.
 * - When the queue (queued plus slow writes still running) is full, the
 *   recall fails with UNAVAILABLE instead of answering: no block is handed
 *   out that no trace will ever explain.
 * - A trace whose write keeps failing for a non-transient reason is dropped
 *   after `maxAttempts`, and one still queued when shutdown's time is up is
 *   lost; both are logged at error with the trace's user-safe fields and
 *   counted. A crash loses the queue: it lives in memory.
 */

/** The store side of a trace write: true when this call wrote it, false when it was already there. */
export interface TraceSink {
  recordTrace(principal: Principal, trace: RecallTrace): Promise<boolean>;
}

export interface TraceWriterOptions {
  /** How long a recall waits for its trace write. */
  timeoutMs: number;
  /** Traces that may wait to be written (queued plus slow writes still running). */
  queueMax: number;
  /** How often queued traces are retried. */
  retryIntervalMs: number;
  /** Attempts before a trace failing for a non-transient reason is dropped. */
  maxAttempts: number;
}

/** Counters, logged with every failure and at shutdown. */
export interface TraceWriterMetrics {
  /** Written on the first attempt. */
  written: number;
  /** Outlived the timeout; the recall answered without waiting. */
  slow: number;
  /** Failed and queued for retry. */
  failed: number;
  /** Written later from the queue. */
  retried: number;
  /** Queue full: the recall failed instead of answering. */
  refused: number;
  /** Given up after maxAttempts non-transient failures. */
  dropped: number;
  /** Still queued when shutdown's time was up. */
  lost: number;
}

interface Pending {
  principal: Principal;
  trace: RecallTrace;
  attempts: number;
}

type Outcome = { ok: true } | { ok: false; error: unknown };

export class TraceWriter implements TraceRecorder {
  readonly metrics: TraceWriterMetrics = { written: 0, slow: 0, failed: 0, retried: 0, refused: 0, dropped: 0, lost: 0 };
  private readonly queue: Pending[] = [];
  /** Writes that outlived the timeout, by trace id; each holds a queue slot until it settles. */
  private readonly slow = new Map<string, { principal: Principal; sessionId: string; done: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;

  constructor(
    private readonly sink: TraceSink,
    private readonly options: TraceWriterOptions,
    private readonly logger: Logger,
    private readonly isTransient: (error: unknown) => boolean = isUnavailable,
  ) {}

  /** Traces waiting to be written: queued, plus slow writes still running. */
  get backlog(): number {
    return this.queue.length + this.slow.size;
  }

  /** Ids of the queued traces, oldest first (for tests and drills). */
  queuedTraceIds(): string[] {
    return this.queue.map((q) => q.trace.id);
  }

  /**
   * Writes the trace, waiting at most timeoutMs and never past `deadlineAt`
   * (the call's deadline, epoch ms): an answer that arrives after its
   * deadline is no answer at all.
   */
  async record(principal: Principal, trace: RecallTrace, deadlineAt = Number.POSITIVE_INFINITY): Promise<void> {
    // Not bounded by the call's store deadline: a slow write goes on after the answer, and is retried.
    const write: Promise<Outcome> = withoutStoreDeadline(() => this.sink.recordTrace(principal, trace)).then(
      () => ({ ok: true }),
      (error: unknown) => ({ ok: false, error }),
    );
    const waitMs = Math.max(0, Math.min(this.options.timeoutMs, deadlineAt - Date.now()));
    const first = await raceTimeout(write, waitMs);

    if (first === TIMED_OUT) {
      if (this.backlog >= this.options.queueMax) this.refuse(trace, new Error(`trace write outlived ${waitMs} ms`));
      this.metrics.slow += 1;
      this.logger.warn({ traceId: trace.id, waitedMs: waitMs }, "trace write is slow; answering without waiting for it");
      const done = write.then((outcome) => {
        this.slow.delete(trace.id);
        // The slot was held while it ran, so a late failure always fits in the queue.
        if (outcome.ok) this.recorded(principal, trace);
        else this.enqueue(principal, trace, outcome.error);
      });
      this.slow.set(trace.id, { principal, sessionId: trace.sessionId, done });
      return;
    }
    if (first.ok) {
      this.metrics.written += 1;
      this.recorded(principal, trace);
      return;
    }
    if (this.backlog >= this.options.queueMax) this.refuse(trace, first.error);
    this.enqueue(principal, trace, first.error);
  }

  /** Retries queued traces in order until one fails; a transient failure waits for the next round. */
  flush(): Promise<void> {
    this.flushing ??= (async () => {
      while (this.queue.length > 0) {
        const item = this.queue[0]!;
        try {
          await this.sink.recordTrace(item.principal, item.trace);
        } catch (error) {
          item.attempts += 1;
          if (this.isTransient(error) || item.attempts < this.options.maxAttempts) return;
          this.queue.shift();
          this.metrics.dropped += 1;
          this.logger.error(
            { err: error, traceId: item.trace.id, trace: userSafeFields(item.trace), attempts: item.attempts, metrics: this.metrics },
            "trace dropped after repeated write failures",
          );
          continue;
        }
        this.queue.shift();
        this.metrics.retried += 1;
        this.logger.info({ traceId: item.trace.id, attempts: item.attempts + 1, queued: this.queue.length }, "queued trace recorded");
        this.recorded(item.principal, item.trace);
      }
    })().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  /** Retries the queue in the background every retryIntervalMs. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.queue.length > 0) void this.flush();
    }, this.options.retryIntervalMs);
    this.timer.unref();
  }

  /**
   * A session is being deleted: its queued traces are dropped (a retry must
   * not bring its explanations back), and its slow writes are waited for so
   * the delete that follows sees them.
   */
  async forgetSession(principal: Principal, sessionId: string): Promise<number> {
    const same = (p: Principal) => p.tenantId === principal.tenantId && p.principalId === principal.principalId;
    await Promise.all([...this.slow.values()].filter((s) => same(s.principal) && s.sessionId === sessionId).map((s) => s.done));
    let forgotten = 0;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const item = this.queue[i]!;
      if (same(item.principal) && item.trace.sessionId === sessionId) {
        this.queue.splice(i, 1);
        forgotten += 1;
      }
    }
    return forgotten;
  }

  /**
   * Shutdown: waits for slow writes and flushes the queue until `deadlineAt`
   * (epoch ms); whatever is still queued then is logged as lost, one line per
   * trace with its user-safe fields.
   */
  async close(deadlineAt: number): Promise<TraceWriterMetrics> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    const remaining = () => Math.max(0, deadlineAt - Date.now());
    const until = (work: Promise<unknown>) => raceTimeout(work, remaining());
    await until(Promise.all([...this.slow.values()].map((s) => s.done)));
    while (this.queue.length > 0 && remaining() > 0) {
      await until(this.flush());
      if (this.queue.length > 0) await delay(Math.min(50, remaining()));
    }
    for (const item of this.queue.splice(0)) {
      this.metrics.lost += 1;
      this.logger.error({ traceId: item.trace.id, trace: userSafeFields(item.trace) }, "trace not recorded before shutdown: lost");
    }
    if (this.slow.size > 0) this.logger.error({ traceIds: [...this.slow.keys()] }, "trace writes still running at shutdown");
    this.logger.info({ metrics: this.metrics }, "trace writer closed");
    return this.metrics;
  }

  private enqueue(principal: Principal, trace: RecallTrace, error: unknown): void {
    this.queue.push({ principal, trace, attempts: 1 });
    this.metrics.failed += 1;
    this.logger.error(
      { err: error, traceId: trace.id, sessionId: trace.sessionId, turnId: trace.turnId, queued: this.queue.length, metrics: this.metrics },
      "trace write failed; queued for retry",
    );
  }

  private refuse(trace: RecallTrace, error: unknown): never {
    this.metrics.refused += 1;
    this.logger.error(
      { err: error, traceId: trace.id, backlog: this.backlog, queueMax: this.options.queueMax, metrics: this.metrics },
      "trace cannot be recorded and the retry queue is full; failing the recall",
    );
    throw new UnavailableError("trace could not be recorded; retry later");
  }

  /** The memory.recalled log line (its outbox row was written with the trace). */
  private recorded(principal: Principal, trace: RecallTrace): void {
    this.logger.info({ event: recalledEvent(principal, trace) }, RECALLED_EVENT);
  }
}

const TIMED_OUT = Symbol("timed out");

/** `work`, or TIMED_OUT after `ms`; the timer is cleared either way, so it never keeps a stopping process alive. */
async function raceTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** What a log line may keep of a trace that could not be written: ids, counts and hashes, no text. */
export function userSafeFields(t: RecallTrace) {
  return {
    id: t.id,
    sessionId: t.sessionId,
    runId: t.runId,
    turnId: t.turnId,
    moment: t.moment,
    surfaceId: t.surfaceId,
    sensitivityCeiling: t.sensitivityCeiling,
    renderedSha256: t.renderedSha256,
    returned: t.returned,
    returnedBands: t.returnedBands,
    blocked: t.blocked,
    carried: t.carried,
    consideredNotShown: t.consideredNotShown,
    droppedForBudgetCount: t.droppedForBudgetCount,
    retrievalPolicyVersion: t.retrievalPolicyVersion,
    asOf: t.asOf.toISOString(),
    createdAt: t.createdAt.toISOString(),
  };
}
