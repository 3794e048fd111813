import type { Logger } from "../log/logger.js";
import type { TraceStore } from "../store/traces/trace-store.js";

/**
 * The traces' two bounded sweeps, run periodically by the server and once by
 * `recall sweep`:
 * - retention (operator clock): operator fields of traces past
 *   operator_fields_expire_at are nulled; dropped_for_budget_count and the
 *   user-safe fields stay until their session is deleted;
 * - feedback: traces older than the uncited window charge each returned,
 *   never-cited belief a little utility, once.
 * Each runs tenant by tenant, in batches of `batch` rows, at most
 * `maxBatches` per tenant per run, so one run is bounded however far behind
 * it is; the next run continues.
 */

export interface SweepOptions {
  batch: number;
  maxBatches: number;
  /** Returned beliefs not cited within this many hours of their recall lose utility. */
  uncitedWindowHours: number;
}

export interface SweepResult {
  /** Traces whose operator fields were nulled. */
  expired: number;
  /** Traces whose uncited returns were charged. */
  settled: number;
  /** Belief rows that lost utility. */
  charged: number;
}

export async function sweepOnce(traces: TraceStore, now: Date, options: SweepOptions): Promise<SweepResult> {
  const result: SweepResult = { expired: 0, settled: 0, charged: 0 };
  // Tenant by tenant: every write is routed to one tenant's rows (docs/scale-out.md).
  for (const tenant of await traces.tenantsWithExpiredOperatorFields(now)) {
    for (let i = 0; i < options.maxBatches; i++) {
      const n = await traces.expireOperatorFields(tenant, now, options.batch);
      result.expired += n;
      if (n < options.batch) break;
    }
  }
  const cutoff = new Date(now.getTime() - options.uncitedWindowHours * 3_600_000);
  for (const tenant of await traces.tenantsWithUnsettledFeedback(cutoff)) {
    for (let i = 0; i < options.maxBatches; i++) {
      const { traces: settled, beliefs } = await traces.settleUncitedReturns(tenant, cutoff, now, options.batch);
      result.settled += settled;
      result.charged += beliefs;
      if (settled < options.batch) break;
    }
  }
  return result;
}

/**
 * Runs `sweepOnce` every `intervalMs` (never two at once); `stop` waits for a
 * running sweep. With `claim`, a tick sweeps only when it returns true: the
 * fleet's lease (store/maintenance-lease.ts), so one sidecar sweeps per interval.
 */
export function startSweeper(
  traces: TraceStore,
  clock: () => Date,
  options: SweepOptions & { intervalMs: number },
  logger: Logger,
  claim?: () => Promise<boolean>,
): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const tick = () => {
    if (running) return;
    running = (async () => {
      if (claim && !(await claim())) {
        logger.debug("trace sweep skipped: another sidecar holds the lease");
        return;
      }
      const r = await sweepOnce(traces, clock(), options);
      if (r.expired + r.settled > 0) logger.info({ sweep: r }, "trace sweep");
      else logger.debug({ sweep: r }, "trace sweep: nothing due");
    })()
      .catch((err: unknown) => logger.warn({ err }, "trace sweep failed; retrying next interval"))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(tick, options.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
