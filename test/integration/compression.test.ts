import { connect as http2Connect } from "node:http2";
import { beforeAll, describe, expect, it } from "vitest";
import { connect, unary } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { useSidecar } from "../support/local-sidecar.js";

/**
 * Responses are never compressed, whatever the client accepts: they go to an
 * agent on the same host, where gzip costs CPU on both ends and saves nothing.
 * Each answer checked here is larger than connect's default 1 KiB threshold,
 * so it would have been compressed before.
 */

describe("response compression (pglite)", () => {
  const { sidecar, c } = useSidecar("pglite");
  const me = newIdentity();
  beforeAll(async () => {
    const beliefs = Array.from({ length: 12 }, (_, i) =>
      beliefMsg({ subject: `service-${i}`, statement: `service-${i} deploys to the staging cluster after CI passes on main, on weekdays only, number ${i}.` }),
    );
    await unary(c.write, "PutBeliefs", { beliefs }, me);
  });

  it("answers gRPC uncompressed to a client that accepts gzip", async () => {
    const text = Buffer.from("how does a service deploy to staging", "utf8");
    const request = Buffer.concat([Buffer.from([0x0a, text.length]), text]); // SearchRequest.text = 1
    const envelope = Buffer.alloc(5 + request.length);
    envelope.writeUInt32BE(request.length, 1);
    request.copy(envelope, 5);

    const session = http2Connect(`http://${sidecar.address}`);
    try {
      const { headers, body } = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
        const stream = session.request({
          ":method": "POST",
          ":path": "/memory.v1.MemoryService/Search",
          "content-type": "application/grpc",
          te: "trailers",
          "grpc-accept-encoding": "gzip",
          "x-tenant-id": me.tenant,
          "x-principal-id": me.principal,
        });
        let responseHeaders: Record<string, unknown> = {};
        const chunks: Buffer[] = [];
        stream.on("response", (h) => (responseHeaders = h));
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () => resolve({ headers: responseHeaders, body: Buffer.concat(chunks) }));
        stream.on("error", reject);
        stream.end(envelope);
      });
      // grpc-encoding only names the algorithm messages may use; each envelope's first byte says whether it did.
      expect(headers[":status"]).toBe(200);
      expect(body.length).toBeGreaterThan(1024);
      expect(body[0]).toBe(0);
      expect(body.readUInt32BE(1)).toBe(body.length - 5);
    } finally {
      session.close();
    }
  });

  it("answers Connect unary calls uncompressed to a client that accepts gzip", async () => {
    const res = await fetch(`http://${sidecar.address}/memory.v1.MemoryService/Search`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "connect-protocol-version": "1",
        "accept-encoding": "gzip",
        "x-tenant-id": me.tenant,
        "x-principal-id": me.principal,
      },
      body: JSON.stringify({ text: "how does a service deploy to staging" }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBeNull();
    expect((await res.text()).length).toBeGreaterThan(1024);
  });
});
