import type * as http from "node:http";
import type * as http2 from "node:http2";

/**
 * Ends a call that is still running when the shutdown grace period ends with
 * status UNAVAILABLE, in its own protocol's words. Destroying its connection
 * instead would reset an HTTP/2 stream with code 0, which gRPC clients report
 * as INTERNAL ("Call ended without gRPC status") and do not retry, and cut an
 * HTTP/1.1 call with a bare connection reset and no status at all. Whatever
 * the handler writes after this is dropped (connect-node treats it as an
 * aborted call).
 *
 * - gRPC: grpc-status 14 in the trailers.
 * - gRPC-Web: the trailer frame (flag 0x80) with grpc-status 14.
 * - Connect streaming: the end-stream message (flag 0x02) with the error.
 * - Connect unary (and anything else): HTTP 503 with the Connect error body
 *   {"code":"unavailable"}, when no headers were sent yet.
 */

const GRPC_UNAVAILABLE = "14";

type Protocol = "grpc" | "grpc-web" | "connect-stream" | "other";

export function protocolOf(contentType: string): Protocol {
  if (/^application\/grpc-web/.test(contentType)) return "grpc-web";
  if (/^application\/grpc(\+|;|$)/.test(contentType)) return "grpc";
  if (/^application\/connect\+/.test(contentType)) return "connect-stream";
  return "other";
}

export function endWithUnavailable(res: http2.Http2ServerResponse | http.ServerResponse, message: string): void {
  const stream = "stream" in res ? res.stream : undefined;
  if (res.writableEnded || res.destroyed || stream?.destroyed || stream?.closed) return;
  const contentType = String(res.req.headers["content-type"] ?? "");
  const protocol = protocolOf(contentType);
  const fresh = !res.headersSent;
  const closing = stream ? {} : { connection: "close" };
  switch (protocol) {
    case "grpc": {
      // Headers, then the status in trailers: what every gRPC client reads (a status in the
      // first HEADERS frame counts only when that frame also ends the stream).
      if (fresh) res.writeHead(200, { "content-type": "application/grpc" });
      res.addTrailers({ "grpc-status": GRPC_UNAVAILABLE, "grpc-message": encodeURIComponent(message) });
      res.end();
      return;
    }
    case "grpc-web": {
      if (fresh) res.writeHead(200, { "content-type": contentType, ...closing });
      const trailer = Buffer.from(`grpc-status: ${GRPC_UNAVAILABLE}\r\ngrpc-message: ${encodeURIComponent(message)}\r\n`, "utf8");
      res.end(envelope(0x80, trailer));
      return;
    }
    case "connect-stream": {
      if (fresh) res.writeHead(200, { "content-type": contentType, ...closing });
      res.end(envelope(0x02, Buffer.from(JSON.stringify({ error: { code: "unavailable", message } }), "utf8")));
      return;
    }
    case "other": {
      if (fresh) {
        res.writeHead(503, { "content-type": "application/json", ...closing });
        res.end(JSON.stringify({ code: "unavailable", message }));
      } else res.end();
      return;
    }
  }
}

function envelope(flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}
