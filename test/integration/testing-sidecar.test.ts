import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Authority, BeliefStatus, Portability, ScopeLevel } from "../../src/gen/memory/v1/types_pb.js";
import { startLocalSidecar, type LocalSidecar } from "../../src/testing/index.js";
import { beliefMsg } from "../support/grpc-fixtures.js";
import { freshPostgresDatabase } from "../support/stores.js";

/** @recall-memory/sidecar/testing: a real sidecar process on an in-memory store, with fixtures and reset(). */

/** An import record: grpc-js's proto-JSON belief, less its Timestamp object (import takes RFC 3339 text). */
const belief = (id: string, statement: string, subject = "Andy") => {
  const { recorded_at: _recordedAt, ...fields } = beliefMsg({ belief_id: id, subject, statement });
  return { belief: fields };
};
/** The same belief for the connect-es client. */
const written = (beliefId: string, statement: string, subject = "Andy") => ({
  beliefId,
  subject,
  statement,
  beliefType: "preference",
  status: BeliefStatus.ACTIVE,
  confidence: 0.9,
  authority: Authority.USER,
  originScope: "veetbot",
  scopeLevel: ScopeLevel.USER,
  portability: Portability.PORTABLE,
});
const CONCISE = "8f21a0c3-0000-4000-8000-000000000001";
const HELIX = "9d02b117-0000-4000-8000-000000000002";
const BERLIN = "1c07b2d4-0000-4000-8000-000000000003";

describe("startLocalSidecar on the ephemeral store", () => {
  let dir: string;
  let sidecar: LocalSidecar;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-testing-"));
    const file = join(dir, "andy.jsonl");
    await writeFile(file, `${JSON.stringify(belief(CONCISE, "Andy prefers concise writing."))}\n`);
    sidecar = await startLocalSidecar({
      fixtures: [
        { tenantId: "acme", principalId: "andy", file, jsonl: JSON.stringify(belief(HELIX, "Andy's editor is Helix.")), records: [] },
        { tenantId: "acme", principalId: "bea", records: [belief(BERLIN, "Bea works from Berlin.", "Bea")] },
      ],
      env: { RECALL_LOG_LEVEL: "info" },
    });
  });
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  const ids = (items: readonly { beliefId: string }[]) => items.map((i) => i.beliefId).sort();

  it("serves the fixtures (file, JSONL text and objects) to their own principals, from the shipped template", async () => {
    expect(sidecar.address).toBe(`127.0.0.1:${sidecar.port}`);
    const andy = await sidecar.client.openSession({ scope: "veetbot" });
    expect(ids(andy.snapshot.items)).toEqual([CONCISE, HELIX].sort());
    const bea = await sidecar.clientFor({ tenantId: "acme", principalId: "bea" }).openSession({ scope: "veetbot" });
    expect(ids(bea.snapshot.items)).toEqual([BERLIN]);
    expect(sidecar.logs()).toContain('"fromTemplate":true');
  });

  it("reset() drops every write (any principal) and cached snapshot, and brings the fixtures back", async () => {
    const andy = sidecar.client;
    const first = await andy.openSession({ sessionId: "s-reset", scope: "veetbot" });
    expect((await andy.openSession({ sessionId: "s-reset", scope: "veetbot" })).snapshot.fromCache).toBe(true);
    await andy.reject({ beliefId: HELIX, kind: "not_true" });
    const stranger = sidecar.clientFor({ tenantId: "other", principalId: "zed" });
    await stranger.raw.write.putBeliefs({ beliefs: [written(BERLIN, "Zed lives in Oslo.", "Zed")] });

    await sidecar.reset();

    const again = await andy.openSession({ sessionId: "s-reset", scope: "veetbot" });
    expect(again.snapshot.fromCache).toBe(false);
    expect(ids(again.snapshot.items)).toEqual([CONCISE, HELIX].sort());
    expect(again.watermark).toBeGreaterThan(first.watermark);
    expect((await stranger.search("Oslo")).result?.items).toEqual([]);
    // Traces went too.
    const gone = await andy.raw.memory.getTrace({ traceId: first.snapshot.traceId }).catch((e: { code: number }) => e.code);
    expect(gone).toBe(5);
  });
});

describe("startLocalSidecar", () => {
  it("refuses fixtures that do not validate, naming the fixture, the record and the field", async () => {
    const bad = { belief: { ...belief(CONCISE, "x").belief, confidence: 7 } };
    await expect(startLocalSidecar({ fixtures: [{ tenantId: "t", principalId: "p", records: [bad] }] })).rejects.toThrow(
      /fixtures\[0\] records\[0\]: belief\.confidence: must be between 0 and 1/,
    );
  });

  it("runs on PostgreSQL too, and resets it", async () => {
    const database = await freshPostgresDatabase();
    const sidecar = await startLocalSidecar({
      store: { databaseUrl: database.url },
      fixtures: [{ tenantId: "acme", principalId: "andy", records: [belief(CONCISE, "Andy prefers concise writing.")] }],
    });
    try {
      await sidecar.client.raw.write.putBeliefs({ beliefs: [written(HELIX, "Andy's editor is Helix.")] });
      expect((await sidecar.client.openSession()).snapshot.items).toHaveLength(2);
      await sidecar.reset();
      expect((await sidecar.client.openSession()).snapshot.items.map((i) => i.beliefId)).toEqual([CONCISE]);
    } finally {
      expect(await sidecar.stop()).toBe(0);
      await database.drop();
    }
  });
});
