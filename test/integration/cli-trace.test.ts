import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { CLI, startSidecarProcess } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

const run = promisify(execFile);
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/** Every CLI run opens the store afresh (seconds on PGlite), so these tests get more time than the default. */
const CLI_TESTS_MS = 180_000;

interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The trace commands of the CLI against the store a sidecar wrote, on both
 * stores: same scoping as the RPCs (a foreign id prints the same error as a
 * missing one), same JSON as GetTrace, one delete path.
 */
describe.each(["pglite", "postgres"] as const)("recall trace and feedback commands (%s)", (kind) => {
  const owner = newIdentity("owner");
  const intruders = [
    { tenant: `${owner.tenant}-x`, principal: owner.principal },
    { tenant: owner.tenant, principal: `${owner.principal}-x` },
  ];
  let storeEnv: Record<string, string>;
  let dispose: () => Promise<void>;
  const seeded: Json = {};

  const cli = async (args: string[], identity: { tenant: string; principal: string } | null = owner, env: Record<string, string> = {}): Promise<CliResult> => {
    const flags = identity ? ["--tenant", identity.tenant, "--principal", identity.principal] : [];
    try {
      const { stdout, stderr } = await run(process.execPath, [CLI, ...args, ...flags], {
        env: { PATH: process.env.PATH ?? "", ...storeEnv, ...env },
        timeout: 60_000,
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  beforeAll(async () => {
    let owned: { dataDir?: string; databaseUrl?: string };
    if (kind === "postgres") {
      const database = await freshPostgresDatabase();
      owned = { databaseUrl: database.url };
      storeEnv = { RECALL_DATABASE_URL: database.url };
      dispose = database.drop;
    } else {
      const dataDir = await mkdtemp(join(tmpdir(), "recall-cli-trace-"));
      owned = { dataDir };
      storeEnv = { RECALL_DATA_DIR: dataDir };
      dispose = () => rm(dataDir, { recursive: true, force: true });
    }
    // The sidecar writes; it is stopped before the CLI opens the store (PGlite is one process at a time).
    const sidecar = await startSidecarProcess(kind, {}, owned);
    const c = connect(sidecar.address);
    try {
      const recall = async (request: Json) => {
        const events = await serverStream(c.memory, "Recall", request, owner);
        return events[events.length - 1]!.result as Json;
      };
      const pub = beliefMsg({ statement: "Andy prefers concise writing.", sensitivity: "SENSITIVITY_PUBLIC" });
      const conf = beliefMsg({ statement: "Andy's salary review is in March.", belief_type: "user_model_attr", sensitivity: "SENSITIVITY_CONFIDENTIAL" });
      const carried = beliefMsg({ subject: "deploys", statement: "Deploys are gated on CI passing.", belief_type: "decision", origin_scope: "atlas", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_CONTEXTUAL" });
      await unary(c.write, "PutBeliefs", { beliefs: [pub, conf, carried] }, owner);
      const surface = { surface_id: "cli", sensitivity_ceiling: "SENSITIVITY_RESTRICTED" };
      const snapshot = await recall({ moment: "MOMENT_SNAPSHOT", session_id: "s", surface, query: { current_scope: "veetbot" } });
      const turn = await recall({ session_id: "s", turn_id: "t1", surface, query: { current_scope: "veetbot", text: "deploys gated, salary review, writing", subjects: ["deploys"] } });
      for (const t of ["t2", "t3"]) await recall({ session_id: "s", turn_id: t, surface, query: { current_scope: "veetbot", subjects: ["Zanzibar"] } });
      await unary(c.write, "RecordCitations", { trace_id: turn.trace_id, belief_ids: [carried.belief_id] }, owner);
      Object.assign(seeded, { pub, conf, carried, snapshot, turn });
    } finally {
      c.close();
      expect(await sidecar.stop()).toBe(0);
    }
  }, CLI_TESTS_MS);
  afterAll(async () => {
    await dispose?.();
  }, CLI_TESTS_MS);

  it("trace TRACE_ID prints the principal's persisted trace as GetTrace's JSON, principal from flags or environment", async () => {
    const byFlags = await cli(["trace", seeded.turn.trace_id]);
    expect(byFlags.code).toBe(0);
    const trace = JSON.parse(byFlags.stdout) as Json;
    expect(trace).toMatchObject({ id: seeded.turn.trace_id, sessionId: "s", turnId: "t1", moment: "MOMENT_IN_TURN", renderedSha256: sha256(seeded.turn.rendered) });
    expect(trace.returned).toEqual(seeded.turn.items.map((i: Json) => i.belief_id));
    expect(trace.carriedIn).toEqual([seeded.carried.belief_id]);
    expect(trace.query.currentScope).toBe("veetbot");
    const byEnv = await cli(["trace", seeded.turn.trace_id], null, { RECALL_TENANT_ID: owner.tenant, RECALL_PRINCIPAL_ID: owner.principal });
    expect(byEnv.stdout).toBe(byFlags.stdout);
  }, CLI_TESTS_MS);

  it("trace with another principal's id prints exactly what a missing id prints", async () => {
    const missing = await cli(["trace", "00000000-0000-4000-8000-000000000000"]);
    expect(missing).toEqual({ code: 1, stdout: "", stderr: "recall trace: trace not found\n" });
    for (const intruder of intruders) expect(await cli(["trace", seeded.turn.trace_id], intruder)).toEqual(missing);
    expect((await cli(["trace", "not-a-uuid"])).stderr).toBe("recall trace: trace_id: must be a UUID\n");
    expect((await cli(["trace", seeded.turn.trace_id], null)).code).toBe(2);
  }, CLI_TESTS_MS);

  it("trace --view TURN_ID prints the user view under the viewing surface's ceiling; a foreign turn is a missing one", async () => {
    const personal = await cli(["trace", "--view", "t1", "--surface", "personal"]);
    expect(personal.code).toBe(0);
    const view = JSON.parse(personal.stdout) as Json;
    expect(view.moments).toEqual(["MOMENT_SNAPSHOT", "MOMENT_IN_TURN"]);
    const ids = view.beliefs.map((b: Json) => b.beliefId);
    expect(ids).toContain(seeded.carried.belief_id);
    expect(ids).not.toContain(seeded.conf.belief_id);
    expect(view.beliefs.find((b: Json) => b.beliefId === seeded.carried.belief_id)).toMatchObject({ used: true, carried: true, originScope: "atlas" });
    expect(personal.stdout).not.toMatch(/score|latenc|ranked|candidates/i);
    const restricted = JSON.parse((await cli(["trace", "--view", "t1", "--surface", "restricted"])).stdout) as Json;
    expect(restricted.beliefs.map((b: Json) => b.beliefId)).toContain(seeded.conf.belief_id);

    const missing = await cli(["trace", "--view", "no-such-turn", "--surface", "restricted"]);
    expect(missing).toEqual({ code: 1, stdout: "", stderr: "recall trace: no trace for this turn\n" });
    for (const intruder of intruders) expect(await cli(["trace", "--view", "t1", "--surface", "restricted"], intruder)).toEqual(missing);
  }, CLI_TESTS_MS);

  it("hints, promotions and events show the principal's feedback, and nothing to anyone else", async () => {
    const hints = JSON.parse((await cli(["hints"])).stdout) as Json[];
    expect(hints).toMatchObject([{ subjectKey: "zanzibar", subject: "Zanzibar", misses: 2 }]);
    const promotions = JSON.parse((await cli(["promotions"])).stdout) as Json[];
    expect(promotions).toMatchObject([{ beliefId: seeded.carried.belief_id, originScope: "atlas", usedIn: ["veetbot"], uses: 1 }]);
    const events = JSON.parse((await cli(["events"])).stdout) as Json[];
    expect(events.map((e) => e.traceId)).toEqual(expect.arrayContaining([seeded.snapshot.trace_id, seeded.turn.trace_id]));
    expect(events.every((e) => e.payload.type === "memory.recalled")).toBe(true);
    for (const intruder of intruders) {
      for (const command of ["hints", "promotions", "events"]) expect(await cli([command], intruder)).toMatchObject({ code: 0, stdout: "[]\n" });
    }
  }, CLI_TESTS_MS);

  it("sweep runs the bounded sweeps once and reports what it did", async () => {
    const swept = await cli(["sweep"], null);
    expect(swept.code).toBe(0);
    expect(Object.keys(JSON.parse(swept.stdout) as Json).sort()).toEqual(["charged", "expired", "settled"]);
  }, CLI_TESTS_MS);

  it("delete-session deletes only the principal's session, through the same path as the RPC", async () => {
    for (const intruder of intruders) {
      expect((await cli(["delete-session", "s"], intruder)).stdout).toBe("deleted 0 traces, 0 citations and 0 events of session s\n");
    }
    expect((await cli(["trace", seeded.turn.trace_id])).code).toBe(0);
    expect((await cli(["delete-session", "s"])).stdout).toBe("deleted 4 traces, 1 citations and 4 events of session s\n");
    expect((await cli(["trace", seeded.turn.trace_id])).stderr).toBe("recall trace: trace not found\n");
    expect((await cli(["trace", "--view", "t1"])).stderr).toBe("recall trace: no trace for this turn\n");
  }, CLI_TESTS_MS);
});
