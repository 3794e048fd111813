import type * as http2 from "node:http2";

/**
 * Ends a call that is still running when the shutdown grace period ends with
 * gRPC status UNAVAILABLE (14). Destroying its connection instead would reset
 * the stream with code 0, which clients report as INTERNAL ("Call ended
 * without gRPC status") and do not retry. Whatever the handler writes after
 * this is dropped by the stream (connect-node treats it as an aborted call).
 */

const GRPC_UNAVAILABLE = "14";

export function endWithUnavailable(res: http2.Http2ServerResponse, message: string): void {
  const stream = res.stream;
  if (stream.destroyed || stream.closed || res.writableEnded) return;
  const status = { "grpc-status": GRPC_UNAVAILABLE, "grpc-message": encodeURIComponent(message) };
  const isGrpc = /^application\/grpc(\+|;|$)/.test(String(res.req.headers["content-type"] ?? ""));
  if (!stream.headersSent) {
    if (!isGrpc) {
      res.writeHead(503, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: "unavailable", message }));
      return;
    }
    // Headers, then the status in trailers: what every gRPC client reads (a status in the
    // first HEADERS frame counts only when that frame also ends the stream).
    res.writeHead(200, { "content-type": "application/grpc" });
  }
  if (isGrpc) res.addTrailers(status);
  res.end();
}
