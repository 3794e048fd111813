import * as http from "node:http";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg } from "../support/grpc-fixtures.js";
import { rawCall } from "../support/raw-grpc.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 44, item 1 and 4: a web page that points its own name at 127.0.0.1
 * (DNS rebinding), or calls from another origin, must neither read nor write
 * memory. Each request is sent raw, with the Host and Origin a browser on the
 * attacker's page would send, as in the issue's curl.
 */

interface Answer {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
}

/** One HTTP/1.1 request to the TCP port (or the Unix socket), with exactly the headers given. */
function send(
  to: { port: number } | { socketPath: string },
  path: string,
  headers: Record<string, string>,
  body?: string,
  method = body === undefined ? "GET" : "POST",
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const where = "port" in to ? { host: "127.0.0.1", port: to.port } : { socketPath: to.socketPath };
    const req = http.request({ ...where, path, method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: text, headers: res.headers }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const ANDY = { "x-tenant-id": "demo-tenant", "x-principal-id": "andy" };
const CONNECT = { "content-type": "application/json", "connect-protocol-version": "1" };
const SEARCH = "/memory.v1.MemoryService/Search";
const MCP_INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
const MCP_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" };

describe("Host and Origin on the sidecar's port, trusted headers", () => {
  let dir: string;
  let socketPath: string;
  let sidecar: SidecarProcess;
  let c: Clients;
  let port: number;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-host-"));
    socketPath = join(dir, "recall.sock");
    sidecar = await startSidecarProcess("pglite", {
      RECALL_MCP: "on",
      RECALL_UI: "on",
      RECALL_SOCKET_PATH: socketPath,
      RECALL_ALLOWED_HOSTS: "memory.internal, .svc.example, pinned.example:8443",
    });
    port = sidecar.port;
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's editor is Helix." })] }, { tenant: "demo-tenant", principal: "andy" });
  }, 60_000);
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
    await rm(dir, { recursive: true, force: true });
  });

  const rebound = () => ({ host: `evil.example:${port}`, origin: `http://evil.example:${port}` });

  it("refuses the issue's rebinding curl on every service, 403 naming the host and RECALL_ALLOWED_HOSTS, and nothing is read or written", async () => {
    const search = await send({ port }, SEARCH, { ...rebound(), ...CONNECT, ...ANDY }, '{"text":"editor"}');
    expect(search.status).toBe(403);
    const error = JSON.parse(search.body) as { code: string; message: string };
    expect(error.code).toBe("permission_denied");
    expect(error.message).toContain(`Host "evil.example:${port}" is not a loopback name`);
    expect(error.message).toContain("add evil.example to RECALL_ALLOWED_HOSTS");
    expect(search.body).not.toContain("Helix");

    const calls: [string, string][] = [
      ["/memory.v1.MemoryWriteService/PutBeliefs", JSON.stringify({ beliefs: [{ subject: "Andy", statement: "Andy's editor is Notepad." }] })],
      ["/memory.v1.MemoryWriteService/ErasePrincipal", "{}"],
      ["/memory.v1.InspectService/ListBeliefs", "{}"],
    ];
    for (const [path, body] of calls) expect((await send({ port }, path, { ...rebound(), ...CONNECT, ...ANDY }, body)).status, path).toBe(403);
    // gRPC-Web, /mcp, the page and /metrics too: every request on the port.
    const web = await send({ port }, SEARCH, { ...rebound(), "content-type": "application/grpc-web+json", ...ANDY }, "");
    expect(web.status).toBe(403);
    expect(web.headers["grpc-status"]).toBe("7");
    expect((await send({ port }, "/mcp", { ...rebound(), ...MCP_HEADERS, "x-tenant-id": "t", "x-principal-id": "p" }, MCP_INIT)).status).toBe(403);
    expect((await send({ port }, "/ui/", rebound())).status).toBe(403);
    expect((await send({ port }, "/metrics", { host: `evil.example:${port}` })).status).toBe(403);

    // Nothing was planted and nothing erased.
    const listed = await unary(c.memory, "Search", { text: "which editor does Andy use", subjects: ["Andy"] }, { tenant: "demo-tenant", principal: "andy" });
    expect(JSON.stringify(listed)).toContain("Helix");
    expect(JSON.stringify(listed)).not.toContain("Notepad");
  });

  it("answers gRPC with a foreign :authority PERMISSION_DENIED, naming the host", async () => {
    const answer = await rawCall(sidecar.address, { path: SEARCH, body: Buffer.alloc(5), headers: { ":authority": `evil.example:${port}`, ...ANDY } });
    expect(answer.grpcStatus).toBe(7);
    expect(answer.grpcMessage).toContain(`Host "evil.example:${port}"`);
    // A loopback authority is served as before (INVALID_ARGUMENT: the empty search has no text).
    expect((await rawCall(sidecar.address, { path: SEARCH, body: Buffer.alloc(5), headers: { ":authority": `localhost:${port}`, ...ANDY } })).grpcStatus).toBe(3);
  });

  it("serves loopback names and the listed ones (a name, a .domain, a host:port)", async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `127.0.0.2:${port}`, `agent.localhost:${port}`, "memory.internal", `memory.internal:${port}`, "a.svc.example", "svc.example:1", "pinned.example:8443"]) {
      const res = await send({ port }, SEARCH, { host, ...CONNECT, ...ANDY }, '{"text":"which editor does Andy use","subjects":["Andy"]}');
      expect(res.status, host).toBe(200);
      expect(res.body, host).toContain("Helix");
    }
    for (const host of ["pinned.example:9000", "0.0.0.0", `memory.internal.evil.example:${port}`, `localhost.evil.example:${port}`, "svc.example.evil"]) {
      expect((await send({ port }, SEARCH, { host, ...CONNECT, ...ANDY }, '{"text":"editor"}')).status, host).toBe(403);
    }
  });

  it("refuses a present Origin that is not the sidecar's own, on RPCs, /mcp and the page (403); its own origin is served", async () => {
    const host = `127.0.0.1:${port}`;
    for (const origin of ["http://evil.example", `http://localhost:${port + 1}`, `https://127.0.0.1:${port}`, "null"]) {
      const rpc = await send({ port }, SEARCH, { host, origin, ...CONNECT, ...ANDY }, '{"text":"editor"}');
      expect(rpc.status, origin).toBe(403);
      expect(JSON.parse(rpc.body).message, origin).toMatch(/^Origin ".*" is not this sidecar's/);
      // The MCP transport specification: a present, invalid Origin is answered 403.
      const mcp = await send({ port }, "/mcp", { host, origin, ...MCP_HEADERS, "x-tenant-id": "t", "x-principal-id": "p" }, MCP_INIT);
      expect(mcp.status, origin).toBe(403);
      expect((await send({ port }, "/ui/", { host, origin })).status, origin).toBe(403);
    }
    for (const origin of [`http://127.0.0.1:${port}`, "http://memory.internal", "https://pinned.example:8443"]) {
      expect((await send({ port }, SEARCH, { host, origin, ...CONNECT, ...ANDY }, '{"text":"editor"}')).status, origin).toBe(200);
    }
    const mcp = await send({ port }, "/mcp", { host, origin: `http://127.0.0.1:${port}`, ...MCP_HEADERS, "x-tenant-id": "t", "x-principal-id": "p" }, MCP_INIT);
    expect(mcp.status).toBe(200);
  });

  it("requires Connect-Protocol-Version on Connect unary calls, so a cross-origin one needs a preflight", async () => {
    const without = await send({ port }, SEARCH, { "content-type": "application/json", ...ANDY }, '{"text":"editor"}');
    expect(without.status).toBe(400);
    expect(without.body).toContain("Connect-Protocol-Version");
    expect((await send({ port }, SEARCH, { ...CONNECT, ...ANDY }, '{"text":"editor"}')).status).toBe(200);
  });

  it("does not check the Unix socket: no browser reaches it, and grpc-python sends the socket's path as the authority", async () => {
    for (const host of ["evil.example", "tmp%2Frecall.sock"]) {
      const res = await send({ socketPath }, SEARCH, { host, ...CONNECT, ...ANDY }, '{"text":"which editor does Andy use","subjects":["Andy"]}');
      expect(res.status, host).toBe(200);
      expect(res.body).toContain("Helix");
    }
  });

  it("logs a refusal once, with the name and the setting to change", () => {
    const lines = sidecar.logs().split("\n").filter((l) => l.includes("request refused") && l.includes(`"host":"evil.example:${port}"`));
    expect(lines.length, lines.join("\n")).toBe(1);
    expect(lines[0]).toContain("RECALL_ALLOWED_HOSTS");
  });
});

describe("Host and Origin in the jwt mode", () => {
  const SECRET = "a-host-check-test-secret-of-32-chars!";
  const sign = (sub: string) =>
    new SignJWT({ tenant_id: "acme", sub }).setProtectedHeader({ alg: "HS256" }).setIssuer("https://issuer.test").setAudience("recall").setExpirationTime("5m").sign(new TextEncoder().encode(SECRET));
  let sidecar: SidecarProcess;
  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", {
      RECALL_UI: "on",
      RECALL_IDENTITY: "jwt",
      RECALL_JWT_SECRET: SECRET,
      RECALL_JWT_ISSUER: "https://issuer.test",
      RECALL_JWT_AUDIENCE: "recall",
    });
  }, 60_000);
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  it("serves any Host (a browser sends no bearer token by itself) but refuses a foreign Origin", async () => {
    const authorization = `Bearer ${await sign("andy")}`;
    const named = await send({ port: sidecar.port }, SEARCH, { host: "recall.svc.cluster.local:50051", authorization, ...CONNECT }, '{"text":"editor"}');
    expect(named.status).toBe(200);
    const foreign = await send({ port: sidecar.port }, SEARCH, { origin: "http://evil.example", authorization, ...CONNECT }, '{"text":"editor"}');
    expect(foreign.status).toBe(403);
  });

  it("marks every RPC reply to the page no-store, with a bearer token and no cookie too", async () => {
    const res = await send(
      { port: sidecar.port },
      "/memory.v1.InspectService/GetPrincipalSummary",
      { origin: `http://127.0.0.1:${sidecar.port}`, authorization: `Bearer ${await sign("andy")}`, ...CONNECT },
      "{}",
    );
    expect(res.status).toBe(200);
    expect(res.headers["cache-control"]).toBe("no-store");
  });
});
