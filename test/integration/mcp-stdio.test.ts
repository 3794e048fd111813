import { spawn } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, type Clients } from "../support/grpc-client.js";
import { mcpOverStdio, textOf } from "../support/mcp-client.js";
import { mcpToolContract } from "../support/mcp-contract.js";
import { CLI, startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** `recall mcp` over stdio, driven by the MCP SDK's own client, against a real sidecar over gRPC. */
describe("recall mcp (stdio) against a running sidecar", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite");
    c = connect(sidecar.address);
  }, 60_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  mcpToolContract({
    open: (identity) => mcpOverStdio(["--address", sidecar.address, "--tenant", identity.tenant, "--principal", identity.principal]),
    grpc: () => c,
  });

  it("takes the principal from RECALL_TENANT_ID / RECALL_PRINCIPAL_ID, and keeps stdout for the protocol", async () => {
    const mcp = await mcpOverStdio(["--address", sidecar.address], { RECALL_TENANT_ID: "t-env", RECALL_PRINCIPAL_ID: "p-env", RECALL_LOG_LEVEL: "info" });
    try {
      const result = await mcp.call("memory_search", { text: "anything" });
      expect(result.isError).toBeFalsy();
    } finally {
      await mcp.close();
    }
  });

  it("the sidecar itself serves no /mcp unless RECALL_MCP=on", async () => {
    const res = await fetch(`http://127.0.0.1:${sidecar.port}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(res.status).toBe(404);
  });

  it("a sidecar that is not there is a tool error (UNAVAILABLE), not a crash", async () => {
    const mcp = await mcpOverStdio(["--address", "127.0.0.1:1", "--tenant", "t", "--principal", "p", "--deadline-ms", "500"]);
    try {
      const result = await mcp.call("memory_search", { text: "anything" });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toMatch(/^UNAVAILABLE: /);
    } finally {
      await mcp.close();
    }
  });
});

describe("recall mcp --ephemeral", () => {
  it("starts its own sidecar on an in-memory store with the demo memory", async () => {
    const mcp = await mcpOverStdio(["--ephemeral"]);
    try {
      const result = await mcp.call("memory_search", { text: "which editor does Andy use", subjects: ["Andy"] });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain("Andy's editor is Helix.");
    } finally {
      await mcp.close();
    }
  }, 60_000);
});

describe("recall mcp: usage", () => {
  const run = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, "mcp", ...args], { env: { PATH: process.env.PATH ?? "" }, stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.on("close", (code) => resolve({ code, stderr }));
    });

  it("without a principal, or with two targets, it says so in one line and exits 2", async () => {
    const missing = await run(["--address", "127.0.0.1:50051"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--tenant and --principal/);
    const both = await run(["--address", "127.0.0.1:50051", "--ephemeral"]);
    expect(both.code).toBe(2);
    expect(both.stderr.trim().split("\n")).toHaveLength(1);
  });
});
