import type { ArmOutcome, RecallArm } from "./arm.js";

/**
 * Runs arms concurrently against one shared deadline and yields each outcome
 * as soon as it is known: finished arms in finishing order, then every arm
 * still running at the deadline as degraded (its work is aborted, which
 * cancels its SQL on PostgreSQL). A failed arm is degraded too, unless every
 * arm failed, in which case the first error is thrown (the store is down).
 */
export async function* runArms(
  arms: readonly RecallArm[],
  options: { deadlineAt: number; signal: AbortSignal; now?: () => number; onArmError?: (arm: string, error: unknown) => void },
): AsyncGenerator<ArmOutcome> {
  const now = options.now ?? (() => performance.now());
  const abort = new AbortController();
  type Settled = { arm: string; outcome?: ArmOutcome; error?: unknown };
  const settled: Settled[] = [];
  let wake: (() => void) | null = null;
  const notify = () => {
    wake?.();
    wake = null;
  };
  // One listener on the caller's signal, removed when the arms are done: the call's signal
  // outlives the recall (connect-node keeps it until V8's next full collection, docs/adr/0001),
  // and whatever its listeners reach lives as long.
  const onCallerAbort = () => {
    abort.abort(options.signal.reason);
    notify();
  };
  options.signal.addEventListener("abort", onCallerAbort, { once: true });
  const startedAt = now();
  for (const arm of arms) {
    arm.run(abort.signal).then(
      (candidates) => {
        settled.push({ arm: arm.name, outcome: { arm: arm.name, candidates, latencyMs: Math.round(now() - startedAt), degraded: false } });
        notify();
      },
      (error: unknown) => {
        settled.push({ arm: arm.name, error });
        notify();
      },
    );
  }
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    notify();
  }, Math.max(0, options.deadlineAt - Date.now()));

  const done = new Set<string>();
  const errors: unknown[] = [];
  try {
    while (done.size < arms.length) {
      if (options.signal.aborted) throw options.signal.reason;
      const next = settled.shift();
      if (next) {
        done.add(next.arm);
        if (next.outcome) {
          yield next.outcome;
        } else {
          errors.push(next.error);
          options.onArmError?.(next.arm, next.error);
          if (errors.length === arms.length) throw next.error;
          yield { arm: next.arm, candidates: [], latencyMs: Math.round(now() - startedAt), degraded: true };
        }
        continue;
      }
      if (timedOut) break;
      await new Promise<void>((resolve) => (wake = resolve));
    }
    // Deadline: whatever has not finished is abandoned.
    const late = arms.filter((a) => !done.has(a.name));
    if (late.length > 0) abort.abort(DEADLINE_REACHED);
    for (const arm of late) {
      yield { arm: arm.name, candidates: [], latencyMs: Math.round(now() - startedAt), degraded: true };
    }
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener("abort", onCallerAbort);
    if (!abort.signal.aborted) abort.abort(FINISHED);
  }
}

/**
 * The reasons the arms' signal is aborted with, made once. An Error made per
 * recall would capture the stack it was made in, and a captured stack holds
 * the async frames' generators (the pipeline's, and what it last awaited: the
 * call's trace and ranked list) for as long as the signal keeps the reason.
 */
const DEADLINE_REACHED = new Error("recall deadline reached");
const FINISHED = new Error("recall finished");
