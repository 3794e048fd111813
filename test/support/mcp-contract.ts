import { randomUUID } from "node:crypto";
import { expect, it } from "vitest";
import { failure, unary, type Clients } from "./grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity, ts } from "./grpc-fixtures.js";
import { textOf, type McpSession } from "./mcp-client.js";

/**
 * What every MCP way in must do, over stdio and over Streamable HTTP alike:
 * the three tools listed as hosts accept them, answers with the rendered
 * block as text and items and trace id as structured content, bad arguments
 * as tool errors naming the field (the gRPC message, where the value is
 * what is wrong), calls traced as gRPC calls are, and no principal seeing
 * another's memory through the same endpoint.
 */

export interface McpWayIn {
  /** An MCP session bound to this principal. */
  open(identity: { tenant: string; principal: string }): Promise<McpSession>;
  /** gRPC clients of the same sidecar, to write memory and read traces. */
  grpc(): Clients;
}

type Item = { belief_id: string; statement: string };

export function mcpToolContract(way: McpWayIn): void {
  const sessions: McpSession[] = [];
  const open = async (identity: { tenant: string; principal: string }) => {
    const session = await way.open(identity);
    sessions.push(session);
    return session;
  };
  const closeAll = async () => {
    await Promise.all(sessions.splice(0).map((s) => s.close()));
  };

  it("lists memory_search, memory_recall_episodes and memory_recall with strict input schemas and output schemas", async () => {
    try {
      const mcp = await open(newIdentity());
      const { tools } = await mcp.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(["memory_recall", "memory_recall_episodes", "memory_search"]);
      for (const tool of tools) {
        // What Claude, OpenAI and Copilot accept as a tool name (no dots).
        expect(tool.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
        expect(tool.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
        expect(tool.outputSchema).toMatchObject({ type: "object" });
        expect(tool.annotations).toMatchObject({ readOnlyHint: true });
      }
      const search = tools.find((t) => t.name === "memory_search")!;
      expect(search.inputSchema.required).toEqual(["text"]);
      expect(Object.keys(search.inputSchema.properties ?? {}).sort()).toEqual(["as_of", "known_at", "scope", "subjects", "text", "type_hints"]);
      expect(search.description).toContain("memory_recall_episodes");
    } finally {
      await closeAll();
    }
  });

  it("memory_search answers with the block as text and the items and trace id as structured content, traced as Search", async () => {
    try {
      const me = newIdentity();
      const c = way.grpc();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's editor is Helix." })] }, me);
      const mcp = await open(me);
      const result = await mcp.call("memory_search", { text: "which editor does Andy use", subjects: ["Andy"] });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain("Andy's editor is Helix.");
      const structured = result.structuredContent as { trace_id: string; items: Item[] };
      expect(structured.items.map((i) => i.statement)).toEqual(["Andy's editor is Helix."]);
      // The trace is the principal's, recorded by the same handler as a gRPC Search's.
      const { trace } = await unary(c.memory, "GetTrace", { trace_id: structured.trace_id }, me);
      expect(trace.tool).toBe("memory.search@2.1.0");
      expect(trace.returned).toEqual([structured.items[0]!.belief_id]);
    } finally {
      await closeAll();
    }
  });

  it("memory_recall is an in-turn recall; with the first result's watermark, what was written since comes back", async () => {
    try {
      const me = newIdentity();
      const c = way.grpc();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy lives in Lisbon." })] }, me);
      const mcp = await open(me);
      const first = await mcp.call("memory_recall", { text: "where does Andy live", subjects: ["Andy"], session_id: "conv-1" });
      expect(first.isError).toBeFalsy();
      expect(textOf(first)).toContain("Andy lives in Lisbon.");
      const watermark = (first.structuredContent as { snapshot_watermark: number }).snapshot_watermark;
      expect(watermark).toBeGreaterThan(0);

      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy moved to Porto." })] }, me);
      const second = await mcp.call("memory_recall", { text: "where does Andy live", subjects: ["Andy"], session_id: "conv-1", snapshot_watermark: watermark });
      expect(second.isError).toBeFalsy();
      expect(textOf(second)).toContain("Andy moved to Porto.");
      const { trace } = await unary(c.memory, "GetTrace", { trace_id: (second.structuredContent as { trace_id: string }).trace_id }, me);
      expect(trace.moment).toBe("MOMENT_IN_TURN");
      expect(trace.session_id).toBe("conv-1");
      expect(Number(trace.delta_after)).toBe(watermark);
    } finally {
      await closeAll();
    }
  });

  it("memory_recall corrects what the session's earlier memory_recall showed: a superseded P-17 is named, not silently replaced", async () => {
    try {
      const me = newIdentity();
      const other = { tenant: me.tenant, principal: `other-${me.principal}` };
      const c = way.grpc();
      const old = beliefMsg({ statement: "Andy's parking spot is P-17.", belief_type: "user_model_attr", predicate_key: "parking" });
      await unary(c.write, "PutBeliefs", { beliefs: [old] }, me);
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy's parking spot is P-9.", belief_type: "user_model_attr", predicate_key: "parking" })] }, other);
      const [mcp, theirs] = [await open(me), await open(other)];
      const ask = { text: "where does Andy park", subjects: ["Andy"], session_id: "conv-parking" };
      const first = await mcp.call("memory_recall", ask);
      expect(textOf(first)).toContain("Andy's parking spot is P-17.");
      const watermark = (first.structuredContent as { snapshot_watermark: number }).snapshot_watermark;
      // The other principal's conversation of the same id is shown its own memory.
      const theirFirst = await theirs.call("memory_recall", ask);
      expect(textOf(theirFirst)).toContain("P-9");
      const theirWatermark = (theirFirst.structuredContent as { snapshot_watermark: number }).snapshot_watermark;

      const successor = beliefMsg({ statement: "Andy's parking spot is P-42.", belief_type: "user_model_attr", predicate_key: "parking", valid_from: ts("2026-07-24T00:00:00Z") });
      await unary(c.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: old.belief_id, kind: "REJECTION_KIND_CHANGED", correction: successor }, me);
      const second = await mcp.call("memory_recall", { ...ask, snapshot_watermark: watermark });
      expect(second.isError).toBeFalsy();
      const short = (id: string) => `m:${id.replace(/-/g, "").slice(0, 8)}`;
      expect(textOf(second).split("\n")[0]).toBe(
        `correction: [${short(old.belief_id)}] no longer holds as of 2026-07-24T00:00:00Z; superseded by [${short(successor.belief_id)}].`,
      );
      expect(textOf(second)).toContain("Andy's parking spot is P-42.");
      expect((second.structuredContent as { corrections: { belief_id: string }[] }).corrections.map((x) => x.belief_id)).toEqual([old.belief_id]);

      // Keyed by tenant, principal and session: the same session id of another principal corrects nothing of ours.
      const theirSecond = await theirs.call("memory_recall", { ...ask, snapshot_watermark: theirWatermark });
      expect(theirSecond.isError).toBeFalsy();
      expect(textOf(theirSecond)).not.toContain("correction:");
      expect(JSON.stringify(theirSecond)).not.toContain(short(old.belief_id));
      expect(JSON.stringify(theirSecond)).not.toContain("P-42");
    } finally {
      await closeAll();
    }
  });

  it("memory_recall_episodes pages the event log: the block as text, the episodes as structured content", async () => {
    try {
      const me = newIdentity();
      const c = way.grpc();
      const episodes = [episodeMsg({ session_id: "s-41", content: "We go with Postgres." }), episodeMsg({ session_id: "s-41", content: "Ship on Friday.", sequence: "2" })];
      await unary(c.write, "AppendEpisodes", { episodes }, me);
      const mcp = await open(me);
      const result = await mcp.call("memory_recall_episodes", { session_id: "s-41" });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain("We go with Postgres.");
      const structured = result.structuredContent as { trace_id: string; episodes: { content: string }[]; next_page_token: string };
      expect(structured.episodes.map((e) => e.content)).toEqual(["We go with Postgres.", "Ship on Friday."]);
      expect(structured.trace_id).not.toBe("");
    } finally {
      await closeAll();
    }
  });

  it("bad arguments are tool errors naming the field, the value errors worded as for a gRPC caller; the session goes on", async () => {
    try {
      const me = newIdentity();
      const mcp = await open(me);
      const empty = await mcp.call("memory_search", { text: "" });
      expect(empty.isError).toBe(true);
      const grpcSays = await failure(unary(way.grpc().memory, "Search", { text: "" }, me));
      expect(textOf(empty)).toBe(`INVALID_ARGUMENT: ${grpcSays.details}`);
      expect(textOf(empty)).toMatch(/^INVALID_ARGUMENT: text: /);

      const cases: [string, Record<string, unknown>, string][] = [
        ["memory_search", { text: 5 }, "text"],
        ["memory_search", { text: "x", belief_types: ["preference"] }, "belief_types"],
        ["memory_search", { text: "x", as_of: "last Tuesday" }, "as_of"],
        ["memory_search", { text: "x", type_hints: ["Not Snake"] }, "type_hints[0]"],
        ["memory_recall_episodes", {}, "session_id"],
        ["memory_recall_episodes", { session_id: "s", page_token: "garbage" }, "page_token"],
        ["memory_recall", { text: "x", snapshot_watermark: -1 }, "snapshot_watermark"],
        ["memory_recall", { subjects: ["Andy"] }, "text"],
      ];
      for (const [tool, args, field] of cases) {
        const result = await mcp.call(tool, args);
        expect(result.isError, `${tool} ${JSON.stringify(args)}`).toBe(true);
        expect(textOf(result), `${tool} ${JSON.stringify(args)}`).toContain(field);
      }
      const after = await mcp.call("memory_search", { text: "anything" });
      expect(after.isError).toBeFalsy();
    } finally {
      await closeAll();
    }
  });

  it("a second principal on the same endpoint never sees the first's memory", async () => {
    try {
      const a = newIdentity("a");
      const b = { tenant: a.tenant, principal: `other-${a.principal}` };
      const c = way.grpc();
      await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "Andy", statement: "Andy's locker code is 4512." })] }, a);
      await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ session_id: "s-private", content: "The locker code is 4512." })] }, a);
      const [mcpA, mcpB] = [await open(a), await open(b)];
      const seenByA = await mcpA.call("memory_search", { text: "locker code", subjects: ["Andy"] });
      expect(textOf(seenByA)).toContain("4512");
      for (const [tool, args] of [
        ["memory_search", { text: "locker code", subjects: ["Andy"] }],
        ["memory_recall", { text: "Andy locker code", subjects: ["Andy"] }],
        ["memory_recall_episodes", { session_id: "s-private" }],
      ] as const) {
        const result = await mcpB.call(tool, args);
        expect(result.isError).toBeFalsy();
        expect(JSON.stringify(result)).not.toContain("4512");
      }
    } finally {
      await closeAll();
    }
  });
}
