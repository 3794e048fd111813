import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { STORE_KINDS } from "../support/stores.js";
import { T0, belief, episode, newPrincipal } from "../support/fixtures.js";
import { episodeQuery, useStore } from "./store-helpers.js";

describe.each(STORE_KINDS)("store writes ($kind)", ({ open }) => {
  const store = useStore(open);

  it("round-trips every belief field, with the read-path fields at their defaults", async () => {
    const p = newPrincipal();
    const b = belief({
      predicateKey: "writing.style",
      validTo: new Date("2026-12-31T00:00:00Z"),
      retractedAt: new Date("2027-01-01T00:00:00Z"),
      supersedes: [randomUUID()],
      conflictsWith: [randomUUID()],
      evidenceCount: 3,
      expiresHint: new Date("2026-09-01T00:00:00Z"),
      flaggedForReview: true,
      sourceEpisodeIds: [randomUUID(), randomUUID()],
    });
    await store().putBeliefs(p, [b]);
    expect(await store().beliefsById(p, [b.beliefId])).toEqual([
      { ...b, utility: 0, lastUsedAt: null, storePosition: 1 },
    ]);
  });

  it("moves the head once per write transaction, not once per row", async () => {
    const p = newPrincipal();
    expect(await store().head(p)).toEqual({ position: 0, updatedAt: null, erasedPosition: null });
    const batch = [belief(), belief(), belief()];
    expect(await store().putBeliefs(p, batch)).toEqual({ written: 3, position: 1 });
    const back = await store().beliefsById(p, batch.map((b) => b.beliefId));
    expect(back.map((b) => b.storePosition)).toEqual([1, 1, 1]);
    const head = await store().head(p);
    expect(head.position).toBe(1);
    expect(head.updatedAt).toBeInstanceOf(Date);
  });

  it("re-putting an identical belief writes nothing and leaves the head alone", async () => {
    const p = newPrincipal();
    const b = belief();
    await store().putBeliefs(p, [belief()]);
    expect(await store().putBeliefs(p, [b])).toEqual({ written: 1, position: 2 });
    const before = await store().head(p);
    expect(await store().putBeliefs(p, [{ ...b }])).toEqual({ written: 0, position: 2 });
    expect(await store().head(p)).toEqual(before);
    expect((await store().beliefsById(p, [b.beliefId]))[0]?.storePosition).toBe(2);
  });

  it("re-putting a belief with one changed field writes it and moves the head by one", async () => {
    const p = newPrincipal();
    const b = belief();
    await store().putBeliefs(p, [b]);
    expect(await store().putBeliefs(p, [{ ...b, confidence: 0.5 }])).toEqual({ written: 1, position: 2 });
    expect(await store().putBeliefs(p, [{ ...b, confidence: 0.5, validTo: new Date("2026-02-01T00:00:00Z") }])).toEqual({
      written: 1,
      position: 3,
    });
    const [back] = await store().beliefsById(p, [b.beliefId]);
    expect(back).toMatchObject({ confidence: 0.5, validTo: new Date("2026-02-01T00:00:00Z"), storePosition: 3 });
    expect((await store().head(p)).position).toBe(3);
  });

  it("returns store positions as JS numbers from every write and read", async () => {
    const p = newPrincipal();
    const b = belief();
    const positions: unknown[] = [
      (await store().putBeliefs(p, [b])).position,
      (await store().appendEpisodes(p, [episode({ sequence: 7 })])).position,
      (await store().setPersonaEntry(p, b.beliefId)).position,
      (await store().removePersonaEntry(p, b.beliefId)).position,
      (await store().head(p)).position,
      (await store().beliefsById(p, [b.beliefId]))[0]?.storePosition,
    ];
    expect(positions.map((x) => typeof x)).toEqual(Array(positions.length).fill("number"));
    expect(positions).toEqual([1, 2, 3, 4, 4, 1]);
    const [e] = await store().episodes(p, episodeQuery());
    expect(typeof e?.sequence).toBe("number");
    expect(e?.sequence).toBe(7);
  });

  it("writes nothing of a batch in which one belief violates a CHECK constraint", async () => {
    const p = newPrincipal();
    const first = belief();
    await store().putBeliefs(p, [first]);
    const headBefore = await store().head(p);
    const good1 = belief();
    const good2 = belief();
    const changedFirst = { ...first, statement: "changed in the failing batch" };
    await expect(store().putBeliefs(p, [good1, changedFirst, belief({ confidence: 2 }), good2])).rejects.toThrow();
    expect(await store().beliefsById(p, [good1.beliefId, good2.beliefId])).toEqual([]);
    expect((await store().beliefsById(p, [first.beliefId]))[0]?.statement).toBe(first.statement);
    expect(await store().head(p)).toEqual(headBefore);
    // The failed transaction left the connection usable.
    expect(await store().putBeliefs(p, [good1])).toEqual({ written: 1, position: headBefore.position + 1 });
  });

  it("a failing first batch of a new principal leaves it without a head", async () => {
    const p = newPrincipal();
    await expect(store().putBeliefs(p, [belief(), belief({ sensitivity: 9 as never })])).rejects.toThrow();
    expect(await store().head(p)).toEqual({ position: 0, updatedAt: null, erasedPosition: null });
  });

  it("concurrent writes of one principal get distinct, consecutive positions", async () => {
    const p = newPrincipal();
    const writes = Array.from({ length: 6 }, (_, i) =>
      i % 2 === 0 ? store().putBeliefs(p, [belief()]) : store().appendEpisodes(p, [episode()]),
    );
    const positions = (await Promise.all(writes)).map((r) => r.position);
    expect(positions.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await store().head(p)).position).toBe(6);
  });

  it("analyzeIfEmbedded runs on either store and leaves the data alone", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [belief()]);
    await store().analyzeIfEmbedded();
    expect(await store().head(p)).toMatchObject({ position: 1 });
  });

  it("appendEpisodes ignores an episode_id that already exists", async () => {
    const p = newPrincipal();
    const e1 = episode({ content: "original" });
    expect(await store().appendEpisodes(p, [e1])).toEqual({ appended: 1, position: 1 });
    const e2 = episode({ sequence: 1 });
    expect(await store().appendEpisodes(p, [{ ...e1, content: "rewritten" }, e2])).toEqual({ appended: 1, position: 2 });
    // A batch of only known episodes changes nothing, head included.
    expect(await store().appendEpisodes(p, [e1, e2])).toEqual({ appended: 0, position: 2 });
    expect((await store().head(p)).position).toBe(2);
    const back = await store().episodes(p, episodeQuery());
    expect(back).toEqual([e1, e2]);
  });

  it("persona entries move the head only when they change something", async () => {
    const p = newPrincipal();
    const b = belief();
    await store().putBeliefs(p, [b]);
    expect(await store().setPersonaEntry(p, b.beliefId)).toEqual({ position: 2 });
    expect(await store().setPersonaEntry(p, b.beliefId)).toEqual({ position: 2 });
    expect(await store().removePersonaEntry(p, b.beliefId)).toEqual({ removed: true, position: 3 });
    expect(await store().removePersonaEntry(p, b.beliefId)).toEqual({ removed: false, position: 3 });
  });

  // Regression: a no-op once created the head row with updated_at = now(), which moved the
  // rendered as_of of an unchanged store.
  it("a no-op write on a principal without a head leaves the head at { 0, null }", async () => {
    const p = newPrincipal();
    await store().removePersonaEntry(p, randomUUID());
    await store().putBeliefs(p, []);
    await store().appendEpisodes(p, []);
    expect(await store().head(p)).toEqual({ position: 0, updatedAt: null, erasedPosition: null });
  });

  it("setPersonaEntry on an unknown belief is NotFound and moves nothing", async () => {
    const p = newPrincipal();
    await store().putBeliefs(p, [belief()]);
    await expect(store().setPersonaEntry(p, randomUUID())).rejects.toMatchObject({ name: "NotFoundError" });
    expect((await store().head(p)).position).toBe(1);
  });

  it("keeps timestamps exact to the millisecond", async () => {
    const p = newPrincipal();
    const at = new Date(T0.getTime() + 123);
    const b = belief({ validFrom: at, recordedAt: at, lastEvidenceAt: at });
    await store().putBeliefs(p, [b]);
    const [back] = await store().beliefsById(p, [b.beliefId]);
    expect(back?.validFrom.getTime()).toBe(at.getTime());
    expect(back?.recordedAt.getTime()).toBe(at.getTime());
  });
});
