import type { Principal, RecallTrace } from "./model.js";

/**
 * The memory.recalled event: emitted for every recorded trace, as a
 * structured log line and as a row of the recalled_events outbox written in
 * the trace's own transaction. Ids, counts and hashes only, never belief text
 * or query text: the trace (GetTrace) holds the detail for those allowed to
 * read it.
 */
export const RECALLED_EVENT = "memory.recalled";

export interface RecalledEvent {
  type: typeof RECALLED_EVENT;
  tenantId: string;
  principalId: string;
  traceId: string;
  sessionId: string;
  runId: string;
  turnId: string;
  moment: RecallTrace["moment"];
  surfaceId: string;
  retrievalPolicyVersion: string;
  renderedSha256: string;
  returned: string[];
  blockedCount: number;
  carriedCount: number;
  droppedForBudgetCount: number;
  consideredNotShown: number;
  createdAt: string;
}

export function recalledEvent(p: Principal, t: RecallTrace): RecalledEvent {
  return {
    type: RECALLED_EVENT,
    tenantId: p.tenantId,
    principalId: p.principalId,
    traceId: t.id,
    sessionId: t.sessionId,
    runId: t.runId,
    turnId: t.turnId,
    moment: t.moment,
    surfaceId: t.surfaceId,
    retrievalPolicyVersion: t.retrievalPolicyVersion,
    renderedSha256: t.renderedSha256,
    returned: t.returned,
    blockedCount: t.blocked.length,
    carriedCount: t.carried.length,
    droppedForBudgetCount: t.droppedForBudgetCount,
    consideredNotShown: t.consideredNotShown,
    createdAt: t.createdAt.toISOString(),
  };
}
