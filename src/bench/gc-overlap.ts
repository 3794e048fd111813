import { percentile } from "../eval/retrieval-metrics.js";

/**
 * Which measured calls a sidecar's garbage-collection pauses landed in
 * (npm run bench and bench:ab). At concurrency 1 a call's latency is its own work plus any
 * pause of the sidecar's main thread while it was in flight, so comparing
 * the calls that met no pause with those that met one says how much of a
 * tail is the collector's and how much the work's or the machine's. Times
 * are wall-clock epoch milliseconds, taken by both processes from one clock.
 */

/** "young": a scavenge. "full": a mark-compact, an incremental-marking step or weak callbacks. */
export type GcKind = "young" | "full";

export interface GcPause {
  startMs: number;
  ms: number;
  kind: GcKind;
}

export interface TimedCall {
  startMs: number;
  ms: number;
}

export interface GcOverlap {
  calls: number;
  /** Pauses that fell within the measured calls' span (or within one of their rounds). */
  youngPauses: { n: number; p50: number; max: number };
  fullPauses: number;
  /** Calls in flight during a young pause (and no full one), and their median latency. */
  young: { calls: number; p50: number };
  /** Calls in flight during a full pause. */
  full: { calls: number; p50: number };
  /** Calls that met no pause. */
  none: { calls: number; p50: number; p95: number };
  /** The slowest 5 % of calls (at or above the p95), and how many of them met a pause of each kind. */
  slowest: { calls: number; young: number; full: number };
}

/** Node's `PerformanceEntry.detail.kind` for a "gc" entry (perf_hooks constants) as a GcKind. */
export function gcKindOf(nodeKind: number): GcKind {
  return nodeKind === 1 ? "young" : "full"; // NODE_PERFORMANCE_GC_MINOR; MAJOR 4, INCREMENTAL 8, WEAKCB 16
}

/** gcOverlap of calls measured in one run, counting the pauses within its span. */
export function gcOverlap(calls: readonly TimedCall[], pauses: readonly GcPause[]): GcOverlap {
  return gcOverlapInRounds([calls], pauses);
}

/**
 * gcOverlap of a scenario measured in rounds that interleave with other
 * scenarios (npm run bench): only pauses inside one of its rounds count.
 */
export function gcOverlapInRounds(rounds: readonly (readonly TimedCall[])[], pauses: readonly GcPause[]): GcOverlap {
  const spans = rounds.filter((calls) => calls.length > 0).map((calls) => spanOf(calls));
  const counted = pauses.filter((p) => spans.some((span) => overlaps(p, span)));
  const calls = rounds.flat();
  const met = (c: TimedCall, kind: GcKind) => counted.some((p) => p.kind === kind && overlaps(p, { from: c.startMs, to: c.startMs + c.ms }));
  const byCall = calls.map((c) => ({ ms: c.ms, full: met(c, "full"), young: met(c, "young") }));
  const latencies = (rows: typeof byCall) => rows.map((r) => r.ms);
  const full = byCall.filter((r) => r.full);
  const young = byCall.filter((r) => r.young && !r.full);
  const none = byCall.filter((r) => !r.young && !r.full);
  const p95 = percentile(latencies(byCall), 95);
  const slowest = byCall.filter((r) => r.ms >= p95);
  const youngMs = counted.filter((p) => p.kind === "young").map((p) => p.ms);
  return {
    calls: calls.length,
    youngPauses: { n: youngMs.length, p50: percentile(youngMs, 50), max: youngMs.length === 0 ? 0 : Math.max(...youngMs) },
    fullPauses: counted.length - youngMs.length,
    young: { calls: young.length, p50: percentile(latencies(young), 50) },
    full: { calls: full.length, p50: percentile(latencies(full), 50) },
    none: { calls: none.length, p50: percentile(latencies(none), 50), p95: percentile(latencies(none), 95) },
    slowest: { calls: slowest.length, young: slowest.filter((r) => r.young).length, full: slowest.filter((r) => r.full).length },
  };
}

/** From the first call's start to the last one's end. */
function spanOf(calls: readonly TimedCall[]): { from: number; to: number } {
  let from = Infinity;
  let to = -Infinity;
  for (const c of calls) {
    from = Math.min(from, c.startMs);
    to = Math.max(to, c.startMs + c.ms);
  }
  return { from, to };
}

function overlaps(p: GcPause, span: { from: number; to: number }): boolean {
  return p.startMs < span.to && p.startMs + p.ms > span.from;
}

/** Two lines for one side of bench:ab, or one scenario of npm run bench. */
export function formatGcOverlap(side: string, o: GcOverlap): string {
  const ms = (v: number) => v.toFixed(2);
  const share = (n: number) => `${((100 * n) / Math.max(1, o.calls)).toFixed(1)} %`;
  return (
    `${side}: ${o.youngPauses.n} young-generation pauses (median ${ms(o.youngPauses.p50)}, max ${ms(o.youngPauses.max)} ms) and ${o.fullPauses} full-collection ones; ` +
    `calls that met a young one ${o.young.calls} (${share(o.young.calls)}, p50 ${ms(o.young.p50)} ms), a full one ${o.full.calls} (p50 ${ms(o.full.p50)})\n` +
    `${side}: calls that met none: p50 ${ms(o.none.p50)}, p95 ${ms(o.none.p95)} ms; of the slowest 5 % (${o.slowest.calls}), ` +
    `${o.slowest.young} met a young pause and ${o.slowest.full} a full one`
  );
}
