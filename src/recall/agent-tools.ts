import { EPISODE_POLICY } from "./episodes.js";
import { SEARCH_TOOL_ID } from "./search.js";

/**
 * The agent-facing surface: the two memory tools as an agent runtime lists
 * them to the model. Each maps onto one RPC (memory.search -> Search,
 * memory.recall_episodes -> RecallEpisodes); the runtime adds session, run,
 * turn and surface from its own state. docs/agent-tools.md quotes these descriptions
 * verbatim (a test keeps them equal).
 */

export interface AgentTool {
  /** Tool name as the model sees it. */
  readonly name: string;
  /** Name and version, as recorded in traces ("memory.search@2.1.0"). */
  readonly id: string;
  readonly description: string;
  /** JSON Schema of the model-facing arguments; unknown arguments are refused. */
  readonly inputSchema: Readonly<Record<string, unknown>>;
}

const TIMESTAMP = { type: "string", format: "date-time" } as const;

export const MEMORY_SEARCH_TOOL: AgentTool = deepFreeze({
  name: "memory.search",
  id: SEARCH_TOOL_ID,
  description:
    "Look up what you remember about the user and their work. Search before you ask the user to repeat " +
    "personal context (where they live, what they own or use, their preferences, the people and projects " +
    "they mention): they may have told you already. Name the fact you need to answer, not only the topic " +
    'of the question: for "what should I pack for the weekend?" search "home city" or "weekend plans". ' +
    "The memory snapshot and automatic recall are small and bounded, so a fact missing from them is not " +
    "unknown; search for it. Results are recollections with ids such as [m:8f21a0c3]: cite the id when you " +
    "rely on one, and let the current conversation outrank them. Use as_of for what held at a past time " +
    "and known_at for what had been recorded by then. Leave scope out to search from the current project; " +
    "set it only to look something up in another project on purpose. For what happened in a conversation " +
    "(decisions, who said what, when), use memory.recall_episodes.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    required: ["text"],
    properties: {
      text: { type: "string", description: "The fact you need, in words (for example: home city, car model, editor)." },
      subjects: { type: "array", items: { type: "string" }, description: "People, projects or things the fact is about." },
      type_hints: {
        type: "array",
        items: { type: "string" },
        description: "Kinds of belief likely to hold it (preference, user_model_attr, relationship, ...). Hints, not filters.",
      },
      as_of: { ...TIMESTAMP, description: "When the fact should have held. Default: now." },
      known_at: { ...TIMESTAMP, description: "What had been recorded by this time. Default: now." },
      scope: { type: "string", description: "Another project to search from, on purpose. Default: the current session's project." },
    },
  },
});

export const MEMORY_RECALL_EPISODES_TOOL: AgentTool = deepFreeze({
  name: "memory.recall_episodes",
  id: EPISODE_POLICY.tool,
  description:
    "Read the event log of past conversations: what was said and decided, in order. Use it when the " +
    'question is about events ("what did we decide on Tuesday?") or when memory.search found nothing about ' +
    "something the user clearly refers to; a recall result that advises episodic search suggests the " +
    "session or time range to read. Give a session_id, a time range, or both. Results come a page at a " +
    "time within a token budget; pass next_page_token to read on. Older, archival history comes only with " +
    "include_archival, under a smaller budget. Nothing here runs automatically.",
  inputSchema: {
    type: "object",
    additionalProperties: false,
    properties: {
      session_id: { type: "string", description: "Only events of this conversation." },
      start_time: { ...TIMESTAMP, description: "Events at or after this time." },
      end_time: { ...TIMESTAMP, description: "Events before this time." },
      include_archival: { type: "boolean", description: "Also read archival (old) history. Costs more; smaller budget." },
      page_token: { type: "string", description: "next_page_token of the previous page." },
    },
  },
});

export const AGENT_TOOLS: readonly AgentTool[] = Object.freeze([MEMORY_SEARCH_TOOL, MEMORY_RECALL_EPISODES_TOOL]);

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
