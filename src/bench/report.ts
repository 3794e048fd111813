import type { LatencySummary } from "./stats.js";

/** How the benchmark's results are printed and judged. Pure: data in, text out. */

/** The scenario every other is compared with: the sidecar's own health check over the same channel. */
export const FLOOR_SCENARIO = "gRPC floor (health Check)";

export interface ScenarioResult {
  /** Short stable name: "in-turn recall", "raw lexical SQL", … */
  scenario: string;
  /** Which sidecar and store the figure comes from; the floor of the same group is its reference. */
  group: string;
  concurrency: number;
  summary: LatencySummary;
  /** Anything the reader must know about the figures (degraded arms, cache misses). */
  note: string;
}

export interface Target {
  name: string;
  /** The measured value (NaN when not measured) and the bound it must not exceed. */
  value: number;
  bound: number;
  unit: string;
}

export function met(t: Target): boolean {
  return t.value <= t.bound;
}

const fmt = (x: number) => (Number.isNaN(x) ? "–" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));

/** p50 of `r` over the p50 of the floor measured in the same group at the same concurrency (NaN without one). */
export function ratioToFloor(r: ScenarioResult, results: readonly ScenarioResult[]): number {
  const floor = results.find((f) => f.scenario === FLOOR_SCENARIO && f.group === r.group && f.concurrency === r.concurrency);
  return floor && floor.summary.p50 > 0 ? r.summary.p50 / floor.summary.p50 : NaN;
}

/** A fixed-width text table of the scenarios, one row per scenario and concurrency, with each p50's ratio to its floor. */
export function formatTable(results: readonly ScenarioResult[]): string {
  const header = ["scenario", "conc", "n", "p50 ms", "p95 ms", "p99 ms", "mean ms", "ops/s", "× floor", "errors", "note"];
  const rows = results.map((r) => [
    r.scenario,
    String(r.concurrency),
    String(r.summary.n),
    fmt(r.summary.p50),
    fmt(r.summary.p95),
    fmt(r.summary.p99),
    fmt(r.summary.mean),
    r.summary.perSecond.toFixed(0),
    fmt(ratioToFloor(r, results)),
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
    .map((t) => {
      const verdict = Number.isNaN(t.value) ? "not measured" : met(t) ? "met    " : "NOT met";
      return `  ${verdict}  ${t.name}: ${fmt(t.value)} ${t.unit} (target ≤ ${t.bound} ${t.unit})`;
    })
    .join("\n");
}

/** The figures the targets are judged on: concurrency 1, the 10k principal on the 1M store, and the embedded 50k one. */
/** Each absent when its scenario was not run (--scenarios, --no-embedded). */
export interface TargetFigures {
  inTurn?: LatencySummary;
  search?: LatencySummary;
  cachedSnapshot?: LatencySummary;
  coldSnapshot?: LatencySummary;
  floor?: LatencySummary;
  embeddedInTurn?: LatencySummary;
}

/** Issue 11's targets. */
export function judgeTargets(f: TargetFigures): Target[] {
  return [
    { name: "in-turn recall p50, 10k principal", value: f.inTurn?.p50 ?? NaN, bound: 3, unit: "ms" },
    { name: "in-turn recall p95, 10k principal", value: f.inTurn?.p95 ?? NaN, bound: 6, unit: "ms" },
    { name: "search p50, 10k principal", value: f.search?.p50 ?? NaN, bound: 3, unit: "ms" },
    { name: "search p95, 10k principal", value: f.search?.p95 ?? NaN, bound: 6, unit: "ms" },
    {
      name: "cached snapshot p50 / floor p50",
      value: f.floor && f.cachedSnapshot && f.floor.p50 > 0 ? f.cachedSnapshot.p50 / f.floor.p50 : NaN,
      bound: 1.5,
      unit: "x",
    },
    { name: "cold snapshot p50", value: f.coldSnapshot?.p50 ?? NaN, bound: 10, unit: "ms" },
    { name: "embedded store in-turn recall p50, 50k principal", value: f.embeddedInTurn?.p50 ?? NaN, bound: 4, unit: "ms" },
  ];
}

/** Throughput at `high` concurrency over throughput at `base`, per scenario of `group` measured at both. */
export function throughputScaling(
  results: readonly ScenarioResult[],
  group: string,
  base: number,
  high: number,
): { scenario: string; ratio: number }[] {
  const at = (scenario: string, c: number) => results.find((r) => r.group === group && r.scenario === scenario && r.concurrency === c);
  const scenarios = [...new Set(results.filter((r) => r.group === group).map((r) => r.scenario))];
  return scenarios.flatMap((scenario) => {
    const lo = at(scenario, base);
    const hi = at(scenario, high);
    if (!lo || !hi || lo.summary.perSecond <= 0) return [];
    return [{ scenario, ratio: hi.summary.perSecond / lo.summary.perSecond }];
  });
}
