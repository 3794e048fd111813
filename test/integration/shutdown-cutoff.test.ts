import { afterEach, describe, expect, it } from "vitest";
import { connect, failure, grpc, unary } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { envelope, lengthDelimited } from "../support/raw-grpc.js";
import { FRAME, frame, grpcRequestHeaders, headerBlock, rawConnect } from "../support/raw-h2.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 12, defect 5. A call still running when the shutdown grace period
 * ends gets UNAVAILABLE (retryable), not a bare RST_STREAM that clients
 * report as INTERNAL. A stream opened on a connection after the server's
 * GOAWAY is not served: its id is above the GOAWAY's last-stream-id, which
 * tells the client it was never processed (RFC 9113 6.8), and the server
 * never answers it (one that raced the GOAWAY is reset REFUSED_STREAM).
 */

// The lexical arm is held for 5 s, so a search is still running when a 300 ms grace period ends.
const SLOW = { RECALL_SHUTDOWN_GRACE_MS: "300", RECALL_FAULT_ARM_DELAY: "lexical=5000" };
const REFUSED_STREAM = 7;

describe("shutdown cut-off (pglite)", () => {
  let sidecar: SidecarProcess | undefined;
  afterEach(async () => {
    await sidecar?.stop();
    sidecar = undefined;
  });

  it("ends calls cut at the end of the grace period with UNAVAILABLE", async () => {
    sidecar = await startSidecarProcess("pglite", SLOW);
    const me = newIdentity();
    const c = connect(sidecar.address);
    try {
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "veetbot deploys to Fly.io." })] }, me);
      const calls = Array.from({ length: 3 }, () => failure(unary(c.memory, "Search", { text: "how does veetbot deploy" }, me, 20_000)));
      // Let the calls reach the server (their arms are then held for 5 s).
      await new Promise((r) => setTimeout(r, 300));
      const stopped = sidecar.stop();
      const results = await Promise.all(calls);
      for (const r of results) {
        expect(r.code, r.details).toBe(grpc.status.UNAVAILABLE);
        expect(r.details).toMatch(/shutting down/);
      }
      expect(await stopped).toBe(0);
      expect(sidecar.logs()).toContain("grace period expired");
    } finally {
      c.close();
    }
  });

  it("gives an HTTP/1.1 Connect call cut at the end of the grace period its unavailable error body (issue 38, item 4)", async () => {
    sidecar = await startSidecarProcess("pglite", SLOW);
    const me = newIdentity();
    const c = connect(sidecar.address);
    try {
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "veetbot deploys to Fly.io." })] }, me);
    } finally {
      c.close();
    }
    // fetch speaks HTTP/1.1: a Connect unary call, as a browser or curl makes it.
    const call = fetch(`http://${sidecar.address}/memory.v1.MemoryService/Search`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", "x-tenant-id": me.tenant, "x-principal-id": me.principal, "connect-timeout-ms": "20000" },
      body: JSON.stringify({ text: "how does veetbot deploy" }),
    });
    await new Promise((r) => setTimeout(r, 300));
    const stopped = sidecar.stop();
    const res = await call;
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ code: "unavailable", message: expect.stringMatching(/shutting down/) });
    expect(await stopped).toBe(0);
  });

  it("refuses a new stream on a connection that was sent GOAWAY", async () => {
    sidecar = await startSidecarProcess("pglite", { ...SLOW, RECALL_SHUTDOWN_GRACE_MS: "4000" });
    const me = newIdentity();
    const conn = await rawConnect("127.0.0.1", sidecar.port);
    try {
      const search = (streamId: number) =>
        Buffer.concat([
          frame(
            FRAME.HEADERS,
            0x4,
            streamId,
            headerBlock(grpcRequestHeaders("/memory.v1.MemoryService/Search", sidecar!.address, {
              "x-tenant-id": me.tenant,
              "x-principal-id": me.principal,
              "grpc-timeout": "20S",
            })),
          ),
          frame(FRAME.DATA, 0x1, streamId, envelope(lengthDelimited(1, Buffer.from("how does veetbot deploy")))),
        ]);
      // Stream 1 is in flight (its lexical arm is held) and keeps the connection open through the grace period.
      conn.write(search(1));
      await new Promise((r) => setTimeout(r, 300));
      const stopped = sidecar.stop();
      const goaway = await conn.waitFor((f) => f.type === FRAME.GOAWAY);
      conn.write(search(3));
      // Stream 1 still gets its answer (HEADERS), not a reset.
      const first = await conn.waitFor((f) => f.streamId === 1 && (f.type === FRAME.HEADERS || f.type === FRAME.RST_STREAM));
      expect(first.type).toBe(FRAME.HEADERS);
      await conn.closed;
      expect(goaway.payload.readUInt32BE(0) & 0x7fffffff).toBeLessThan(3);
      const onStream3 = conn.frames.filter((f) => f.streamId === 3);
      for (const f of onStream3) expect(f.type === FRAME.RST_STREAM && f.payload.readUInt32BE(0) === REFUSED_STREAM).toBe(true);
      expect(await stopped).toBe(0);
    } finally {
      conn.destroy();
    }
  });
});
