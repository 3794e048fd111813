import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "../log/logger.js";
import { SpoolFullError, type SpooledTrace, type TraceSpool } from "./trace-spool.js";

/**
 * Recall through a database outage (issue 38, item 7). While the database
 * cannot take trace writes, traces go to the local spool (trace-spool.ts)
 * instead of the in-memory retry queue, so reads of loaded principals keep
 * answering; each recall answers once its trace is on disk. The spool is
 * replayed into the store in order, a batch at a time, retrying while the
 * database is still down; new traces keep going to the spool behind the old
 * ones until it is drained, so the store receives them in the order they
 * were made. A spool left by an earlier process is replayed at start.
 */

/** The store side of a replay: one batch in one statement, idempotent by trace id, bounded by `deadlineAt`. */
export type ReplaySink = (batch: readonly SpooledTrace[], deadlineAt: number) => Promise<unknown>;

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
}

export class OutageSpool {
  /** Counted here unless the trace writer lends its own counters. */
  metrics: OutageSpoolMetrics = { spooled: 0, replayed: 0 };
  /** Traces go to the spool (an outage, or its replay not finished). */
  private spooling = false;
  private timer: NodeJS.Timeout | undefined;
  private replaying: Promise<void> | undefined;
  private stopped = false;
  private drainedWaiters: (() => void)[] = [];

  constructor(
    readonly spool: TraceSpool,
    private readonly sink: ReplaySink,
    private readonly options: OutageSpoolOptions,
    private readonly logger: Logger,
  ) {
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
      const { items, next } = await this.spool.read(this.options.batchMax);
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
        this.logger.warn({ err, waiting: this.spool.backlogBytes }, "trace spool replay failed; retrying");
        return;
      }
      this.spool.advance(next);
      this.metrics.replayed += items.length;
    }
  }
}

export { SpoolFullError };
