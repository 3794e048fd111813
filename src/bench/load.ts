import type { TimedCall } from "./gc-overlap.js";
import { summarize, type LatencySummary } from "./stats.js";

/**
 * A closed-loop load: `concurrency` workers each issue the next operation as
 * soon as their previous one finished, until `iterations` have completed.
 * Warm-up operations run first at the same concurrency and are not recorded.
 * `op` gets a sequence number unique across warm-up and measurement, so
 * requests can vary. `calls` are the measured calls that succeeded, with
 * their start as wall-clock epoch milliseconds (gc-overlap.ts matches them
 * with the sidecar's collector pauses).
 */
export async function runLoad(
  op: (seq: number) => Promise<void>,
  options: { iterations: number; concurrency: number; warmup: number; firstSeq?: number },
): Promise<{ summary: LatencySummary; calls: TimedCall[]; firstError: string | null; nextSeq: number }> {
  let seq = options.firstSeq ?? 0;
  let firstError: string | null = null;
  const calls: TimedCall[] = [];
  const pass = async (count: number, record: boolean) => {
    let errors = 0;
    let issued = 0;
    const worker = async () => {
      while (issued < count) {
        issued += 1;
        const mine = seq++;
        const started = performance.now();
        try {
          await op(mine);
          if (record) calls.push({ startMs: performance.timeOrigin + started, ms: performance.now() - started });
        } catch (error) {
          errors += 1;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    };
    const started = performance.now();
    await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
    return summarize(calls.map((c) => c.ms), performance.now() - started, errors);
  };
  if (options.warmup > 0) await pass(options.warmup, false);
  const summary = await pass(options.iterations, true);
  return { summary, calls, firstError, nextSeq: seq };
}
