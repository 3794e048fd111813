import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Clients } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity } from "../support/grpc-fixtures.js";
import { envelope, lengthDelimited, rawCall, varint } from "../support/raw-grpc.js";
import { rssMb } from "../support/process-memory.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Bad input is the caller's mistake: INVALID_ARGUMENT naming the field (or
 * "request" when the bytes do not decode), never INTERNAL, never a write.
 * Issue 12, defects 6, 7 and 10, over real gRPC against the real process.
 */

const NUL = "a\u0000b";
const SEARCH = "/memory.v1.MemoryService/Search";

describe("hostile input (pglite)", () => {
  let sidecar: SidecarProcess;
  let c: Clients;
  const me = newIdentity();
  const headers = () => ({ "x-tenant-id": me.tenant, "x-principal-id": me.principal });

  beforeAll(async () => {
    // A small trace queue: were NUL searches to leave unstorable traces behind, it would fill at once.
    sidecar = await startSidecarProcess("pglite", { RECALL_TRACE_RETRY_QUEUE_MAX: "5", RECALL_MAX_REQUEST_BYTES: String(1024 * 1024) });
    c = connect(sidecar.address);
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg()] }, me);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  const invalid = async (call: Promise<unknown>) => {
    const e = await failure(call);
    expect(e.code, e.details).toBe(grpc.status.INVALID_ARGUMENT);
    return e.details;
  };

  it("refuses a NUL byte in any string field, naming it", async () => {
    const cases: [() => Promise<unknown>, string][] = [
      [() => unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: NUL })] }, me), "beliefs[0].statement"],
      [() => unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: NUL })] }, me), "beliefs[0].subject"],
      [() => unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ session_id: NUL })] }, me), "episodes[0].session_id"],
      [() => unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ content: NUL })] }, me), "episodes[0].content"],
      [() => unary(c.memory, "Search", { text: "deploy", subjects: ["ok", NUL] }, me), "subjects[1]"],
      [() => unary(c.memory, "Search", { text: "deploy", scope: NUL }, me), "scope"],
      [() => unary(c.memory, "Search", { text: "deploy", turn_id: NUL }, me), "turn_id"],
      [() => serverStream(c.memory, "Recall", { turn_id: NUL, query: { text: "x" } }, me), "turn_id"],
      [() => serverStream(c.memory, "Recall", { query: { text: "x", current_scope: NUL } }, me), "query.current_scope"],
      [() => unary(c.write, "RecordCitations", { trace_id: randomUUID(), belief_ids: [randomUUID()], turn_id: NUL }, me), "turn_id"],
      [() => unary(c.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: randomUUID(), kind: "REJECTION_KIND_NOT_HERE", scope: NUL }, me), "scope"],
      [() => unary(c.write, "DeleteSessionTraces", { session_id: NUL }, me), "session_id"],
    ];
    for (const [call, field] of cases) expect(await invalid(call())).toBe(`${field}: must not contain a NUL character`);
  });

  it("answers a NUL in Search text INVALID_ARGUMENT, leaving no unstorable trace behind", async () => {
    for (let i = 0; i < 20; i++) expect(await invalid(unary(c.memory, "Search", { text: `deploy ${NUL}` }, me))).toMatch(/^text:/);
    // The queue holds 5: had those 20 traces been queued, this search would now be UNAVAILABLE.
    const ok = await unary(c.memory, "Search", { text: "what does Andy prefer" }, me);
    expect(ok.result.trace_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("refuses int64 sequences a JavaScript number cannot hold", async () => {
    for (const sequence of ["9223372036854775807", "-9223372036854775808", "9007199254740993"]) {
      expect(await invalid(unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ sequence })] }, me))).toMatch(/^episodes\[0\]\.sequence:/);
    }
    const ok = await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ sequence: "9007199254740991" })] }, me);
    expect(ok.appended).toBe(1);
  });

  it("refuses max_items and budget_tokens above the documented maximum", async () => {
    expect(await invalid(serverStream(c.memory, "Recall", { query: { text: "x", max_items: 1_000_000_000 } }, me))).toBe(
      "query.max_items: must be at most 200",
    );
    expect(await invalid(unary(c.memory, "Search", { text: "x", max_items: 201 }, me))).toBe("max_items: must be at most 200");
    expect(await invalid(unary(c.memory, "Search", { text: "x", budget_tokens: 16_001 }, me))).toBe("budget_tokens: must be at most 16000");
  });

  it("refuses lone surrogates and invalid UTF-8, from every client", async () => {
    // grpc-js (protobuf.js) writes a lone surrogate as bytes that are not UTF-8.
    expect(await invalid(unary(c.memory, "Search", { text: "deploy \ud800" }, me))).toMatch(/^request: could not be decoded/);
    // JSON can carry the lone surrogate itself.
    const res = await fetch(`http://${sidecar.address}${SEARCH}`, {
      method: "POST",
      headers: { "content-type": "application/json", "connect-protocol-version": "1", ...headers() },
      body: '{"text":"deploy \\ud800"}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/SearchRequest\.text .*invalid UTF8/) });
  });

  it("answers malformed protobuf and framing INVALID_ARGUMENT", async () => {
    const unknownGroups = Buffer.concat([...Array.from({ length: 200 }, () => varint((15 << 3) | 3)), ...Array.from({ length: 200 }, () => varint((15 << 3) | 4))]);
    const bodies: [string, Buffer, Record<string, string>?][] = [
      ["invalid UTF-8", envelope(lengthDelimited(1, Buffer.from([0x64, 0xff, 0xfe])))],
      ["premature EOF", envelope(Buffer.from([0x0a, 0x10, 0x61, 0x62]))],
      ["illegal tag (field 0)", envelope(Buffer.from([0x00, 0x01]))],
      ["illegal wire type", envelope(Buffer.from([0x0f, 0x01]))],
      ["deeply nested unknown groups", envelope(unknownGroups)],
      ["compressed flag without grpc-encoding", envelope(lengthDelimited(1, Buffer.from("deploy")), 1)],
      ["gzip flag with bytes that are not gzip", envelope(Buffer.from("not gzip at all"), 1), { "grpc-encoding": "gzip" }],
    ];
    for (const [what, body, extra] of bodies) {
      const answer = await rawCall(sidecar.address, { path: SEARCH, body, headers: { ...headers(), ...extra } });
      expect(answer.grpcStatus, `${what}: ${answer.grpcMessage}`).toBe(grpc.status.INVALID_ARGUMENT);
      expect(answer.grpcMessage, what).toMatch(/^request: /);
    }
  });

  it("answers malformed protobuf INVALID_ARGUMENT over gRPC-Web and Connect too", async () => {
    const garbage = Buffer.from([0x0a, 0x10, 0x61, 0x62]); // premature EOF
    const web = await fetch(`http://${sidecar.address}${SEARCH}`, {
      method: "POST",
      headers: { "content-type": "application/grpc-web+proto", ...headers() },
      body: envelope(garbage),
    });
    const trailer = Buffer.from(await web.arrayBuffer()).toString("latin1");
    expect(trailer).toMatch(/grpc-status: 3\r\n/);
    expect(decodeURIComponent(/grpc-message: (.*)\r\n/.exec(trailer)![1]!)).toMatch(/^request: could not be decoded/);
    const connectUnary = await fetch(`http://${sidecar.address}${SEARCH}`, {
      method: "POST",
      headers: { "content-type": "application/proto", "connect-protocol-version": "1", ...headers() },
      body: garbage,
    });
    expect(connectUnary.status).toBe(400);
    expect(await connectUnary.json()).toMatchObject({ code: "invalid_argument", message: expect.stringMatching(/^request: could not be decoded/) });
  });

  it("refuses a message above RECALL_MAX_REQUEST_BYTES without buffering it, and stays healthy", async () => {
    const rssBefore = rssMb(sidecar);
    const chunk = Buffer.alloc(1024 * 1024, 0x61);
    const huge = (total: number) => (stream: import("node:http2").ClientHttp2Stream) => {
      // Declares 100 MB, then streams it a megabyte at a time while the server lets it.
      stream.write(envelope(new Uint8Array(0), 0, total));
      let sent = 0;
      const pump = () => {
        while (sent < total && !stream.destroyed && !stream.closed) {
          sent += chunk.length;
          if (!stream.write(chunk)) return void stream.once("drain", pump);
        }
        if (!stream.destroyed && !stream.closed) stream.end();
      };
      pump();
    };
    const answers = await Promise.all(
      Array.from({ length: 4 }, () => rawCall(sidecar.address, { path: SEARCH, body: huge(100 * 1024 * 1024), headers: headers() })),
    );
    for (const a of answers) expect(a.grpcStatus, a.grpcMessage).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(rssMb(sidecar) - rssBefore).toBeLessThan(100);
    const health = await unary(c.health, "Check", { service: "" }, {});
    expect(health.status).toBe("SERVING");
  });
});
