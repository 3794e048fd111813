import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/**
 * Issue 44, item 6: one POST to /mcp may carry a JSON-RPC batch of up to 100
 * tool calls, each an RPC through the sidecar's router and none of them an
 * HTTP/2 stream. They count against RECALL_MAX_CONCURRENT_STREAMS as the
 * connection's streams would: here 2, with every Search held a while by an
 * injected arm delay, and the sidecar's own gauge of calls in flight read
 * while the batch runs.
 */

const LIMIT = 2;
const CALLS = 6;

describe("/mcp: a batch's tool calls count against RECALL_MAX_CONCURRENT_STREAMS", () => {
  let sidecar: SidecarProcess;
  beforeAll(async () => {
    sidecar = await startSidecarProcess("pglite", {
      RECALL_MCP: "on",
      RECALL_MAX_CONCURRENT_STREAMS: String(LIMIT),
      RECALL_FAULT_ARM_DELAY: "lexical=600",
      RECALL_DEFAULT_DEADLINE_MS: "20000",
    });
  }, 60_000);
  afterAll(async () => {
    expect(await sidecar?.stop()).toBe(0);
  });

  /** recall_rpc_server_active_calls for Search, as /metrics says it now. */
  const searchesInFlight = async (): Promise<number> => {
    const text = await (await fetch(`http://${sidecar.address}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith('recall_rpc_server_active_calls{rpc_method="memory.v1.MemoryService/Search"}'));
    return line ? Number(line.split(" ").at(-1)) : 0;
  };

  it("runs at most that many at once, and answers every call of the batch", async () => {
    const batch = Array.from({ length: CALLS }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "memory_search", arguments: { text: `what is deployed where, question ${i}` } },
    }));
    const answer = fetch(`http://${sidecar.address}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "x-tenant-id": "t-batch", "x-principal-id": "p-batch" },
      body: JSON.stringify(batch),
    });
    let done = false;
    void answer.finally(() => (done = true));
    const seen: number[] = [];
    while (!done) {
      seen.push(await searchesInFlight());
      await new Promise((r) => setTimeout(r, 20));
    }
    const res = await answer;
    expect(res.status).toBe(200);
    const replies = (await res.json()) as { id: number; result?: { isError?: boolean } }[];
    expect(replies.map((r) => r.id).sort((a, b) => a - b)).toEqual(batch.map((b) => b.id));
    for (const reply of replies) expect(reply.result?.isError, JSON.stringify(reply)).toBeFalsy();
    // The gauge was read while calls ran, and never showed more than the limit.
    expect(Math.max(...seen)).toBeGreaterThan(0);
    expect(Math.max(...seen)).toBeLessThanOrEqual(LIMIT);
  });
});
