import { percentile } from "../eval/retrieval-metrics.js";
import { summarize, type LatencySummary } from "./stats.js";

/**
 * Two sidecars compared call by call (bench:ab). On a shared machine the
 * speed moves more from minute to minute than most changes move it, so two
 * builds measured one after the other say little; called alternately, each
 * pair of calls meets the same machine. Which side goes first is swapped
 * every SWAP_EVERY pairs, so neither always runs right after the client's
 * own work.
 */

export const SWAP_EVERY = 100;

/** The order of the two sides for pair `i`: A first, then B, or the other way round. */
export function pairOrder(i: number): readonly ["a", "b"] | readonly ["b", "a"] {
  return Math.floor(i / SWAP_EVERY) % 2 === 0 ? (["a", "b"] as const) : (["b", "a"] as const);
}

export interface SideResult {
  label: string;
  summary: LatencySummary;
  /** Nearest-rank p90 of the answered calls (the bench's summary has none). */
  p90: number;
  /** The sidecar process's CPU time (all threads) per measured call, failed ones included, ms. */
  cpuPerCallMs: number;
}

/** One side's figures from its answered calls' latencies, `errors` failed calls, and its CPU time over all of them. */
export function sideResult(label: string, samplesMs: readonly number[], wallMs: number, cpuMs: number, errors: number): SideResult {
  const calls = samplesMs.length + errors;
  return { label, summary: summarize(samplesMs, wallMs, errors), p90: percentile(samplesMs, 90), cpuPerCallMs: calls === 0 ? Number.NaN : cpuMs / calls };
}

const COLUMNS = ["p50", "p90", "p95", "p99", "mean"] as const;

/** A table of both sides and B − A, in ms. */
export function formatSideBySide(a: SideResult, b: SideResult): string {
  const row = (name: string, values: readonly number[]) => `${name.padEnd(8)}${values.map((v) => fmt(v).padStart(9)).join("")}`;
  const figures = (s: SideResult) => [s.summary.p50, s.p90, s.summary.p95, s.summary.p99, s.summary.mean, s.cpuPerCallMs];
  const fa = figures(a);
  const fb = figures(b);
  return [
    `${"".padEnd(8)}${[...COLUMNS, "cpu/call"].map((c) => c.padStart(9)).join("")}`,
    row("A", fa),
    row("B", fb),
    row("B − A", fb.map((v, i) => v - fa[i]!)),
    `A: ${a.label} (${a.summary.n} calls, ${a.summary.errors} errors)`,
    `B: ${b.label} (${b.summary.n} calls, ${b.summary.errors} errors)`,
  ].join("\n");
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return "n/a";
  return (Math.abs(v) >= 10 ? v.toFixed(1) : v.toFixed(2)).replace(/^-0\.00$/, "0.00");
}
