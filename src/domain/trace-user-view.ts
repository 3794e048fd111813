import type { Authority, ConfidenceBand, Moment, RecallTraceView, TracedBelief } from "./model.js";

/**
 * The user-safe projection of a turn's traces: what the agent knew when it
 * answered, never why it ranked. The store has already applied the
 * isolation predicates and the view ceiling, min(recall surface ceiling,
 * viewing surface ceiling), per trace in SQL; this only assembles.
 *
 * Excluded by construction: latencies, ranks, scores, candidate ids and
 * policy internals; blocked statements (counted, never shown).
 */

/** One trace that fed the turn, as the view needs it. */
export interface TurnTrace {
  traceId: string;
  moment: Moment;
  createdAt: Date;
  asOf: Date | null;
  returned: readonly string[];
  /** Band per `returned` entry, as rendered; empty for traces older than the field. */
  returnedBands: readonly ConfidenceBand[];
  carried: readonly string[];
  /** Ids cited through this trace in the viewed turn. */
  citedThisTurn: readonly string[];
  /** Blocked ids at or below the view ceiling. */
  blockedWithinCeiling: readonly string[];
  consideredNotShown: number;
}

/** A rendered, unblocked belief of one trace at or below the view ceiling. */
export interface ShownBelief {
  traceId: string;
  beliefId: string;
  subject: string;
  statement: string;
  learnedAt: Date;
  originScope: string;
  authority: Authority;
  sourceEpisodeId: string | null;
}

/** The snapshot first (it sits in the prompt prefix), then the turn's recalls in the order they ran. */
function readingOrder(a: TurnTrace, b: TurnTrace): number {
  const snap = Number(b.moment === "snapshot") - Number(a.moment === "snapshot");
  return snap || a.createdAt.getTime() - b.createdAt.getTime() || (a.traceId < b.traceId ? -1 : a.traceId > b.traceId ? 1 : 0);
}

export function userView(turnId: string, traces: readonly TurnTrace[], shown: readonly ShownBelief[]): RecallTraceView {
  const ordered = [...traces].sort(readingOrder);
  const beliefs = new Map<string, TracedBelief>();
  for (const trace of ordered) {
    const rows = new Map(shown.filter((s) => s.traceId === trace.traceId).map((s) => [s.beliefId, s]));
    trace.returned.forEach((id, i) => {
      const row = rows.get(id);
      if (!row) return; // blocked, above the view ceiling, or no longer stored
      const used = trace.citedThisTurn.includes(id);
      const carried = trace.carried.includes(id);
      const seen = beliefs.get(id);
      if (seen) {
        seen.used ||= used;
        seen.carried ||= carried;
        if (!seen.moments.includes(trace.moment)) seen.moments.push(trace.moment);
        return;
      }
      beliefs.set(id, {
        beliefId: id,
        subject: row.subject,
        statement: row.statement,
        learnedAt: row.learnedAt,
        originScope: row.originScope,
        carried,
        authority: row.authority,
        sourceEpisodeId: row.sourceEpisodeId,
        confidenceBand: trace.returnedBands[i] ?? null,
        used,
        moments: [trace.moment],
      });
    });
  }
  const latest = [...ordered].sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime()).at(-1);
  return {
    turnId,
    moments: [...new Set(ordered.map((t) => t.moment))],
    beliefs: [...beliefs.values()],
    consideredNotShown: ordered.reduce((sum, t) => sum + t.consideredNotShown, 0),
    withheldBySafety: new Set(ordered.flatMap((t) => t.blockedWithinCeiling)).size,
    asOf: latest?.asOf ?? null,
  };
}
