import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Authority, BeliefStatus, Portability, ScopeLevel } from "../../src/gen/memory/v1/types_pb.js";
import { Code, RecallError, createRecallClient, type ArmResult } from "../../src/sdk/index.js";
import { startLocalSidecar, type LocalSidecar } from "../../src/testing/index.js";

/** The client SDK against a real sidecar process. */

const belief = (beliefId: string, statement: string, sourceEpisodeIds: string[] = []) => ({
  beliefId,
  subject: "Andy",
  statement,
  beliefType: "preference",
  status: BeliefStatus.ACTIVE,
  confidence: 0.9,
  authority: Authority.USER,
  originScope: "veetbot",
  scopeLevel: ScopeLevel.USER,
  portability: Portability.PORTABLE,
  sourceEpisodeIds,
});
const CONCISE = "8f21a0c3-0000-4000-8000-000000000001";
const VIM = "9d02b117-0000-4000-8000-000000000002";
const HELIX = "9d02b117-0000-4000-8000-000000000003";
const EPISODE = "e1000000-0000-4000-8000-000000000001";

describe("client SDK", () => {
  let sidecar: LocalSidecar;
  beforeAll(async () => {
    sidecar = await startLocalSidecar({ identity: { tenantId: "acme", principalId: "andy" } });
  });
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  it("opens a session with its snapshot and watermark, and a turn after a write gets the delta and the correction", async () => {
    const andy = sidecar.client;
    await andy.raw.write.putBeliefs({ beliefs: [belief(CONCISE, "Andy prefers concise writing."), belief(VIM, "Andy's editor is Vim.")] });
    const session = await andy.openSession({ sessionId: "s-1", scope: "veetbot", goal: "write the release notes" });
    expect(session.snapshot.rendered).toContain("[m:8f21a0c3]");
    expect(session.watermark).toBe(session.snapshot.snapshotWatermark);

    await andy.raw.write.putBeliefs({
      beliefs: [{ ...belief(VIM, "Andy's editor is Vim."), status: BeliefStatus.SUPERSEDED }, { ...belief(HELIX, "Andy's editor is Helix."), supersedes: [VIM] }],
    });
    const arms: ArmResult[] = [];
    const turn = await session.recallForTurn({ turnId: "t-1", text: "which editor does Andy use?", subjects: ["Andy"], onArm: (a) => arms.push(a) });
    // VIM and HELIX share 31 hex digits: the correction cites both by their full 32.
    expect(turn.rendered).toContain("correction: [m:9d02b117000040008000000000000002] no longer holds");
    expect(turn.rendered).toContain("superseded by [m:9d02b117000040008000000000000003].");
    expect(turn.result.items.map((i) => i.beliefId)).toContain(HELIX);
    expect(turn.degraded).toBe(false);
    expect(arms.map((a) => a.arm)).toContain("delta");

    const cited = await andy.cite(turn.traceId, [HELIX]);
    expect(cited.recorded).toBe(1);
    expect((await andy.cite(turn.traceId, [HELIX])).recorded).toBe(0);
  });

  it("searches, reads episodes, rejects idempotently and erases", async () => {
    const bea = sidecar.clientFor({ tenantId: "acme", principalId: "bea" });
    await bea.raw.write.appendEpisodes({ episodes: [{ episodeId: EPISODE, sessionId: "s-9", actor: "user", kind: "message", content: "I write tersely.", occurredAt: { seconds: 1767225600n, nanos: 0 } }] });
    await bea.raw.write.putBeliefs({ beliefs: [belief(CONCISE, "Bea prefers concise writing.", [EPISODE])] });
    const found = await bea.search("concise writing");
    expect(found.result?.items.map((i) => i.beliefId)).toEqual([CONCISE]);
    const episodes = await bea.recallEpisodes({ sessionId: "s-9" });
    expect(episodes.episodes.map((e) => e.episodeId)).toEqual([EPISODE]);

    const rejected = await bea.reject({ beliefId: CONCISE, kind: "not_true", reason: "no" });
    const repeat = await bea.reject({ beliefId: CONCISE, kind: "not_true", rejectionId: rejected.rejectionId });
    expect(repeat.storePosition).toBe(rejected.storePosition);
    expect((await bea.search("concise writing")).result?.items).toEqual([]);

    const erased = await bea.erase();
    expect(erased.deleted).toMatchObject({ beliefs: 1, episodes: 1, rejections: 1 });
    // Andy, in the same tenant, keeps everything.
    expect((await sidecar.client.search("concise writing")).result?.items.map((i) => i.beliefId)).toEqual([CONCISE]);
  });

  it("surfaces an arm abandoned at the deadline as a degraded, partial result", async () => {
    // The lexical arm starts 6 s late, far past the 3 s deadline, whose margin leaves a loaded machine room to answer.
    const slow = await startLocalSidecar({ env: { RECALL_FAULT_ARM_DELAY: "lexical=6000" }, identity: { tenantId: "acme", principalId: "andy" } });
    try {
      await slow.client.raw.write.putBeliefs({ beliefs: [belief(CONCISE, "Andy prefers concise writing.")] });
      const session = { sessionId: "s-slow", scope: "veetbot", watermark: 0n };
      const turn = await slow.client.recallForTurn(session, { turnId: "t", text: "concise writing", subjects: ["Andy"], deadlineMs: 3000 });
      expect(turn.degraded).toBe(true);
      expect(turn.armsDegraded).toEqual(["lexical"]);
      expect(turn.result.items.map((i) => i.beliefId)).toEqual([CONCISE]);
    } finally {
      await slow.stop();
    }
  });

  it("throws typed errors with the gRPC status, the field named for bad input", async () => {
    const error = await sidecar.client.cite("not-a-uuid", [CONCISE]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecallError);
    const e = error as RecallError;
    expect([e.code, e.status, e.method, e.attempts]).toEqual([Code.InvalidArgument, "INVALID_ARGUMENT", "MemoryWriteService.RecordCitations", 1]);
    expect(e.message).toMatch(/^trace_id: /);
    const missing = (await sidecar.client.cite("00000000-0000-4000-8000-000000000000", [CONCISE]).catch((x: unknown) => x)) as RecallError;
    expect(missing.status).toBe("NOT_FOUND");
  });

  it("retries UNAVAILABLE within the deadline and then says how often it tried", async () => {
    // A port where nothing listens: every attempt is UNAVAILABLE.
    const nowhere = createRecallClient({ address: "127.0.0.1:1", tenantId: "t", principalId: "p", retry: { initialBackoffMs: 10 } });
    try {
      const error = (await nowhere.search("anything", { deadlineMs: 2000 }).catch((x: unknown) => x)) as RecallError;
      expect([error.status, error.attempts]).toEqual(["UNAVAILABLE", 3]);
    } finally {
      nowhere.close();
    }
  });
});
