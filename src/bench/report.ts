import type { LatencySummary } from "./stats.js";

/** How the benchmark's results are printed and judged. Pure: data in, text out. */

export interface ScenarioResult {
  /** Short stable name: "in-turn recall", "raw lexical SQL", … */
  scenario: string;
  concurrency: number;
  summary: LatencySummary;
  /** Anything the reader must know about the figures (degraded arms, cache misses). */
  note: string;
}

export interface Target {
  name: string;
  /** The measured value and the bound it must not exceed. */
  value: number;
  bound: number;
  unit: string;
}

export function met(t: Target): boolean {
  return t.value <= t.bound;
}

const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** A fixed-width text table of the scenarios, one row per scenario and concurrency. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const header = ["scenario", "conc", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", "ops/s", "errors", "note"];
  const rows = results.map((r) => [
    r.scenario,
    String(r.concurrency),
    String(r.summary.n),
    fmt(r.summary.p50),
    fmt(r.summary.p95),
    fmt(r.summary.p99),
    fmt(r.summary.mean),
    r.summary.perSecond.toFixed(0),
    String(r.summary.errors),
    r.note,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  // Text columns left-aligned, numbers right-aligned.
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export function formatTargets(targets: readonly Target[]): string {
  return targets
    .map((t) => `  ${met(t) ? "met    " : "NOT met"}  ${t.name}: ${fmt(t.value)} ${t.unit} (target ≤ ${t.bound} ${t.unit})`)
    .join("\n");
}

/** The targets, judged on the concurrency-1 figures. */
export function judgeTargets(inTurn: LatencySummary, cachedSnapshot: LatencySummary, rawSql: LatencySummary): Target[] {
  return [
    { name: "in-turn recall p50 at 10k beliefs", value: inTurn.p50, bound: 4, unit: "ms" },
    { name: "in-turn recall p95 at 10k beliefs", value: inTurn.p95, bound: 10, unit: "ms" },
    { name: "cached snapshot p95", value: cachedSnapshot.p95, bound: 1, unit: "ms" },
    { name: "sidecar p50 / raw SQL p50", value: rawSql.p50 > 0 ? inTurn.p50 / rawSql.p50 : Infinity, bound: 1.5, unit: "x" },
  ];
}
