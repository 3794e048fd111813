import { describe, expect, it } from "vitest";
import { openingGoals, OBJECTS, pickSkewed, queryTexts, seededRandom } from "../../src/bench/corpus.js";
import { generationParams, paramsKey } from "../../src/bench/generate.js";
import { formatTable, judgeTargets, met } from "../../src/bench/report.js";
import { median, medianOfRounds, summarize } from "../../src/bench/stats.js";
import { lexicalTerms } from "../../src/recall/query-former.js";

describe("bench statistics", () => {
  it("summarises latencies with nearest-rank percentiles and throughput", () => {
    const samples = Array.from({ length: 100 }, (_, i) => i + 1); // 1..100 ms
    const s = summarize([...samples].reverse(), 2_000, 3);
    expect(s).toMatchObject({ n: 100, p50: 50, p95: 95, p99: 99, max: 100, errors: 3 });
    expect(s.mean).toBeCloseTo(50.5);
    expect(s.perSecond).toBe(50);
  });

  it("summarises nothing as zeros", () => {
    expect(summarize([], 0)).toMatchObject({ n: 0, p50: 0, p95: 0, mean: 0, max: 0, perSecond: 0 });
  });

  it("takes medians, and folds rounds into per-statistic medians", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    const round = (p50: number, max: number) => ({ n: 10, p50, p95: p50 * 2, p99: p50 * 3, mean: p50, max, perSecond: 100 / p50, errors: 1 });
    const folded = medianOfRounds([round(5, 9), round(50, 90), round(6, 10)]);
    expect(folded).toMatchObject({ n: 30, p50: 6, p95: 12, p99: 18, max: 90, errors: 3 });
  });
});

describe("bench corpus", () => {
  it("is a pure function of the seed", () => {
    expect(queryTexts(7, 50)).toEqual(queryTexts(7, 50));
    expect(openingGoals(7, 10)).toEqual(openingGoals(7, 10));
    expect(queryTexts(8, 50)).not.toEqual(queryTexts(7, 50));
    const a = seededRandom(1);
    const b = seededRandom(1);
    expect(Array.from({ length: 5 }, a)).toEqual(Array.from({ length: 5 }, b));
  });

  it("draws floats in [0, 1) and skews object choice toward the front of the list", () => {
    const random = seededRandom(42);
    const draws = Array.from({ length: 10_000 }, random);
    expect(Math.min(...draws)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...draws)).toBeLessThan(1);
    const picks = Array.from({ length: 10_000 }, () => OBJECTS.indexOf(pickSkewed(random, OBJECTS)));
    const firstQuarter = picks.filter((i) => i < OBJECTS.length / 4).length;
    // u² puts half the draws in the first quarter of the list.
    expect(firstQuarter / picks.length).toBeGreaterThan(0.45);
    expect(firstQuarter / picks.length).toBeLessThan(0.55);
  });

  it("makes varied queries that keep content terms for the lexical arm", () => {
    const queries = queryTexts(7, 200);
    expect(new Set(queries.map((q) => q.text)).size).toBeGreaterThan(190);
    for (const q of queries) expect(lexicalTerms(q.text).length).toBeGreaterThan(0);
    const withSubjects = queries.filter((q) => q.subjects.length > 0).length;
    expect(withSubjects).toBeGreaterThan(40);
    expect(withSubjects).toBeLessThan(100);
  });

  it("keys generation parameters independently of property order", () => {
    const p = generationParams();
    const reordered = Object.fromEntries(Object.entries(p).reverse()) as typeof p;
    expect(paramsKey(reordered)).toBe(paramsKey(p));
    expect(paramsKey(generationParams({ seed: 8 }))).not.toBe(paramsKey(p));
  });
});

describe("bench report", () => {
  it("judges the issue's targets on the figures given", () => {
    const s = (p50: number, p95: number) => ({ ...summarize([p50], 1), p50, p95 });
    const targets = judgeTargets(s(3, 9), s(0.2, 0.8), s(2.5, 5));
    expect(targets.map(met)).toEqual([true, true, true, true]);
    const slow = judgeTargets(s(12, 30), s(0.5, 1.2), s(4, 9));
    expect(slow.map(met)).toEqual([false, false, false, false]);
    expect(slow[3]!.value).toBe(3);
  });

  it("prints one aligned row per scenario", () => {
    const table = formatTable([
      { scenario: "in-turn recall", concurrency: 1, summary: summarize([1.5, 2.5], 4), note: "" },
      { scenario: "SELECT 1", concurrency: 8, summary: summarize([0.1], 1), note: "floor" },
    ]);
    const lines = table.split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatch(/^in-turn recall\s+1\s+2\s+1\.50\s+2\.50\s+2\.50\s+2\.00\s+500\s+0$/);
    expect(lines[3]).toMatch(/^SELECT 1\s+8\s+1\s+0\.10 .* floor$/);
  });
});
