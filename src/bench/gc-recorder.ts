import { writeFileSync } from "node:fs";
import { PerformanceObserver, performance } from "node:perf_hooks";
import { gcKindOf, type GcPause } from "./gc-overlap.js";

/**
 * Loaded into a benchmarked sidecar with `node --import` (npm run bench and
 * bench:ab do it, through sidecar-process.ts's gcRecording): records every
 * garbage-collection pause of the process's main thread, its start as
 * wall-clock epoch milliseconds, and
 * writes them as JSON to $RECALL_BENCH_GC_FILE when the process exits. The
 * sidecar itself never loads this module.
 */
const file = process.env.RECALL_BENCH_GC_FILE;
if (file) {
  const pauses: GcPause[] = [];
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = ((entry as { detail?: { kind?: number } }).detail)?.kind ?? 0;
      pauses.push({ startMs: performance.timeOrigin + entry.startTime, ms: entry.duration, kind: gcKindOf(kind) });
    }
  }).observe({ entryTypes: ["gc"] });
  process.on("exit", () => writeFileSync(file, JSON.stringify(pauses)));
}
