import { earlier } from "../domain/deadline.js";
import type { Correction, Principal, StoredBelief } from "../domain/model.js";
import type { EligibilityFilter } from "../domain/hard-filter.js";
import type { RowMemo } from "./row-memo.js";

/**
 * The read path's port: what the arms, the alias expansion and the
 * corrections lookup ask of memory. Two implementations answer it the same
 * way: the SQL one (store/candidates/sql-candidates.ts) and the in-process principal
 * index (principal-index/). Every method applies the hard filter before any
 * scoring or cap; isolation is never a rank feature.
 */
export interface CandidateSource {
  /** Each lower-cased requested subject with its own names (itself, its canonical subject, their aliases), sorted. */
  expandSubjectsEach(p: Principal, subjects: readonly string[], options?: ReadOptions): Promise<Map<string, string[]>>;
  structuredCandidates(f: EligibilityFilter, anchors: StructuredAnchors, cap: number, options?: ReadOptions): Promise<ArmCandidate[]>;
  lexicalCandidates(f: EligibilityFilter, q: LexicalQuery, cap: number, options?: ReadOptions): Promise<ArmCandidate[]>;
  resolveNamedSubjects(
    f: EligibilityFilter,
    phrases: readonly string[],
    fuzzyWords: readonly string[],
    minSimilarity: number,
    options?: ReadOptions,
  ): Promise<NamedSubjects>;
  deltaCandidates(f: EligibilityFilter, afterPosition: number, cap: number, options?: ReadOptions): Promise<ArmCandidate[]>;
  /**
   * Of `returned` (the belief ids a session's snapshot showed), those that stopped holding after its
   * watermark, each with its successor and since when.
   */
  snapshotCorrections(p: Principal, returned: readonly string[], afterPosition: number, at: Date, options?: ReadOptions): Promise<Correction[]>;
  /**
   * False when nothing the source holds was written after `afterPosition`: snapshotCorrections
   * would answer none, so a recall need not gather what its session was shown. Left out by a
   * source that cannot tell without a query (SQL).
   */
  writtenAfter?(p: Principal, afterPosition: number): boolean;
  /**
   * The semantic arm from vectors held in process (the principal index with
   * the arm on): as the SQL scan (store/candidates/semantic-store.ts), eligible beliefs with a
   * current vector, nearest first, ties by belief id, none below the minimum
   * similarity, arm score the cosine. Null when the source holds no vectors of
   * that embedder: the arm asks SQL. The SQL source has none.
   */
  semanticCandidates?(f: EligibilityFilter, q: SemanticQuery, cap: number, options?: ReadOptions): Promise<ArmCandidate[] | null>;
}

/** What the semantic arm looks up: the query's embedding, of the embedder whose vectors are stored. */
export interface SemanticQuery {
  /** The stored embedder id (SemanticStore.storedId): a source holding another's vectors cannot answer. */
  embedderId: string;
  vector: readonly number[];
  minSimilarity: number;
}

export interface ReadOptions {
  /** Cancels the work when aborted (on PostgreSQL, the statement itself). */
  signal?: AbortSignal;
  /** The store deadline (store/store-deadline.ts) of any statement the read sends. */
  deadline?: number;
}

/**
 * `source` with every read bounded by the store deadline `deadline` (an
 * earlier one a caller passes still wins). Undefined: `source` itself.
 */
export function boundSource(source: CandidateSource, deadline: number | undefined): CandidateSource {
  if (deadline === undefined) return source;
  const bound = (options?: ReadOptions): ReadOptions => ({ ...options, deadline: earlier(deadline, options?.deadline) });
  return {
    expandSubjectsEach: (p, subjects, options) => source.expandSubjectsEach(p, subjects, bound(options)),
    structuredCandidates: (f, anchors, cap, options) => source.structuredCandidates(f, anchors, cap, bound(options)),
    lexicalCandidates: (f, q, cap, options) => source.lexicalCandidates(f, q, cap, bound(options)),
    resolveNamedSubjects: (f, phrases, fuzzyWords, minSimilarity, options) =>
      source.resolveNamedSubjects(f, phrases, fuzzyWords, minSimilarity, bound(options)),
    deltaCandidates: (f, afterPosition, cap, options) => source.deltaCandidates(f, afterPosition, cap, bound(options)),
    snapshotCorrections: (p, returned, afterPosition, at, options) => source.snapshotCorrections(p, returned, afterPosition, at, bound(options)),
    ...(source.semanticCandidates
      ? { semanticCandidates: (f, q, cap, options) => source.semanticCandidates!(f, q, cap, bound(options)) }
      : {}),
    ...(source.writtenAfter ? { writtenAfter: (p: Principal, afterPosition: number) => source.writtenAfter!(p, afterPosition) } : {}),
  };
}

/** A candidate from one arm: the belief and that arm's own score. */
export interface ArmCandidate {
  belief: StoredBelief;
  armScore: number;
  /** The row's memo, from a source that keeps its rows (the principal index). */
  memo?: RowMemo;
}

/** Subject names a question names: exact phrases, and near misses of its capitalised words. */
export interface NamedSubjects {
  exact: string[];
  fuzzy: string[];
}

/** What the lexical arm looks up, and how it scores (the policy's lexical section). */
export interface LexicalQuery {
  /** Content terms, function words removed. */
  terms: readonly string[];
  /** Lower-cased subject names the question names: their beliefs are boosted. */
  names: readonly string[];
  /** Months (1-12) and years the question names: beliefs valid from then are boosted. */
  dates: { years: readonly number[]; months: readonly number[] };
  scoring: LexicalScoring;
}

export interface LexicalScoring {
  k1: number;
  b: number;
  /** BM25F field weights: tf and length count each occurrence by its field's weight. */
  fieldWeights: { subject: number; statement: number; source: number; neighbours: number };
  /** Matches kept for exact scoring, by summed IDF of the terms they contain. */
  prescoreCap: number;
  namedSubjectBoost: number;
  dateBoost: number;
}

/** What the structured arm looks up. */
export interface StructuredAnchors {
  /** Lower-cased, alias-expanded subject names (match 1.0). */
  subjects: readonly string[];
  /** Belief types to anchor (OR), at typeWeight. */
  types: readonly string[];
  typeWeight: number;
  /** The bounded ownership lookup: direct "User has/owns/drives/uses …" statements of these types. */
  owned?: { weight: number; types: readonly string[] } | null;
}

/**
 * A direct, affirmative ownership or use statement in canonical form:
 * "User has …", "The user drives …". PostgreSQL ARE, matched with ~*.
 */
export const OWNERSHIP_STATEMENT = String.raw`^\s*(the\s+)?user\s+(has|owns|drives|uses)\M`;
/** Negated and past-use forms that look like ownership and are not: "User has never owned …", "User has had …". */
export const NOT_OWNERSHIP_STATEMENT = String.raw`^\s*(the\s+)?user\s+has\s+(not|never|no|had|owned|used|driven|sold)\M`;

/** Structured arm ordering after the score: user-stated first, then confidence, evidence, id. */
export const AUTHORITY_ORDER: Readonly<Record<StoredBelief["authority"], number>> = { user: 0, affirmed: 1, inferred: 2 };

/**
 * Chooses the candidate source of one recall, given the principal's head as
 * the pipeline read it: the principal index when it holds the principal
 * (brought up to that head first), otherwise the SQL source.
 */
export interface CandidateRouter {
  /** `deadline`: the call's store deadline, for any statement choosing sends (a head check, a delta). */
  sourceFor(p: Principal, head: { position: number; erasedPosition?: number | null }, deadline?: number): Promise<CandidateSource>;
}
