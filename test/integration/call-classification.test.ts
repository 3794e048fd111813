import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { envelope, lengthDelimited, rawCall } from "../support/raw-grpc.js";
import { newIdentity } from "../support/grpc-fixtures.js";
import { parsePrometheusText } from "../support/prometheus-text.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 38, item 3: a caller's malformed bytes are INVALID_ARGUMENT in the
 * log line and the metric, for a server-streaming call (whose request is read
 * after the interceptors start) as for a unary one (read before them), and
 * never an INTERNAL or error-level line.
 */

type Json = Record<string, unknown>;
const INVALID_ARGUMENT = 3;
// Field 1, length-delimited, announcing 100 bytes that never come: "premature EOF".
const TRUNCATED = envelope(Buffer.from([0x0a, 100, 0x61]));

describe("one classification of request errors (pglite)", () => {
  let sidecar: SidecarProcess;
  const me = newIdentity();
  const headers = { "x-tenant-id": me.tenant, "x-principal-id": me.principal };

  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite");
  });
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  const lines = (method: string) =>
    sidecar
      .logs()
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as Json)
      .filter((l) => l.method === method);
  /** The call lines are written off the hot path: waits until `n` are there (or 10 s). */
  const linesOnceThere = async (method: string, n: number) => {
    for (let waited = 0; lines(method).length < n && waited < 10_000; waited += 100) await new Promise((r) => setTimeout(r, 100));
    return lines(method);
  };
  const statusCount = async (method: string, status: string) => {
    const scrape = parsePrometheusText(await (await fetch(`http://${sidecar.address}/metrics`)).text());
    return scrape.samples
      .filter((s) => s.name === "rpc_server_call_duration_seconds_count" && s.labels.rpc_method === method && s.labels.rpc_response_status_code === status)
      .reduce((sum, s) => sum + s.value, 0);
  };

  for (const [kind, method] of [
    ["server-streaming", "memory.v1.MemoryService/Recall"],
    ["unary", "memory.v1.MemoryService/Search"],
  ] as const) {
    it(`logs and counts an undecodable ${kind} request as INVALID_ARGUMENT`, async () => {
      for (let i = 0; i < 3; i++) {
        const answer = await rawCall(sidecar.address, { path: `/${method}`, body: TRUNCATED, headers });
        expect(answer.grpcStatus, answer.grpcMessage).toBe(INVALID_ARGUMENT);
        expect(answer.grpcMessage).toMatch(/^request: could not be decoded/);
      }
      const logged = await linesOnceThere(method, 3);
      expect(logged).toHaveLength(3);
      for (const line of logged) {
        expect(line).toMatchObject({ code: "INVALID_ARGUMENT", level: 30, msg: "call" });
      }
      expect(sidecar.logs()).not.toMatch(/"level":50[^\n]*call failed/);
      expect(await statusCount(method, "INVALID_ARGUMENT")).toBe(3);
      expect(await statusCount(method, "INTERNAL")).toBe(0);
    });
  }

  it("logs and counts a bad message flag as INVALID_ARGUMENT, once", async () => {
    const method = "memory.v1.MemoryService/RecallEpisodes";
    const answer = await rawCall(sidecar.address, { path: `/${method}`, body: envelope(lengthDelimited(1, Buffer.from("s")), 0x80), headers });
    expect(answer.grpcStatus, answer.grpcMessage).toBe(INVALID_ARGUMENT);
    expect(await linesOnceThere(method, 1)).toMatchObject([{ code: "INVALID_ARGUMENT", level: 30 }]);
    expect(await statusCount(method, "INVALID_ARGUMENT")).toBe(1);
  });

  it("still logs a call that reached the handler once, not twice", async () => {
    const method = "grpc.health.v1.Health/Check";
    const answer = await rawCall(sidecar.address, { path: `/${method}`, body: envelope(Buffer.alloc(0)), headers });
    expect(answer.grpcStatus).toBe(0);
    await linesOnceThere(method, 1);
    await new Promise((r) => setTimeout(r, 1000));
    expect(lines(method)).toHaveLength(1);
    expect(await statusCount(method, "OK")).toBe(1);
  });
});
