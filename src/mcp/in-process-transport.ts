import { Code, ConnectError, type ContextValues, type Transport } from "@connectrpc/connect";
import type { UniversalClientFn, UniversalHandler } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import type { CallSlots } from "./call-slots.js";

/**
 * A connect-es transport that hands each call to the sidecar's own router
 * handlers in this process: no socket, but the same interceptors (identity,
 * string checks, deadline, log line, metrics, span) and handlers as a call
 * from the network. Like connect's createRouterTransport, except that it
 * passes `contextValues` on: the identity interceptor of mTLS mode reads the
 * client certificate from them. With `slots`, each call holds one of them
 * until it ends.
 */
export function inProcessTransport(handlers: readonly UniversalHandler[], contextValues: ContextValues, slots?: CallSlots): Transport {
  const byPath = new Map(handlers.map((h) => [h.requestPath, h]));
  const httpClient: UniversalClientFn = async (req) => {
    const path = new URL(req.url).pathname;
    const handler = byPath.get(path);
    if (!handler) throw new ConnectError(`no handler for ${path}`, Code.Unimplemented);
    const signal = req.signal ?? new AbortController().signal;
    const release = await slots?.acquire(signal);
    try {
      const res = await handler({ body: req.body ?? empty(), httpVersion: "2.0", method: req.method, url: req.url, header: req.header, signal, contextValues });
      return { body: heldUntilRead(res.body ?? empty(), release), header: new Headers(res.header), status: res.status, trailer: new Headers(res.trailer) };
    } catch (error) {
      release?.();
      throw error;
    }
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

/** The response body, releasing the call's slot once it is read to its end (or the call's signal aborts). */
async function* heldUntilRead(body: AsyncIterable<Uint8Array>, release: (() => void) | undefined): AsyncIterable<Uint8Array> {
  try {
    yield* body;
  } finally {
    release?.();
  }
}
