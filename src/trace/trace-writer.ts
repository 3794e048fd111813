import { setTimeout as delay } from "node:timers/promises";
import { isUnavailable, UnavailableError } from "../domain/errors.js";
import type { Principal, RecallTrace } from "../domain/model.js";
import type { Logger } from "../log/logger.js";
import type { TraceKey, TraceRecorder } from "../recall/pipeline.js";
import { RECALLED_EVENT, recalledEvent } from "../domain/recalled-event.js";
import type { OutageSpool } from "./outage-spool.js";

/**
 * Records each recall's trace off the critical path, in batches, without
 * ever losing one silently.
 *
 * - A recall waits only until its trace is queued. Queued traces are written
 *   `flushDelayMs` later, all of them (up to `batchMax`) in one statement, so
 *   concurrent recalls share one write; then the timer waits again.
 * - Until it is written, a trace is read from the queue: `pending` answers
 *   GetTrace from memory, and `settle` writes what a store read (the user
 *   view, citations, the corrections lookup) is about to look for.
 * - The queue is bounded: when `queueMax` traces wait (queued, being
 *   written, or failed and waiting for their retry), a recall fails with
 *   UNAVAILABLE instead of answering: no block is handed out that no trace
 *   will ever explain.
 * - A batch that fails is logged at error with each trace id and retried
 *   after `retryIntervalMs`, in order, and flushed at shutdown. The write is
 *   idempotent by trace id, so a retry of a write that did land is harmless.
 *   A batch failing for a non-transient reason is retried one trace at a
 *   time, so one bad trace cannot take the others down; a trace still failing
 *   after `maxAttempts` is dropped, and one still queued when shutdown's time
 *   is up is lost, both logged at error with the trace's user-safe fields and
 *   counted. A crash loses the queue: it lives in memory.
 * - A write that outlives `timeoutMs` is logged as slow; the next batch
 *   goes ahead beside it, and its traces keep their queue slots until it settles.
 * - With an outage spool (outage-spool.ts), a batch that fails because the
 *   database is unavailable, or outlives the timeout, goes to the local spool
 *   with everything queued behind it, and so does every new trace until the
 *   spool is replayed: reads keep answering through an outage, each once its
 *   trace is on disk, until the spool is full (then UNAVAILABLE, as above).
 */

/** One trace waiting to be written. */
export interface QueuedTrace {
  principal: Principal;
  trace: RecallTrace;
}

/** The store side: writes a batch in one statement, resolves to the ids this call wrote (those already there are left out). */
export interface TraceSink {
  recordBatch(batch: readonly QueuedTrace[]): Promise<ReadonlySet<string>>;
}

export interface TraceWriterOptions {
  /** A batch write slower than this is logged as slow, and the next batch does not wait for it. */
  timeoutMs: number;
  /** Traces that may wait to be written (queued, being written, or waiting for a retry). */
  queueMax: number;
  /** How long a failed batch waits before it is retried. */
  retryIntervalMs: number;
  /** Attempts before a trace failing for a non-transient reason is dropped. */
  maxAttempts: number;
  /** How long a queued trace waits for others to share its write. */
  flushDelayMs: number;
  /** Traces per write statement. */
  batchMax: number;
}

/** Counters, logged with every failure and at shutdown. */
export interface TraceWriterMetrics {
  /** Written on the first attempt. */
  written: number;
  /** Write statements that wrote at least one trace. */
  batches: number;
  /** Traces whose write outlived the timeout. */
  slow: number;
  /** Failed and queued for retry. */
  failed: number;
  /** Written later, by a retry. */
  retried: number;
  /** Queue full: the recall failed instead of answering. */
  refused: number;
  /** Given up after maxAttempts non-transient failures. */
  dropped: number;
  /** Still queued when shutdown's time was up. */
  lost: number;
  /** Sent to the outage spool (on disk) because the database could not take them. */
  spooled: number;
  /** Written to the database from the spool. */
  replayed: number;
  /** Spooled and moved to the quarantine file: undecodable, or refused by the store for good. */
  quarantined: number;
}

interface Pending extends QueuedTrace {
  attempts: number;
  /** Written on its own: its batch failed for a reason that was not an outage. */
  solo: boolean;
  /** On disk in the outage spool: a late outcome of its write changes nothing. */
  spooled?: boolean;
}

const samePrincipal = (a: Principal, b: Principal) => a.tenantId === b.tenantId && a.principalId === b.principalId;

export class TraceWriter implements TraceRecorder {
  readonly metrics: TraceWriterMetrics = { written: 0, batches: 0, slow: 0, failed: 0, retried: 0, refused: 0, dropped: 0, lost: 0, spooled: 0, replayed: 0, quarantined: 0 };
  /** Waiting for a write, oldest first. */
  private readonly queue: Pending[] = [];
  /** Every trace not yet written (queued or being written), by id: what reads go through. */
  private readonly unwritten = new Map<string, Pending>();
  /** Batch writes still running. */
  private readonly writing = new Set<Promise<void>>();
  /** Queued traces on their way to the outage spool. */
  private readonly diverting = new Set<Promise<void>>();
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** After a failed batch, nothing is tried before this (epoch ms). */
  private retryAt = 0;
  private closed = false;

  constructor(
    private readonly sink: TraceSink,
    private readonly options: TraceWriterOptions,
    private readonly logger: Logger,
    private readonly isTransient: (error: unknown) => boolean = isUnavailable,
    /** Where traces go while the database cannot take them; without it, they wait in the queue. */
    private readonly outage?: OutageSpool,
  ) {
    // The spool counts into the writer's counters (spooled, replayed).
    if (outage) outage.metrics = this.metrics;
  }

  /** False when the outage spool is in use and full: recalls would fail UNAVAILABLE. */
  get canRecord(): boolean {
    return !this.outage?.active || this.outage.hasRoom();
  }

  /** Traces waiting to be written: queued, being written, or waiting for a retry. */
  get backlog(): number {
    return this.unwritten.size;
  }

  /** Ids of the queued traces (not being written right now), oldest first (for tests and drills). */
  queuedTraceIds(): string[] {
    return this.queue.map((q) => q.trace.id);
  }

  /**
   * Queues the trace and resolves at once; refused (UNAVAILABLE) when the
   * queue is full. The deadline is not needed: nothing here waits.
   */
  async record(principal: Principal, trace: RecallTrace): Promise<void> {
    // An outage (or its replay) is on: the trace goes behind the spooled ones, on disk, before the reply.
    if (this.outage?.active) return this.spoolOne(principal, trace);
    if (this.unwritten.size >= this.options.queueMax) this.refuse(trace);
    const item: Pending = { principal, trace, attempts: 0, solo: false };
    this.queue.push(item);
    this.unwritten.set(trace.id, item);
    this.schedule(this.queue.length >= this.options.batchMax ? 0 : this.options.flushDelayMs);
  }

  /** The principal's trace while it waits to be written; another principal's is not there. */
  pending(principal: Principal, traceId: string): RecallTrace | undefined {
    const item = this.unwritten.get(traceId);
    return item && samePrincipal(item.principal, principal) ? item.trace : undefined;
  }

  /**
   * Before a store read that must see them: writes the principal's unwritten
   * traces that `match` (with everything queued before them), waiting at most
   * until `deadlineAt`. Returns at once when there are none.
   */
  async settle(principal: Principal, match: (t: TraceKey) => boolean, deadlineAt = Number.POSITIVE_INFINITY): Promise<void> {
    const waiting = () => [...this.unwritten.values()].some((i) => samePrincipal(i.principal, principal) && match(i.trace));
    const until = () => Math.max(0, deadlineAt - Date.now());
    if (this.outage?.active) {
      // One on its way to the spool is looked for there once it is on disk.
      if (waiting()) await raceTimeout(Promise.all([...this.diverting]), until());
      // A spooled trace is not in the store yet: a read that may look for one waits for its replay (only such a read).
      if (this.outage.holds(principal, match)) {
        await raceTimeout(this.outage.replayedWhere(principal, match), until());
        if (this.outage.holds(principal, match)) throw new UnavailableError("traces of a database outage are still being replayed; retry later");
      }
    }
    if (!waiting()) return;
    // One attempt for what is queued now; a write already running is waited for.
    await raceTimeout(Promise.all([...this.writing, this.flush()]), until());
  }

  /**
   * Writes everything queued now, a batch at a time and in order, stopping at
   * the first batch that fails (it waits for its retry). Ignores the retry
   * pause: tests, drills and shutdown call it to try at once.
   */
  flush(): Promise<void> {
    return this.drain(Number.POSITIVE_INFINITY);
  }

  /** Up to `batches` batch writes, in order, after the writes already started by an earlier call. */
  private drain(batches: number): Promise<void> {
    // An earlier run's failure is its caller's; this run goes on after it.
    const before = (this.flushing ?? Promise.resolve()).catch(() => {});
    const run: Promise<void> = before
      .then(async () => {
        for (let n = 0; n < batches && this.queue.length > 0; n++) {
          if (!(await this.writeNext())) return;
        }
      })
      .finally(() => {
        if (this.flushing === run) this.flushing = undefined;
      });
    this.flushing = run;
    return run;
  }

  /**
   * A session is being deleted: its queued traces are dropped (a retry must
   * not bring its explanations back), and its writes in progress are waited
   * for so the delete that follows sees them.
   */
  async forgetSession(principal: Principal, sessionId: string): Promise<number> {
    return this.forgetWhere(principal, (s) => s === sessionId);
  }

  /** The same for every session of the principal: run before it is erased. */
  async forgetPrincipal(principal: Principal): Promise<number> {
    return this.forgetWhere(principal, () => true);
  }

  private async forgetWhere(principal: Principal, sessionMatches: (sessionId: string) => boolean): Promise<number> {
    const matches = (i: Pending) => samePrincipal(i.principal, principal) && sessionMatches(i.trace.sessionId);
    // A replay after the delete would bring the explanations back (those on their way to the spool included).
    if (this.outage?.active && [...this.unwritten.values()].some(matches)) await Promise.all([...this.diverting]);
    if (this.outage?.holds(principal, (k) => sessionMatches(k.sessionId))) {
      throw new UnavailableError("traces of a database outage are still being replayed; retry later");
    }
    let forgotten = 0;
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const item = this.queue[i]!;
      if (!matches(item)) continue;
      this.queue.splice(i, 1);
      this.unwritten.delete(item.trace.id);
      forgotten += 1;
    }
    if ([...this.unwritten.values()].some(matches)) await Promise.all([...this.writing]);
    return forgotten;
  }

  /**
   * Shutdown: waits for running writes and flushes the queue until
   * `deadlineAt` (epoch ms); whatever is still queued then is logged as lost,
   * one line per trace with its user-safe fields.
   */
  async close(deadlineAt: number): Promise<TraceWriterMetrics> {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    const remaining = () => Math.max(0, deadlineAt - Date.now());
    await raceTimeout(Promise.all([...this.writing]), remaining());
    while (this.queue.length > 0 && remaining() > 0) {
      await raceTimeout(this.flush(), remaining());
      if (this.queue.length > 0) await delay(Math.min(50, remaining()));
    }
    // The database is still down: what is left goes to the spool, for the next start, rather than being lost.
    if (this.outage && this.queue.length > 0) {
      const left = this.queue.splice(0);
      await this.divert(left, new UnavailableError("shutdown before the database took these traces"));
    }
    await this.outage?.close();
    for (const item of this.queue.splice(0)) {
      this.unwritten.delete(item.trace.id);
      this.metrics.lost += 1;
      this.logger.error({ traceId: item.trace.id, trace: userSafeFields(item.trace) }, "trace not recorded before shutdown: lost");
    }
    if (this.unwritten.size > 0) this.logger.error({ traceIds: [...this.unwritten.keys()] }, "trace writes still running at shutdown");
    this.logger.info({ metrics: this.metrics }, "trace writer closed");
    return this.metrics;
  }

  /**
   * Arms the flush timer (no earlier than a pending retry), unless one is
   * armed or shutdown has begun. The timer writes one batch, then waits
   * again: traces queued while a batch is being written (a commit waits for
   * its WAL flush, several ms) wait the flush delay for others to share their
   * statement instead of going at once, alone, behind it. Only a full batch
   * goes at once.
   */
  private schedule(afterMs: number): void {
    if (this.timer || this.closed || this.queue.length === 0) return;
    const wait = Math.max(afterMs, this.retryAt - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain(1).then(() => this.schedule(this.queue.length >= this.options.batchMax ? 0 : this.options.flushDelayMs));
    }, wait);
    this.timer.unref();
  }

  /**
   * Takes the next batch off the queue and writes it. Resolves true when the
   * next batch may go: this one was written (or its failing traces dropped),
   * or it outlived the timeout and goes on beside it. False when it failed
   * and waits for its retry.
   */
  private async writeNext(): Promise<boolean> {
    const batch = this.takeBatch();
    const write = this.writeBatch(batch);
    const settled = write.then(() => undefined);
    this.writing.add(settled);
    void settled.finally(() => this.writing.delete(settled));
    const outcome = await raceTimeout(write, this.options.timeoutMs);
    if (outcome !== TIMED_OUT) return outcome;
    this.metrics.slow += batch.length;
    // A database that does not answer (a blackhole) looks like this: a copy goes to the spool, and the
    // queue behind it. Should the slow write land after all, the replay's copy is ignored (same id).
    if (this.outage) {
      void this.divert([...batch, ...this.queue.splice(0)], new UnavailableError("trace write outlived its timeout"));
      return false;
    }
    this.logger.warn({ traceIds: batch.map((b) => b.trace.id), waitedMs: this.options.timeoutMs }, "trace write is slow; writing the next batch beside it");
    return true;
  }

  /** The oldest queued traces, up to batchMax; a trace to be written alone goes alone. */
  private takeBatch(): Pending[] {
    const first = this.queue[0]!;
    if (first.solo) return this.queue.splice(0, 1);
    let n = 1;
    while (n < this.queue.length && n < this.options.batchMax && !this.queue[n]!.solo) n += 1;
    return this.queue.splice(0, n);
  }

  /** One batch write and its bookkeeping; false when some of it waits for a retry. */
  private async writeBatch(batch: Pending[]): Promise<boolean> {
    try {
      // Not bounded by any call's store deadline: the sink is the unbounded store (the timeout above bounds the wait).
      await this.sink.recordBatch(batch);
    } catch (error) {
      const open = batch.filter((item) => !item.spooled);
      if (open.length === 0) return false;
      if (this.outage && this.isTransient(error)) {
        void this.divert([...open, ...this.queue.splice(0)], error);
        return false;
      }
      return this.failed(open, error) === 0;
    }
    this.metrics.batches += 1;
    for (const item of batch) {
      this.unwritten.delete(item.trace.id);
      if (item.attempts === 0) this.metrics.written += 1;
      else {
        this.metrics.retried += 1;
        this.logger.info({ traceId: item.trace.id, attempts: item.attempts + 1, queued: this.queue.length }, "queued trace recorded");
      }
      this.logger.info({ event: recalledEvent(item.principal, item.trace) }, RECALLED_EVENT);
    }
    return true;
  }

  /**
   * A failed batch goes back to the front of the queue, in order, and waits
   * retryIntervalMs; traces past maxAttempts are dropped. Returns how many went back.
   */
  private failed(batch: Pending[], error: unknown): number {
    const transient = this.isTransient(error);
    const back: Pending[] = [];
    for (const item of batch) {
      item.attempts += 1;
      if (!transient && item.attempts >= this.options.maxAttempts) {
        this.unwritten.delete(item.trace.id);
        this.metrics.dropped += 1;
        this.logger.error(
          { err: error, traceId: item.trace.id, trace: userSafeFields(item.trace), attempts: item.attempts, metrics: this.metrics },
          "trace dropped after repeated write failures",
        );
        continue;
      }
      // Not an outage: one of them may be the cause, so each is tried alone from now on.
      if (!transient && batch.length > 1) item.solo = true;
      if (item.attempts === 1) {
        this.metrics.failed += 1;
        this.logger.error(
          { err: error, traceId: item.trace.id, sessionId: item.trace.sessionId, turnId: item.trace.turnId, queued: this.queue.length + batch.length, metrics: this.metrics },
          "trace write failed; queued for retry",
        );
      }
      back.push(item);
    }
    if (back.length === 0) return 0;
    this.queue.unshift(...back);
    this.retryAt = Date.now() + this.options.retryIntervalMs;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.schedule(0);
    return back.length;
  }

  /** A new trace during an outage: on disk before the recall answers, or the recall fails UNAVAILABLE. */
  private async spoolOne(principal: Principal, trace: RecallTrace): Promise<void> {
    try {
      await this.outage!.divert([{ principal, trace }], undefined);
    } catch (error) {
      this.metrics.refused += 1;
      this.logger.error({ err: error, traceId: trace.id, metrics: this.metrics }, "trace cannot be spooled; failing the recall");
      throw new UnavailableError("trace could not be recorded; retry later");
    }
  }

  /**
   * Queued traces to the spool, oldest first; they keep their place in
   * memory (reads go through it) until they are on disk. When the spool
   * cannot take them they go back to the queue, to be retried as before.
   */
  private async divert(items: Pending[], why: unknown): Promise<void> {
    if (items.length === 0) return;
    const onDisk = this.spoolItems(items, why);
    this.diverting.add(onDisk);
    try {
      await onDisk;
    } finally {
      this.diverting.delete(onDisk);
    }
  }

  private async spoolItems(items: Pending[], why: unknown): Promise<void> {
    try {
      await this.outage!.divert(
        items.map(({ principal, trace }) => ({ principal, trace })),
        why,
      );
    } catch (error) {
      this.logger.error({ err: error, traces: items.length }, "traces could not be spooled; they wait in memory for a retry");
      this.queue.unshift(...items.filter((item) => this.unwritten.has(item.trace.id)));
      this.retryAt = Date.now() + this.options.retryIntervalMs;
      this.schedule(0);
      return;
    }
    for (const item of items) {
      item.spooled = true;
      this.unwritten.delete(item.trace.id);
    }
  }

  private refuse(trace: RecallTrace): never {
    this.metrics.refused += 1;
    this.logger.error(
      { traceId: trace.id, backlog: this.backlog, queueMax: this.options.queueMax, metrics: this.metrics },
      "trace cannot be recorded and the retry queue is full; failing the recall",
    );
    throw new UnavailableError("trace could not be recorded; retry later");
  }
}

const TIMED_OUT = Symbol("timed out");
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `work`, or TIMED_OUT after `ms`; the timer is cleared either way, so it never keeps a stopping process alive. */
async function raceTimeout<T>(work: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  // setTimeout turns an unbounded (or over-long) delay into 1 ms: no bound means waiting for the work.
  if (!(ms <= MAX_TIMER_MS)) return work;
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
    asOf: t.asOf?.toISOString() ?? null,
    createdAt: t.createdAt.toISOString(),
  };
}
