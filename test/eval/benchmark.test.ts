import { describe, expect, it } from "vitest";
import { BENCHMARK_BASELINE, BENCHMARK_FIXTURE } from "../../src/cli/eval.js";
import { runBenchmark, type BenchmarkResult, type ProbeRow } from "../../src/eval/benchmark.js";
import { baselineDifferences, canonicalJson, diffBaselines, readBaseline, recordDecision, tripleRegressions } from "../../src/eval/benchmark-baseline.js";
import { parseBenchmarkFixture, readBenchmarkFixture } from "../../src/eval/benchmark-fixture.js";
import { benchmarkMetrics, type BenchmarkMetrics } from "../../src/eval/benchmark-metrics.js";
import { STORE_KINDS } from "../support/stores.js";

/**
 * The deterministic benchmark (`npm run eval`): the committed baseline must
 * be what the code measures today, and the metrics, the diff and the
 * regression check must mean what docs/evaluation.md says they mean.
 */

// `npm run eval` records on PGlite; PostgreSQL runs the same SQL and must measure the same bytes.
describe.each(STORE_KINDS)("the deterministic benchmark ($kind)", ({ open }) => {
  it("measures exactly the committed baseline (re-record with `npm run eval -- --record` in the same commit)", async () => {
    const fixture = await readBenchmarkFixture(BENCHMARK_FIXTURE);
    const committed = await readBaseline(BENCHMARK_BASELINE);
    expect(committed, `no ${BENCHMARK_BASELINE}: run npm run eval -- --record`).not.toBeNull();
    const t = await open();
    try {
      const measured = await runBenchmark(fixture, t.store);
      // One line per difference, committed → measured: the readable form of a failure.
      expect(baselineDifferences(committed!, measured).join("\n")).toBe("");
    } finally {
      await t.dispose();
    }
  });
});

function row(overrides: Partial<ProbeRow> = {}): ProbeRow {
  return {
    id: "p",
    session: "s",
    moment: "in_turn",
    project: "veetbot",
    transfer: false,
    returned: [],
    hits: [],
    missed: [],
    forbiddenReturned: [],
    poisonedUnblocked: [],
    noise: [],
    carried: [],
    carriedUnattributed: [],
    corrections: [],
    tokens: 0,
    rendered: "",
    ...overrides,
  };
}

describe("benchmark metrics", () => {
  it("counts consequential recall@5 in rendered order, and a [BLOCKED] placeholder as no hit", () => {
    const late = row({ returned: ["n1", "n2", "n3", "n4", "n5", "a"], hits: ["a"], noise: ["n1", "n2", "n3", "n4", "n5"] });
    const blocked = row({ id: "q", returned: ["b!blocked"], missed: ["b"], noise: ["b"] });
    const m = benchmarkMetrics([late, blocked, row({ id: "no-target", returned: ["x"], noise: ["x"] })], [], []);
    expect(m.targetProbes).toBe(2);
    expect(m.recallAt5).toBe(0);
    expect(m.recallAtBudget).toBe(0.5);
    expect(m.allAtBudget).toBe(0.5);
    expect(m.noiseRatio).toBe(round4(7 / 8));
  });

  it("counts forbidden and unblocked poisoned beliefs as policy failures", () => {
    const m = benchmarkMetrics([row({ forbiddenReturned: ["x", "y"] }), row({ id: "q", poisonedUnblocked: ["p"] })], [], []);
    expect(m.policyFailures).toEqual({ forbidden: 2, poisonedUnblocked: 1, total: 3 });
  });

  it("transfer lift needs every expected belief and at least one of them carried; precision needs relevant and attributed", () => {
    const lifted = row({ transfer: true, returned: ["t"], hits: ["t"], carried: ["t"] });
    const localOnly = row({ id: "q", transfer: true, returned: ["l"], hits: ["l"] });
    const partial = row({ id: "r", transfer: true, returned: ["t2"], hits: ["t2"], missed: ["m"], carried: ["t2"] });
    const noisy = row({ id: "s", returned: ["c", "u"], carried: ["c", "u"], noise: ["c"], carriedUnattributed: ["u"] });
    const m = benchmarkMetrics([lifted, localOnly, partial, noisy], [], []);
    expect(m.transfer).toEqual({ probes: 3, carried: 4, precision: 0.5, lift: round4(1 / 3) });
  });

  it("snapshot utilization is the share of snapshot beliefs a probe needed; cache stability the share of prefix bytes a re-open keeps", () => {
    const m = benchmarkMetrics(
      [],
      [
        { session: "a", snapshot: ["x", "y", "z"], used: ["x"], misses: ["w"] },
        { session: "b", snapshot: ["x"], used: [], misses: [] },
      ],
      [
        { session: "a", probe: "p1", prefixBytes: 100, stableBytes: 100, identical: true },
        { session: "a", probe: "p2", prefixBytes: 100, stableBytes: 20, identical: false },
      ],
    );
    expect(m.snapshot).toEqual({ sessions: 2, meanSize: 2, utilization: 0.25, misses: 1 });
    expect(m.cache).toEqual({ turns: 2, reopenPrefixStableShare: 0.6, reopenIdenticalShare: 0.5 });
  });
});

describe("the baseline file", () => {
  it("is canonical: keys sorted at every depth, lists of values on one line", () => {
    expect(canonicalJson({ b: [1, "x"], a: { d: [], c: [{ z: 1, y: 2 }] } })).toBe(
      '{\n  "a": {\n    "c": [\n      {\n        "y": 2,\n        "z": 1\n      }\n    ],\n    "d": []\n  },\n  "b": [1, "x"]\n}\n',
    );
    expect(JSON.parse(canonicalJson({ s: ["a, b", 'q"'] }))).toEqual({ s: ["a, b", 'q"'] });
  });

  it("diffs by path, matching probe rows by id", () => {
    const committed = { metrics: { recallAt5: 0.9 }, probes: [{ id: "a", returned: ["x", "y"] }, { id: "b", returned: [] }] };
    const measured = { metrics: { recallAt5: 0.8 }, probes: [{ id: "a", returned: ["x", "z"] }, { id: "c", returned: [] }] };
    expect(diffBaselines(committed, measured)).toEqual([
      "metrics.recallAt5: 0.9 → 0.8",
      'probes[a].returned: ["x","y"] → ["x","z"]',
      "probes[b]: removed",
      'probes[c]: added {"id":"c","returned":[]}',
    ]);
    expect(diffBaselines(committed, JSON.parse(JSON.stringify(committed)))).toEqual([]);
  });

  it("names each triple regression, and none for an equal or better result", () => {
    const base = metrics({ recallAt5: 0.8, recallAtBudget: 0.9, noiseRatio: 0.2, failures: 0, cache: 0.9 });
    expect(tripleRegressions(base, base)).toEqual([]);
    expect(tripleRegressions(base, metrics({ recallAt5: 0.9, recallAtBudget: 1, noiseRatio: 0.1, failures: 0, cache: 1 }))).toEqual([]);
    const worse = tripleRegressions(base, metrics({ recallAt5: 0.7, recallAtBudget: 0.9, noiseRatio: 0.3, failures: 1, cache: 0.5 }));
    expect(worse).toEqual([
      "target-case recall@5 fell: 0.8 → 0.7",
      "policy failures rose: 0 → 1",
      "cache stability (re-open prefix-stable share) fell: 0.9 → 0.5",
      "noise ratio rose: 0.2 → 0.3",
    ]);
  });
});

describe("re-recording", () => {
  const result = (m: Partial<BenchmarkMetrics>, fixtureSha256 = "f"): BenchmarkResult => ({
    policy: "retrieval@2",
    fixtureSha256,
    metrics: { ...benchmarkMetrics([], [], []), ...m },
    probes: [],
    sessions: [],
    reopens: [],
  });
  const committed = { ...result({ noiseRatio: 0.2 }), acceptedRegressions: [] };

  it("refuses a triple regression over the same fixture unless a reason is given, and keeps the reason", () => {
    expect(recordDecision(committed, result({ noiseRatio: 0.3 }), null)).toEqual({ ok: false, regressions: ["noise ratio rose: 0.2 → 0.3"] });
    const accepted = recordDecision(committed, result({ noiseRatio: 0.3 }), "fewer misses");
    expect(accepted.ok && accepted.baseline.acceptedRegressions).toEqual(["noise ratio rose: 0.2 → 0.3: fewer misses"]);
    const better = recordDecision(committed, result({ noiseRatio: 0.1 }), null);
    expect(better.ok && better.baseline.acceptedRegressions).toEqual([]);
  });

  it("does not compare across a changed fixture: other cases, other numbers", () => {
    expect(recordDecision(committed, result({ noiseRatio: 0.3 }, "g"), null).ok).toBe(true);
    expect(recordDecision(null, result({ noiseRatio: 0.3 }), null).ok).toBe(true);
  });
});

describe("the fixture", () => {
  const minimal = (probe: Record<string, unknown>) =>
    JSON.stringify({
      clock: "2026-06-01T00:00:00Z",
      principals: [{ tenant: "t", principal: "p", beliefs: [{ key: "b1", subject: "A", statement: "A is here.", type: "preference", project: "x" }] }],
      sessions: [{ id: "s", tenant: "t", principal: "p", project: "x", steps: [probe] }],
    });

  it("loads, with ids derived from the keys", () => {
    const f = parseBenchmarkFixture(minimal({ id: "q", moment: "in_turn", text: "where", expected: ["b1"] }));
    expect([...f.keyOf.values()]).toEqual(["b1"]);
    expect(parseBenchmarkFixture(minimal({ id: "q", moment: "in_turn" })).principals[0]!.beliefs[0]!.beliefId).toBe(
      f.principals[0]!.beliefs[0]!.beliefId,
    );
  });

  it("rejects a bad fixture naming the field", () => {
    expect(() => parseBenchmarkFixture(minimal({ id: "q", moment: "now" }))).toThrow(/^sessions\[0\]\.steps\[0\]\.moment: /);
    expect(() => parseBenchmarkFixture(minimal({ id: "q", moment: "in_turn", forbidden: ["nope"] }))).toThrow(
      'sessions[0].steps[0].forbidden[0]: no belief "nope"',
    );
    const dangling = minimal({ id: "q", moment: "in_turn" }).replace('"project":"x"}', '"project":"x","supersedes":["gone"]}');
    expect(() => parseBenchmarkFixture(dangling)).toThrow('principals[0].beliefs[0].supersedes[0]: no belief "gone"');
  });
});

function round4(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}

function metrics(o: { recallAt5: number; recallAtBudget: number; noiseRatio: number; failures: number; cache: number }): BenchmarkMetrics {
  const m = benchmarkMetrics([], [], []);
  return {
    ...m,
    recallAt5: o.recallAt5,
    recallAtBudget: o.recallAtBudget,
    noiseRatio: o.noiseRatio,
    policyFailures: { forbidden: o.failures, poisonedUnblocked: 0, total: o.failures },
    cache: { ...m.cache, reopenPrefixStableShare: o.cache },
  };
}
