import * as http2 from "node:http2";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalSidecar, type LocalSidecar } from "../../src/testing/index.js";

/**
 * A request whose authority is not a valid host (grpc-python sends a Unix socket's path,
 * "tmp%2Frecall.sock") crashed the sidecar: connect-node threw while building its URL.
 */

/** One gRPC Search call with the given :authority; resolves with its grpc-status. */
function searchWithAuthority(address: string, authority: string): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`http://${address}`);
    session.on("error", reject);
    const body = Buffer.alloc(5); // an empty SearchRequest: a zero-length message
    const stream = session.request({
      ":method": "POST",
      ":path": "/memory.v1.MemoryService/Search",
      ":authority": authority,
      "content-type": "application/grpc",
      te: "trailers",
      "x-tenant-id": "acme",
      "x-principal-id": "andy",
    });
    let status: string | undefined;
    stream.on("response", (headers) => (status = headers["grpc-status"] as string | undefined));
    stream.on("trailers", (trailers) => (status = trailers["grpc-status"] as string | undefined));
    stream.on("error", reject);
    stream.on("close", () => {
      session.close();
      resolve(status);
    });
    stream.resume();
    stream.end(body);
  });
}

describe("a request's authority", () => {
  let sidecar: LocalSidecar;
  beforeAll(async () => {
    sidecar = await startLocalSidecar();
  });
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  it("that is not a valid host is served as localhost, and the sidecar keeps serving", async () => {
    // INVALID_ARGUMENT (3): the empty search's text is missing; the point is an answer, not a crash.
    expect(await searchWithAuthority(sidecar.address, "tmp%2Frecall.sock")).toBe("3");
    expect(await searchWithAuthority(sidecar.address, `127.0.0.1:${sidecar.port}`)).toBe("3");
  });
});
