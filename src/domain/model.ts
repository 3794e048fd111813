/**
 * The domain's plain-data types, independent of protobuf and SQL. The server
 * converts requests into these; the pipeline and the store speak only these.
 */

export type BeliefStatus = "active" | "provisional" | "superseded" | "expired";
export type Authority = "user" | "affirmed" | "inferred";
export type Portability = "portable" | "contextual" | "local";
export type ScopeLevel = "project" | "user" | "global";
export type Moment = "snapshot" | "in_turn" | "child_run";
export type Profile = "core" | "task" | "deep";
export type SessionType = "interactive" | "async" | "child";
export type ConfidenceBand = "high" | "medium" | "low";
export type RejectionKind = "unspecified" | "not_true" | "changed" | "not_here";

/** Sensitivity levels, ordered: a ceiling of N admits levels <= N. */
export const SENSITIVITY = { public: 1, personal: 2, confidential: 3, restricted: 4 } as const;
export type SensitivityLevel = (typeof SENSITIVITY)[keyof typeof SENSITIVITY];

/** Who is asking. The only source of the isolation predicates. */
export interface Principal {
  readonly tenantId: string;
  readonly principalId: string;
}

export interface Belief {
  beliefId: string;
  subject: string;
  statement: string;
  beliefType: string;
  predicateKey: string;
  status: BeliefStatus;
  confidence: number;
  authority: Authority;
  originScope: string;
  scopeLevel: ScopeLevel;
  portability: Portability;
  sensitivity: SensitivityLevel;
  validFrom: Date;
  validTo: Date | null;
  recordedAt: Date;
  retractedAt: Date | null;
  supersedes: string[];
  conflictsWith: string[];
  evidenceCount: number;
  lastEvidenceAt: Date;
  expiresHint: Date | null;
  flaggedForReview: boolean;
  sourceEpisodeIds: string[];
}

/** A belief as read back: the written fields plus what the read path maintains. */
export interface StoredBelief extends Belief {
  utility: number;
  lastUsedAt: Date | null;
  storePosition: number;
}

export interface Episode {
  episodeId: string;
  sessionId: string;
  occurredAt: Date;
  sequence: number;
  actor: string;
  kind: string;
  content: string;
  project: string;
  archival: boolean;
  sensitivity: SensitivityLevel;
}

/** The effective recall query, after defaults and moment rules. */
export interface RecallQuery {
  currentScope: string;
  text: string | null;
  subjects: string[];
  beliefTypes: string[];
  structuredBeliefTypes: string[];
  includeOwnedResources: boolean;
  asOf: Date | null;
  knownAt: Date | null;
  includeSuperseded: boolean;
  includeProvisional: boolean;
  profile: Profile;
  budgetTokens: number;
  maxItems: number;
  minScore: number;
  /** Search only: where currentScope came from (recorded in the trace). */
  scopeSource?: ScopeSource;
}

/** Where the block goes: the ceiling is an isolation predicate. */
export interface SurfaceContext {
  surfaceId: string;
  sensitivityCeiling: SensitivityLevel;
}

export interface RecallContext {
  moment: Moment;
  sessionType: SessionType;
  /** The caller's context window in tokens; 0 when unknown. */
  contextWindowTokens: number;
  /** In-turn: the session's snapshot watermark, bounding the recall delta. */
  snapshotWatermark: number | null;
  sessionId: string;
  runId: string;
  turnId: string;
  surface: SurfaceContext;
}

export interface RecalledBelief {
  beliefId: string;
  subject: string;
  statement: string;
  beliefType: string;
  status: BeliefStatus;
  confidenceBand: ConfidenceBand;
  authority: Authority;
  originScope: string;
  portability: Portability;
  carried: boolean;
  validFrom: Date;
  validTo: Date | null;
  score: number;
  arms: string[];
  conflictWith: string[];
  blocked: boolean;
}

export interface Correction {
  beliefId: string;
  supersededBy: string | null;
  noLongerHoldsAsOf: Date;
}

export interface RecallResult {
  items: RecalledBelief[];
  rendered: string;
  tokens: number;
  truncated: boolean;
  armsDegraded: string[];
  traceId: string;
  snapshotWatermark: number;
  fromCache: boolean;
  corrections: Correction[];
  /** The valid time the block was rendered with; null when the query had none and the principal was never written. */
  asOf?: Date | null;
  /** The principal holds no memory at all (never written, or erased with nothing since): an empty block says nothing matched only when this is false. */
  noMemory?: boolean;
  /** The query's transaction time, when it had one. */
  knownAt?: Date | null;
  /** Set when episodic search is advised (never run by the server itself). */
  episodeAdvice?: EpisodeSearchAdvice | null;
}

export interface RecallTrace {
  id: string;
  sessionId: string;
  runId: string;
  turnId: string;
  moment: Moment;
  query: RecallQuery;
  surfaceId: string;
  sensitivityCeiling: SensitivityLevel;
  renderedSha256: string;
  armLatenciesMs: Record<string, number> | null;
  candidates: number | null;
  returned: string[];
  cited: string[];
  droppedForBudget: string[] | null;
  droppedForBudgetCount: number;
  blocked: string[];
  /** Carried ids the model cited (filled by citations): promotion candidates. */
  carriedIn: string[];
  retrievalPolicyVersion: string;
  createdAt: Date;
  operatorFieldsExpireAt: Date;
  ranked: RecalledBelief[] | null;
  /** The valid time the ranking was pinned to; null when the query had none and the principal was never written. */
  asOf: Date | null;
  /** The agent tool that made the call ("memory.search@2.1.0", ...); absent or "" for Recall. */
  tool?: string;
  /** RecallEpisodes traces: the episode query that ran, and what it returned. */
  episodeQuery?: EpisodeTraceQuery | null;
  returnedEpisodes?: string[];
  /** The escalation signal that went back with the result. */
  episodeAdvice?: EpisodeSearchAdvice | null;
  snapshotWatermark: number;
  deltaAfter: number | null;
  corrected: string[];
  /** Candidates considered and not rendered: a count that survives the operator expiry. */
  consideredNotShown: number;
  /** Rendered (not blocked) ids attributed to another project. */
  carried: string[];
  /** The band each returned id was rendered with, in `returned` order. */
  returnedBands: ConfidenceBand[];
  /**
   * Why each candidate considered and not rendered was left out, one exact
   * reason each, recorded in the render pass (operator tier: nulled with the
   * ranked list). Absent or null: a trace written before reasons were kept,
   * or past the operator window.
   */
  notShown?: NotShown[] | null;
  /**
   * A cached snapshot's trace: the trace of the render it reuses. The store
   * keeps the ranked list and dropped ids once, with that render, and reads
   * them through this reference.
   */
  reusesTraceId?: string | null;
}

/**
 * Why a considered candidate was not rendered: below the relevance floor
 * (absolute, or its relative part), left out by the token budget, the item
 * cap, the per-subject cap or a session-open snapshot's share for its kind,
 * or collapsed away (an older revision of a fact shown, a restatement).
 */
export type NotShownReason =
  | "floor"
  | "relative_floor"
  | "budget"
  | "item_cap"
  | "subject_cap"
  | "snapshot_share"
  | "superseded"
  | "restatement";

export interface NotShown {
  beliefId: string;
  reason: NotShownReason;
}

/** One rendered belief of the user view (the spec's TracedBelief). */
export interface TracedBelief {
  beliefId: string;
  subject: string;
  statement: string;
  /** First observed: the earliest source episode, else when it was recorded. */
  learnedAt: Date;
  originScope: string;
  carried: boolean;
  authority: Authority;
  sourceEpisodeId: string | null;
  /** As rendered; null for traces recorded before bands were kept. */
  confidenceBand: ConfidenceBand | null;
  /** Cited this turn; otherwise merely available. */
  used: boolean;
  /** The recalls of the turn that rendered it. */
  moments: Moment[];
}

/** What the agent knew when it answered a turn (the spec's RecallTraceView). */
export interface RecallTraceView {
  turnId: string;
  moments: Moment[];
  beliefs: TracedBelief[];
  consideredNotShown: number;
  withheldBySafety: number;
  /** The latest trace's as_of; null when it had none (a principal never written) or there was no trace. */
  asOf: Date | null;
}

export interface SubjectAlias {
  alias: string;
  subject: string;
}

export interface Rejection {
  rejectionId: string;
  beliefId: string;
  kind: RejectionKind;
  correction: Belief | null;
  scope: string;
  reason: string;
}

/** Where a search's scope came from: the request, the session, or nowhere. */
export type ScopeSource = "request" | "session_header" | "session_snapshot" | "none";

export type EscalationReason = "event_query" | "subject_not_found";

/** Where the event log is worth reading; either the session or the time range is set. */
export interface SuggestedEpisodeScope {
  sessionId: string;
  startTime: Date | null;
  endTime: Date | null;
  subjects: string[];
}

/** The escalation signal: episodic search is advised, and where. */
export interface EpisodeSearchAdvice {
  reason: EscalationReason;
  scope: SuggestedEpisodeScope;
}

/** A RecallEpisodes query as it ran (recorded in its trace). */
export interface EpisodeTraceQuery {
  sessionId: string | null;
  startTime: Date | null;
  endTime: Date | null;
  includeArchival: boolean;
  pageSize: number;
  budgetTokens: number;
  archivalBudgetTokens: number;
  continued: boolean;
}
