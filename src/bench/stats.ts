import { percentile } from "../eval/retrieval-metrics.js";

/** Latency summary of one measured scenario, in milliseconds (nearest-rank percentiles). */
export interface LatencySummary {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  mean: number;
  max: number;
  /** Completed operations per second of wall time. */
  perSecond: number;
  errors: number;
}

export function summarize(samplesMs: readonly number[], wallMs: number, errors = 0): LatencySummary {
  const n = samplesMs.length;
  return {
    n,
    p50: percentile(samplesMs, 50),
    p95: percentile(samplesMs, 95),
    p99: percentile(samplesMs, 99),
    mean: n === 0 ? 0 : samplesMs.reduce((a, b) => a + b, 0) / n,
    max: n === 0 ? 0 : Math.max(...samplesMs),
    perSecond: wallMs > 0 ? (n * 1000) / wallMs : 0,
    errors,
  };
}

/** The median of values (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Rounds of the same scenario folded into one summary: each statistic is the
 * median over the rounds, so one noisy round on a shared machine does not
 * decide the figure. Counts add up.
 */
export function medianOfRounds(rounds: readonly LatencySummary[]): LatencySummary {
  const m = (key: keyof LatencySummary) => median(rounds.map((r) => r[key]));
  return {
    n: rounds.reduce((a, r) => a + r.n, 0),
    p50: m("p50"),
    p95: m("p95"),
    p99: m("p99"),
    mean: m("mean"),
    max: Math.max(0, ...rounds.map((r) => r.max)),
    perSecond: m("perSecond"),
    errors: rounds.reduce((a, r) => a + r.errors, 0),
  };
}
