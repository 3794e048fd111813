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
  /** The bound is a floor (a throughput gain), not a ceiling. */
  atLeast?: boolean;
}

export function met(t: Target): boolean {
  return t.atLeast ? t.value >= t.bound : t.value <= t.bound;
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
      return `  ${verdict}  ${t.name}: ${fmt(t.value)} ${t.unit} (target ${t.atLeast ? "≥" : "≤"} ${t.bound} ${t.unit})`;
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

/** The figures issue 37's targets (what a sidecar costs per pod) are judged on; NaN where not measured. */
export interface CostFigures {
  /** Retained heap per belief of a loaded index, bytes (index-bytes.ts). */
  indexBytesPerBelief10k: number;
  indexBytesPerBelief100k: number;
  /** Idle RSS, MiB (memory-figures.ts). */
  idlePostgresMiB: number;
  idleEphemeralMiB: number;
  idleDataDirMiB: number;
  /** In-turn recall of the same 10k principal on each store, at the base concurrency. */
  pgInTurn10k?: LatencySummary;
  embeddedInTurn10k?: LatencySummary;
  /** Embedded in-turn throughput at the high concurrency over the base one. */
  embeddedScaling: number;
  firstCall100kMs: number;
  pgInTurn100k?: LatencySummary;
  floor?: LatencySummary;
  cachedSnapshot?: LatencySummary;
}

const ratio = (a: LatencySummary | undefined, b: LatencySummary | undefined) => (a && b && b.p50 > 0 ? a.p50 / b.p50 : NaN);

/** Issue 37's targets, and the two of issue 11's it keeps (in-turn and cached snapshot over the floor). */
export function judgeCostTargets(f: CostFigures): Target[] {
  return [
    { name: "retained index heap per belief, 10k principal", value: f.indexBytesPerBelief10k, bound: 1024, unit: "bytes" },
    { name: "retained index heap per belief, 100k principal", value: f.indexBytesPerBelief100k, bound: 1024, unit: "bytes" },
    { name: "idle RSS, ephemeral store", value: f.idleEphemeralMiB, bound: 150, unit: "MiB" },
    { name: "idle RSS, PGlite data directory", value: f.idleDataDirMiB, bound: 200, unit: "MiB" },
    { name: "idle RSS, PostgreSQL store", value: f.idlePostgresMiB, bound: 80, unit: "MiB" },
    { name: "embedded in-turn p50 / PostgreSQL in-turn p50, 10k principal", value: ratio(f.embeddedInTurn10k, f.pgInTurn10k), bound: 1.3, unit: "x" },
    { name: "embedded in-turn throughput, concurrency 8 / 1", value: f.embeddedScaling, bound: 1.5, unit: "x", atLeast: true },
    { name: "first in-turn recall of a 100k principal after start-up", value: f.firstCall100kMs, bound: 150, unit: "ms" },
    { name: "in-turn p50, 100k principal / 10k principal", value: ratio(f.pgInTurn100k, f.pgInTurn10k), bound: 1.3, unit: "x" },
    { name: "in-turn p50 / floor p50, 10k principal", value: ratio(f.pgInTurn10k, f.floor), bound: 3.5, unit: "x" },
    { name: "cached snapshot p50 / floor p50", value: ratio(f.cachedSnapshot, f.floor), bound: 1.5, unit: "x" },
  ];
}

/** "What a user would pick instead": each alternative's p50 next to our in-turn recall's, as a ratio. */
export function formatAlternatives(rows: readonly { name: string; summary: LatencySummary; note: string }[], ours: LatencySummary | undefined): string[] {
  return rows.map(
    (r) =>
      `  ${r.name}: p50 ${fmt(r.summary.p50)} ms, p95 ${fmt(r.summary.p95)} ms (${r.note}); ` +
      `${fmt(ours && ours.p50 > 0 ? r.summary.p50 / ours.p50 : NaN)}x our in-turn recall p50 (${fmt(ours?.p50 ?? NaN)} ms, over gRPC)`,
  );
}

/** In-turn p50 by principal size, and how it grows from the smallest to the largest. */
export function formatGrowth(bySize: readonly { size: string; summary: LatencySummary | undefined }[]): string[] {
  const known = bySize.filter((s): s is { size: string; summary: LatencySummary } => s.summary !== undefined);
  if (known.length < 2) return ["  not measured"];
  const last = known[known.length - 1]!;
  return [
    `  in-turn p50: ${known.map((s) => `${s.size} ${fmt(s.summary.p50)} ms`).join(", ")}`,
    ...known.slice(0, -1).map((s) => `  ${last.size} over ${s.size}: ${fmt(last.summary.p50 / s.summary.p50)}x`),
  ];
}
