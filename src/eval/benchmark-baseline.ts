import { readFile, writeFile } from "node:fs/promises";
import type { BenchmarkResult } from "./benchmark.js";
import type { BenchmarkMetrics } from "./benchmark-metrics.js";

/**
 * The committed baseline of the deterministic benchmark
 * (test/fixtures/benchmark/baseline.json): the metrics, every probe row and
 * every snapshot, as canonical JSON (sorted keys, two-space indent, numbers
 * already rounded), so a re-record that changes nothing changes no byte and
 * one that changes something shows as a small diff in review.
 */

export type Baseline = Omit<BenchmarkResult, "reopens"> & {
  /** Triple regressions accepted when this baseline was recorded, each with its reason; usually empty. */
  acceptedRegressions: string[];
};

export function toBaseline(result: BenchmarkResult, acceptedRegressions: string[] = []): Baseline {
  return {
    policy: result.policy,
    fixtureSha256: result.fixtureSha256,
    metrics: result.metrics,
    probes: result.probes,
    sessions: result.sessions,
    acceptedRegressions,
  };
}

/**
 * JSON with object keys sorted at every depth and two-space indent; arrays
 * keep their order, and a list of plain values stays on one line, so a
 * changed ranking is a one-line diff.
 */
export function canonicalJson(value: unknown): string {
  return `${format(sortKeys(value), "")}\n`;
}

function format(value: unknown, indent: string): string {
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => v === null || typeof v !== "object")) return `[${value.map((v) => JSON.stringify(v)).join(", ")}]`;
    return `[\n${value.map((v) => `${inner}${format(v, inner)}`).join(",\n")}\n${indent}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value);
    if (entries.length === 0) return "{}";
    return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${format(v, inner)}`).join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(value);
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export async function readBaseline(file: string): Promise<Baseline | null> {
  try {
    return JSON.parse(await readFile(file, "utf8")) as Baseline;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

export async function writeBaseline(file: string, baseline: Baseline): Promise<void> {
  await writeFile(file, canonicalJson(baseline));
}

/**
 * What re-recording may do. Over the same fixture, a measured result with a
 * triple regression against the committed one is refused unless a reason is
 * given, which is then written into the baseline for review; a changed
 * fixture measures different cases, so it is not compared.
 */
export function recordDecision(
  committed: Baseline | null,
  measured: BenchmarkResult,
  acceptReason: string | null,
): { ok: true; baseline: Baseline; regressions: string[] } | { ok: false; regressions: string[] } {
  const comparable = committed !== null && committed.fixtureSha256 === measured.fixtureSha256;
  const regressions = comparable ? tripleRegressions(committed.metrics, measured.metrics) : [];
  if (regressions.length > 0 && acceptReason === null) return { ok: false, regressions };
  return { ok: true, regressions, baseline: toBaseline(measured, regressions.map((r) => `${r}: ${acceptReason}`)) };
}

/** What the measured result changes in the committed baseline (its accepted regressions aside), one line each. */
export function baselineDifferences(committed: Baseline, measured: BenchmarkResult): string[] {
  return diffBaselines({ ...committed, acceptedRegressions: [] }, toBaseline(measured));
}

/**
 * Every difference between two baselines, one line each, by path:
 *   metrics.recallAt5: 0.8333 → 0.75
 *   probes[andy-coffee].returned: ["a","b"] → ["a","c"]
 * Arrays of rows are matched by their `id` (probes) or `session` (snapshots),
 * so an inserted probe is one line, not a shifted list. Empty when equal.
 */
export function diffBaselines(committed: unknown, measured: unknown): string[] {
  const out: string[] = [];
  diff("", sortKeys(committed), sortKeys(measured), out);
  return out;
}

function diff(path: string, a: unknown, b: unknown, out: string[]): void {
  if (JSON.stringify(a) === JSON.stringify(b)) return;
  const rowKey = (xs: unknown[]) => {
    for (const k of ["id", "session"]) if (xs.length > 0 && xs.every((x) => isObject(x) && typeof x[k] === "string")) return k;
    return null;
  };
  if (Array.isArray(a) && Array.isArray(b)) {
    const k = rowKey([...a, ...b]);
    if (k !== null) {
      const left = new Map(a.map((x) => [(x as Record<string, string>)[k]!, x]));
      const right = new Map(b.map((x) => [(x as Record<string, string>)[k]!, x]));
      for (const id of [...new Set([...left.keys(), ...right.keys()])]) {
        const p = `${path}[${id}]`;
        if (!right.has(id)) out.push(`${p}: removed`);
        else if (!left.has(id)) out.push(`${p}: added ${JSON.stringify(right.get(id))}`);
        else diff(p, left.get(id), right.get(id), out);
      }
      const order = (xs: unknown[]) => xs.map((x) => (x as Record<string, string>)[k]).join(",");
      if (left.size === right.size && [...left.keys()].every((id) => right.has(id)) && order(a) !== order(b)) out.push(`${path}: row order changed`);
      return;
    }
  }
  if (isObject(a) && isObject(b)) {
    for (const k of [...new Set([...Object.keys(a), ...Object.keys(b)])].sort()) {
      diff(path === "" ? k : `${path}.${k}`, a[k], b[k], out);
    }
    return;
  }
  out.push(`${path}: ${show(a)} → ${show(b)}`);
}

function show(x: unknown): string {
  return x === undefined ? "(absent)" : JSON.stringify(x);
}

function isObject(x: unknown): x is Record<string, unknown> {
  return x !== null && typeof x === "object" && !Array.isArray(x);
}

/**
 * Hard gate 9, "no triple regression": against the committed baseline,
 * target-case recall must not fall, policy failures must not rise, cache
 * stability must not fall and noise must not rise. Returns each regression
 * as a line; empty when the measured result is no worse on any of them.
 */
export function tripleRegressions(committed: BenchmarkMetrics, measured: BenchmarkMetrics): string[] {
  const out: string[] = [];
  const notDown = (name: string, before: number, after: number) => {
    if (after < before) out.push(`${name} fell: ${before} → ${after}`);
  };
  const notUp = (name: string, before: number, after: number) => {
    if (after > before) out.push(`${name} rose: ${before} → ${after}`);
  };
  notDown("target-case recall@5", committed.recallAt5, measured.recallAt5);
  notDown("target-case recall within budget", committed.recallAtBudget, measured.recallAtBudget);
  notUp("policy failures", committed.policyFailures.total, measured.policyFailures.total);
  notDown("cache stability (re-open prefix-stable share)", committed.cache.reopenPrefixStableShare, measured.cache.reopenPrefixStableShare);
  notUp("noise ratio", committed.noiseRatio, measured.noiseRatio);
  return out;
}
