import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { formatGcOverlap, gcKindOf, gcOverlap, gcOverlapInRounds, type GcPause, type TimedCall } from "../../src/bench/gc-overlap.js";
import { runLoad } from "../../src/bench/load.js";

const RECORDER = fileURLToPath(new URL("../../dist/bench/gc-recorder.js", import.meta.url));

/** Calls of the given latencies, one starting every 40 ms from t = 1000 (one at a time, as at concurrency 1). */
function calls(latencies: number[]): TimedCall[] {
  return latencies.map((ms, i) => ({ startMs: 1_000 + 40 * i, ms }));
}

describe("gc overlap (npm run bench, bench:ab)", () => {
  it("sorts calls by the pauses they were in flight for", () => {
    // 20 calls: 17 of 2 ms, call 3 of 9 ms met a young pause, call 12 of 30 ms a full one, call 19 of 8 ms a young one.
    const latencies = Array.from({ length: 20 }, () => 2);
    latencies[3] = 9;
    latencies[12] = 30;
    latencies[19] = 8;
    const pauses: GcPause[] = [
      { startMs: 500, ms: 50, kind: "full" }, // before the measured calls: not counted
      { startMs: 1_122, ms: 6, kind: "young" }, // inside call 3 (1120–1129)
      { startMs: 1_485, ms: 20, kind: "full" }, // inside call 12 (1480–1510)
      { startMs: 1_762, ms: 5, kind: "young" }, // inside call 19 (1760–1768)
      { startMs: 1_210, ms: 2, kind: "young" }, // between calls 5 and 6: in the span, meets no call
      { startMs: 2_000, ms: 9, kind: "young" }, // after the last call: not counted
    ];
    const o = gcOverlap(calls(latencies), pauses);
    expect(o.calls).toBe(20);
    expect(o.youngPauses).toEqual({ n: 3, p50: 5, max: 6 });
    expect(o.fullPauses).toBe(1);
    expect(o.young).toEqual({ calls: 2, p50: 8 });
    expect(o.full).toEqual({ calls: 1, p50: 30 });
    expect(o.none).toEqual({ calls: 17, p50: 2, p95: 2 });
    // p95 of 20 calls (nearest rank) is the 19th: 9 ms; calls of 9 and 30 ms are at or above it.
    expect(o.slowest).toEqual({ calls: 2, young: 1, full: 1 });
  });

  it("counts a call in flight for both kinds as a full-pause call only", () => {
    const o = gcOverlap(calls([20]), [
      { startMs: 1_002, ms: 3, kind: "young" },
      { startMs: 1_010, ms: 5, kind: "full" },
    ]);
    expect(o.full.calls).toBe(1);
    expect(o.young.calls).toBe(0);
    expect(o.slowest).toEqual({ calls: 1, young: 1, full: 1 });
  });

  it("reports nothing for no calls, and formats a side", () => {
    const empty = gcOverlap([], [{ startMs: 1, ms: 1, kind: "young" }]);
    expect(empty).toMatchObject({ calls: 0, youngPauses: { n: 0 }, fullPauses: 0, none: { calls: 0 } });
    const text = formatGcOverlap("A", gcOverlap(calls([2, 9]), [{ startMs: 1_042, ms: 4, kind: "young" }]));
    expect(text).toContain("A: 1 young-generation pauses (median 4.00, max 4.00 ms)");
    expect(text).toContain("calls that met a young one 1 (50.0 %, p50 9.00 ms)");
    expect(text).toContain("calls that met none: p50 2.00");
  });

  it("counts, for rounds interleaved with other work, only the pauses inside a round", () => {
    const first = calls([2, 9]); // 1000–1002, 1040–1049
    const second = [2, 2].map((ms, i) => ({ startMs: 5_000 + 40 * i, ms })); // 5000–5002, 5040–5042
    const o = gcOverlapInRounds([first, [], second], [
      { startMs: 1_042, ms: 4, kind: "young" }, // in round 1, meets its second call
      { startMs: 3_000, ms: 7, kind: "young" }, // between the rounds (another scenario's): not counted
      { startMs: 5_010, ms: 3, kind: "full" }, // in round 2, between its calls
    ]);
    expect(o.calls).toBe(4);
    expect(o.youngPauses.n).toBe(1);
    expect(o.fullPauses).toBe(1);
    expect(o.young.calls).toBe(1);
    expect(o.full.calls).toBe(0);
    expect(o.none).toMatchObject({ calls: 3, p50: 2 });
  });

  it("times each measured call of a load with its wall-clock start", async () => {
    const before = performance.timeOrigin + performance.now();
    const run = await runLoad(() => new Promise((r) => setTimeout(r, 2)), { iterations: 5, concurrency: 1, warmup: 2 });
    expect(run.summary.n).toBe(5);
    expect(run.calls).toHaveLength(5); // the warm-up calls are not among them
    for (const [i, c] of run.calls.entries()) {
      expect(c.ms).toBeGreaterThan(0.5);
      expect(c.startMs).toBeGreaterThanOrEqual(before);
      if (i > 0) expect(c.startMs).toBeGreaterThanOrEqual(run.calls[i - 1]!.startMs + run.calls[i - 1]!.ms);
    }
  });

  it("maps Node's gc entry kinds", () => {
    expect(gcKindOf(1)).toBe("young");
    for (const kind of [4, 8, 16]) expect(gcKindOf(kind)).toBe("full");
  });

  it("records a process's pauses to the file it is given, on exit", () => {
    const dir = mkdtempSync(join(tmpdir(), "recall-gc-recorder-"));
    try {
      const file = join(dir, "gc.json");
      // Enough short-lived garbage for young collections, and one forced full one.
      const script = "let keep; for (let i = 0; i < 3e5; i++) keep = { i, s: 'x'.repeat(64) }; globalThis.gc(); setTimeout(() => {}, 50);";
      execFileSync(process.execPath, ["--expose-gc", "--import", RECORDER, "-e", script], { env: { ...process.env, RECALL_BENCH_GC_FILE: file } });
      const pauses = JSON.parse(readFileSync(file, "utf8")) as GcPause[];
      expect(pauses.some((p) => p.kind === "young")).toBe(true);
      expect(pauses.some((p) => p.kind === "full")).toBe(true);
      for (const p of pauses) {
        expect(p.ms).toBeGreaterThanOrEqual(0);
        expect(Math.abs(p.startMs - Date.now())).toBeLessThan(60_000); // wall-clock epoch milliseconds
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
