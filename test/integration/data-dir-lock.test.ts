import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, unary } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { CLI, startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** Runs the CLI; resolves to its exit code and output whatever the code. */
function runCli(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? "", ...env }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/**
 * Issue 12, defect 4: two processes on one PGlite directory both started,
 * and the second one's acknowledged writes were lost. The directory is
 * locked: a second sidecar, or a CLI command that opens the store, gets a
 * one-line error naming the directory and the holder, exit 2. A lock left
 * by a killed sidecar does not block the next start.
 */
describe("one process per PGlite data directory", () => {
  let dir: string;
  let dataDir: string;
  let first: SidecarProcess;
  const me = newIdentity();

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-lock-"));
    dataDir = join(dir, "data");
    first = await startSidecarProcess("pglite", {}, { dataDir });
  });
  afterAll(async () => {
    await first?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const expectRefused = (result: { code: number; stderr: string }) => {
    expect(result.code).toBe(2);
    const lines = result.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(dataDir);
    expect(lines[0]).toContain(`pid ${first.child.pid}`);
  };

  it("refuses a second sidecar on the directory", async () => {
    expectRefused(await runCli(["serve"], { RECALL_DATA_DIR: dataDir, RECALL_PORT: "0" }));
  });

  it("refuses CLI commands that open the store", async () => {
    const file = join(dir, "memories.jsonl");
    await writeFile(file, `${JSON.stringify({ belief: { ...beliefMsg(), recorded_at: "2026-01-01T00:00:00Z" } })}\n`);
    const env = { RECALL_DATA_DIR: dataDir, RECALL_TENANT_ID: me.tenant, RECALL_PRINCIPAL_ID: me.principal };
    expectRefused(await runCli(["import", file, "--tenant", me.tenant, "--principal", me.principal], env));
    expectRefused(await runCli(["sweep"], env));
    expectRefused(await runCli(["report", "snapshots", "--tenant", me.tenant, "--principal", me.principal], env));
  });

  it("a sidecar killed with SIGKILL does not block the next one, which has its data", async () => {
    const c = connect(first.address);
    const kept = beliefMsg();
    await unary(c.write, "PutBeliefs", { beliefs: [kept] }, me);
    c.close();
    first.child.kill("SIGKILL");
    expect(await first.stop()).toBeNull();

    first = await startSidecarProcess("pglite", {}, { dataDir });
    const again = connect(first.address);
    const { result } = await unary(again.memory, "Search", { text: "concise writing" }, me);
    again.close();
    expect(result.items.map((i: { belief_id: string }) => i.belief_id)).toContain(kept.belief_id);
  });
});
