import { create } from "@bufbuild/protobuf";
import type * as domain from "../domain/model.js";
import {
  InspectedBeliefSchema,
  InspectedSessionSchema,
  InspectedTurnSchema,
  RejectionSchema,
  TraceSummarySchema,
  type InspectedBelief,
  type InspectedSession,
  type InspectedTurn,
  type Rejection,
} from "../gen/memory/v1/inspect_service_pb.js";
import { BeliefSchema, type Belief } from "../gen/memory/v1/types_pb.js";
import { RETRIEVAL_POLICY } from "../recall/policy.js";
import { confidenceBand } from "../recall/rank/rank.js";
import { scanStatements } from "../recall/safety/safety.js";
import { AUTHORITY, BAND, MOMENT_PB, PORTABILITY, reverse, SCOPE_LEVEL, SENSITIVITY_LEVEL, STATUS, toTimestamp } from "../server/wire/convert.js";
import { REJECTION_KIND } from "../server/wire/validate.js";
import type * as inspect from "../store/inspect-store.js";

/** The inspection API's domain -> protobuf conversions. */

const STATUS_PB = reverse(STATUS);
const AUTHORITY_PB = reverse(AUTHORITY);
const PORTABILITY_PB = reverse(PORTABILITY);
const SCOPE_LEVEL_PB = reverse(SCOPE_LEVEL);
const SENSITIVITY_PB = reverse(SENSITIVITY_LEVEL);
const REJECTION_KIND_PB = reverse(REJECTION_KIND);

function beliefToProto(b: domain.StoredBelief): Belief {
  return create(BeliefSchema, {
    beliefId: b.beliefId,
    subject: b.subject,
    statement: b.statement,
    beliefType: b.beliefType,
    predicateKey: b.predicateKey,
    status: STATUS_PB.get(b.status),
    confidence: b.confidence,
    authority: AUTHORITY_PB.get(b.authority),
    originScope: b.originScope,
    scopeLevel: SCOPE_LEVEL_PB.get(b.scopeLevel),
    portability: PORTABILITY_PB.get(b.portability),
    sensitivity: SENSITIVITY_PB.get(b.sensitivity),
    validFrom: toTimestamp(b.validFrom),
    validTo: toTimestamp(b.validTo),
    recordedAt: toTimestamp(b.recordedAt),
    retractedAt: toTimestamp(b.retractedAt),
    supersedes: b.supersedes,
    conflictsWith: b.conflictsWith,
    evidenceCount: b.evidenceCount,
    lastEvidenceAt: toTimestamp(b.lastEvidenceAt),
    expiresHint: toTimestamp(b.expiresHint),
    flaggedForReview: b.flaggedForReview,
    sourceEpisodeIds: b.sourceEpisodeIds,
  });
}

/**
 * Beliefs with the safety pass's verdicts: a statement the pass withholds
 * from the agent never leaves the server here either (emptied, with why).
 */
export async function inspectedBeliefsToProto(list: readonly inspect.InspectedBelief[]): Promise<InspectedBelief[]> {
  const verdicts = await scanStatements(list.map((i) => i.belief));
  return list.map((i, n) => {
    const verdict = verdicts[n]!;
    const proto = inspectedBeliefToProto(i);
    if (!verdict.ok) {
      proto.belief!.statement = "";
      proto.withheldBySafety = verdict.reason;
    }
    return proto;
  });
}

function inspectedBeliefToProto(i: inspect.InspectedBelief): InspectedBelief {
  return create(InspectedBeliefSchema, {
    belief: beliefToProto(i.belief),
    // The band the renderer would show where the belief was learned.
    confidenceBand: BAND[confidenceBand(i.belief, false, RETRIEVAL_POLICY)],
    utility: i.belief.utility,
    lastUsedAt: toTimestamp(i.belief.lastUsedAt),
    supersededBy: i.supersededBy,
    rejections: i.rejections,
    storePosition: BigInt(i.belief.storePosition),
    persona: i.persona,
    statusNow: STATUS_PB.get(i.statusNow),
  });
}

export function rejectionToProto(r: inspect.StoredRejection): Rejection {
  return create(RejectionSchema, {
    rejectionId: r.rejectionId,
    kind: REJECTION_KIND_PB.get(r.kind),
    correctionBeliefId: r.correctionBeliefId ?? "",
    scope: r.scope,
    reason: r.reason,
    createdAt: toTimestamp(r.createdAt),
  });
}

export function sessionToProto(s: inspect.SessionSummary): InspectedSession {
  return create(InspectedSessionSchema, {
    sessionId: s.sessionId,
    firstAt: toTimestamp(s.firstAt),
    lastAt: toTimestamp(s.lastAt),
    turns: s.turns,
    traces: s.traces,
    currentScope: s.currentScope,
  });
}

export function turnToProto(t: inspect.TurnSummary): InspectedTurn {
  return create(InspectedTurnSchema, {
    turnId: t.turnId,
    firstAt: toTimestamp(t.firstAt),
    traces: t.traces.map((x) =>
      create(TraceSummarySchema, {
        traceId: x.traceId,
        moment: MOMENT_PB.get(x.moment),
        tool: x.tool,
        queryText: x.queryText,
        createdAt: toTimestamp(x.createdAt),
        returned: x.returned,
        blocked: x.blocked,
      }),
    ),
  });
}
