import { setTimeout as delay } from "node:timers/promises";
import { isUnavailable } from "../domain/errors.js";
import type { Principal } from "../domain/model.js";
import type { Logger } from "../log/logger.js";
import { StoreTimeoutError, WriteOutcomeUnknownError } from "../store/store-deadline.js";
import type { TraceKey } from "../recall/pipeline.js";
import type { SpooledRecord } from "./spool-record.js";
import { SpoolFullError, type QuarantinedRecord, type SpooledTrace, type SpoolKey, type TraceSpool } from "./trace-spool.js";

/**
 * Recall through a database outage (issue 38, item 7). While the database
 * cannot take trace writes, traces go to the local spool (trace-spool.ts)
 * instead of the in-memory retry queue, so reads of loaded principals keep
 * answering; each recall answers once its trace is on disk. The spool is
 * replayed into the store in order, a batch at a time, retrying while the
 * database is still down; new traces keep going to the spool behind the old
 * ones until it is drained, so the store receives them in the order they
 * were made. A spool left by an earlier process is replayed at start.
 *
 * Nothing in the spool can hold the replay up for good (issue 44): a record
 * that does not decode goes to the quarantine file; a batch that fails (not
 * for a refused connection) is tried again halved, down to one trace; one trace the store refuses
 * `refusalsBeforeQuarantine` times for a reason that is not an outage goes
 * to quarantine too. Each is logged and counted (`quarantined`).
 */

/**
 * The store side of a replay: one batch in one statement, idempotent by trace
 * id, bounded by `deadlineAt`. Its ranked lists may be compact (their texts
 * are joined back there, spooled-ranked.ts).
 */
export type ReplaySink = (batch: readonly SpooledRecord[], deadlineAt: number) => Promise<unknown>;

/** A store refusal of one trace this many times in a row (not an outage) sends it to quarantine. */
const REFUSALS_BEFORE_QUARANTINE = 3;

export interface OutageSpoolOptions {
  /** How long a failed replay waits before it tries again. */
  retryIntervalMs: number;
  /** Traces per replayed batch. */
  batchMax: number;
  /** Bounds one replayed batch: a blackholed database must not hold the replay forever. */
  writeTimeoutMs: number;
}

export interface OutageSpoolMetrics {
  spooled: number;
  replayed: number;
  /** Records moved to the quarantine file: they will not reach the store. */
  quarantined: number;
}

const samePrincipal = (k: SpoolKey, p: Principal) => k.tenantId === p.tenantId && k.principalId === p.principalId;

export class OutageSpool {
  /** Counted here unless the trace writer lends its own counters. */
  metrics: OutageSpoolMetrics = { spooled: 0, replayed: 0, quarantined: 0 };
  /** Traces go to the spool (an outage, or its replay not finished). */
  private spooling = false;
  private timer: NodeJS.Timeout | undefined;
  private replaying: Promise<void> | undefined;
  private stopped = false;
  private drainedWaiters: (() => void)[] = [];
  /** Traces per replayed batch now: halved after a failure, doubled back after a success. */
  private batchSize: number;
  /** Failures in a row of a one-trace batch, not an outage. */
  private refusals = 0;

  constructor(
    readonly spool: TraceSpool,
    private readonly sink: ReplaySink,
    private readonly options: OutageSpoolOptions,
    private readonly logger: Logger,
  ) {
    this.batchSize = options.batchMax;
    spool.onQuarantine = (record) => this.quarantined(record);
    if (!spool.isEmpty) {
      this.spooling = true;
      logger.warn({ path: spool.path, bytes: spool.backlogBytes }, "trace spool from an earlier run: replaying it");
      this.schedule(0);
    }
  }

  get active(): boolean {
    return this.spooling;
  }

  hasRoom(): boolean {
    return this.spool.hasRoom();
  }

  /**
   * Spools `items` (oldest first) and from now on every new trace behind
   * them; resolves once they are on disk. Throws SpoolFullError (or the
   * disk's error) when they could not be spooled.
   */
  async divert(items: readonly SpooledTrace[], why: unknown): Promise<void> {
    if (!this.spooling) {
      this.spooling = true;
      this.logger.error({ err: why, path: this.spool.path }, "database cannot take traces; spooling them to disk until it can");
    }
    await this.spool.append(items);
    this.metrics.spooled += items.length;
    this.schedule(this.options.retryIntervalMs);
  }

  /** Resolves when the spool has been replayed (at once when there is no outage). */
  drained(): Promise<void> {
    if (!this.spooling) return Promise.resolve();
    return new Promise((resolve) => this.drainedWaiters.push(resolve));
  }

  /** True when the spool holds a trace of the principal that `match`es. */
  holds(principal: Principal, match: (t: TraceKey) => boolean): boolean {
    return this.spool.holds((k) => samePrincipal(k, principal) && match(k));
  }

  /** Resolves once the spool holds no trace of the principal that `match`es. */
  replayedWhere(principal: Principal, match: (t: TraceKey) => boolean): Promise<void> {
    return this.spool.whenGone((k) => samePrincipal(k, principal) && match(k));
  }

  /** Stops replaying (what is left stays in the spool for the next start). */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // A replay in progress gets a moment; what it does not finish is replayed again at the next start.
    await Promise.race([this.replaying, delay(1000, undefined, { ref: false })]);
    if (!this.spool.isEmpty) this.logger.warn({ path: this.spool.path, bytes: this.spool.backlogBytes }, "trace spool not yet replayed; it is replayed at the next start");
    await this.spool.close();
  }

  private schedule(afterMs: number): void {
    if (this.timer || this.replaying || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.replaying = this.replay()
        .catch((err: unknown) => this.logger.error({ err, path: this.spool.path }, "trace spool could not be read; retrying"))
        .finally(() => {
        this.replaying = undefined;
        if (this.spooling) this.schedule(this.options.retryIntervalMs);
      });
    }, afterMs);
    this.timer.unref();
  }

  /** Replays batches until the spool is drained or a write fails (retried after the interval). */
  private async replay(): Promise<void> {
    while (!this.stopped) {
      const { items, next } = await this.spool.read(this.batchSize);
      if (items.length === 0) {
        // Checked again after the await: a trace spooled in the meantime keeps the spool in use.
        if (!(await this.spool.truncateIfDrained()) || !this.spool.isEmpty) return;
        this.spooling = false;
        this.logger.info({ replayed: this.metrics.replayed, spooled: this.metrics.spooled }, "trace spool replayed; traces go to the database again");
        for (const resolve of this.drainedWaiters.splice(0)) resolve();
        return;
      }
      try {
        await this.sink(items, Date.now() + this.options.writeTimeoutMs);
      } catch (err) {
        if (await this.failed(items.length, err)) continue;
        return;
      }
      this.spool.advance(next);
      this.metrics.replayed += items.length;
      this.refusals = 0;
      this.batchSize = Math.min(this.options.batchMax, this.batchSize * 2);
    }
  }

  /**
   * A replayed batch failed: the next one is half as big (a batch too big for
   * the write timeout gets through in parts). True when the replay goes on at
   * once: a single trace the store keeps refusing went to quarantine.
   */
  private async failed(size: number, err: unknown): Promise<boolean> {
    const outage = isUnavailable(err);
    // A refused connection says nothing of the batch; a timeout or a refusal of its contents may.
    if (!outage || err instanceof StoreTimeoutError || err instanceof WriteOutcomeUnknownError) this.batchSize = Math.max(1, Math.floor(size / 2));
    this.refusals = size === 1 && !outage ? this.refusals + 1 : 0;
    if (this.refusals >= REFUSALS_BEFORE_QUARANTINE) {
      this.refusals = 0;
      await this.spool.quarantineFirst(`the store refused it ${REFUSALS_BEFORE_QUARANTINE} times: ${(err as Error).message}`);
      return true;
    }
    this.logger.warn({ err, traces: size, nextBatch: this.batchSize, waiting: this.spool.backlogBytes }, "trace spool replay failed; retrying");
    return false;
  }

  private quarantined(record: QuarantinedRecord): void {
    this.metrics.quarantined += 1;
    this.logger.error(
      { ...record, path: this.spool.path, quarantine: this.spool.quarantinePath },
      record.kept ? "trace spool record cannot be replayed; moved to the quarantine file" : "trace spool record cannot be replayed and the quarantine file is full; dropped",
    );
  }
}

export { SpoolFullError };
