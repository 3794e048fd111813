import type { Principal, RecallTraceView, SensitivityLevel } from "../domain/model.js";
import type { TraceStore } from "../store/traces/trace-store.js";
import { userView } from "../domain/trace-user-view.js";

/**
 * GetTrace's user form and `recall trace --view`: the turn's traces read
 * under the principal's predicates and the view ceiling, then projected.
 * Null when the principal has no trace for the turn (another principal's
 * turn included).
 */
export async function traceView(
  traces: Pick<TraceStore, "forTurn">,
  principal: Principal,
  turnId: string,
  viewingCeiling: SensitivityLevel,
): Promise<RecallTraceView | null> {
  const rows = await traces.forTurn(principal, turnId, viewingCeiling);
  return rows.traces.length === 0 ? null : userView(turnId, rows.traces, rows.shown);
}
