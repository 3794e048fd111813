import { describe, expect, it } from "vitest";
import type { Principal, RecallQuery } from "../../src/domain/model.js";
import { HeadTracker } from "../../src/recall/moments/head-tracker.js";
import { SnapshotCache } from "../../src/recall/moments/snapshot-cache.js";
import { snapshotCacheKey, snapshotKeyPrefix } from "../../src/recall/moments/snapshot.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import type { MemoryStore } from "../../src/store/memory-store.js";
import { recallQuery } from "../support/fixtures.js";

/** What an erasure does in process: the principal's cached snapshots go, and listeners hear of it once. */
describe("erasure hooks", () => {
  const ctx = { sessionType: "interactive" as const, contextWindowTokens: 200_000, sensitivityCeiling: 2 as const };
  const key = (p: Principal, watermark: number, q: RecallQuery = recallQuery()) => snapshotCacheKey(p, q, ctx, watermark, RETRIEVAL_POLICY.version);

  it("drops every cached snapshot of the erased principal and no one else's, even a principal whose id extends it", () => {
    const cache = new SnapshotCache<string>(1_000_000, (v) => v.length);
    const a = { tenantId: "t", principalId: "a" };
    const ab = { tenantId: "t", principalId: "ab" };
    const otherTenant = { tenantId: "u", principalId: "a" };
    cache.set(key(a, 1), "x");
    cache.set(key(a, 2, recallQuery({ text: "other" })), "y");
    cache.set(key(ab, 1), "z");
    cache.set(key(otherTenant, 1), "w");
    expect(cache.deleteByPrefix(snapshotKeyPrefix(a))).toBe(2);
    expect(cache.stats().entries).toBe(2);
    expect(cache.get(key(ab, 1))).toBe("z");
    expect(cache.get(key(otherTenant, 1))).toBe("w");
    expect(cache.stats().bytes).toBe(key(ab, 1).length + 1 + key(otherTenant, 1).length + 1);
  });

  it("announces an erasure once per position, whether it came from this sidecar or its NOTIFY", () => {
    const tracker = new HeadTracker({} as MemoryStore);
    const heard: [Principal, number][] = [];
    tracker.onErased((p, position) => heard.push([p, position]));
    const p = { tenantId: "t", principalId: "a" };
    tracker.erased(p, 5);
    tracker.erased(p, 5);
    tracker.erased(p, 7);
    expect(heard).toEqual([
      [p, 5],
      [p, 7],
    ]);
  });
});
