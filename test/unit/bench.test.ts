import { describe, expect, it } from "vitest";
import { openingGoals, OBJECTS, pickSkewed, queryTexts, seededRandom } from "../../src/bench/corpus.js";
import { embeddedGenerationParams, generationParams, measuredLayout, measuredOwner, paramsKey } from "../../src/bench/generate.js";
import {
  FLOOR_SCENARIO,
  formatAlternatives,
  formatGrowth,
  formatTable,
  formatTargets,
  judgeCostTargets,
  judgeTargets,
  met,
  ratioToFloor,
  throughputScaling,
} from "../../src/bench/report.js";
import { formatSideBySide, pairOrder, sideResult, SWAP_EVERY } from "../../src/bench/side-by-side.js";
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

describe("bench data layout", () => {
  it("gives every measured principal exactly its count, interleaved rather than in runs", () => {
    const measured = [
      { principal: "a", beliefs: 10 },
      { principal: "b", beliefs: 1 },
      { principal: "c", beliefs: 100 },
    ];
    const owners = Array.from({ length: 111 }, (_, j) => measuredOwner(measured, j));
    expect(owners.filter((o) => o === "a")).toHaveLength(10);
    expect(owners.filter((o) => o === "b")).toHaveLength(1);
    expect(owners.filter((o) => o === "c")).toHaveLength(100);
    // Scattered: a's rows are not one block of the insert order.
    const positions = owners.flatMap((o, j) => (o === "a" ? [j] : []));
    expect(positions.at(-1)! - positions[0]!).toBeGreaterThan(50);
    const { total, multiplier } = measuredLayout(measured);
    expect(total).toBe(111);
    expect(multiplier % 3).not.toBe(0);
    expect(multiplier % 37).not.toBe(0);
  });

  it("measures the issue's principal sizes on the 1M store, and a 10k and a 50k one embedded", () => {
    const sizes = generationParams().measured.map((m) => m.beliefs);
    expect(sizes.slice(0, 3)).toEqual([10_000, 1_000, 100_000]);
    expect(sizes.filter((n) => n === 10_000)).toHaveLength(10);
    // The embedded 10k principal is named as the PostgreSQL store's main one: the two stores are compared at one size.
    expect(embeddedGenerationParams().measured).toEqual([
      { principal: "heavy", beliefs: 10_000 },
      { principal: "heavy-50k", beliefs: 50_000 },
    ]);
  });
});

describe("bench report", () => {
  const s = (p50: number, p95: number, perSecond = 1) => ({ ...summarize([p50], 1), p50, p95, perSecond });

  it("judges the issue's targets on the figures given, the cached snapshot against the floor", () => {
    const fast = judgeTargets({
      inTurn: s(2.5, 5),
      search: s(3, 6),
      cachedSnapshot: s(0.9, 2),
      coldSnapshot: s(9, 20),
      floor: s(0.7, 1),
      embeddedInTurn: s(3.9, 9),
    });
    expect(fast.map(met)).toEqual([true, true, true, true, true, true, true]);
    const slow = judgeTargets({ inTurn: s(31, 45), search: s(3.1, 6.1), cachedSnapshot: s(4.4, 8), coldSnapshot: s(72, 90), floor: s(0.8, 1) });
    expect(slow.map(met)).toEqual([false, false, false, false, false, false, false]);
    expect(slow[4]!.value).toBeCloseTo(5.5);
    // Not measured: never "met".
    expect(Number.isNaN(slow[6]!.value)).toBe(true);
    expect(formatTargets(slow)).toContain("not measured  embedded store");
    expect(formatTargets(fast).split("\n").every((l) => l.startsWith("  met"))).toBe(true);
  });

  it("divides each p50 by the floor of the same group and concurrency", () => {
    const results = [
      { scenario: FLOOR_SCENARIO, group: "pg", concurrency: 1, summary: s(0.5, 1), note: "" },
      { scenario: FLOOR_SCENARIO, group: "pg", concurrency: 8, summary: s(2, 3), note: "" },
      { scenario: FLOOR_SCENARIO, group: "lite", concurrency: 1, summary: s(0.25, 1), note: "" },
      { scenario: "in-turn recall", group: "pg", concurrency: 1, summary: s(3, 5), note: "" },
      { scenario: "in-turn recall", group: "pg", concurrency: 8, summary: s(6, 9), note: "" },
      { scenario: "in-turn recall", group: "lite", concurrency: 1, summary: s(3, 5), note: "" },
      { scenario: "search", group: "none", concurrency: 1, summary: s(3, 5), note: "" },
    ];
    expect(results.map((r) => ratioToFloor(r, results))).toEqual([1, 1, 1, 6, 3, 12, NaN]);
    expect(formatTable(results).split("\n")[7]).toMatch(/^in-turn recall\s+1\s+1\s+3\.00\s+5\.00\s+.*\s12\.0\s+0$/);
  });

  it("reports throughput at high concurrency over the base, per scenario measured at both", () => {
    const results = [
      { scenario: "in-turn recall", group: "pg", concurrency: 1, summary: s(3, 5, 300), note: "" },
      { scenario: "in-turn recall", group: "pg", concurrency: 8, summary: s(6, 9, 750), note: "" },
      { scenario: "in-turn recall, 1k", group: "pg", concurrency: 1, summary: s(1, 2, 900), note: "" },
      { scenario: "in-turn recall", group: "lite", concurrency: 8, summary: s(1, 2, 900), note: "" },
    ];
    expect(throughputScaling(results, "pg", 1, 8)).toEqual([{ scenario: "in-turn recall", ratio: 2.5 }]);
    expect(throughputScaling(results, "lite", 1, 8)).toEqual([]);
  });

  it("prints one aligned row per scenario", () => {
    const table = formatTable([
      { scenario: "in-turn recall", group: "pg", concurrency: 1, summary: summarize([1.5, 2.5], 4), note: "" },
      { scenario: "SELECT 1", group: "pg", concurrency: 8, summary: summarize([0.1], 1), note: "floor" },
    ]);
    const lines = table.split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[2]).toMatch(/^in-turn recall\s+1\s+2\s+1\.50\s+2\.50\s+2\.50\s+2\.00\s+500\s+–\s+0$/);
    expect(lines[3]).toMatch(/^SELECT 1\s+8\s+1\s+0\.10 .* floor$/);
  });
});

describe("bench cost report (issue 37)", () => {
  const s = (p50: number, perSecond = 1) => ({ ...summarize([p50], 1), p50, perSecond });
  const figures = {
    indexBytesPerBelief10k: 900,
    indexBytesPerBelief100k: 1_100,
    idlePostgresMiB: 70,
    idleEphemeralMiB: 140,
    idleDataDirMiB: 210,
    pgInTurn10k: s(3),
    embeddedInTurn10k: s(3.6),
    embeddedScaling: 1.6,
    firstCall100kMs: 120,
    pgInTurn100k: s(4.5),
    floor: s(1),
    cachedSnapshot: s(1.2),
  };

  it("judges sizes and ratios against their bounds, a throughput gain as a floor", () => {
    const byName = new Map(judgeCostTargets(figures).map((t) => [t.name, t]));
    const verdict = (name: string) => met(byName.get(name)!);
    expect(verdict("retained index heap per belief, 10k principal")).toBe(true);
    expect(verdict("retained index heap per belief, 100k principal")).toBe(false);
    expect(verdict("idle RSS, PGlite data directory")).toBe(false);
    expect(byName.get("embedded in-turn p50 / PostgreSQL in-turn p50, 10k principal")!.value).toBeCloseTo(1.2);
    expect(verdict("embedded in-turn throughput, concurrency 8 / 1")).toBe(true);
    expect(met({ ...byName.get("embedded in-turn throughput, concurrency 8 / 1")!, value: 1.4 })).toBe(false);
    expect(byName.get("in-turn p50, 100k principal / 10k principal")!.value).toBeCloseTo(1.5);
    expect(verdict("in-turn p50, 100k principal / 10k principal")).toBe(false);
    expect(formatTargets([byName.get("embedded in-turn throughput, concurrency 8 / 1")!])).toContain("(target ≥ 1.5 x)");
  });

  it("says not measured where a figure is missing", () => {
    const targets = judgeCostTargets({ ...figures, embeddedInTurn10k: undefined, idleEphemeralMiB: Number.NaN });
    const lines = formatTargets(targets).split("\n");
    expect(lines.filter((l) => l.includes("not measured"))).toHaveLength(2);
  });

  it("prints the growth of in-turn p50 with size and each alternative as a ratio to our recall", () => {
    expect(formatGrowth([{ size: "1k", summary: s(2) }, { size: "10k", summary: s(3) }, { size: "100k", summary: s(6) }])).toEqual([
      "  in-turn p50: 1k 2.00 ms, 10k 3.00 ms, 100k 6.00 ms",
      "  100k over 1k: 3.00x",
      "  100k over 10k: 2.00x",
    ]);
    expect(formatAlternatives([{ name: "MiniSearch", summary: s(0.5), note: "in process" }], s(2))[0]).toContain("0.25x our in-turn recall p50");
  });
});

describe("bench:ab, two sidecars side by side", () => {
  it("alternates the sides, swapping which goes first every block of pairs", () => {
    expect(pairOrder(0)).toEqual(["a", "b"]);
    expect(pairOrder(SWAP_EVERY - 1)).toEqual(["a", "b"]);
    expect(pairOrder(SWAP_EVERY)).toEqual(["b", "a"]);
    expect(pairOrder(2 * SWAP_EVERY)).toEqual(["a", "b"]);
    // Over whole blocks each side goes first equally often.
    const firsts = Array.from({ length: 4 * SWAP_EVERY }, (_, i) => pairOrder(i)[0]);
    expect(firsts.filter((s) => s === "a").length).toBe(2 * SWAP_EVERY);
  });

  it("reports each side's percentiles, CPU per call, and B − A", () => {
    const a = sideResult("build A", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 100, 20, 0);
    // B: every latency 1 ms more, and its CPU spread over its failed call too.
    const b = sideResult("build B", [2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 100, 33, 1);
    expect(a.p90).toBe(9);
    expect(a.cpuPerCallMs).toBe(2);
    expect(b.cpuPerCallMs).toBe(3);
    const table = formatSideBySide(a, b).split("\n");
    expect(table[0]).toMatch(/p50\s+p90\s+p95\s+p99\s+mean\s+cpu\/call/);
    expect(table[1]!.split(/\s+/)).toEqual(["A", "5.00", "9.00", "10.0", "10.0", "5.50", "2.00"]);
    expect(table[3]!.split(/\s+/)).toEqual(["B", "−", "A", "1.00", "1.00", "1.00", "1.00", "1.00", "1.00"]);
    expect(table[5]).toBe("B: build B (10 calls, 1 errors)");
  });

  it("says n/a for CPU when no call was measured", () => {
    expect(sideResult("empty", [], 0, 5, 0).cpuPerCallMs).toBeNaN();
    expect(formatSideBySide(sideResult("x", [], 0, 0, 0), sideResult("y", [], 0, 0, 0))).toContain("n/a");
  });
});
