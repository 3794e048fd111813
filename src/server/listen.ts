import { existsSync, statSync, unlinkSync } from "node:fs";
import * as http from "node:http";
import * as http2 from "node:http2";
import * as net from "node:net";
import { withSpecGrpcMessage } from "./grpc-message-encoding.js";
import { socketListenError, tcpListenError } from "./listen-errors.js";

/**
 * One port for every client: gRPC needs HTTP/2 (h2c, prior knowledge), while
 * gRPC-Web and Connect clients often speak HTTP/1.1 (browsers, curl). Each
 * new connection is sniffed: the HTTP/2 preface goes to the HTTP/2 server,
 * anything else to the HTTP/1.1 server, both running the same handler.
 *
 * Shutdown is designed, not hoped for: on Node 20, closing an HTTP/2 server
 * does not send GOAWAY, so every session is sent one explicitly; in-flight
 * calls then have the grace period to finish before connections are destroyed.
 */

type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse) => void;

export interface ListenOptions {
  host: string;
  port: number;
  socketPath: string | undefined;
}

export interface RunningServer {
  /** The bound TCP port (useful with port 0). */
  readonly port: number;
  readonly socketPath: string | undefined;
  /** Stops accepting, sends GOAWAY, waits up to graceMs for in-flight calls, then destroys what is left. */
  close(graceMs: number): Promise<{ forced: boolean }>;
}

const H2_PREFACE = Buffer.from("PRI * HTTP/2.0");

export async function listen(rpcHandler: Handler, options: ListenOptions): Promise<RunningServer> {
  const handler: Handler = (req, res) => {
    withSpecGrpcMessage(res);
    rpcHandler(req, res);
  };
  const h2 = http2.createServer({}, handler as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
  const h1 = http.createServer(handler as http.RequestListener);
  const sessions = new Set<http2.ServerHttp2Session>();
  const sockets = new Set<net.Socket>();
  h2.on("session", (session) => {
    sessions.add(session);
    session.once("close", () => sessions.delete(session));
  });

  const route = (socket: net.Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.once("readable", () => {
      const head: Buffer | null = socket.read(Math.min(socket.readableLength, H2_PREFACE.length)) ?? socket.read();
      if (head === null) return;
      socket.unshift(head);
      const isH2 = head.subarray(0, 3).equals(H2_PREFACE.subarray(0, 3));
      (isH2 ? h2 : h1).emit("connection", socket);
    });
  };

  const servers: net.Server[] = [];
  const tcp = net.createServer(route);
  await bind(tcp, { host: options.host, port: options.port }).catch((error: unknown) => {
    throw tcpListenError(error, options.host, options.port);
  });
  servers.push(tcp);
  if (options.socketPath) {
    const path = options.socketPath;
    try {
      // A stale socket file from a crashed run would make listen fail with EADDRINUSE.
      if (existsSync(path) && statSync(path).isSocket()) unlinkSync(path);
      const unix = net.createServer(route);
      await bind(unix, { path });
      servers.push(unix);
    } catch (error) {
      // Never half-started: the TCP listener goes with the failed socket.
      await new Promise((resolve) => tcp.close(resolve));
      throw socketListenError(error, path);
    }
  }
  const address = tcp.address();
  const port = typeof address === "object" && address ? address.port : options.port;

  return {
    port,
    socketPath: options.socketPath,
    async close(graceMs: number) {
      for (const server of servers) server.close();
      for (const session of sessions) {
        if (session.closed || session.destroyed) continue;
        session.goaway(http2.constants.NGHTTP2_NO_ERROR);
        session.close();
      }
      h1.closeIdleConnections();
      const drained = await waitFor(() => sockets.size === 0, graceMs, () => h1.closeIdleConnections());
      if (!drained) {
        for (const session of sessions) session.destroy();
        for (const socket of sockets) socket.destroy();
      }
      return { forced: !drained };
    },
  };
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
