import { create } from "@bufbuild/protobuf";
import type { Principal, RecallTrace, SensitivityLevel } from "../domain/model.js";
import {
  CandidateOutcome,
  ConsideredBeliefSchema,
  ExplainTraceResponseSchema,
  type ExplainTraceResponse,
} from "../gen/memory/v1/inspect_service_pb.js";
import { ConfidenceBand } from "../gen/memory/v1/types_pb.js";
import { scanStatements } from "../recall/safety/safety.js";
import { BAND } from "../server/wire/convert.js";
import type { InspectStore } from "../store/inspect-store.js";
import { explainTrace, type CandidateOutcome as Outcome } from "../trace/trace-explanation.js";

/**
 * ExplainTrace: the trace's own account of every candidate (trace/trace-explanation.ts)
 * under the viewing ceiling. A candidate above it, or no longer stored, is
 * counted and never named; a candidate collapse removed is named by its
 * stored row, whose statement passes the safety scan first, as on every page.
 */

const OUTCOME_PB: Record<Outcome, CandidateOutcome> = {
  shown: CandidateOutcome.SHOWN,
  shown_with_conflict_partner: CandidateOutcome.SHOWN_WITH_CONFLICT_PARTNER,
  withheld_by_safety: CandidateOutcome.WITHHELD_BY_SAFETY,
  floor: CandidateOutcome.BELOW_FLOOR,
  relative_floor: CandidateOutcome.BELOW_RELATIVE_FLOOR,
  budget: CandidateOutcome.OVER_BUDGET,
  item_cap: CandidateOutcome.OVER_ITEM_CAP,
  subject_cap: CandidateOutcome.OVER_SUBJECT_CAP,
  snapshot_share: CandidateOutcome.OVER_SNAPSHOT_SHARE,
  superseded: CandidateOutcome.COLLAPSED_SUPERSEDED,
  restatement: CandidateOutcome.COLLAPSED_RESTATEMENT,
  budget_or_item_cap: CandidateOutcome.OVER_BUDGET_OR_ITEM_CAP,
  unrecorded: CandidateOutcome.UNSPECIFIED,
};

export async function explainedTrace(
  inspect: Pick<InspectStore, "beliefsAtOrBelow">,
  principal: Principal,
  trace: RecallTrace,
  viewingCeiling: SensitivityLevel,
): Promise<ExplainTraceResponse> {
  const { considered, reasonsRecorded } = explainTrace(trace);
  // The stricter of the recall's ceiling and the viewer's, as for the user view.
  const ceiling = Math.min(viewingCeiling, trace.sensitivityCeiling) as SensitivityLevel;
  const rows = await inspect.beliefsAtOrBelow(principal, considered.map((c) => c.beliefId), ceiling);
  const visible = new Map(rows.map((b) => [b.beliefId, b]));
  const collapsed = considered.filter((c) => c.recorded === null && visible.has(c.beliefId)).map((c) => visible.get(c.beliefId)!);
  const verdicts = new Map((await scanStatements(collapsed)).map((v, i) => [collapsed[i]!.beliefId, v]));
  const shown = considered.filter((c) => visible.has(c.beliefId));
  return create(ExplainTraceResponseSchema, {
    queryText: trace.query.text ?? "",
    aboveCeiling: considered.length - shown.length,
    reasonsRecorded,
    relevanceFloor: trace.query.minScore,
    maxItems: trace.query.maxItems,
    budgetTokens: trace.query.budgetTokens,
    considered: shown.map((c) => {
      const row = visible.get(c.beliefId)!;
      const r = c.recorded;
      const withheld = r ? r.blocked : verdicts.get(c.beliefId)?.ok === false;
      return create(ConsideredBeliefSchema, {
        beliefId: c.beliefId,
        subject: r?.subject ?? row.subject,
        statement: withheld ? "" : (r?.statement ?? row.statement),
        score: r?.score ?? 0,
        arms: r?.arms ?? [],
        outcome: OUTCOME_PB[c.outcome],
        // A trust label belongs to what was shown; a withheld statement has none.
        confidenceBand: r && !withheld && (c.outcome === "shown" || c.outcome === "shown_with_conflict_partner") ? BAND[r.band] : ConfidenceBand.UNSPECIFIED,
        withheld,
      });
    }),
  });
}
