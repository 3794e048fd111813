import { existsSync, statSync, unlinkSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import type { EdgeLimits } from "../config/edge-config.js";
import { endWithUnavailable } from "./grpc-cutoff.js";
import { withSpecGrpcMessage } from "./wire/grpc-message-encoding.js";
import { socketListenError, tcpListenError } from "./listen-errors.js";
import { repairAuthority } from "./request-authority.js";
import { ByteBudget, meterRequest } from "./request-budget.js";

/**
 * One port for every client: gRPC needs HTTP/2 (h2c, prior knowledge), while
 * gRPC-Web and Connect clients often speak HTTP/1.1 (browsers, curl). Each
 * new connection is sniffed: the HTTP/2 preface goes to the HTTP/2 server,
 * anything else to the HTTP/1.1 server, both running the same handler.
 *
 * With TLS configured the TCP port speaks TLS instead, ALPN choosing h2 or
 * HTTP/1.1; the Unix socket stays plaintext (only this host can reach it).
 *
 * Shutdown is designed, not hoped for: on Node 20, closing an HTTP/2 server
 * does not send GOAWAY, so every session is sent one explicitly; in-flight
 * calls then have the grace period to finish. A new stream on a connection
 * that was sent GOAWAY is refused (REFUSED_STREAM: not processed, retry
 * elsewhere). Calls still running when the grace period ends get UNAVAILABLE,
 * in their protocol's words and over either HTTP version, before their
 * connections are destroyed.
 *
 * Every connection is bounded: its first request's headers must arrive within
 * the headers timeout, and a connection with no call in flight is closed after
 * the idle timeout. The bytes of requests in flight are bounded for the
 * process and for each connection (request-budget.ts); a stream answered
 * before its request was all read is reset, so it frees its slot and the
 * connection's flow-control window.
 */

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

export interface ListenOptions {
  host: string;
  port: number;
  socketPath: string | undefined;
  limits: Pick<
    EdgeLimits,
    "maxConcurrentStreams" | "headersTimeoutMs" | "idleTimeoutMs" | "readMaxBytes" | "maxInflightRequestBytes" | "maxConnectionRequestBytes"
  >;
  /** PEM contents; `ca` set means client certificates are requested (and checked by the identity interceptor). */
  tls?: { cert: Buffer; key: Buffer; ca?: Buffer } | undefined;
}

export interface RunningServer {
  /** The bound TCP port (useful with port 0). */
  readonly port: number;
  readonly socketPath: string | undefined;
  /** Stops accepting, sends GOAWAY, waits up to graceMs for in-flight calls, then destroys what is left. */
  close(graceMs: number): Promise<{ forced: boolean }>;
}

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0");

/** Marks a connection accepted on the Unix socket (read through HTTP/2's socket proxies too). */
const VIA_SOCKET_FILE = Symbol("recall.viaSocketFile");

/** Whether the request came in on the Unix socket, which only this host can reach (a browser cannot). */
export function viaSocketFile(req: http.IncomingMessage | http2.Http2ServerRequest): boolean {
  return (req.socket as unknown as Record<symbol, unknown> | null)?.[VIA_SOCKET_FILE] === true;
}

export async function listen(rpcHandler: Handler, options: ListenOptions): Promise<RunningServer> {
  const calls = new Calls();
  const handler = callHandler(rpcHandler, options.limits, calls);
  const { h1, h2, secure } = httpServers(handler, options);
  const connections = new Connections();
  for (const server of secure ? [h2, secure] : [h2]) {
    server.on("session", (session) => {
      connections.sessions.add(session);
      session.once("close", () => connections.sessions.delete(session));
      boundSession(session, options.limits);
    });
  }
  const servers = await bindListeners(options, connections, { h1, h2, secure });
  const address = servers[0]!.address();
  const port = typeof address === "object" && address ? address.port : options.port;
  return {
    port,
    socketPath: options.socketPath,
    close: (graceMs: number) => shutDown(graceMs, { calls, connections, servers, h1 }),
  };
}

/** The calls in flight, by HTTP version, and whether the server is closing. */
class Calls {
  closing = false;
  readonly h2 = new Set<http2.Http2ServerResponse>();
  readonly h1 = new Set<http.ServerResponse>();
}

/** The open HTTP/2 sessions and every accepted socket. */
class Connections {
  readonly sessions = new Set<http2.ServerHttp2Session>();
  readonly sockets = new Set<net.Socket>();

  track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }
}

/**
 * Every request, before the RPC handler: its bytes metered, a new stream on a
 * closing server refused, each call tracked until it closes, and an HTTP/2
 * stream answered before its request was all read reset.
 */
function callHandler(rpcHandler: Handler, limits: ListenOptions["limits"], calls: Calls): Handler {
  const requestBytes = new ByteBudget(limits.maxInflightRequestBytes);
  const connectionBytes = new WeakMap<object, ByteBudget>();
  const budgetOf = (connection: object) => {
    let budget = connectionBytes.get(connection);
    if (!budget) connectionBytes.set(connection, (budget = new ByteBudget(limits.maxConnectionRequestBytes)));
    return budget;
  };
  return (req, res) => {
    const connection = ("stream" in req ? req.stream.session : undefined) ?? req.socket;
    res.once("close", meterRequest(req, { process: requestBytes, connection: budgetOf(connection), readMaxBytes: limits.readMaxBytes }));
    if ("stream" in req && res instanceof http2.Http2ServerResponse) {
      // A client that ignores GOAWAY gets its new stream refused, not served by a stopping process.
      if (calls.closing) {
        req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
        return;
      }
      calls.h2.add(res);
      res.once("close", () => calls.h2.delete(res));
      // Answered before the request was all read (too large, refused, say): the rest is not wanted,
      // and a half-open stream would hold its slot and its flow-control window. RST_STREAM NO_ERROR
      // says exactly that (RFC 9113 8.1), after the answer.
      // Then the stream is destroyed: one whose readable side never ends (its body unread) is never
      // destroyed by Node after close() (no "close"), and would hold its connection, and shutdown,
      // to the end of the grace period.
      const resetUnread = () =>
        setImmediate(() => {
          if (req.readableEnded || req.stream.destroyed) return;
          if (!req.stream.closed) req.stream.close(http2.constants.NGHTTP2_NO_ERROR);
          setImmediate(() => req.stream.destroy());
        });
      req.stream.once("wantTrailers", resetUnread);
      res.once("finish", resetUnread);
    } else if (res instanceof http.ServerResponse) {
      calls.h1.add(res);
      res.once("close", () => calls.h1.delete(res));
    }
    withSpecGrpcMessage(res);
    repairAuthority(req);
    rpcHandler(req, res);
  };
}

/** The HTTP/2 and HTTP/1.1 servers connections are handed to, and the TLS server when TLS is configured. */
function httpServers(handler: Handler, options: ListenOptions): { h1: http.Server; h2: http2.Http2Server; secure: http2.Http2SecureServer | undefined } {
  const { limits } = options;
  const h2Options = { settings: { maxConcurrentStreams: limits.maxConcurrentStreams } };
  const h2 = http2.createServer(h2Options, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
  const h1 = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      // The whole request must have arrived by then (bodies are small: see RECALL_MAX_REQUEST_BYTES).
      requestTimeout: Math.max(limits.headersTimeoutMs, limits.idleTimeoutMs),
      // How often Node checks those two; its default (30 s) would make a short timeout meaningless.
      connectionsCheckingInterval: Math.min(30_000, Math.max(50, Math.floor(limits.headersTimeoutMs / 2))),
      keepAliveTimeout: Math.min(5_000, limits.idleTimeoutMs),
    },
    handler as http.RequestListener,
  );
  // h1 never listens itself (connections are handed to it), and Node starts enforcing the two
  // timeouts above (and tracking connections for closeIdleConnections) only on "listening".
  h1.emit("listening");
  const secure = options.tls
    ? http2.createSecureServer(
        {
          ...h2Options,
          allowHTTP1: true,
          cert: options.tls.cert,
          key: options.tls.key,
          ...(options.tls.ca ? { ca: options.tls.ca, requestCert: true, rejectUnauthorized: false } : {}),
        },
        handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void,
      )
    : undefined;
  return { h1, h2, secure };
}

/** Binds the TCP port (first in the list) and the Unix socket if any; never half-started. */
async function bindListeners(
  options: ListenOptions,
  connections: Connections,
  { h1, h2, secure }: { h1: http.Server; h2: http2.Http2Server; secure: http2.Http2SecureServer | undefined },
): Promise<net.Server[]> {
  const { limits } = options;
  const route = (socket: net.Socket) => {
    connections.track(socket);
    // Silent connections: nothing at all within the headers timeout, and the socket is closed.
    socket.setTimeout(limits.headersTimeoutMs, () => socket.destroy());
    socket.once("readable", () => {
      const head: Buffer | null = socket.read(Math.min(socket.readableLength, H2_PREFACE.length)) ?? socket.read();
      if (head === null) return;
      socket.setTimeout(0);
      socket.unshift(head);
      const isH2 = head.subarray(0, 3).equals(H2_PREFACE.subarray(0, 3));
      (isH2 ? h2 : h1).emit("connection", socket);
    });
  };

  const servers: net.Server[] = [];
  let tcp: net.Server;
  if (secure) {
    // The TLS handshake must finish within the headers timeout too.
    secure.on("connection", (socket: net.Socket) => {
      connections.track(socket);
      socket.setTimeout(limits.headersTimeoutMs, () => socket.destroy());
    });
    secure.on("secureConnection", (socket: net.Socket) => socket.setTimeout(0));
    tcp = secure;
  } else {
    tcp = net.createServer(route);
  }
  await bind(tcp, { host: options.host, port: options.port }).catch((error: unknown) => {
    throw tcpListenError(error, options.host, options.port);
  });
  servers.push(tcp);
  if (options.socketPath) {
    const path = options.socketPath;
    try {
      // A stale socket file from a crashed run would make listen fail with EADDRINUSE.
      if (existsSync(path) && statSync(path).isSocket()) unlinkSync(path);
      const unix = net.createServer((socket) => {
        (socket as unknown as Record<symbol, unknown>)[VIA_SOCKET_FILE] = true;
        route(socket);
      });
      await bind(unix, { path });
      servers.push(unix);
    } catch (error) {
      // Never half-started: the TCP listener goes with the failed socket.
      await new Promise((resolve) => tcp.close(resolve));
      throw socketListenError(error, path);
    }
  }
  return servers;
}

/** Stops accepting, sends GOAWAY, waits up to graceMs for in-flight calls, then cuts what is left with UNAVAILABLE. */
async function shutDown(
  graceMs: number,
  { calls, connections, servers, h1 }: { calls: Calls; connections: Connections; servers: net.Server[]; h1: http.Server },
): Promise<{ forced: boolean }> {
  const { sessions, sockets } = connections;
  calls.closing = true;
  for (const server of servers) server.close();
  // Stops h1's timeout checks; its "not running" error is expected (it never listened).
  h1.close(() => {});
  for (const session of sessions) {
    if (session.closed || session.destroyed) continue;
    session.goaway(http2.constants.NGHTTP2_NO_ERROR);
    session.close();
  }
  h1.closeIdleConnections();
  // A connection whose calls are all answered has nothing left to wait for, even when its client
  // never finishes sending a request (refused over a limit, say): it goes after a moment.
  const answeredAt = Date.now() + CUTOFF_FLUSH_MS;
  const closeAnswered = () => {
    if (Date.now() < answeredAt) return;
    const busy = new Set([...calls.h2].map((res) => res.stream.session));
    for (const session of sessions) if (!busy.has(session)) session.destroy();
  };
  const drained = await waitFor(() => sockets.size === 0, graceMs, () => {
    h1.closeIdleConnections();
    closeAnswered();
  });
  if (!drained) {
    // A status the client can act on (UNAVAILABLE: retry), rather than a bare RST_STREAM.
    // HTTP/1.1 calls (Connect, gRPC-Web) too: a status in their protocol, not a bare connection reset.
    for (const res of [...calls.h2, ...calls.h1]) endWithUnavailable(res, "server shutting down; the call was cut at the end of the grace period");
    await waitFor(() => calls.h2.size === 0 && calls.h1.size === 0, CUTOFF_FLUSH_MS, () => {});
    for (const session of sessions) session.destroy();
    for (const socket of sockets) socket.destroy();
  }
  return { forced: !drained };
}

/** How long the UNAVAILABLE statuses of cut calls get to reach the wire before the connections go. */
const CUTOFF_FLUSH_MS = 200;

/**
 * An HTTP/2 connection must open its first stream within the headers timeout,
 * and one with no stream open is closed (GOAWAY) after the idle timeout.
 */
function boundSession(session: http2.ServerHttp2Session, limits: ListenOptions["limits"]): void {
  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  const closeIdle = () => {
    if (session.closed || session.destroyed) return;
    session.goaway(http2.constants.NGHTTP2_NO_ERROR);
    session.close();
    // A peer that never closes its side must not keep the socket.
    setTimeout(() => session.destroy(), CUTOFF_FLUSH_MS).unref();
  };
  const arm = (ms: number) => {
    clearTimeout(idle);
    idle = setTimeout(closeIdle, ms);
    idle.unref();
  };
  arm(limits.headersTimeoutMs);
  session.on("stream", (stream) => {
    open++;
    clearTimeout(idle);
    stream.once("close", () => {
      if (--open === 0) arm(limits.idleTimeoutMs);
    });
  });
  session.once("close", () => clearTimeout(idle));
}

function bind(server: net.Server, where: { host?: string; port?: number; path?: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(where, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

async function waitFor(done: () => boolean, timeoutMs: number, tick: () => void): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() >= until) return false;
    tick();
    await new Promise((r) => setTimeout(r, 25));
  }
  return true;
}
