import { describe, expect, it } from "vitest";
import { correctionLine, renderCorrections } from "../../src/recall/moments/recall-delta.js";
import { SnapshotCache } from "../../src/recall/moments/snapshot-cache.js";
import { assembleSnapshot, snapshotCacheKey, snapshotSlots } from "../../src/recall/moments/snapshot.js";
import { RETRIEVAL_POLICY as P } from "../../src/recall/policy.js";
import { snapshotDefaults } from "../../src/recall/query-former.js";
import { recallQuery } from "../support/fixtures.js";

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

describe("snapshot sizing", () => {
  it("uses the session type's caps", () => {
    expect(snapshotDefaults(P, { sessionType: "interactive", contextWindowTokens: 0 })).toMatchObject({ maxItems: 40, budgetTokens: 1500 });
    expect(snapshotDefaults(P, { sessionType: "async", contextWindowTokens: 0 })).toMatchObject({ maxItems: 80, budgetTokens: 3000 });
    expect(snapshotDefaults(P, { sessionType: "child", contextWindowTokens: 0 })).toMatchObject({ maxItems: 15, budgetTokens: 500 });
  });

  it("never takes more than 2% of the declared window, and a larger window does not enlarge it", () => {
    expect(snapshotDefaults(P, { sessionType: "interactive", contextWindowTokens: 32_000 }).budgetTokens).toBe(640);
    expect(snapshotDefaults(P, { sessionType: "interactive", contextWindowTokens: 1_000_000 }).budgetTokens).toBe(1500);
    expect(snapshotDefaults(P, { sessionType: "async", contextWindowTokens: 100_000 }).budgetTokens).toBe(2000);
  });

  it("reserves about two thirds of the items for durable beliefs", () => {
    expect(snapshotSlots(40, 2 / 3)).toEqual({ durable: 27, priming: 13 });
    expect(snapshotSlots(15, 2 / 3)).toEqual({ durable: 10, priming: 5 });
    expect(snapshotSlots(80, 2 / 3)).toEqual({ durable: 53, priming: 27 });
  });
});

describe("assembleSnapshot", () => {
  const item = (n: number, beliefType: string, score: number) => ({
    beliefId: id(n),
    beliefType,
    score,
    line: `  [m:${String(n).padStart(8, "0")}] Statement number ${n}.  (user-stated, high)`,
    conflictsWith: [] as string[],
  });
  const limits = { maxItems: 9, budgetTokens: 10_000, floor: 0.3, frameTokens: 10, durableShare: 2 / 3, durableTypes: P.durableTypes };

  it("keeps a burst of high-scoring project beliefs from evicting the durable core", () => {
    const project = Array.from({ length: 20 }, (_, i) => item(100 + i, "project_fact", 0.9));
    const durable = Array.from({ length: 20 }, (_, i) => item(200 + i, "preference", 0.5));
    const out = assembleSnapshot([...project, ...durable], limits);
    expect(out.admitted.filter((c) => c.beliefType === "preference")).toHaveLength(6);
    expect(out.admitted.filter((c) => c.beliefType === "project_fact")).toHaveLength(3);
    // Render order is still score desc, id asc across both parts.
    expect(out.admitted.map((c) => c.score)).toEqual([0.9, 0.9, 0.9, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
  });

  it("does not backfill unused priming slots with durable beliefs", () => {
    const durable = Array.from({ length: 20 }, (_, i) => item(300 + i, "user_model_attr", 0.8));
    const out = assembleSnapshot(durable, limits);
    expect(out.admitted).toHaveLength(6);
    expect(out.droppedForBudget).toHaveLength(14);
    // Each is left out by the snapshot's share for its kind, and the trace says so.
    expect(out.notShown.map((n) => n.reason)).toEqual(Array(14).fill("snapshot_share"));
  });

  it("still applies the relevance floor", () => {
    const out = assembleSnapshot([item(1, "preference", 0.2), item(2, "project_fact", 0.1)], limits);
    expect(out.admitted).toEqual([]);
    expect(out.belowFloor).toBe(2);
  });
});

describe("snapshot cache", () => {
  it("counts hits and misses and returns what was stored", () => {
    const cache = new SnapshotCache<string>(1000, (v) => v.length);
    expect(cache.get("a")).toBeUndefined();
    cache.set("a", "bytes-a");
    expect(cache.get("a")).toBe("bytes-a");
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 1, entries: 1 });
  });

  it("evicts least recently used entries to stay within its byte bound", () => {
    const cache = new SnapshotCache<string>(30, (v) => v.length);
    cache.set("a", "x".repeat(9)); // 10 bytes with its key
    cache.set("b", "x".repeat(9));
    cache.set("c", "x".repeat(9));
    cache.get("a"); // a is now the most recent
    cache.set("d", "x".repeat(9));
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBeDefined();
    expect(cache.stats()).toMatchObject({ evictions: 1, entries: 3, bytes: 30 });
  });

  it("refuses an entry larger than the whole cache", () => {
    const cache = new SnapshotCache<string>(10, (v) => v.length);
    cache.set("big", "x".repeat(50));
    expect(cache.stats()).toMatchObject({ entries: 0, bytes: 0 });
  });

  it("keys on the watermark and on everything that changes the bytes", () => {
    const p = { tenantId: "t", principalId: "p" };
    const ctx = { sessionType: "interactive" as const, contextWindowTokens: 0, sensitivityCeiling: 2 as const };
    const base = snapshotCacheKey(p, recallQuery(), ctx, 5, "retrieval@1");
    expect(snapshotCacheKey(p, recallQuery(), ctx, 5, "retrieval@1")).toBe(base);
    for (const other of [
      snapshotCacheKey(p, recallQuery(), ctx, 6, "retrieval@1"),
      snapshotCacheKey({ ...p, tenantId: "t2" }, recallQuery(), ctx, 5, "retrieval@1"),
      snapshotCacheKey({ ...p, principalId: "p2" }, recallQuery(), ctx, 5, "retrieval@1"),
      snapshotCacheKey(p, recallQuery({ currentScope: "atlas" }), ctx, 5, "retrieval@1"),
      snapshotCacheKey(p, recallQuery(), { ...ctx, sessionType: "async" }, 5, "retrieval@1"),
      snapshotCacheKey(p, recallQuery(), { ...ctx, contextWindowTokens: 8000 }, 5, "retrieval@1"),
      snapshotCacheKey(p, recallQuery(), { ...ctx, sensitivityCeiling: 1 }, 5, "retrieval@1"),
      snapshotCacheKey(p, recallQuery(), ctx, 5, "retrieval@5"),
    ]) {
      expect(other).not.toBe(base);
    }
  });
});

describe("correction lines", () => {
  it("renders the exact line, with and without a successor", () => {
    const at = new Date("2026-07-24T00:00:00Z");
    expect(correctionLine({ beliefId: "8f21a0c3-0000-4000-8000-000000000001", supersededBy: "9d02b117-0000-4000-8000-000000000002", noLongerHoldsAsOf: at })).toBe(
      "correction: [m:8f21a0c3] no longer holds as of 2026-07-24T00:00:00Z; superseded by [m:9d02b117].",
    );
    expect(correctionLine({ beliefId: "8f21a0c3-0000-4000-8000-000000000001", supersededBy: null, noLongerHoldsAsOf: at })).toBe(
      "correction: [m:8f21a0c3] no longer holds as of 2026-07-24T00:00:00Z.",
    );
  });

  it("orders corrections by id, one per line", () => {
    const at = new Date("2026-07-24T00:00:00Z");
    const out = renderCorrections([
      { beliefId: id(2), supersededBy: null, noLongerHoldsAsOf: at },
      { beliefId: id(1), supersededBy: null, noLongerHoldsAsOf: at },
    ]);
    expect(out.split("\n")).toEqual([
      "correction: [m:00000000] no longer holds as of 2026-07-24T00:00:00Z.",
      "correction: [m:00000000] no longer holds as of 2026-07-24T00:00:00Z.",
      "",
    ]);
    expect(renderCorrections([])).toBe("");
  });
});
