import * as http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { envelope, lengthDelimited } from "../support/raw-grpc.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 38, items 1, 2 and 6, with a raw HTTP/2 client: the bytes of requests
 * in flight are bounded per connection and per process (beyond them a call
 * fails RESOURCE_EXHAUSTED before its message is read); a stream answered
 * before its request was all read is reset, so the connection stays usable
 * and shutdown is not held; a message flag byte other than 0 or 1 is refused.
 */

const MB = 1024 * 1024;
const SEARCH = "/memory.v1.MemoryService/Search";
const RESOURCE_EXHAUSTED = 8;
const INVALID_ARGUMENT = 3;

interface Answer {
  grpcStatus: number | undefined;
  grpcMessage: string;
  /** The stream closed (answered and reset, or ended) on the client. */
  closed: Promise<void>;
}

/** Opens a Search stream and writes `body` without ending it (unless `end`); the answer's status once it comes. */
function openStream(session: http2.ClientHttp2Session, headers: Record<string, string>, body: Buffer, end = false) {
  const stream = session.request({ ":method": "POST", ":path": SEARCH, "content-type": "application/grpc", te: "trailers", ...headers });
  const answer: Answer = { grpcStatus: undefined, grpcMessage: "", closed: new Promise((resolve) => stream.once("close", () => resolve())) };
  const status = new Promise<Answer>((resolve) => {
    const take = (h: http2.IncomingHttpHeaders) => {
      if (h["grpc-status"] === undefined) return;
      answer.grpcStatus = Number(h["grpc-status"]);
      answer.grpcMessage = decodeURIComponent(String(h["grpc-message"] ?? ""));
      resolve(answer);
    };
    stream.on("response", take);
    stream.on("trailers", take);
    stream.once("close", () => resolve(answer));
  });
  stream.on("error", () => {});
  stream.on("data", () => {});
  if (end) stream.end(body);
  else stream.write(body);
  return { stream, status, closed: answer.closed };
}

describe("bounded request memory (pglite, raw HTTP/2)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  const headers = { "x-tenant-id": me.tenant, "x-principal-id": me.principal, "grpc-timeout": "20S" };
  const search = envelope(lengthDelimited(1, Buffer.from("how does veetbot deploy")));

  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", {
      RECALL_MAX_CONNECTION_REQUEST_BYTES: String(3 * MB),
      RECALL_MAX_INFLIGHT_REQUEST_BYTES: String(5 * MB),
      RECALL_SHUTDOWN_GRACE_MS: "20000",
    });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "veetbot deploys to Fly.io." })] }, me);
  });
  afterAll(async () => {
    c?.close();
    await sidecar?.stop();
  });

  const session = () => {
    // Room to queue many large requests: at the default (10 MB) node:http2 resets its own new streams.
    const s = http2.connect(`http://${sidecar.address}`, { maxSessionMemory: 1024 });
    s.on("error", () => {});
    return s;
  };
  /** A message prefix announcing `bytes` of payload, and its first kilobyte: the rest never comes. */
  const announce = (bytes: number) => {
    const head = Buffer.alloc(5 + 1024);
    head.writeUInt32BE(bytes, 1);
    return head;
  };
  const validSearch = async (s: http2.ClientHttp2Session) => (await openStream(s, headers, search, true).status).grpcStatus;

  it("refuses, unread, a message that would take a connection over its limit, and keeps the connection usable", async () => {
    const s = session();
    try {
      // 1 MiB each: two fit in the connection's 3 MiB, the third and fourth do not.
      const held = [openStream(s, headers, announce(MB)), openStream(s, headers, announce(MB))];
      await new Promise((r) => setTimeout(r, 300));
      const refused = [openStream(s, headers, announce(2 * MB)), openStream(s, headers, announce(2 * MB))];
      for (const r of refused) {
        const a = await r.status;
        expect(a.grpcStatus, a.grpcMessage).toBe(RESOURCE_EXHAUSTED);
        expect(a.grpcMessage).toMatch(/connection limit/);
        // Reset after the answer, though the client never finished its request.
        await r.closed;
      }
      expect(await validSearch(s)).toBe(0);
      // The held ones still wait for their bytes; cancelling them gives their reservations back.
      for (const h of held) h.stream.close(http2.constants.NGHTTP2_CANCEL);
      await Promise.all(held.map((h) => h.status));
      const again = openStream(s, headers, announce(2 * MB));
      await new Promise((r) => setTimeout(r, 300));
      expect(again.stream.closed).toBe(false);
      again.stream.close(http2.constants.NGHTTP2_CANCEL);
    } finally {
      s.destroy();
    }
  });

  it("refuses a message that would take the process over its limit, whatever its connection", async () => {
    const sessions = [session(), session(), session()];
    try {
      const held = sessions.slice(0, 2).map((s) => openStream(s, headers, announce(2 * MB)));
      await new Promise((r) => setTimeout(r, 300));
      const refused = await openStream(sessions[2]!, headers, announce(2 * MB)).status;
      expect(refused.grpcStatus, refused.grpcMessage).toBe(RESOURCE_EXHAUSTED);
      expect(refused.grpcMessage).toMatch(/process limit/);
      for (const h of held) h.stream.close(http2.constants.NGHTTP2_CANCEL);
      await Promise.all(held.map((h) => h.closed));
      expect(await validSearch(sessions[2]!)).toBe(0);
    } finally {
      for (const s of sessions) s.destroy();
    }
  });

  it("resets over-size streams that keep sending, so the connection keeps answering", async () => {
    const s = session();
    try {
      // 4.2 MB messages (over the 4 MiB message limit), sent in full: 120 of them on one connection.
      const big = Buffer.alloc(5 + 4_200_000);
      big.writeUInt32BE(4_200_000, 1);
      const calls = Array.from({ length: 120 }, () => openStream(s, headers, big, true));
      const answers = await Promise.all(calls.map((x) => x.status));
      for (const a of answers) expect(a.grpcStatus, a.grpcMessage).toBe(RESOURCE_EXHAUSTED);
      await Promise.all(calls.map((x) => x.closed));
      expect(await validSearch(s)).toBe(0);
    } finally {
      s.destroy();
    }
  });

  it("refuses a message whose flag byte is neither 0 nor 1", async () => {
    const s = session();
    try {
      for (const flag of [0x80, 0x02]) {
        const a = await openStream(s, headers, envelope(lengthDelimited(1, Buffer.from("deploy")), flag), true).status;
        expect(a.grpcStatus, a.grpcMessage).toBe(INVALID_ARGUMENT);
        expect(a.grpcMessage).toMatch(/^request: message flag 0x/);
      }
      expect(await validSearch(s)).toBe(0);
    } finally {
      s.destroy();
    }
  });
});

describe("shutdown with an over-limit client connected (pglite, raw HTTP/2)", () => {
  it("is not held by a client that never finishes an over-size request", async () => {
    const sidecar = await startSidecarProcess("pglite", { RECALL_SHUTDOWN_GRACE_MS: "20000" });
    const me = newIdentity();
    const headers = { "x-tenant-id": me.tenant, "x-principal-id": me.principal, "grpc-timeout": "20S" };
    const s = http2.connect(`http://${sidecar.address}`, { maxSessionMemory: 1024 });
    s.on("error", () => {});
    // Announces 8 MiB (over the 4 MiB message limit), sends 1 KiB of it, never finishes.
    const head = Buffer.alloc(5 + 1024);
    head.writeUInt32BE(8 * MB, 1);
    const stuck = openStream(s, headers, head);
    // And two 4.2 MB messages sent in full, answered before they are read: their streams, closed
    // but never destroyed, held shutdown for the whole grace period (10.4 s of 10 s in the bench).
    const big = Buffer.alloc(5 + 4_200_000);
    big.writeUInt32BE(4_200_000, 1);
    const full = [openStream(s, headers, big, true), openStream(s, headers, big, true)];
    for (const a of await Promise.all([stuck.status, ...full.map((f) => f.status)])) expect(a.grpcStatus).toBe(RESOURCE_EXHAUSTED);
    const code = await sidecar.stop();
    s.destroy();
    expect(code).toBe(0);
    expect(sidecar.logs(), sidecar.logs().slice(-3000)).not.toContain("grace period expired");
  });
});
