import { describe, expect, it } from "vitest";
import { cachedSnapshotBytes } from "../../src/recall/moments/snapshot.js";

/** The snapshot cache's byte bound is only as good as this estimate of an entry's heap. */
describe("cachedSnapshotBytes", () => {
  const belief = (i: number) => ({ subject: "veetbot", statement: `veetbot deploys to the staging cluster after CI passes, number ${i}.` });
  const entry = (items: number, ranked: number | null) => ({
    result: { rendered: "x".repeat(4000), items: Array.from({ length: items }, (_, i) => belief(i)) },
    trace: { ranked: ranked === null ? null : Array.from({ length: ranked }, (_, i) => belief(i)) },
  });

  it("counts the trace's ranked list, which holds most of an entry", () => {
    const small = cachedSnapshotBytes(entry(40, 0));
    const large = cachedSnapshotBytes(entry(40, 320));
    // Each ranked belief is an object of its own: its text and a few hundred bytes of fields.
    expect(large - small).toBeGreaterThanOrEqual(320 * 400);
    // A snapshot of 40 items over 320 candidates measured about 210 KB of heap.
    expect(large).toBeGreaterThan(180_000);
    expect(large).toBeLessThan(260_000);
  });

  it("counts a trace without a ranked list, and entries without a trace, by their result alone", () => {
    expect(cachedSnapshotBytes(entry(40, null))).toBe(cachedSnapshotBytes({ result: entry(40, null).result }));
    expect(cachedSnapshotBytes(entry(0, null))).toBe(4000 * 4);
  });
});
