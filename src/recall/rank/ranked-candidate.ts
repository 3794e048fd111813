import type { StoredBelief } from "../../domain/model.js";
import type { RowMemo } from "../../ports/row-memo.js";

/** A fused candidate on its way through rank, collapse, safety and assembly: the belief and its ranking. */
export type RankedCandidate = StoredBelief & { arms: string[]; carried: boolean; score: number; memo: RowMemo | undefined };

/**
 * The candidate as one flat object, every field written out. `{ ...belief,
 * arms, carried, score }` reads the same but costs far more: spreading a
 * 26-field row and growing it by three is the slowest step between the arms
 * and the reply (measured on the 10k-principal bench store: the JS of an
 * in-turn recall went from 3.6–5.5 ms to 2.0 ms p50, and its GC from 1.0–1.6
 * to 0.5 ms a call, with every result and trace unchanged). The type keeps
 * the list complete: a field added to StoredBelief fails to compile here.
 */
export function rankedCandidate(b: StoredBelief, arms: string[], carried: boolean, score: number, memo?: RowMemo): RankedCandidate {
  return {
    beliefId: b.beliefId,
    subject: b.subject,
    statement: b.statement,
    beliefType: b.beliefType,
    predicateKey: b.predicateKey,
    status: b.status,
    confidence: b.confidence,
    authority: b.authority,
    originScope: b.originScope,
    scopeLevel: b.scopeLevel,
    portability: b.portability,
    sensitivity: b.sensitivity,
    validFrom: b.validFrom,
    validTo: b.validTo,
    recordedAt: b.recordedAt,
    retractedAt: b.retractedAt,
    supersedes: b.supersedes,
    conflictsWith: b.conflictsWith,
    evidenceCount: b.evidenceCount,
    lastEvidenceAt: b.lastEvidenceAt,
    expiresHint: b.expiresHint,
    flaggedForReview: b.flaggedForReview,
    sourceEpisodeIds: b.sourceEpisodeIds,
    utility: b.utility,
    lastUsedAt: b.lastUsedAt,
    storePosition: b.storePosition,
    arms,
    carried,
    score,
    memo,
  };
}
