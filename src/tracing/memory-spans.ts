import type { Attributes } from "@opentelemetry/api";
import type { Principal } from "../domain/model.js";

/**
 * OpenTelemetry's GenAI memory conventions on the read RPCs' server spans
 * (docs/operations.md, "GenAI memory attributes"). The conventions are at
 * Development stability; this follows the memory span of
 * open-telemetry/semantic-conventions-genai as of December 2026
 * (docs/gen-ai/gen-ai-spans.md, "Memory"; added in PR #140, on semantic
 * conventions v1.41.1). Pure functions: the span interceptor applies them.
 */

export const GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
export const GEN_AI_MEMORY_STORE_ID = "gen_ai.memory.store.id";
export const GEN_AI_MEMORY_RECORD_COUNT = "gen_ai.memory.record.count";
export const GEN_AI_MEMORY_QUERY_TEXT = "gen_ai.memory.query.text";
export const ERROR_TYPE = "error.type";

/** Every read RPC searches the principal's memory: a snapshot, an in-turn recall, a search, a page of episodes. */
const SEARCH_MEMORY = "search_memory";

const MEMORY_SERVICE = "memory.v1.MemoryService";
type MemoryMethod = "Recall" | "Search" | "RecallEpisodes";
const MEMORY_METHODS: ReadonlySet<string> = new Set<MemoryMethod>(["Recall", "Search", "RecallEpisodes"]);

/** The read RPCs that carry the memory attributes; undefined for every other method. */
export function memoryMethod(service: string, method: string): MemoryMethod | undefined {
  return service === MEMORY_SERVICE && MEMORY_METHODS.has(method) ? (method as MemoryMethod) : undefined;
}

/** Known when the call starts. */
export function memoryStartAttributes(): Attributes {
  return { [GEN_AI_OPERATION_NAME]: SEARCH_MEMORY };
}

/**
 * The query text, only when the operator opted in (RECALL_OTEL_CAPTURE_QUERY=on): the
 * conventions say it SHOULD NOT be captured by default, since it is user data.
 * RecallEpisodes has no text query (a session or time range), so it never carries one.
 */
export function memoryQueryAttributes(method: MemoryMethod, request: unknown, captureQuery: boolean): Attributes {
  if (!captureQuery) return {};
  const text =
    method === "Search"
      ? (request as { text?: string }).text
      : method === "Recall"
        ? (request as { query?: { text?: string } }).query?.text
        : undefined;
  return text ? { [GEN_AI_MEMORY_QUERY_TEXT]: text } : {};
}

/**
 * Known when the call has ended. The memory store is the principal's memory: tenant and
 * principal, as the call's log line names them ("tenant/principal"), known once the identity
 * interceptor has run. `records` is what the handler returned (beliefs for Recall and Search,
 * episodes for RecallEpisodes). `status` is the canonical gRPC status name of a failed call,
 * the error class the conventions ask for.
 */
export function memoryEndAttributes(end: { caller: Principal | undefined; records: number | undefined; status: string | undefined }): Attributes {
  return {
    ...(end.caller ? { [GEN_AI_MEMORY_STORE_ID]: `${end.caller.tenantId}/${end.caller.principalId}` } : {}),
    ...(end.records !== undefined && end.status === undefined ? { [GEN_AI_MEMORY_RECORD_COUNT]: end.records } : {}),
    ...(end.status ? { [ERROR_TYPE]: end.status } : {}),
  };
}
