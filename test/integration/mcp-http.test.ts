import { mkdtemp, rm, writeFile } from "node:fs/promises";
import * as http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg } from "../support/grpc-fixtures.js";
import { mcpOverHttp, mcpOverStdio, textOf } from "../support/mcp-client.js";
import { mcpToolContract } from "../support/mcp-contract.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** A raw POST to /mcp, with whatever Host and headers the test chooses. */
function post(port: number, headers: Record<string, string>, body: unknown, method = "POST"): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, path: "/mcp", method, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (d: string) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(method === "POST" ? JSON.stringify(body) : undefined);
  });
}

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
};

/** The sidecar's own /mcp (RECALL_MCP=on) in trusted-header mode, driven by the MCP SDK's Streamable HTTP client. */
describe("/mcp on the sidecar, trusted headers (loopback)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", { RECALL_MCP: "on" });
    c = connect(sidecar.address);
  }, 60_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  mcpToolContract({
    open: (identity) => mcpOverHttp(`http://127.0.0.1:${sidecar.port}/mcp`, { "x-tenant-id": identity.tenant, "x-principal-id": identity.principal }),
    grpc: () => c,
  });

  it("without identity headers the request is refused (401, UNAUTHENTICATED, the gRPC message)", async () => {
    const res = await post(sidecar.port, {}, INITIALIZE);
    expect(res.status).toBe(401);
    expect(JSON.parse(res.body).error.message).toBe("UNAUTHENTICATED: missing metadata x-tenant-id");
  });

  it("a Host that is not a loopback name is refused: a browser page cannot rebind its name to the sidecar", async () => {
    const res = await post(sidecar.port, { host: "evil.example:80", "x-tenant-id": "t", "x-principal-id": "p" }, INITIALIZE);
    expect(res.status).toBe(403);
    expect(res.body).toContain("not a loopback name");
  });

  it("is stateless: GET and DELETE are 405; the RPC port still serves gRPC and /metrics", async () => {
    for (const method of ["GET", "DELETE"]) {
      const res = await post(sidecar.port, { "x-tenant-id": "t", "x-principal-id": "p" }, undefined, method);
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe("POST");
    }
    const metrics = await fetch(`http://127.0.0.1:${sidecar.port}/metrics`);
    expect(metrics.status).toBe(200);
  });

  it("each tool call is an RPC as any other: its call log line names the method and the principal", async () => {
    const mcp = await mcpOverHttp(`http://127.0.0.1:${sidecar.port}/mcp`, { "x-tenant-id": "t-log", "x-principal-id": "p-log" });
    try {
      await mcp.call("memory_search", { text: "anything at all" });
    } finally {
      await mcp.close();
    }
    // Call lines are written in batches: wait for the batch.
    const callLine = () =>
      sidecar
        .logs()
        .split("\n")
        .filter((l) => l.includes('"msg":"call"'))
        .map((l) => JSON.parse(l) as { method: string; tenant: string; principal: string })
        .find((l) => l.principal === "p-log");
    for (let waited = 0; !callLine() && waited < 5_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    expect(callLine()).toMatchObject({ method: "memory.v1.MemoryService/Search", tenant: "t-log" });
  });
});

describe("/mcp on the sidecar, JWT identity", () => {
  const ISSUER = "https://issuer.example";
  const AUDIENCE = "recall";
  const SECRET = "an-hmac-secret-of-at-least-32-characters!";
  const token = (sub: string, exp: string | number = "5m") =>
    new SignJWT({ tenant_id: "acme", sub }).setProtectedHeader({ alg: "HS256" }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime(exp).sign(new TextEncoder().encode(SECRET));
  let sidecar: SidecarProcess;
  let c: Clients;
  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", {
      RECALL_MCP: "on",
      RECALL_IDENTITY: "jwt",
      RECALL_JWT_SECRET: SECRET,
      RECALL_JWT_ISSUER: ISSUER,
      RECALL_JWT_AUDIENCE: AUDIENCE,
    });
    c = connect(sidecar.address);
  }, 60_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  it("the bearer token names the principal, as for gRPC; another token's principal sees nothing of it", async () => {
    const andy = await token("andy");
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's passport number ends in 778." })] }, { token: andy });
    const mine = await mcpOverHttp(`http://127.0.0.1:${sidecar.port}/mcp`, { authorization: `Bearer ${andy}` });
    const theirs = await mcpOverHttp(`http://127.0.0.1:${sidecar.port}/mcp`, { authorization: `Bearer ${await token("bob")}` });
    try {
      expect(textOf(await mine.call("memory_search", { text: "passport number", subjects: ["Andy"] }))).toContain("778");
      const other = await theirs.call("memory_search", { text: "passport number", subjects: ["Andy"] });
      expect(other.isError).toBeFalsy();
      expect(JSON.stringify(other)).not.toContain("778");
    } finally {
      await mine.close();
      await theirs.close();
    }
  });

  it("recall mcp --token-file calls a jwt-mode sidecar as the token's principal, reading the file again for each call", async () => {
    const dir = await mkdtemp(join(tmpdir(), "recall-mcp-token-"));
    const file = join(dir, "token");
    const andy = await token("andy");
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's bike lock code is 9931." })] }, { token: andy });
    await writeFile(file, `${andy}\n`);
    const mcp = await mcpOverStdio(["--address", sidecar.address, "--token-file", file]);
    try {
      expect(textOf(await mcp.call("memory_search", { text: "bike lock code", subjects: ["Andy"] }))).toContain("9931");
      // The file renewed in place, now naming another principal: the next call is that principal's.
      await writeFile(file, await token("bob"));
      const asBob = await mcp.call("memory_search", { text: "bike lock code", subjects: ["Andy"] });
      expect(asBob.isError).toBeFalsy();
      expect(JSON.stringify(asBob)).not.toContain("9931");
      await writeFile(file, "not.a.jwt");
      expect(textOf(await mcp.call("memory_search", { text: "bike lock code" }))).toMatch(/^UNAUTHENTICATED: bearer token rejected/);
    } finally {
      await mcp.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a token gRPC refuses is refused the same way (401 with WWW-Authenticate; the same message)", async () => {
    const expired = await token("andy", Math.floor(Date.now() / 1000) - 60);
    const grpcSays = await failure(unary(c.memory, "Search", { text: "x" }, { token: expired }));
    for (const authorization of [`Bearer ${expired}`, "Bearer not.a.jwt", ""]) {
      const res = await post(sidecar.port, authorization ? { authorization } : {}, INITIALIZE);
      expect(res.status).toBe(401);
      expect(res.headers["www-authenticate"]).toMatch(/^Bearer/);
      if (authorization === `Bearer ${expired}`) expect(JSON.parse(res.body).error.message).toBe(`UNAUTHENTICATED: ${grpcSays.details}`);
    }
    // Identity headers cannot override the token.
    const mismatch = await post(sidecar.port, { authorization: `Bearer ${await token("andy")}`, "x-principal-id": "bob" }, INITIALIZE);
    expect(mismatch.status).toBe(403);
    expect(mismatch.body).toContain("PERMISSION_DENIED");
  });
});
