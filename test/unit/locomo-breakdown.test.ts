import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aggregateInjected, coverageCeiling, formatBreakdown, groupsOf, scoreInjected } from "../../src/eval/locomo-breakdown.js";
import type { QuestionDetail } from "../../src/eval/locomo-details.js";
import { evaluateLocomo, formatLocomoReport, type LocomoReport } from "../../src/eval/locomo-eval.js";

describe("LoCoMo breakdown: pure parts", () => {
  it("puts each category in its own group and 1–4 also together; 5 stays apart", () => {
    expect(groupsOf(1)).toEqual(["1", "1-4"]);
    expect(groupsOf(4)).toEqual(["4", "1-4"]);
    expect(groupsOf(5)).toEqual(["5"]);
    expect(groupsOf(9)).toEqual([]);
  });

  it("the coverage ceiling is the share of evidence ids some loaded belief cites", () => {
    expect(coverageCeiling(["D1:1", "D1:2", "D2:1", "D3:3"], new Set(["D1:1", "D2:1", "D9:9"]))).toBe(0.5);
    expect(coverageCeiling([], new Set(["D1:1"]))).toBe(0);
  });

  it("scores the rendered block as a whole: recall, all, noise, items and tokens", () => {
    const s = scoreInjected([["D1:1"], ["D5:5"], ["D1:2", "D7:7"]], ["D1:1", "D1:2", "D2:2"], 90);
    expect(s).toEqual({ frac: 2 / 3, all: false, noise: 1 / 3, items: 3, tokens: 90 });
    const empty = scoreInjected([], ["D1:1"], 0);
    expect(empty).toEqual({ frac: 0, all: false, noise: null, items: 0, tokens: 0 });
    // Noise is averaged over the blocks that rendered something; the empty share says how many did not.
    expect(aggregateInjected([s, empty])).toEqual({ questions: 2, frac: 1 / 3, all: 0, noise: 1 / 3, items: 1.5, tokens: 45, empty: 0.5 });
  });
});

/**
 * A small synthetic LoCoMo-format conversation: categories 1, 2, 4 and 5,
 * one question whose evidence no observation cites (the ceiling below 1),
 * and more relevant observations than a small injected block holds.
 */
function syntheticSample() {
  const turns = [
    "I adopted a cat called Miso.",
    "Miso likes the window seat.",
    "I started pottery classes in May.",
    "My sister Lena lives in Porto.",
    "We went hiking in the Alps last summer.",
    "I am reading a book about bees.",
  ].map((text, i) => ({ speaker: i % 2 === 0 ? "Ana" : "Ben", dia_id: `D1:${i + 1}`, text }));
  return {
    sample_id: "synthetic-1",
    conversation: { speaker_a: "Ana", speaker_b: "Ben", session_1_date_time: "1:56 pm on 8 May, 2023", session_1: turns },
    observation: {
      session_1_observation: {
        Ana: [
          ["Ana adopted a cat called Miso.", "D1:1"],
          ["Ana started pottery classes in May.", "D1:3"],
          ["Ana went hiking in the Alps with Ben.", "D1:5"],
        ],
        Ben: [
          ["Ben says Miso likes the window seat.", "D1:2"],
          ["Ben's sister Lena lives in Porto.", "D1:4"],
        ],
      },
    },
    qa: [
      { question: "What is the name of Ana's cat?", answer: "Miso", evidence: ["D1:1"], category: 1 },
      { question: "When did Ana start pottery classes?", answer: "May", evidence: ["D1:3"], category: 2 },
      // D1:6 (the bees book) is in no observation: this question's ceiling is 1/2.
      { question: "What does Ana's cat like, and what is Ben reading?", answer: "", evidence: ["D1:2", "D1:6"], category: 4 },
      { question: "Where does Ana's sister live?", answer: "", evidence: ["D1:4"], category: 5 },
    ],
  };
}

describe("LoCoMo evaluation report on synthetic data", () => {
  let dir: string;
  let report: LocomoReport;
  let details: QuestionDetail[];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-locomo-"));
    const file = join(dir, "synthetic.json");
    await writeFile(file, JSON.stringify([syntheticSample()]));
    const out = join(dir, "details.jsonl");
    report = await evaluateLocomo(file, { injectedItems: 2, injectedBudget: 600, details: out });
    details = (await readFile(out, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as QuestionDetail);
  }, 60_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reports every category present on its own, 1–4 together, and 5 apart", () => {
    expect(Object.keys(report.categories).sort()).toEqual(["1", "1-4", "2", "4", "5"]);
    expect(report.categories["1-4"]!.questions).toBe(3);
    expect(report.categories["5"]!.questions).toBe(1);
    // Today's table is kept: the same groups as before.
    expect(Object.keys(report.results).sort()).toEqual(["1-4", "5"]);
  });

  it("reports the coverage ceiling and frac as a share of it", () => {
    expect(report.categories["4"]!.ceiling).toBe(0.5);
    expect(report.categories["1"]!.ceiling).toBe(1);
    expect(report.categories["1-4"]!.ceiling).toBeCloseTo((1 + 1 + 0.5) / 3, 10);
    const c = report.categories["1-4"]!;
    expect(c.fracOfCeiling[10]).toBeCloseTo(c.recall[10]!.frac / c.ceiling, 10);
    expect(report.categories["4"]!.recall[20]!.frac).toBeLessThanOrEqual(0.5);
  });

  it("measures the injected block at the given caps: never more items than the cap", () => {
    expect(report.injectedCaps).toEqual({ items: 2, budget: 600 });
    for (const g of Object.values(report.categories)) {
      expect(g!.injected.items).toBeLessThanOrEqual(2);
      expect(g!.injected.frac).toBeLessThanOrEqual(1);
    }
    expect(report.categories["1"]!.injected.frac).toBe(1);
    const text = formatLocomoReport(report);
    expect(text).toContain("injected (the rendered block at 2 items / 600 tokens, floor on)");
    expect(text).toMatch(/\n1-4 +3 /);
  });

  it("writes one detail line per question: evidence, what the store cites, ranked ids with arms and scores, the injected ids", () => {
    expect(details.map((d) => d.question)).toEqual(syntheticSample().qa.map((q) => q.question));
    const both = details[2]!;
    expect(both).toMatchObject({ conversation: "synthetic-1", category: 4, evidence: ["D1:2", "D1:6"], citedEvidence: ["D1:2"] });
    for (const d of details) {
      expect(d.injected.length).toBeLessThanOrEqual(2);
      for (const r of d.ranked) {
        expect(r.arms.length).toBeGreaterThan(0);
        expect(typeof r.score).toBe("number");
        expect(r.relevant).toBe(r.dia.some((x) => d.evidence.includes(x)));
      }
    }
    expect(details[0]!.ranked.find((r) => r.relevant)?.statement).toBe("Ana adopted a cat called Miso.");
  });

  it("formats a per-category table for any subset of groups", () => {
    const lines = formatBreakdown({ "5": report.categories["5"]! }, [5, 10, 20], { items: 12, budget: 600 });
    expect(lines.filter((l) => l.startsWith("5 "))).toHaveLength(2);
  });
});
