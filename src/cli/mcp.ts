import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { createClient, type Transport } from "@connectrpc/connect";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { Config } from "../config/config.js";
import { MemoryService } from "../gen/memory/v1/memory_service_pb.js";
import { MemoryWriteService } from "../gen/memory/v1/write_service_pb.js";
import { createLogger } from "../log/logger.js";
import { startSidecar, type Sidecar } from "../sidecar/start-sidecar.js";
import { memoryCalls } from "../mcp/memory-calls.js";
import { MCP_INSTRUCTIONS, MCP_SERVER_INFO } from "../mcp/server-info.js";
import { registerMemoryTools } from "../mcp/tools.js";
import { DEFAULT_RETRY } from "../sdk/retry.js";
import { EPHEMERAL_DATA_DIR } from "../store/ephemeral-start.js";
import { DEMO_PRINCIPAL, DEMO_TENANT, demoBeliefs, demoEpisodes } from "./demo-memories.js";
import { defaultAddress, grpcTransport, identityHeaders, readToken, withScheme } from "./sidecar-connection.js";
import { PRINCIPAL_OPTIONS } from "./store-command.js";
import { UsageError } from "./usage-error.js";

/**
 * `recall mcp`: an MCP server on stdin/stdout for a local host (Claude
 * Desktop or Code, Cursor, VS Code), bound to one tenant and principal. Each
 * tool call is a gRPC call to a running sidecar (its TCP address or Unix
 * socket), with the principal's identity headers; `--ephemeral` starts a
 * sidecar of its own, in this process, on an empty in-memory store loaded
 * with the demo memory. stdout carries the protocol only: logs go to stderr.
 */
export async function runMcp(config: Config, args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...PRINCIPAL_OPTIONS,
      address: { type: "string" },
      socket: { type: "string" },
      ephemeral: { type: "boolean", default: false },
      scope: { type: "string" },
      session: { type: "string" },
      "deadline-ms": { type: "string", default: "5000" },
      "token-file": { type: "string" },
    },
  });
  const targets = [values.address, values.socket, values.ephemeral || undefined].filter((t) => t !== undefined);
  if (targets.length > 1) throw new UsageError("--address, --socket and --ephemeral exclude each other");
  const deadlineMs = Number(values["deadline-ms"]);
  if (!Number.isInteger(deadlineMs) || deadlineMs <= 0) throw new UsageError("--deadline-ms must be a positive integer");
  const tokenFile = values["token-file"];
  if (tokenFile && values.ephemeral) throw new UsageError("--token-file is for a sidecar in jwt mode, not --ephemeral");
  const tenantId = values.tenant ?? (values.ephemeral ? DEMO_TENANT : undefined);
  const principalId = values.principal ?? (values.ephemeral ? DEMO_PRINCIPAL : undefined);
  if (!tokenFile && (!tenantId || !principalId)) {
    throw new UsageError("--tenant and --principal (or RECALL_TENANT_ID and RECALL_PRINCIPAL_ID) are required, or --token-file");
  }
  const headers = identityHeaders(tenantId, principalId, tokenFile === undefined ? undefined : await readToken(tokenFile));

  const sidecar = values.ephemeral ? await startEphemeral(config) : undefined;
  const { transport, close } = sidecar
    ? grpcTransport(`http://127.0.0.1:${sidecar.port}`)
    : values.socket
      ? grpcTransport("http://localhost", values.socket)
      : grpcTransport(withScheme(values.address ?? defaultAddress(config)));
  if (sidecar) await loadDemoMemory(transport, headers);
  // A token is read again before each call, so a token file that is renewed in place keeps working.
  const callHeaders = tokenFile === undefined ? headers : async () => identityHeaders(tenantId, principalId, await readToken(tokenFile));

  const server = new McpServer(MCP_SERVER_INFO, { instructions: MCP_INSTRUCTIONS });
  const calls = memoryCalls(createClient(MemoryService, transport), { deadlineMs, retry: DEFAULT_RETRY, headers: callHeaders });
  registerMemoryTools(server, calls, { sessionId: values.session ?? `mcp-${randomUUID()}`, scope: values.scope });
  const stdio = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    stdio.onclose = resolve;
    // The host closing our stdin is the end of the session.
    process.stdin.once("end", resolve);
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await server.connect(stdio);
  await closed;
  await server.close();
  close();
  await sidecar?.stop();
  return 0;
}

/** A sidecar in this process on an empty in-memory store, on a free loopback port; its logs (stderr) only from warn up. */
async function startEphemeral(config: Config): Promise<Sidecar> {
  const ephemeral: Config = {
    ...config,
    listen: { host: "127.0.0.1", port: 0, socketPath: undefined },
    metricsPort: undefined,
    store: { kind: "pglite", dataDir: EPHEMERAL_DATA_DIR },
    identity: { mode: "headers", allowUnverified: false },
    tls: null,
    mcp: false,
  };
  return startSidecar(ephemeral, createLogger(config.logLevel === "info" ? "warn" : config.logLevel));
}

/** The demo memory (`recall demo`'s), written for the bound principal over gRPC. */
async function loadDemoMemory(transport: Transport, headers: Record<string, string>): Promise<void> {
  const write = createClient(MemoryWriteService, transport);
  await write.putBeliefs({ beliefs: demoBeliefs() }, { headers, timeoutMs: 30_000 });
  await write.appendEpisodes({ episodes: demoEpisodes() }, { headers, timeoutMs: 30_000 });
}
