import { describe, expect, it } from "vitest";
import type { TraceStore } from "../../src/store/traces/trace-store.js";
import { startSweeper, sweepOnce } from "../../src/trace/sweeper.js";
import { capturingLogger } from "../support/pipeline.js";

/** A trace store with `expirable` and `unsettled` rows, recording what the sweeps asked for. */
function fakeTraces(expirable: number, unsettled: number) {
  const calls: string[] = [];
  let cutoffSeen: Date | undefined;
  const traces = {
    async tenantsWithExpiredOperatorFields() {
      return expirable > 0 ? ["t"] : [];
    },
    async tenantsWithUnsettledFeedback(cutoff: Date) {
      cutoffSeen = cutoff;
      return unsettled > 0 ? ["t"] : [];
    },
    async expireOperatorFields(_tenant: string, _now: Date, limit: number) {
      const n = Math.min(limit, expirable);
      expirable -= n;
      calls.push(`expire ${n}`);
      return n;
    },
    async settleUncitedReturns(_tenant: string, cutoff: Date, _now: Date, limit: number) {
      cutoffSeen = cutoff;
      const n = Math.min(limit, unsettled);
      unsettled -= n;
      calls.push(`settle ${n}`);
      return { traces: n, beliefs: 2 * n };
    },
  } as unknown as TraceStore;
  return { traces, calls, cutoff: () => cutoffSeen, left: () => ({ expirable, unsettled }) };
}

describe("sweepOnce", () => {
  const NOW = new Date("2026-07-24T12:00:00Z");

  it("runs batches until one comes back short", async () => {
    const f = fakeTraces(5, 2);
    expect(await sweepOnce(f.traces, NOW, { batch: 2, maxBatches: 10, uncitedWindowHours: 24 })).toEqual({ expired: 5, settled: 2, charged: 4 });
    expect(f.calls).toEqual(["expire 2", "expire 2", "expire 1", "settle 2", "settle 0"]);
    expect(f.cutoff()).toEqual(new Date("2026-07-23T12:00:00Z"));
  });

  it("stops at maxBatches however far behind it is; the next run continues", async () => {
    const f = fakeTraces(100, 100);
    expect(await sweepOnce(f.traces, NOW, { batch: 10, maxBatches: 3, uncitedWindowHours: 1 })).toEqual({ expired: 30, settled: 30, charged: 60 });
    expect(f.left()).toEqual({ expirable: 70, unsettled: 70 });
    await sweepOnce(f.traces, NOW, { batch: 10, maxBatches: 3, uncitedWindowHours: 1 });
    expect(f.left()).toEqual({ expirable: 40, unsettled: 40 });
  });
});

describe("startSweeper", () => {
  it("sweeps on its interval and logs what it did; stop waits for a running sweep", async () => {
    const f = fakeTraces(3, 0);
    const { logger, lines } = capturingLogger();
    const sweeper = startSweeper(f.traces, () => new Date(), { intervalMs: 5, batch: 10, maxBatches: 1, uncitedWindowHours: 1 }, logger);
    while (!lines.some((l) => l.msg === "trace sweep")) await new Promise((r) => setTimeout(r, 5));
    await sweeper.stop();
    expect(lines.find((l) => l.msg === "trace sweep")).toMatchObject({ sweep: { expired: 3, settled: 0, charged: 0 } });
    const after = f.calls.length;
    await new Promise((r) => setTimeout(r, 30));
    expect(f.calls.length).toBe(after);
  });

  it("sweeps only on the ticks whose lease claim it wins", async () => {
    const f = fakeTraces(3, 0);
    const { logger, lines } = capturingLogger();
    let claims = 0;
    const sweeper = startSweeper(f.traces, () => new Date(), { intervalMs: 5, batch: 10, maxBatches: 1, uncitedWindowHours: 1 }, logger, async () => {
      f.calls.push("claim");
      return ++claims >= 3;
    });
    while (!lines.some((l) => l.msg === "trace sweep")) await new Promise((r) => setTimeout(r, 5));
    await sweeper.stop();
    expect(f.calls.slice(0, 4)).toEqual(["claim", "claim", "claim", "expire 3"]);
  });

  it("a failing sweep is logged and retried on the next interval", async () => {
    let failures = 1;
    const traces = {
      async tenantsWithExpiredOperatorFields() {
        if (failures-- > 0) throw new Error("store down");
        return [];
      },
      async tenantsWithUnsettledFeedback() {
        return [];
      },
      async expireOperatorFields() {
        return 0;
      },
      async settleUncitedReturns() {
        return { traces: 0, beliefs: 0 };
      },
    } as unknown as TraceStore;
    const { logger, lines } = capturingLogger();
    const sweeper = startSweeper(traces, () => new Date(), { intervalMs: 5, batch: 10, maxBatches: 1, uncitedWindowHours: 1 }, logger);
    while (failures >= 0) await new Promise((r) => setTimeout(r, 5));
    await sweeper.stop();
    expect(lines.find((l) => l.msg === "trace sweep failed; retrying next interval")).toMatchObject({ level: 40 });
  });
});
