import type { Principal } from "../domain/model.js";
import type { MemoryStore } from "../store/memory-store.js";
import type { SessionDeletion } from "../store/traces/trace-store.js";
import type { TraceWriter } from "./trace-writer.js";

/**
 * The one delete path of a session's explanations, behind both the
 * DeleteSessionTraces RPC and `recall delete-session`: traces still waiting
 * in this process's retry queue are dropped first (so no retry resurrects
 * them), then the stored traces, citations and memory.recalled events go in
 * one transaction.
 */
export async function deleteSessionTraces(
  store: MemoryStore,
  writer: Pick<TraceWriter, "forgetSession"> | undefined,
  principal: Principal,
  sessionId: string,
): Promise<SessionDeletion> {
  await writer?.forgetSession(principal, sessionId);
  return store.traces.deleteSession(principal, sessionId);
}
