import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { CLI } from "./sidecar-process.js";

/** The MCP SDK's own client, over stdio (`recall mcp ...` spawned) or Streamable HTTP (a sidecar's /mcp). */

export interface McpSession {
  client: Client;
  /** A tool call's result (a tool error is a result with isError, not a thrown error). */
  call(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** What the spawned server wrote to stderr (stdio only). */
  stderr(): string;
  close(): Promise<void>;
}

export async function mcpOverStdio(args: readonly string[], env: Record<string, string> = {}): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, "mcp", ...args],
    env: { PATH: process.env.PATH ?? "", RECALL_LOG_LEVEL: "warn", ...env },
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  return session(transport, () => stderr);
}

export async function mcpOverHttp(url: string, headers: Record<string, string>): Promise<McpSession> {
  return session(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }), () => "");
}

async function session(transport: StdioClientTransport | StreamableHTTPClientTransport, stderr: () => string): Promise<McpSession> {
  const client = new Client({ name: "recall-tests", version: "1.0.0" });
  await client.connect(transport);
  return {
    client,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    stderr,
    close: () => client.close(),
  };
}

/** The text content of a result (the rendered block, or a tool error's message). */
export function textOf(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
}
