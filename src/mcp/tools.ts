import { fromJson, toJson, type JsonObject } from "@bufbuild/protobuf";
import { TimestampSchema, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { Moment, RecallResultSchema, type RecallResult } from "../gen/memory/v1/types_pb.js";
import { RecallEpisodesResponseSchema, SearchResponseSchema } from "../gen/memory/v1/memory_service_pb.js";
import { MEMORY_RECALL_EPISODES_TOOL, MEMORY_SEARCH_TOOL, type AgentTool } from "../recall/agent-tools.js";
import { toRecallError } from "../sdk/errors.js";
import type { MemoryCalls } from "./memory-calls.js";

/**
 * The memory tools as an MCP server lists them: memory.search and
 * memory.recall_episodes with the agent tools' descriptions and arguments
 * (recall/agent-tools.ts), and memory.recall, an in-turn recall.
 *
 * Names: the MCP revision 2025-11-25 allows dots in tool names, but Claude
 * (Desktop, claude.ai, Code, through the Anthropic API), OpenAI's APIs (Codex)
 * and GitHub Copilot accept only [A-Za-z0-9_-] and refuse every tool of a
 * server when one name has a dot; so the tools are listed as memory_search,
 * memory_recall_episodes and memory_recall (docs/mcp.md). The RPCs and the
 * traces keep the spec's ids (memory.search@2.1.0, ...).
 *
 * Arguments are checked for their JSON types by the SDK against the input
 * schema (a wrong type is a tool error naming the argument); their values are
 * checked by the sidecar's own validation, the gRPC one, so a bad value reads
 * as it does to a gRPC caller ("INVALID_ARGUMENT: text: must not be empty").
 * The arguments keep the RPCs' field names for that reason.
 */

export const MCP_TOOL_NAMES = { search: "memory_search", recallEpisodes: "memory_recall_episodes", recall: "memory_recall" } as const;

/** The defaults a server is bound to: the session its calls are recorded under, and the project it works in. */
export interface ToolDefaults {
  readonly sessionId: string;
  readonly scope?: string | undefined;
}

export function registerMemoryTools(server: McpServer, calls: MemoryCalls, defaults: ToolDefaults): void {
  server.registerTool(
    MCP_TOOL_NAMES.search,
    { title: "Search memory", description: mcpText(MEMORY_SEARCH_TOOL.description), inputSchema: searchInput, outputSchema: searchOutput, annotations: READ_ONLY },
    (args) =>
      answer(async () => {
        const response = await calls.search({
          text: args.text,
          subjects: args.subjects ?? [],
          typeHints: args.type_hints ?? [],
          ...timestamps(args, ["as_of", "known_at"]),
          scope: args.scope ?? defaults.scope ?? "",
          sessionId: defaults.sessionId,
        });
        const result = recallResult(response.result!);
        const json = toJson(SearchResponseSchema, response, JSON_OPTIONS) as JsonObject;
        return { ...result, structuredContent: { ...result.structuredContent, resolved_scope: json.resolved_scope!, scope_source: json.scope_source! } };
      }),
  );

  server.registerTool(
    MCP_TOOL_NAMES.recallEpisodes,
    {
      title: "Recall conversation history",
      description: mcpText(MEMORY_RECALL_EPISODES_TOOL.description),
      inputSchema: episodesInput,
      outputSchema: episodesOutput,
      annotations: READ_ONLY,
    },
    (args) =>
      answer(async () => {
        const response = await calls.recallEpisodes({
          sessionId: args.session_id ?? "",
          ...timestamps(args, ["start_time", "end_time"]),
          includeArchival: args.include_archival ?? false,
          pageToken: args.page_token ?? "",
          callerSessionId: defaults.sessionId,
        });
        const json = toJson(RecallEpisodesResponseSchema, response, JSON_OPTIONS) as JsonObject;
        delete json.rendered;
        return { content: [{ type: "text", text: response.rendered }], structuredContent: json };
      }),
  );

  server.registerTool(
    MCP_TOOL_NAMES.recall,
    { title: "Recall for this turn", description: RECALL_DESCRIPTION, inputSchema: recallInput, outputSchema: recallOutput, annotations: READ_ONLY },
    (args) =>
      answer(async () =>
        recallResult(
          await calls.recall({
            moment: Moment.IN_TURN,
            sessionId: args.session_id ?? defaults.sessionId,
            query: { text: args.text, subjects: args.subjects ?? [], currentScope: args.scope ?? defaults.scope ?? "" },
            ...(args.snapshot_watermark !== undefined ? { snapshotWatermark: BigInt(args.snapshot_watermark) } : {}),
          }),
        ),
      ),
  );
}

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const RECALL_DESCRIPTION =
  "Recall what you remember that bears on this turn: call it at the start of a turn with the user's request " +
  "(text) and the people, projects or things in play (subjects). Results are recollections with ids such " +
  "as [m:8f21a0c3], ranked and within a small budget; cite the id when you rely on one, and let the current " +
  "conversation outrank them. Keep the snapshot_watermark of this conversation's first result and pass it " +
  "back (with the same session_id) on later turns: what was learned since then comes back too, and a " +
  "recollection this conversation was shown earlier that no longer holds is corrected first (a line " +
  "\"correction: [m:…] no longer holds …\"; trust it over what you were shown). For a deliberate lookup of one " +
  "fact use memory_search; for what was said in a conversation, memory_recall_episodes.";

/** The agent tools' texts name each other with the spec's names; the MCP tools are listed with underscores. */
function mcpText(text: string): string {
  return text.replaceAll("memory.recall_episodes", MCP_TOOL_NAMES.recallEpisodes).replaceAll("memory.search", MCP_TOOL_NAMES.search);
}

/** An argument's description as the agent tool gives it (one text for the gRPC runtimes and MCP). */
function said(tool: AgentTool, name: string): string {
  const properties = tool.inputSchema.properties as Record<string, { description: string }>;
  return properties[name]!.description;
}

const timestamp = (description: string) => z.string().meta({ format: "date-time", description });
const strings = (description: string) => z.array(z.string()).optional().describe(description);

const searchInput = z.strictObject({
  text: z.string().describe(said(MEMORY_SEARCH_TOOL, "text")),
  subjects: strings(said(MEMORY_SEARCH_TOOL, "subjects")),
  type_hints: strings(said(MEMORY_SEARCH_TOOL, "type_hints")),
  as_of: timestamp(said(MEMORY_SEARCH_TOOL, "as_of")).optional(),
  known_at: timestamp(said(MEMORY_SEARCH_TOOL, "known_at")).optional(),
  scope: z.string().optional().describe(said(MEMORY_SEARCH_TOOL, "scope")),
});

const episodesInput = z.strictObject({
  session_id: z.string().optional().describe(said(MEMORY_RECALL_EPISODES_TOOL, "session_id")),
  start_time: timestamp(said(MEMORY_RECALL_EPISODES_TOOL, "start_time")).optional(),
  end_time: timestamp(said(MEMORY_RECALL_EPISODES_TOOL, "end_time")).optional(),
  include_archival: z.boolean().optional().describe(said(MEMORY_RECALL_EPISODES_TOOL, "include_archival")),
  page_token: z.string().optional().describe(said(MEMORY_RECALL_EPISODES_TOOL, "page_token")),
});

const recallInput = z.strictObject({
  text: z.string().describe("What this turn needs from memory, in words: the user's request or the question at hand."),
  subjects: strings("People, projects or things in play this turn."),
  session_id: z.string().optional().describe("This conversation's id, the same on every turn. Default: the server's session."),
  snapshot_watermark: z
    .int()
    .min(0)
    .optional()
    .describe("snapshot_watermark of this conversation's first memory_recall result: what changed since comes back too."),
  scope: z.string().optional().describe("The project the conversation works in. Default: the server's project, if it has one."),
});

/** Structured results: the items and the trace id (the rendered block is the text content). */
const belief = z.looseObject({ belief_id: z.string(), subject: z.string(), statement: z.string(), belief_type: z.string(), blocked: z.boolean() });
const recallOutput = z.looseObject({
  trace_id: z.string(),
  items: z.array(belief),
  tokens: z.number(),
  truncated: z.boolean(),
  arms_degraded: z.array(z.string()),
  snapshot_watermark: z.number(),
  episodic_search_advised: z.boolean(),
});
const searchOutput = recallOutput.extend({ resolved_scope: z.string(), scope_source: z.string() });
const episodesOutput = z.looseObject({
  trace_id: z.string(),
  episodes: z.array(z.looseObject({ episode_id: z.string(), session_id: z.string(), actor: z.string(), kind: z.string(), content: z.string() })),
  next_page_token: z.string(),
  tokens: z.number(),
  truncated: z.boolean(),
  withheld_episode_ids: z.array(z.string()),
  clipped_episode_ids: z.array(z.string()),
});

/** Proto JSON with the RPCs' field names, every field present (an empty list is [], not absent). */
const JSON_OPTIONS = { useProtoFieldName: true, alwaysEmitImplicit: true } as const;

function recallResult(result: RecallResult): CallToolResult & { structuredContent: JsonObject } {
  const json = toJson(RecallResultSchema, result, JSON_OPTIONS) as JsonObject;
  delete json.rendered;
  // Store positions are far below 2^53: a number, as memory_recall takes it back.
  json.snapshot_watermark = Number(result.snapshotWatermark);
  return { content: [{ type: "text", text: result.rendered }], structuredContent: json };
}

/** RFC 3339 strings to Timestamps, parsed as a Connect JSON request's are; a bad one is an argument error naming it. */
function timestamps<K extends string>(args: Partial<Record<K, string>>, names: readonly K[]): Partial<Record<string, Timestamp>> {
  const out: Record<string, Timestamp> = {};
  for (const name of names) {
    const value = args[name];
    if (value === undefined) continue;
    try {
      out[camel(name)] = fromJson(TimestampSchema, value);
    } catch {
      throw new ArgumentError(`${name}: must be an RFC 3339 time such as 2026-07-21T14:03:00Z`);
    }
  }
  return out;
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

class ArgumentError extends Error {}

/**
 * A tool's answer, or its failure as a tool error (isError) the model can read and act on:
 * the status and the sidecar's message, which names the argument for INVALID_ARGUMENT.
 */
async function answer(run: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await run();
  } catch (error) {
    const text = error instanceof ArgumentError ? `INVALID_ARGUMENT: ${error.message}` : describe(error);
    return { isError: true, content: [{ type: "text", text }] };
  }
}

function describe(error: unknown): string {
  const failed = toRecallError(error, "", 1);
  return `${failed.status}: ${failed.message}`;
}
