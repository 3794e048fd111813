import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_PRINCIPAL, DEMO_TENANT, demoBeliefs, demoEpisodes } from "../../src/cli/demo-memories.js";
import { MemoryWriteService } from "../../src/gen/memory/v1/write_service_pb.js";
import { mcpOverHttp, textOf } from "../support/mcp-client.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * The host configurations of examples/mcp (and docs/mcp.md, the README) as a host runs them: the
 * stdio ones spawned with their command, arguments and environment, the HTTP one connected to its
 * URL with its headers, against a sidecar holding the demo memory. Only the placeholders change:
 * /path/to/recall (this checkout) and the sidecar's address.
 */

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DEFAULT_ADDRESS = "127.0.0.1:50051";

interface StdioEntry {
  command: string;
  args: string[];
  env: Record<string, string>;
}

const example = (file: string) => JSON.parse(readFileSync(`${ROOT}examples/mcp/${file}`, "utf8")) as Record<string, Record<string, unknown>>;

/**
 * The examples name the host's project (--scope, or x-session-scope over HTTP): without it veetbot's
 * own beliefs read as carried in from elsewhere ("(learned in veetbot)") and drop a band.
 */
const DEPLOY_SEARCH = { text: "where is veetbot deployed", subjects: ["veetbot deploy"] };
function expectProjectBeliefsAtHome(text: string): void {
  expect(text).toContain("veetbot deploys to");
  expect(text).not.toContain("(learned in veetbot)");
}

describe("every MCP host configuration in the docs names the project", () => {
  it.each(["README.md", "docs/mcp.md"])("%s", (file) => {
    const blocks = [...readFileSync(`${ROOT}${file}`, "utf8").matchAll(/```json\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => b.includes("recall"));
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) expect(block).toMatch(/"--scope", "veetbot"|"x-session-scope": "veetbot"/);
  });
});

describe("examples/mcp host configurations", () => {
  let sidecar: SidecarProcess;
  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", { RECALL_MCP: "on" });
    const write = createClient(MemoryWriteService, createGrpcTransport({ baseUrl: `http://${sidecar.address}` }));
    const headers = { "x-tenant-id": DEMO_TENANT, "x-principal-id": DEMO_PRINCIPAL };
    await write.putBeliefs({ beliefs: demoBeliefs() }, { headers });
    await write.appendEpisodes({ episodes: demoEpisodes() }, { headers });
  }, 60_000);
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  const place = (text: string) => text.replace("/path/to/recall/", ROOT).replace(DEFAULT_ADDRESS, sidecar.address);

  it.each([
    ["mcp.json", "mcpServers"],
    ["vscode-mcp.json", "servers"],
  ])("%s (stdio) lists the tools and searches the demo memory", async (file, key) => {
    const entry = example(file)[key]!.recall as StdioEntry;
    const transport = new StdioClientTransport({
      command: entry.command === "node" ? process.execPath : entry.command,
      args: entry.args.map(place),
      env: { PATH: process.env.PATH ?? "", ...entry.env },
      stderr: "pipe",
    });
    const client = new Client({ name: "examples", version: "1.0.0" });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools).toHaveLength(3);
      const result = await client.callTool({ name: "memory_search", arguments: { text: "which editor does Andy use", subjects: ["Andy"] } });
      expect(textOf(result as Parameters<typeof textOf>[0])).toContain("Andy's editor is Helix.");
      expectProjectBeliefsAtHome(textOf((await client.callTool({ name: "memory_search", arguments: DEPLOY_SEARCH })) as Parameters<typeof textOf>[0]));
    } finally {
      await client.close();
    }
  });

  it("http-mcp.json (Streamable HTTP to the sidecar's /mcp) searches the demo memory", async () => {
    const entry = example("http-mcp.json").mcpServers!.recall as { url: string; headers: Record<string, string> };
    const mcp = await mcpOverHttp(place(entry.url), entry.headers);
    try {
      const result = await mcp.call("memory_search", { text: "which editor does Andy use", subjects: ["Andy"] });
      expect(textOf(result)).toContain("Andy's editor is Helix.");
      expectProjectBeliefsAtHome(textOf(await mcp.call("memory_search", DEPLOY_SEARCH)));
    } finally {
      await mcp.close();
    }
  });
});
