import { setFlagsFromString } from "node:v8";

/**
 * How far V8 lets the old generation grow past what its last full collection
 * kept before it collects again. Left to V8, a heap whose collections are
 * cheap may grow to about three times what it holds: loading ten 10k-belief
 * indexes left 50–60 MB live in 180–250 MB of committed heap, and the process
 * at 308–355 MiB RSS until V8's memory reducer ran, 30 s or more later.
 * Doubling held it at 242–252 MiB, CPU a call within the runs' spread; growing by half
 * held 211–220 but cost 8–10% more CPU a call on the embedded store
 * (docs/adr/0027). A sidecar's memory is paid once per pod.
 */
export const HEAP_GROWING_PERCENT = 100;

/** The V8 flag to set, or null when node was started with its own (`node --heap-growing-percent=N`). */
export function heapGrowthFlag(execArgv: readonly string[]): string | null {
  return execArgv.some((arg) => /^--heap[-_]growing[-_]percent(=|$)/.test(arg)) ? null : `--heap-growing-percent=${HEAP_GROWING_PERCENT}`;
}

/**
 * Sets it for this process, its worker threads included: the first thing a
 * process that runs a sidecar does (cli/main.ts, testing/sidecar-child.ts).
 * V8 reads it at each full collection, so setting it at run time holds.
 * Not done by the library entry points: the host process's heap is its own.
 */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): void {
  const flag = heapGrowthFlag(execArgv);
  if (flag !== null) setFlagsFromString(flag);
}
