import type { Belief, Episode, SensitivityLevel, StoredBelief } from "../../domain/model.js";
import type { Row } from "../sql-client.js";

/** Columns every belief read selects, in one place so rows map the same everywhere. */
export const BELIEF_COLUMNS = `b.belief_id::text AS belief_id, b.subject, b.statement, b.belief_type, b.predicate_key,
  b.status, b.confidence, b.authority, b.origin_scope, b.scope_level, b.portability, b.sensitivity,
  b.valid_from, b.valid_to, b.recorded_at, b.retracted_at, b.supersedes::text[] AS supersedes,
  b.conflicts_with::text[] AS conflicts_with, b.evidence_count, b.last_evidence_at, b.expires_hint,
  b.flagged_for_review, b.source_episode_ids::text[] AS source_episode_ids, b.utility, b.last_used_at,
  b.store_position`;

export function beliefFromRow(r: Row): StoredBelief {
  return {
    beliefId: String(r.belief_id),
    subject: String(r.subject),
    statement: String(r.statement),
    beliefType: String(r.belief_type),
    predicateKey: String(r.predicate_key),
    status: r.status as StoredBelief["status"],
    confidence: Number(r.confidence),
    authority: r.authority as StoredBelief["authority"],
    originScope: String(r.origin_scope),
    scopeLevel: r.scope_level as StoredBelief["scopeLevel"],
    portability: r.portability as StoredBelief["portability"],
    sensitivity: Number(r.sensitivity) as SensitivityLevel,
    validFrom: r.valid_from as Date,
    validTo: (r.valid_to as Date | null) ?? null,
    recordedAt: r.recorded_at as Date,
    retractedAt: (r.retracted_at as Date | null) ?? null,
    supersedes: (r.supersedes as string[]) ?? [],
    conflictsWith: (r.conflicts_with as string[]) ?? [],
    evidenceCount: Number(r.evidence_count),
    lastEvidenceAt: r.last_evidence_at as Date,
    expiresHint: (r.expires_hint as Date | null) ?? null,
    flaggedForReview: Boolean(r.flagged_for_review),
    sourceEpisodeIds: (r.source_episode_ids as string[]) ?? [],
    utility: Number(r.utility),
    lastUsedAt: (r.last_used_at as Date | null) ?? null,
    storePosition: Number(r.store_position),
  };
}

/** Parameters of the belief upsert, in the order of its column list. */
export function beliefParams(b: Belief): unknown[] {
  return [
    b.beliefId,
    b.subject,
    b.statement,
    b.beliefType,
    b.predicateKey,
    b.status,
    b.confidence,
    b.authority,
    b.originScope,
    b.scopeLevel,
    b.portability,
    b.sensitivity,
    b.validFrom.toISOString(),
    b.validTo?.toISOString() ?? null,
    b.recordedAt.toISOString(),
    b.retractedAt?.toISOString() ?? null,
    b.supersedes,
    b.conflictsWith,
    b.evidenceCount,
    b.lastEvidenceAt.toISOString(),
    b.expiresHint?.toISOString() ?? null,
    b.flaggedForReview,
    b.sourceEpisodeIds,
  ];
}

export const EPISODE_COLUMNS = `e.episode_id::text AS episode_id, e.session_id, e.occurred_at, e.sequence, e.actor,
  e.kind, e.content, e.project, e.archival, e.sensitivity`;

export function episodeFromRow(r: Row): Episode {
  return {
    episodeId: String(r.episode_id),
    sessionId: String(r.session_id),
    occurredAt: r.occurred_at as Date,
    sequence: Number(r.sequence),
    actor: String(r.actor),
    kind: String(r.kind),
    content: String(r.content),
    project: String(r.project),
    archival: Boolean(r.archival),
    sensitivity: Number(r.sensitivity) as SensitivityLevel,
  };
}
