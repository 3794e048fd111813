import { Code, ConnectError, type ContextValues, type Transport } from "@connectrpc/connect";
import type { UniversalClientFn, UniversalHandler } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";

/**
 * A connect-es transport that hands each call to the sidecar's own router
 * handlers in this process: no socket, but the same interceptors (identity,
 * string checks, deadline, log line, metrics, span) and handlers as a call
 * from the network. Like connect's createRouterTransport, except that it
 * passes `contextValues` on: the identity interceptor of mTLS mode reads the
 * client certificate from them.
 */
export function inProcessTransport(handlers: readonly UniversalHandler[], contextValues: ContextValues): Transport {
  const byPath = new Map(handlers.map((h) => [h.requestPath, h]));
  const httpClient: UniversalClientFn = async (req) => {
    const path = new URL(req.url).pathname;
    const handler = byPath.get(path);
    if (!handler) throw new ConnectError(`no handler for ${path}`, Code.Unimplemented);
    const res = await handler({
      body: req.body ?? empty(),
      httpVersion: "2.0",
      method: req.method,
      url: req.url,
      header: req.header,
      signal: req.signal ?? new AbortController().signal,
      contextValues,
    });
    return { body: res.body ?? empty(), header: new Headers(res.header), status: res.status, trailer: new Headers(res.trailer) };
  };
  return createTransport({
    httpClient,
    baseUrl: "http://in-process",
    useBinaryFormat: true,
    interceptors: [],
    acceptCompression: [],
    sendCompression: null,
    compressMinBytes: Number.MAX_SAFE_INTEGER,
    readMaxBytes: Number.MAX_SAFE_INTEGER,
    writeMaxBytes: Number.MAX_SAFE_INTEGER,
  });
}

async function* empty(): AsyncIterable<Uint8Array> {}
