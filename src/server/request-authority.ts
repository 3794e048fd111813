import type * as http from "node:http";
import type * as http2 from "node:http2";

/**
 * connect-node builds each request's URL from its authority (HTTP/2
 * `:authority`, HTTP/1.1 `Host`), and a missing authority or one that is not
 * a valid host throws outside any handler: the process crashed. grpc-python
 * sends a Unix socket's path as the authority (`tmp%2Frecall.sock`), and any
 * client can send anything. The sidecar has no virtual hosts, so such an
 * authority is replaced by "localhost" before the request is routed.
 */
export function repairAuthority(req: http.IncomingMessage | http2.Http2ServerRequest): void {
  const headers = req.headers as Record<string, string | string[] | undefined>;
  const name = "stream" in req ? ":authority" : "host";
  // HTTP/2 allows Host instead of :authority (RFC 9113 8.3.1); connect-node reads only :authority.
  const authority = headers[name] ?? (name === ":authority" ? headers.host : undefined);
  if (typeof authority === "string" && URL.canParse(`http://${authority}`)) {
    if (headers[name] === undefined) headers[name] = authority;
    return;
  }
  headers[name] = "localhost";
}
