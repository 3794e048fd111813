import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Belief, Principal } from "../../src/domain/model.js";
import { PrincipalIndexes } from "../../src/principal-index/index-router.js";
import { HeadTracker } from "../../src/recall/moments/head-tracker.js";
import { SnapshotCache } from "../../src/recall/moments/snapshot-cache.js";
import { cachedSnapshotBytes } from "../../src/recall/moments/snapshot.js";
import { recall, type CachedSnapshot, type PipelineDeps, type RecallOutcome, type RecallRun } from "../../src/recall/pipeline.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { counting, until } from "../support/counting-client.js";
import { SENSITIVITY } from "../../src/domain/model.js";
import { STORE_KINDS } from "../support/stores.js";
import { T0, belief, newPrincipal } from "../support/fixtures.js";
import { capturingLogger, pipelineDeps, requested, traceWriter } from "../support/pipeline.js";
import { filterFor, recallQuery, recallTrace, useStore } from "./store-helpers.js";

async function run(deps: PipelineDeps, r: Partial<RecallRun> & { principal: Principal }): Promise<RecallOutcome> {
  const gen = recall(deps, {
    query: requested(),
    kind: "snapshot",
    deadlineAt: Date.now() + 10_000,
    signal: new AbortController().signal,
    context: {
      moment: r.kind === "in_turn" ? "in_turn" : "snapshot",
      sessionType: "interactive",
      contextWindowTokens: 0,
      snapshotWatermark: null,
      sessionId: "s1",
      runId: "",
      turnId: "",
      surface: { surfaceId: "test", sensitivityCeiling: SENSITIVITY.personal },
    },
    ...r,
  });
  let step = await gen.next();
  while (!step.done) step = await gen.next();
  return step.value;
}

describe.each(STORE_KINDS)("moments: delta, corrections, report, head tracking, snapshot cache ($kind)", ({ open }) => {
  const store = useStore(open);

  it("the delta arm sees only beliefs written after the watermark, through the hard filter", async () => {
    const p = newPrincipal();
    const before = belief({ statement: "Before the snapshot." });
    await store().putBeliefs(p, [before]);
    const watermark = (await store().head(p)).position;
    const after = belief({ statement: "After the snapshot." });
    const hidden = belief({ statement: "After, but superseded.", status: "superseded" });
    await store().putBeliefs(p, [after, hidden]);
    await store().putBeliefs(newPrincipal(), [belief({ statement: "Someone else's." })]);
    const ids = (await store().deltaCandidates(filterFor(p), watermark, 50)).map((c) => c.belief.beliefId);
    expect(ids).toEqual([after.beliefId]);
  });

  it("reports a snapshot belief that stopped holding after the watermark, with its successor", async () => {
    const p = newPrincipal();
    const old = belief({ statement: "Andy lives in Madrid.", beliefType: "user_model_attr", predicateKey: "home" });
    const other = belief({ statement: "Andy likes tea." });
    await store().putBeliefs(p, [old, other]);
    await store().recordTrace(p, recallTrace({ sessionId: "sess", moment: "snapshot", returned: [old.beliefId, other.beliefId] }));
    const watermark = (await store().head(p)).position;
    const correction = belief({ statement: "Andy lives in Berlin.", beliefType: "user_model_attr", predicateKey: "home", validFrom: new Date("2026-07-24T00:00:00Z") });
    await store().rejectBelief(p, { rejectionId: randomUUID(), beliefId: old.beliefId, kind: "changed", correction, scope: "", reason: "" });

    const now = new Date("2026-08-01T00:00:00Z");
    expect(await store().snapshotCorrections(p, "sess", watermark, now)).toEqual([
      { beliefId: old.beliefId, supersededBy: correction.beliefId, noLongerHoldsAsOf: new Date("2026-07-24T00:00:00Z") },
    ]);
    // Not after the watermark, another session, another principal: nothing.
    expect(await store().snapshotCorrections(p, "sess", watermark + 1, now)).toEqual([]);
    expect(await store().snapshotCorrections(p, "other-session", watermark, now)).toEqual([]);
    expect(await store().snapshotCorrections({ ...p, principalId: `${p.principalId}-x` }, "sess", watermark, now)).toEqual([]);
    expect(await store().snapshotCorrections({ ...p, tenantId: `${p.tenantId}-x` }, "sess", watermark, now)).toEqual([]);
  });

  it("reads what a session's in-turn recalls showed as current, latest first, within the principal and the limit", async () => {
    const p = newPrincipal();
    const current = recallQuery({ text: "where does Andy park", asOf: null });
    const [a, b, c, then] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const at = (iso: string) => new Date(iso);
    await store().recordTrace(p, recallTrace({ sessionId: "sess", query: current, returned: [a, b], createdAt: at("2026-07-01T00:00:00Z") }));
    await store().recordTrace(p, recallTrace({ sessionId: "sess", query: current, returned: [c, a], createdAt: at("2026-07-02T00:00:00Z") }));
    // Not what the session was told holds now: a historical recall, and the snapshot (SessionSnapshots has it).
    await store().recordTrace(p, recallTrace({ sessionId: "sess", returned: [then], createdAt: at("2026-07-03T00:00:00Z") }));
    await store().recordTrace(p, recallTrace({ sessionId: "sess", moment: "snapshot", query: current, returned: [then] }));
    // The same session id of another principal and of another tenant, and another session of ours.
    await store().recordTrace({ ...p, principalId: `${p.principalId}-x` }, recallTrace({ sessionId: "sess", query: current, returned: [then] }));
    await store().recordTrace({ ...p, tenantId: `${p.tenantId}-x` }, recallTrace({ sessionId: "sess", query: current, returned: [then] }));
    await store().recordTrace(p, recallTrace({ sessionId: "sess-2", query: current, returned: [then] }));

    // a and c were last shown together (ties in id order), b before them.
    expect(await store().traces.sessionShown(p, "sess", 10)).toEqual([...[a, c].sort(), b]);
    expect(await store().traces.sessionShown(p, "sess", 1)).toEqual([[a, c].sort()[0]]);
    expect(await store().traces.sessionShown({ ...p, principalId: `${p.principalId}-y` }, "sess", 10)).toEqual([]);
    expect(await store().traces.sessionShown(p, "no-such-session", 10)).toEqual([]);
  });

  it("an in-turn recall with a watermark corrects what the session's earlier in-turn recalls showed, read from their traces", async () => {
    const p = newPrincipal();
    // No in-process record of what sessions were shown: the pipeline reads the stored traces.
    const deps = pipelineDeps(store(), traceWriter(store(), capturingLogger().logger));
    const old = belief({ statement: "Andy's parking spot is P-17.", beliefType: "user_model_attr", predicateKey: "parking" });
    await store().putBeliefs(p, [old]);
    const inTurn = async (watermark: number | null) => {
      const context = { moment: "in_turn" as const, sessionType: "interactive" as const, contextWindowTokens: 0, snapshotWatermark: watermark, sessionId: "conv", runId: "", turnId: "" };
      const outcome = await run(deps, { principal: p, kind: "in_turn", query: requested({ text: "where does Andy park" }), context: { ...context, surface: { surfaceId: "test", sensitivityCeiling: SENSITIVITY.personal } } });
      await (deps.traces as ReturnType<typeof traceWriter>).flush();
      return outcome.result;
    };
    const first = await inTurn(null);
    expect(first.items.map((i) => i.beliefId)).toEqual([old.beliefId]);
    const successor = belief({ statement: "Andy's parking spot is P-42.", beliefType: "user_model_attr", predicateKey: "parking", validFrom: new Date("2026-07-24T00:00:00Z") });
    await store().rejectBelief(p, { rejectionId: randomUUID(), beliefId: old.beliefId, kind: "changed", correction: successor, scope: "", reason: "" });
    const later = await inTurn(first.snapshotWatermark);
    expect(later.corrections).toEqual([{ beliefId: old.beliefId, supersededBy: successor.beliefId, noLongerHoldsAsOf: new Date("2026-07-24T00:00:00Z") }]);
    expect(later.items.map((i) => i.beliefId)).toEqual([successor.beliefId]);
  });

  it("an in-turn recall from the index gathers what its session was shown only when something was written after its watermark", async () => {
    const p = newPrincipal();
    const old = belief({ statement: "Andy's locker is number 12.", beliefType: "user_model_attr", predicateKey: "locker" });
    const { position: watermark } = await store().putBeliefs(p, [old]);
    const indexes = new PrincipalIndexes(store(), { maxBytes: 64 * 1024 * 1024, headCheckMs: 60_000 });
    await indexes.load(p);
    let lookups = 0;
    const deps: PipelineDeps = {
      ...pipelineDeps(store(), traceWriter(store(), capturingLogger().logger)),
      candidates: indexes,
      sessionShown: {
        shown: async () => {
          lookups += 1;
          return [old.beliefId];
        },
        recorded: () => {},
      },
    };
    const inTurn = async () => {
      const context = { moment: "in_turn" as const, sessionType: "interactive" as const, contextWindowTokens: 0, snapshotWatermark: watermark, sessionId: "conv", runId: "", turnId: "" };
      const outcome = await run(deps, { principal: p, kind: "in_turn", query: requested({ text: "which locker is Andy's" }), context: { ...context, surface: { surfaceId: "test", sensitivityCeiling: SENSITIVITY.personal } } });
      await (deps.traces as ReturnType<typeof traceWriter>).flush();
      return outcome.result;
    };
    // Nothing written since the watermark: no correction is possible, and none is looked for.
    expect((await inTurn()).corrections).toEqual([]);
    expect(lookups).toBe(0);
    const successor = belief({ statement: "Andy's locker is number 40.", beliefType: "user_model_attr", predicateKey: "locker", validFrom: new Date("2026-07-24T00:00:00Z") });
    await store().rejectBelief(p, { rejectionId: randomUUID(), beliefId: old.beliefId, kind: "changed", correction: successor, scope: "", reason: "" });
    expect((await inTurn()).corrections).toEqual([{ beliefId: old.beliefId, supersededBy: successor.beliefId, noLongerHoldsAsOf: new Date("2026-07-24T00:00:00Z") }]);
    expect(lookups).toBe(1);
  });

  it("reports snapshot utilization and misses per session", async () => {
    const p = newPrincipal();
    const [a, b, missed] = [belief(), belief({ statement: "Andy likes tea." }), belief({ statement: "Andy's dog is Pixel.", beliefType: "relationship" })] as [Belief, Belief, Belief];
    await store().putBeliefs(p, [a, b, missed]);
    await store().recordTrace(p, recallTrace({ sessionId: "s", moment: "snapshot", returned: [a.beliefId, b.beliefId] }));
    const turn = recallTrace({ sessionId: "s", moment: "in_turn", returned: [a.beliefId, missed.beliefId] });
    await store().recordTrace(p, turn);
    await store().recordCitations(p, turn.id, [a.beliefId]);
    const report = await store().snapshotReport(p, RETRIEVAL_POLICY.durableTypes, null);
    expect(report).toEqual([{ sessionId: "s", snapshotSize: 2, cited: 1, utilization: 0.5, inTurnReturned: 2, misses: 1 }]);
    expect(await store().snapshotReport({ ...p, principalId: "nobody" }, RETRIEVAL_POLICY.durableTypes, null)).toEqual([]);
  });

  it("does not count as a miss what was not snapshot-eligible when the snapshot was made: persona-held, or recorded since", async () => {
    const p = newPrincipal();
    const opened = new Date("2026-03-04T05:06:08.123Z");
    const shown = belief();
    const persona = belief({ statement: "Andy's name is pronounced AN-dee.", beliefType: "user_model_attr" });
    const later = belief({ statement: "Andy now drinks tea.", recordedAt: new Date(opened.getTime() + 60_000), validFrom: new Date(opened.getTime() + 60_000) });
    const missed = belief({ statement: "Andy's dog is Pixel.", beliefType: "relationship" });
    await store().putBeliefs(p, [shown, persona, later, missed]);
    await store().setPersonaEntry(p, persona.beliefId);
    await store().recordTrace(p, recallTrace({ sessionId: "s", moment: "snapshot", returned: [shown.beliefId], createdAt: opened }));
    await store().recordTrace(p, recallTrace({ sessionId: "s", moment: "in_turn", returned: [persona.beliefId, later.beliefId, missed.beliefId], createdAt: new Date(opened.getTime() + 120_000) }));
    const [row] = await store().snapshotReport(p, RETRIEVAL_POLICY.durableTypes, "s");
    expect(row).toMatchObject({ inTurnReturned: 3, misses: 1 });
  });

  it("tracks a principal's head through notifications, without re-reading it", async () => {
    const db = counting(store().db);
    const tracked = new MemoryStore(db);
    const heads = new HeadTracker(tracked);
    await heads.start();
    try {
      const p = newPrincipal();
      expect((await heads.head(p)).position).toBe(0);
      const reads = () => db.statements.filter((s) => s.includes("FROM principal_heads")).length;
      expect(reads()).toBe(1);
      await store().putBeliefs(p, [belief()]);
      await until(async () => (await heads.head(p)).position === 1);
      expect((await heads.head(p)).updatedAt).toEqual((await store().head(p)).updatedAt);
      expect(reads()).toBe(1);
    } finally {
      await heads.stop();
    }
  });

  it("serves an unchanged snapshot from the cache, byte-identical and without a database query", async () => {
    const db = counting(store().db);
    const tracked = new MemoryStore(db);
    const heads = new HeadTracker(tracked);
    await heads.start();
    // As in the server: the hit's trace is queued, and written by the writer's next flush.
    const writer = traceWriter(tracked, capturingLogger().logger);
    const deps: PipelineDeps = {
      store: tracked,
      traces: writer,
      policy: RETRIEVAL_POLICY,
      clock: () => new Date(),
      traceRetentionHours: 1,
      heads,
      snapshotCache: new SnapshotCache<CachedSnapshot>(1 << 20, cachedSnapshotBytes),
    };
    try {
      const p = newPrincipal();
      await store().putBeliefs(p, [belief({ lastEvidenceAt: T0 }), belief({ statement: "Andy works from Berlin.", beliefType: "user_model_attr" })]);
      const first = await run(deps, { principal: p });
      expect(first.result.fromCache).toBe(false);
      expect(first.result.items).toHaveLength(2);

      const before = db.statements.length;
      const second = await run(deps, { principal: p, context: { ...(await contextFor("s2")) } });
      const during = db.statements.slice(before);
      expect(during).toEqual([]);
      expect(second.result.fromCache).toBe(true);
      expect(second.result.rendered).toBe(first.result.rendered);
      expect(second.result.traceId).not.toBe(first.result.traceId);
      // The hit names the result it copies, and differs from it in trace id and from_cache only:
      // its reply reuses that result's encoding (server/wire/cached-result.ts).
      expect(second.cachedResult).toBe(first.result);
      expect({ ...second.result, traceId: first.result.traceId, fromCache: false }).toEqual(first.result);
      // The hit's own trace is written after the answer, for its own session.
      await writer.flush();
      expect((await store().getTrace(p, second.result.traceId))!.sessionId).toBe("s2");

      // Any write for the principal moves the head: the next open misses and shows it.
      await store().putBeliefs(p, [belief({ statement: "Andy prefers tea.", beliefType: "preference" })]);
      await until(async () => (await heads.head(p)).position === 2);
      const third = await run(deps, { principal: p });
      expect(third.result.fromCache).toBe(false);
      expect(third.result.items).toHaveLength(3);
    } finally {
      await heads.stop();
    }
  });
});

async function contextFor(sessionId: string) {
  return {
    moment: "snapshot" as const,
    sessionType: "interactive" as const,
    contextWindowTokens: 0,
    snapshotWatermark: null,
    sessionId,
    runId: "",
    turnId: "",
    surface: { surfaceId: "test", sensitivityCeiling: SENSITIVITY.personal },
  };
}
