import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type * as domain from "../../domain/model.js";
import { SENSITIVITY } from "../../domain/model.js";
import {
  Authority,
  BeliefStatus,
  ConfidenceBand,
  EpisodeQuerySchema,
  EpisodeSchema,
  EscalationReason,
  Moment,
  Portability,
  Profile,
  RecallQuerySchema,
  RecallResultSchema,
  RecallTraceSchema,
  RecallTraceViewSchema,
  RecalledBeliefSchema,
  TracedBeliefSchema,
  ScopeLevel,
  Sensitivity,
  SuggestedEpisodeScopeSchema,
  type Episode,
  type EpisodeQuery,
  type SuggestedEpisodeScope,
  type RecallQuery,
  type RecallResult,
  type RecallTrace,
  type RecallTraceView,
  type RecalledBelief,
} from "../../gen/memory/v1/types_pb.js";

/**
 * Protobuf <-> domain, in one place. Enum maps are total over the domain's
 * values; the UNSPECIFIED zero values are resolved by the validators.
 */

export const STATUS = new Map<BeliefStatus, domain.BeliefStatus>([
  [BeliefStatus.ACTIVE, "active"],
  [BeliefStatus.PROVISIONAL, "provisional"],
  [BeliefStatus.SUPERSEDED, "superseded"],
  [BeliefStatus.EXPIRED, "expired"],
]);
export const AUTHORITY = new Map<Authority, domain.Authority>([
  [Authority.USER, "user"],
  [Authority.AFFIRMED, "affirmed"],
  [Authority.INFERRED, "inferred"],
]);
export const PORTABILITY = new Map<Portability, domain.Portability>([
  [Portability.PORTABLE, "portable"],
  [Portability.CONTEXTUAL, "contextual"],
  [Portability.LOCAL, "local"],
]);
export const SCOPE_LEVEL = new Map<ScopeLevel, domain.ScopeLevel>([
  [ScopeLevel.PROJECT, "project"],
  [ScopeLevel.USER, "user"],
  [ScopeLevel.GLOBAL, "global"],
]);
export const SENSITIVITY_LEVEL = new Map<Sensitivity, domain.SensitivityLevel>([
  [Sensitivity.PUBLIC, SENSITIVITY.public],
  [Sensitivity.PERSONAL, SENSITIVITY.personal],
  [Sensitivity.CONFIDENTIAL, SENSITIVITY.confidential],
  [Sensitivity.RESTRICTED, SENSITIVITY.restricted],
]);
export const MOMENT = new Map<Moment, domain.Moment>([
  [Moment.UNSPECIFIED, "in_turn"],
  [Moment.SNAPSHOT, "snapshot"],
  [Moment.IN_TURN, "in_turn"],
  [Moment.CHILD_RUN, "child_run"],
]);
export const PROFILE = new Map<Profile, domain.Profile>([
  [Profile.CORE, "core"],
  [Profile.TASK, "task"],
  [Profile.DEEP, "deep"],
]);
export const BAND: Record<domain.ConfidenceBand, ConfidenceBand> = {
  high: ConfidenceBand.HIGH,
  medium: ConfidenceBand.MEDIUM,
  low: ConfidenceBand.LOW,
};

export function reverse<K, V>(map: Map<K, V>): Map<V, K> {
  const out = new Map<V, K>();
  for (const [k, v] of map) if (!out.has(v)) out.set(v, k);
  return out;
}
const STATUS_PB = reverse(STATUS);
const AUTHORITY_PB = reverse(AUTHORITY);
const PORTABILITY_PB = reverse(PORTABILITY);
const SENSITIVITY_PB = reverse(SENSITIVITY_LEVEL);
export const MOMENT_PB = new Map<domain.Moment, Moment>([
  ["snapshot", Moment.SNAPSHOT],
  ["in_turn", Moment.IN_TURN],
  ["child_run", Moment.CHILD_RUN],
]);
const PROFILE_PB = reverse(PROFILE);

export function toDate(ts: Timestamp | undefined): Date | null {
  return ts ? timestampDate(ts) : null;
}

export function toTimestamp(date: Date | null): Timestamp | undefined {
  return date ? timestampFromDate(date) : undefined;
}

export function recalledBeliefToProto(b: domain.RecalledBelief): RecalledBelief {
  return create(RecalledBeliefSchema, {
    beliefId: b.beliefId,
    subject: b.subject,
    statement: b.statement,
    beliefType: b.beliefType,
    status: STATUS_PB.get(b.status),
    confidenceBand: BAND[b.confidenceBand],
    authority: AUTHORITY_PB.get(b.authority),
    originScope: b.originScope,
    portability: PORTABILITY_PB.get(b.portability),
    carried: b.carried,
    validFrom: toTimestamp(b.validFrom),
    validTo: toTimestamp(b.validTo),
    score: b.score,
    arms: b.arms,
    conflictWith: b.conflictWith,
    blocked: b.blocked,
  });
}

/** The result as its message, every item converted here (a binary reply's items are joined by server/wire/recalled-item.ts instead). */
export function recallResultToProto(r: domain.RecallResult): RecallResult {
  return create(RecallResultSchema, {
    items: r.items.map(recalledBeliefToProto),
    rendered: r.rendered,
    tokens: r.tokens,
    truncated: r.truncated,
    armsDegraded: r.armsDegraded,
    traceId: r.traceId,
    snapshotWatermark: BigInt(r.snapshotWatermark),
    fromCache: r.fromCache,
    corrections: r.corrections.map((c) => ({
      beliefId: c.beliefId,
      supersededBy: c.supersededBy ?? "",
      noLongerHoldsAsOf: toTimestamp(c.noLongerHoldsAsOf),
    })),
    ...adviceToProto(r.episodeAdvice ?? null),
    asOf: toTimestamp(r.asOf ?? null),
    knownAt: toTimestamp(r.knownAt ?? null),
    noMemory: r.noMemory ?? false,
  });
}

const ESCALATION_REASON_PB: Record<domain.EscalationReason, EscalationReason> = {
  event_query: EscalationReason.EVENT_QUERY,
  subject_not_found: EscalationReason.SUBJECT_NOT_FOUND,
};

/** The escalation signal's three fields, shared by RecallResult and RecallTrace. */
export function adviceToProto(advice: domain.EpisodeSearchAdvice | null): {
  episodicSearchAdvised: boolean;
  suggestedEpisodeScope: SuggestedEpisodeScope | undefined;
  escalationReason: EscalationReason;
} {
  if (!advice) return { episodicSearchAdvised: false, suggestedEpisodeScope: undefined, escalationReason: EscalationReason.UNSPECIFIED };
  return {
    episodicSearchAdvised: true,
    suggestedEpisodeScope: create(SuggestedEpisodeScopeSchema, {
      sessionId: advice.scope.sessionId,
      startTime: toTimestamp(advice.scope.startTime),
      endTime: toTimestamp(advice.scope.endTime),
      subjects: advice.scope.subjects,
    }),
    escalationReason: ESCALATION_REASON_PB[advice.reason],
  };
}

export function episodeQueryToProto(q: domain.EpisodeTraceQuery): EpisodeQuery {
  return create(EpisodeQuerySchema, {
    sessionId: q.sessionId ?? "",
    startTime: toTimestamp(q.startTime),
    endTime: toTimestamp(q.endTime),
    includeArchival: q.includeArchival,
    pageSize: q.pageSize,
    budgetTokens: q.budgetTokens,
    archivalBudgetTokens: q.archivalBudgetTokens,
    continued: q.continued,
  });
}

export function recallQueryToProto(q: domain.RecallQuery): RecallQuery {
  return create(RecallQuerySchema, {
    currentScope: q.currentScope,
    text: q.text ?? undefined,
    subjects: q.subjects,
    beliefTypes: q.beliefTypes,
    structuredBeliefTypes: q.structuredBeliefTypes,
    includeOwnedResources: q.includeOwnedResources,
    asOf: toTimestamp(q.asOf),
    knownAt: toTimestamp(q.knownAt),
    includeSuperseded: q.includeSuperseded,
    includeProvisional: q.includeProvisional,
    profile: PROFILE_PB.get(q.profile),
    budgetTokens: q.budgetTokens,
    maxItems: q.maxItems,
    minScore: q.minScore,
    scopeSource: q.scopeSource ?? "",
  });
}

export function recallTraceToProto(t: domain.RecallTrace): RecallTrace {
  return create(RecallTraceSchema, {
    id: t.id,
    sessionId: t.sessionId,
    runId: t.runId,
    turnId: t.turnId,
    moment: MOMENT_PB.get(t.moment),
    query: recallQueryToProto(t.query),
    surfaceId: t.surfaceId,
    sensitivityCeiling: SENSITIVITY_PB.get(t.sensitivityCeiling),
    renderedSha256: t.renderedSha256,
    armLatenciesMs: t.armLatenciesMs ?? {},
    candidates: t.candidates ?? undefined,
    returned: t.returned,
    cited: t.cited,
    droppedForBudget: t.droppedForBudget ?? [],
    droppedForBudgetCount: t.droppedForBudgetCount,
    blocked: t.blocked,
    carriedIn: t.carriedIn,
    retrievalPolicyVersion: t.retrievalPolicyVersion,
    createdAt: toTimestamp(t.createdAt),
    operatorFieldsExpireAt: toTimestamp(t.operatorFieldsExpireAt),
    ranked: (t.ranked ?? []).map(recalledBeliefToProto),
    asOf: toTimestamp(t.asOf),
    tool: t.tool ?? "",
    episodeQuery: t.episodeQuery ? episodeQueryToProto(t.episodeQuery) : undefined,
    returnedEpisodes: t.returnedEpisodes ?? [],
    ...adviceToProto(t.episodeAdvice ?? null),
    snapshotWatermark: BigInt(t.snapshotWatermark),
    deltaAfter: t.deltaAfter === null ? undefined : BigInt(t.deltaAfter),
    corrected: t.corrected,
    consideredNotShown: t.consideredNotShown,
    carried: t.carried,
    returnedBands: t.returnedBands.map((b) => BAND[b]),
  });
}

export function recallTraceViewToProto(v: domain.RecallTraceView): RecallTraceView {
  return create(RecallTraceViewSchema, {
    turnId: v.turnId,
    moments: v.moments.map((m) => MOMENT_PB.get(m)!),
    beliefs: v.beliefs.map((b) =>
      create(TracedBeliefSchema, {
        beliefId: b.beliefId,
        subject: b.subject,
        statement: b.statement,
        learnedAt: toTimestamp(b.learnedAt),
        originScope: b.originScope,
        carried: b.carried,
        authority: AUTHORITY_PB.get(b.authority),
        sourceEpisodeId: b.sourceEpisodeId ?? "",
        confidenceBand: b.confidenceBand === null ? ConfidenceBand.UNSPECIFIED : BAND[b.confidenceBand],
        used: b.used,
        moments: b.moments.map((m) => MOMENT_PB.get(m)!),
      }),
    ),
    consideredNotShown: v.consideredNotShown,
    withheldBySafety: v.withheldBySafety,
    asOf: toTimestamp(v.asOf),
  });
}

/** An episode as stored, as its message. */
export function episodeToProto(e: domain.Episode): Episode {
  return create(EpisodeSchema, {
    episodeId: e.episodeId,
    sessionId: e.sessionId,
    occurredAt: toTimestamp(e.occurredAt),
    sequence: BigInt(e.sequence),
    actor: e.actor,
    kind: e.kind,
    content: e.content,
    project: e.project,
    archival: e.archival,
    sensitivity: SENSITIVITY_PB.get(e.sensitivity),
  });
}
