import { execFile, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { CLI, startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

const run = promisify(execFile);

/** What a process does as a process: protocols, sockets, deadlines, config errors, shutdown. */
describe("the sidecar process (pglite)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  let socketDir: string;
  const me = newIdentity();
  const fact = beliefMsg({ subject: "harbour", statement: "The harbour ferry leaves at seven.", belief_type: "project_fact" });

  beforeAll(async () => {
    socketDir = await mkdtemp(join(tmpdir(), "recall-sock-"));
    sidecar = await startSidecarProcess("pglite", {
      RECALL_SOCKET_PATH: join(socketDir, "recall.sock"),
      // The lexical arm starts 1.5 s late, so deadlines and shutdown can be watched mid-call.
      RECALL_FAULT_ARM_DELAY: "lexical=1500",
    });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [fact] }, me);
  });
  afterAll(async () => {
    c?.close();
    if (sidecar) await sidecar.stop();
    await rm(socketDir, { recursive: true, force: true });
  });

  it("answers a streamed recall to buf curl using server reflection only", async () => {
    const { stdout } = await run(
      "npx",
      [
        "buf", "curl", "--protocol", "grpc", "--http2-prior-knowledge",
        "--header", `x-tenant-id: ${me.tenant}`, "--header", `x-principal-id: ${me.principal}`,
        "--data", JSON.stringify({ query: { subjects: ["harbour"] } }),
        `http://${sidecar.address}/memory.v1.MemoryService/Recall`,
      ],
      { timeout: 20_000 },
    );
    const events = stdout.trim().split(/\n(?=\{)/).map((m) => JSON.parse(m) as Json);
    expect(events.filter((e) => e.arm).map((e) => e.arm.arm).sort()).toEqual(["lexical", "structured"]);
    expect(events[events.length - 1]!.result.rendered).toContain("The harbour ferry leaves at seven.");
  });

  it("speaks the Connect protocol over HTTP/1.1 on the same port", async () => {
    const res = await fetch(`http://${sidecar.address}/memory.v1.MemoryService/Search`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", "x-tenant-id": me.tenant, "x-principal-id": me.principal },
      body: JSON.stringify({ text: "when does the harbour ferry leave" }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Json;
    expect(body.result.items[0].beliefId).toBe(fact.belief_id);
    const bad = await fetch(`http://${sidecar.address}/memory.v1.MemoryService/Search`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", "x-tenant-id": me.tenant, "x-principal-id": me.principal },
      body: JSON.stringify({ text: "" }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Json).message).toBe("text: is required");
  });

  it("serves the same API on the configured Unix socket", async () => {
    const viaSocket = connect(`unix://${join(socketDir, "recall.sock")}`);
    try {
      const { result } = await unary(viaSocket.memory, "Search", { text: "harbour ferry" }, me);
      expect(result.items.map((i: Json) => i.belief_id)).toEqual([fact.belief_id]);
    } finally {
      viaSocket.close();
    }
  });

  it("exits non-zero naming the variable when the configuration is bad", async () => {
    const child = spawn(process.execPath, [CLI, "serve"], {
      env: { PATH: process.env.PATH ?? "", RECALL_PORT: "not-a-port", RECALL_LOG_LEVEL: "loud" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    expect(code).toBe(2);
    expect(stderr).toContain("RECALL_PORT");
    expect(stderr).toContain("RECALL_LOG_LEVEL");
  });

  it("on SIGTERM finishes the in-flight call, says NOT_SERVING to watchers, and exits 0", async () => {
    const watch = c.health.Watch({ service: "" });
    const statuses: string[] = [];
    watch.on("data", (m: Json) => statuses.push(m.status));
    watch.on("error", () => {});
    const inFlight = serverStream(c.memory, "Recall", { query: { text: "harbour ferry" } }, me, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    sidecar.child.kill("SIGTERM");
    const events = await inFlight;
    const result = events[events.length - 1]!.result as Json;
    expect(result.arms_degraded).toEqual([]);
    expect(result.items.map((i: Json) => i.belief_id)).toEqual([fact.belief_id]);
    expect(await sidecar.stop()).toBe(0);
    expect(statuses[0]).toBe("SERVING");
    expect(statuses[statuses.length - 1]).toBe("NOT_SERVING");
    expect(sidecar.logs()).toContain('"recall sidecar stopped"');
    const after = await failure(unary(connect(sidecar.address).health, "Check", { service: "" }, {}, 1000));
    expect(after.code).toBe(grpc.status.UNAVAILABLE);
  });
});
