import type * as domain from "../../domain/model.js";
import { SENSITIVITY } from "../../domain/model.js";
import type { Belief, Episode } from "../../gen/memory/v1/types_pb.js";
import {
  RejectionKind,
  type AppendEpisodesRequest,
  type PutBeliefsRequest,
  type PutSubjectAliasesRequest,
  type RecordCitationsRequest,
  type RejectBeliefRequest,
} from "../../gen/memory/v1/write_service_pb.js";
import { AUTHORITY, PORTABILITY, SCOPE_LEVEL, STATUS } from "./convert.js";
import { BELIEF_TYPE, Checks, eachOf, enumValue, fail, MAX_CONTEXT_ID, MAX_TEXT, noDuplicates, optionalText, required, sensitivity, time, uuid } from "./field-checks.js";

/**
 * Validation of the write service's requests: the whole request is checked
 * before anything is written, and every bad field is reported in one
 * INVALID_ARGUMENT ("beliefs[0].subject: is required; beliefs[3].confidence:
 * must be between 0 and 1"), so there is never a partial write.
 */

export function belief(b: Belief, at: string, now: Date): domain.Belief {
  const c = new Checks();
  const field = (name: string) => `${at}.${name}`;
  const beliefId = c.run(() => uuid(b.beliefId, field("belief_id")));
  const subject = c.run(() => required(b.subject, field("subject")));
  const statement = c.run(() => required(b.statement, field("statement"), MAX_TEXT));
  const beliefType = c.run(() => {
    const type = required(b.beliefType, field("belief_type"), 64);
    if (!BELIEF_TYPE.test(type)) fail(field("belief_type"), "must be snake_case (a-z, 0-9, _)");
    return type;
  });
  const predicateKey = c.run(() => optionalText(b.predicateKey, field("predicate_key")));
  const status = c.run(() => enumValue(STATUS, b.status, field("status")));
  c.run(() => {
    if (!Number.isFinite(b.confidence) || b.confidence < 0 || b.confidence > 1) fail(field("confidence"), "must be between 0 and 1");
  });
  const authority = c.run(() => enumValue(AUTHORITY, b.authority, field("authority")));
  const originScope = c.run(() => required(b.originScope, field("origin_scope")));
  const scopeLevel = c.run(() => enumValue(SCOPE_LEVEL, b.scopeLevel, field("scope_level")));
  const portability = c.run(() => enumValue(PORTABILITY, b.portability, field("portability")));
  const level = c.run(() => sensitivity(b.sensitivity, field("sensitivity"), SENSITIVITY.personal));
  const recordedAt = c.run(() => time(b.recordedAt, field("recorded_at"))) ?? now;
  const validFrom = c.run(() => time(b.validFrom, field("valid_from"))) ?? recordedAt;
  const validTo = c.run(() => {
    const to = time(b.validTo, field("valid_to"));
    if (to && to.getTime() <= validFrom.getTime()) fail(field("valid_to"), "must be after valid_from");
    return to;
  });
  const retractedAt = c.run(() => {
    const retracted = time(b.retractedAt, field("retracted_at"));
    if (retracted && retracted.getTime() < recordedAt.getTime()) fail(field("retracted_at"), "must not be before recorded_at");
    return retracted;
  });
  const ids = (list: readonly string[], name: string) => list.map((id, i) => c.run(() => uuid(id, field(`${name}[${i}]`))));
  const supersedes = ids(b.supersedes, "supersedes");
  const conflictsWith = ids(b.conflictsWith, "conflicts_with");
  c.run(() => {
    if (b.evidenceCount < 0) fail(field("evidence_count"), "must not be negative");
  });
  const lastEvidenceAt = c.run(() => time(b.lastEvidenceAt, field("last_evidence_at"))) ?? recordedAt;
  const expiresHint = c.run(() => time(b.expiresHint, field("expires_hint")));
  const sourceEpisodeIds = ids(b.sourceEpisodeIds, "source_episode_ids");
  c.done();
  return {
    beliefId,
    subject,
    statement,
    beliefType,
    predicateKey,
    status,
    confidence: b.confidence,
    authority,
    originScope,
    scopeLevel,
    portability,
    sensitivity: level,
    validFrom,
    validTo,
    recordedAt,
    retractedAt,
    supersedes,
    conflictsWith,
    evidenceCount: Math.max(1, b.evidenceCount),
    lastEvidenceAt,
    expiresHint,
    flaggedForReview: b.flaggedForReview,
    sourceEpisodeIds,
  };
}

export function putBeliefs(req: PutBeliefsRequest, now: Date): domain.Belief[] {
  const beliefs = eachOf(req.beliefs, "beliefs", (b, at) => belief(b, at, now));
  noDuplicates(beliefs.map((b) => b.beliefId), "belief_id", (i) => `beliefs[${i}].belief_id`);
  return beliefs;
}

export function episode(e: Episode, at: string): domain.Episode {
  const c = new Checks();
  const field = (name: string) => `${at}.${name}`;
  const episodeId = c.run(() => uuid(e.episodeId, field("episode_id")));
  const sessionId = c.run(() => required(e.sessionId, field("session_id")));
  const occurredAt = c.run(() => time(e.occurredAt, field("occurred_at")) ?? fail(field("occurred_at"), "is required"));
  const seq = c.run(() => sequence(e.sequence, field("sequence")));
  const actor = c.run(() => optionalText(e.actor, field("actor")));
  const kind = c.run(() => optionalText(e.kind, field("kind")));
  const content = c.run(() => required(e.content, field("content"), 64_000));
  const project = c.run(() => optionalText(e.project, field("project")));
  const level = c.run(() => sensitivity(e.sensitivity, field("sensitivity"), SENSITIVITY.personal));
  c.done();
  return { episodeId, sessionId, occurredAt, sequence: seq, actor, kind, content, project, archival: e.archival, sensitivity: level };
}

/** int64 on the wire, a JavaScript number inside: beyond 2^53 it would silently change value. */
function sequence(value: bigint, field: string): number {
  if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) {
    fail(field, `must be between ${Number.MIN_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`);
  }
  return Number(value);
}

export function appendEpisodes(req: AppendEpisodesRequest): domain.Episode[] {
  const episodes = eachOf(req.episodes, "episodes", episode);
  noDuplicates(episodes.map((e) => e.episodeId), "episode_id", (i) => `episodes[${i}].episode_id`);
  return episodes;
}

export function subjectAliases(req: PutSubjectAliasesRequest): domain.SubjectAlias[] {
  const aliases = eachOf(req.aliases, "aliases", (a, at) => {
    const c = new Checks();
    const out = { alias: c.run(() => required(a.alias, `${at}.alias`)), subject: c.run(() => required(a.subject, `${at}.subject`)) };
    c.done();
    return out;
  });
  noDuplicates(aliases.map((a) => a.alias.toLowerCase()), "alias", (i) => `aliases[${i}].alias`);
  return aliases;
}

/** A cited belief: its UUID, or its short id as the block shows it ("[m:8f21a0c3]", "m:8f21a0c3"). */
function citedId(value: string, field: string): string {
  const short = /^\[?m:([0-9a-fA-F]{8,32})\]?$/.exec(value);
  if (short) return `m:${short[1]!.toLowerCase()}`;
  if (value === "") fail(field, "is required");
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value)) fail(field, "must be a UUID or a short id of the block ([m:8f21a0c3])");
  return value.toLowerCase();
}

export function citations(req: RecordCitationsRequest): { traceId: string; beliefIds: string[]; turnId: string | null } {
  const c = new Checks();
  const traceId = c.run(() => uuid(req.traceId, "trace_id"));
  const beliefIds = c.run(() => eachOf(req.beliefIds, "belief_ids", citedId));
  c.done();
  return { traceId, beliefIds, turnId: req.turnId === "" ? null : req.turnId.slice(0, MAX_CONTEXT_ID) };
}

export const REJECTION_KIND = new Map<RejectionKind, domain.RejectionKind>([
  [RejectionKind.UNSPECIFIED, "unspecified"],
  [RejectionKind.NOT_TRUE, "not_true"],
  [RejectionKind.CHANGED, "changed"],
  [RejectionKind.NOT_HERE, "not_here"],
]);

export function rejection(req: RejectBeliefRequest, now: Date): domain.Rejection {
  const c = new Checks();
  const rejectionId = c.run(() => uuid(req.rejectionId, "rejection_id"));
  const beliefId = c.run(() => uuid(req.beliefId, "belief_id"));
  const kind = c.run(() => enumValue(REJECTION_KIND, req.kind, "kind"));
  const correction = c.run(() => {
    if (kind === undefined) return null;
    if (kind !== "changed") {
      if (req.correction) fail("correction", "is only allowed when kind is CHANGED");
      return null;
    }
    if (!req.correction) fail("correction", "is required when kind is CHANGED");
    const out = belief(req.correction, "correction", now);
    if (out.beliefId === beliefId) fail("correction.belief_id", "must differ from belief_id");
    return out;
  });
  const scope = c.run(() => (kind === "not_here" ? required(req.scope, "scope") : optionalText(req.scope, "scope")));
  const reason = c.run(() => optionalText(req.reason, "reason", 2000));
  c.done();
  return { rejectionId, beliefId, kind, correction, scope, reason };
}
