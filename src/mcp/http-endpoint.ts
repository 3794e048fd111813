import type * as http from "node:http";
import { Code, ConnectError, createClient, createContextValues, type ConnectRouter } from "@connectrpc/connect";
import type { ConnectNodeAdapterOptions } from "@connectrpc/connect-node";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { IdentityConfig } from "../config/edge-config.js";
import { isLoopback } from "../config/edge-config.js";
import { MemoryService } from "../gen/memory/v1/memory_service_pb.js";
import { statusName } from "../server/grpc-status.js";
import type { IdentitySetup } from "../server/identity/identity-setup.js";
import { CallSlots } from "./call-slots.js";
import { inProcessTransport } from "./in-process-transport.js";
import { memoryCalls } from "./memory-calls.js";
import { MCP_INSTRUCTIONS, MCP_SERVER_INFO } from "./server-info.js";
import { registerMemoryTools } from "./tools.js";

/**
 * MCP over Streamable HTTP at /mcp on the sidecar's own port (RECALL_MCP=on).
 * Stateless: every POST is answered on its own (JSON, not an event stream),
 * so a request is authenticated on its own too, and nothing of one caller's
 * survives into another's. GET (a server-to-client stream) and DELETE (a
 * session's end) are not offered: 405, as the transport specification allows.
 *
 * Identity is the sidecar's, checked by the same code as a gRPC call's:
 * the caller's headers (and, with mTLS, its certificate) go through the
 * identity source before the request is read, and the tool calls then run
 * through the sidecar's router with those same headers, so its identity
 * interceptor checks them again as it does every call. In trusted-header
 * mode only a caller on loopback or the Unix socket is served; the Host and
 * Origin of every request on the port are checked before it gets here
 * (server/host-check.ts), so a browser page cannot rebind its name to us.
 */

/** connect-node's fallback handler: HTTP/1.1 and HTTP/2 requests alike. */
type Handler = NonNullable<ConnectNodeAdapterOptions["fallback"]>;
type Request = Parameters<Handler>[0];
type Response = Parameters<Handler>[1];

export const MCP_PATH = "/mcp";

export interface McpEndpointOptions {
  /** A router holding the sidecar's MemoryService routes, built with the sidecar's interceptors. */
  router: ConnectRouter;
  identity: IdentitySetup;
  mode: IdentityConfig["mode"];
  /** Each tool call's deadline (the sidecar's default). */
  deadlineMs: number;
  /** Largest request body (RECALL_MAX_REQUEST_BYTES). */
  maxBodyBytes: number;
  /** Tool calls running at once for one connection's requests (RECALL_MAX_CONCURRENT_STREAMS). */
  maxConcurrentCalls: number;
}

/** Headers a tool call carries on into the RPC: identity, the session scope, and the caller's trace context. */
const FORWARDED = ["authorization", "x-tenant-id", "x-principal-id", "x-session-scope", "traceparent", "tracestate"];

/** Serves /mcp; every other request goes to `otherwise`. */
export function withMcpEndpoint(options: McpEndpointOptions, otherwise: Handler): Handler {
  const slots = new WeakMap<object, CallSlots>();
  const slotsOf = (req: Request) => {
    const connection = ("stream" in req ? req.stream.session : undefined) ?? req.socket;
    let held = slots.get(connection);
    if (!held) slots.set(connection, (held = new CallSlots(options.maxConcurrentCalls)));
    return held;
  };
  return (req, res) => {
    if (new URL(req.url ?? "/", "http://localhost").pathname !== MCP_PATH) return otherwise(req, res);
    serve(options, slotsOf(req), req, res).catch((error: unknown) => {
      if (!res.headersSent) reply(res, 500, `INTERNAL: ${error instanceof Error ? error.message : String(error)}`);
      else res.end();
    });
  };
}

async function serve(options: McpEndpointOptions, slots: CallSlots, req: Request, res: Response): Promise<void> {
  if (req.method !== "POST") {
    res.setHeader("allow", "POST");
    return reply(res, 405, "this endpoint is stateless: POST one JSON-RPC message (or batch) per request");
  }
  if (options.mode === "headers") {
    const refused = trustedHeadersRefusal(req);
    if (refused) return reply(res, 403, `PERMISSION_DENIED: ${refused}`);
  }
  const header = new Headers();
  for (const name of FORWARDED) {
    const value = req.headers[name];
    if (typeof value === "string") header.set(name, value);
  }
  const contextValues = options.identity.contextValues?.(req) ?? createContextValues();
  try {
    await options.identity.source({ header, contextValues });
  } catch (error) {
    const failure = ConnectError.from(error);
    if (options.mode === "jwt" && failure.code === Code.Unauthenticated) res.setHeader("www-authenticate", 'Bearer realm="recall"');
    return reply(res, failure.code === Code.PermissionDenied ? 403 : 401, `${statusName(failure.code)}: ${failure.rawMessage}`);
  }

  const client = createClient(MemoryService, inProcessTransport(options.router.handlers, contextValues, slots));
  const calls = memoryCalls(client, { deadlineMs: options.deadlineMs, retry: { maxAttempts: 1, initialBackoffMs: 0 }, headers: Object.fromEntries(header) });
  const server = new McpServer(MCP_SERVER_INFO, { instructions: MCP_INSTRUCTIONS });
  registerMemoryTools(server, calls, { sessionId: req.headers["x-session-id"]?.toString() ?? "" });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true, maxRequestBodySize: options.maxBodyBytes });
  res.once("close", () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  // The SDK's Node adapter takes HTTP/1.1's types; it reads the request and writes the response through their common API.
  await transport.handleRequest(req as http.IncomingMessage, res as unknown as http.ServerResponse);
}

/**
 * Why a trusted-header request is refused: not from loopback or the Unix socket. (Its Host and
 * Origin were checked for the whole port before: server/host-check.ts.)
 */
function trustedHeadersRefusal(req: Request): string | null {
  const remote = req.socket.remoteAddress;
  // A Unix-socket peer has no address: only this host can reach the socket.
  if (remote === undefined) return null;
  if (!isLoopback(remote.replace(/^::ffff:/, ""))) return "trusted identity headers are accepted from loopback only; use RECALL_IDENTITY=jwt or mtls";
  return null;
}

/** An HTTP error with a JSON-RPC error body, as MCP clients read it. */
function reply(res: Response, status: number, message: string): void {
  const body = JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message }, id: null });
  res.statusCode = status;
  res.setHeader("content-type", "application/json");
  res.end(body);
}
