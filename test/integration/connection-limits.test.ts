import * as http2 from "node:http2";
import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, unary, type Clients } from "../support/grpc-client.js";
import { FRAME, rawConnect } from "../support/raw-h2.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 12, defect 8 (and the stream bound of defect 7): connections that say
 * nothing, send headers slowly, or sit idle are closed; each HTTP/2
 * connection is told how many streams it may open. Raw sockets, against the
 * real process, with short timeouts so the test does not wait long. Closing
 * is asserted, never how soon.
 */

const HEADERS_TIMEOUT_MS = 400;
const IDLE_TIMEOUT_MS = 600;
const MAX_STREAMS = 7;

describe("connection limits (pglite)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;

  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", {
      RECALL_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
      RECALL_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
      RECALL_MAX_CONCURRENT_STREAMS: String(MAX_STREAMS),
    });
    c = connect(sidecar.address);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  const socket = async () => {
    const s = net.connect({ host: "127.0.0.1", port: sidecar.port });
    s.on("error", () => {});
    await new Promise<void>((resolve) => s.once("connect", () => resolve()));
    return { s, closed: new Promise<void>((resolve) => s.once("close", () => resolve())) };
  };

  it("closes TCP connections that never send a byte", async () => {
    const conns = await Promise.all(Array.from({ length: 20 }, socket));
    await Promise.all(conns.map((x) => x.closed));
    expect(conns.every((x) => x.s.destroyed)).toBe(true);
  });

  it("closes HTTP/1.1 connections whose headers never finish", async () => {
    const conns = await Promise.all(Array.from({ length: 5 }, socket));
    // A slow-headers client: a byte now and then, never the blank line.
    const drip = conns.map(({ s }) => {
      s.write("POST /memory.v1.MemoryService/Search HTTP/1.1\r\nHost: x\r\n");
      return setInterval(() => s.writable && s.write("X-Slow: y\r\n"), 50);
    });
    try {
      await Promise.all(conns.map((x) => x.closed));
    } finally {
      drip.forEach(clearInterval);
    }
  });

  it("closes HTTP/2 connections that open no stream, and ones left idle after a call", async () => {
    const silent = await rawConnect("127.0.0.1", sidecar.port);
    await silent.closed;
    expect(silent.frames.some((f) => f.type === FRAME.GOAWAY)).toBe(true);

    const session = http2.connect(`http://${sidecar.address}`);
    session.on("error", () => {});
    const closed = new Promise<void>((resolve) => session.once("close", () => resolve()));
    const goaway = new Promise<void>((resolve) => session.once("goaway", () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const stream = session.request({ ":method": "POST", ":path": "/grpc.health.v1.Health/Check", "content-type": "application/grpc", te: "trailers" });
      stream.on("data", () => {});
      stream.on("close", () => resolve());
      stream.on("error", reject);
      stream.end(Buffer.from([0, 0, 0, 0, 0]));
    });
    await goaway;
    await closed;
  });

  it("tells each HTTP/2 connection how many concurrent streams it may open", async () => {
    const session = http2.connect(`http://${sidecar.address}`);
    session.on("error", () => {});
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve));
      expect(settings.maxConcurrentStreams).toBe(MAX_STREAMS);
    } finally {
      session.destroy();
    }
  });

  it("keeps serving connections that do call", async () => {
    // The grpc-js channel reconnects transparently after an idle GOAWAY.
    for (let i = 0; i < 3; i++) {
      expect((await unary(c.health, "Check", { service: "" }, {})).status).toBe("SERVING");
      await new Promise((r) => setTimeout(r, IDLE_TIMEOUT_MS + 200));
    }
  });
});
