import type { LexicalScoring } from "../ports/candidate-source.js";
import type { DocumentWeights } from "../ports/embedder.js";
import type { Authority, Moment, Portability, Profile, SessionType } from "../domain/model.js";

/**
 * Every weight, cap, floor and version of the read path in one frozen object.
 * A trace records `version`; changing any number here means a new version.
 * The profiles are three weight vectors over one scoring function (rank.ts).
 */

export interface ProfileWeights {
  match: number;
  conf: number;
  reinforce: number;
  authority: number;
  scope: number;
  utility: number;
  penalty: number;
  /** Relevance floor: candidates scoring below are dropped even with budget left. */
  floor: number;
  /**
   * The floor's relative part (relative-floor.ts): a lexical-only candidate below this share of the
   * recall's best lexical score, or a type-only anchor match whose type the question's words already
   * answered, is held back like a candidate below the floor. 0 turns it off; so does a query whose
   * min_score is 0 (no floor at all).
   */
  relativeFloor: number;
}

export interface MomentDefaults {
  maxItems: number;
  budgetTokens: number;
  profile: Profile;
}

export interface RetrievalPolicy {
  version: string;
  /** Reciprocal rank fusion constant. */
  rrfK: number;
  /** Per-arm candidate cap, applied after the hard filter. */
  candidateCap: number;
  /** Structured-arm match weight of a type-only anchor (an exact subject is 1.0). */
  typeAnchorWeight: number;
  profiles: Record<Profile, ProfileWeights>;
  moments: Record<Moment | "search", MomentDefaults>;
  /** Snapshot caps by session type; whichever of items, tokens and the window share binds first wins. */
  snapshotCaps: Record<SessionType, { maxItems: number; budgetTokens: number }>;
  /** The snapshot never takes more than this share of the caller's context window. */
  snapshotWindowShare: number;
  /** Share of snapshot items reserved for durable user-model and preference beliefs; the rest primes the goal. */
  snapshotDurableShare: number;
  /** Upper bounds a caller may ask for. */
  limits: { maxItems: number; budgetTokens: number };
  /** Evidence count at which reinforcement saturates (C_max). */
  reinforceSaturation: number;
  /** Reinforcement decay constant τ in days, by belief_type. */
  decayDays: Record<string, number>;
  defaultDecayDays: number;
  authority: Record<Authority, number>;
  /** scope_affinity of a belief carried from another project, by portability. */
  carriedAffinity: Record<Portability, number>;
  /**
   * Penalty feature parts; `nearDuplicate` applies to a near-duplicate of a higher-ranked candidate,
   * `sourceCovered` to a candidate whose cited source episodes higher-ranked candidates all cite.
   */
  penalty: { flagged: number; pastExpiresHint: number; nearDuplicate: number; sourceCovered: number };
  /**
   * When a candidate is a near-duplicate of a higher-ranked one: same subject
   * and a Jaccard similarity of their content-word sets (function words and
   * the subject's own words removed) at or above `threshold`. Demoted by the
   * penalty, never deleted; exact restatements are collapse's business.
   */
  nearDuplicate: { measure: "jaccard-content-words"; threshold: number };
  /** Confidence at or above which a belief is banded high / medium. */
  bands: { high: number; medium: number };
  /** Per-subject cap: a share of the item cap by profile, never below `min` (conflict partners exempt). */
  perSubject: { share: Record<Profile, number>; min: number };
  /** Types that form the durable "who you are talking to" core of a snapshot. */
  durableTypes: string[];
  /**
   * Late arms are abandoned this long before the deadline, to leave time to
   * rank, record the trace and reply: a share of the time allowed, bounded.
   */
  deadlineMargin: { share: number; minMs: number; maxMs: number };
  /**
   * The bounded ownership lookup ("User has a 2026 Aster S8."): match weight
   * of an ownership/use statement in the structured arm (between a type-only
   * anchor and an exact subject), the belief types it may be, and the tag
   * appended to the policy version of queries that use it.
   */
  ownedResources: { weight: number; types: string[]; tag: string };
  /**
   * The lexical arm's BM25F (store/memory-store.ts lexicalCandidates): k1 and
   * b, the weight of each field of a belief's index, how many matches are
   * scored exactly, the boosts for a subject or a month/year the question
   * names, and the trigram threshold at which a capitalised word is taken
   * for a misspelt subject. Set by the LoCoMo evaluation (docs/evaluation.md).
   */
  /** Appended to the policy version of recalls the semantic arm took part in (RECALL_SEMANTIC=on). */
  semanticTag: string;
  /**
   * How the semantic arm's candidates are fused (domain/semantic-calibration.ts SemanticRanking):
   * its candidate cap, convex fusion of normalised scores or rank fusion, and the weight per profile
   * (α of the convex mix, or the arm's RRF weight). Set on the LoCoMo dev split (docs/benchmarks.md).
   */
  semantic: {
    method: "convex" | "rrf";
    normalise: "min-max" | "rank";
    lexicalSide: "rrf" | "scores";
    candidateCap: number;
    weight: Record<Profile, number>;
  };
  lexical: LexicalScoring & { trigram: { minSimilarity: number; minWordLength: number } };
}

export const RETRIEVAL_POLICY: RetrievalPolicy = deepFreeze({
  version: "retrieval@6",
  rrfK: 60,
  candidateCap: 200,
  typeAnchorWeight: 0.25,
  profiles: {
    core: { match: 0, conf: 0.3, reinforce: 0.15, authority: 0.3, scope: 0.15, utility: 0.1, penalty: 0.4, floor: 0.35, relativeFloor: 0 },
    task: { match: 0.45, conf: 0.15, reinforce: 0.05, authority: 0.1, scope: 0.2, utility: 0.05, penalty: 0.3, floor: 0.45, relativeFloor: 0.4 },
    deep: { match: 0.5, conf: 0.15, reinforce: 0.05, authority: 0.1, scope: 0.15, utility: 0.05, penalty: 0.3, floor: 0.4, relativeFloor: 0.4 },
  },
  moments: {
    snapshot: { maxItems: 40, budgetTokens: 1500, profile: "core" },
    in_turn: { maxItems: 12, budgetTokens: 600, profile: "task" },
    child_run: { maxItems: 15, budgetTokens: 500, profile: "task" },
    search: { maxItems: 10, budgetTokens: 800, profile: "deep" },
  },
  snapshotCaps: {
    interactive: { maxItems: 40, budgetTokens: 1500 },
    async: { maxItems: 80, budgetTokens: 3000 },
    child: { maxItems: 15, budgetTokens: 500 },
  },
  snapshotWindowShare: 0.02,
  snapshotDurableShare: 2 / 3,
  limits: { maxItems: 200, budgetTokens: 16_000 },
  reinforceSaturation: 10,
  decayDays: {
    preference: 365,
    user_model_attr: 365,
    relationship: 365,
    working_style: 365,
    constraint: 365,
    skill: 365,
    decision: 120,
    project_fact: 60,
    status: 7,
    event: 14,
  },
  defaultDecayDays: 90,
  authority: { user: 1, affirmed: 0.8, inferred: 0.5 },
  carriedAffinity: { portable: 0.85, contextual: 0.5, local: 0.15 },
  penalty: { flagged: 0.5, pastExpiresHint: 0.3, nearDuplicate: 0.5, sourceCovered: 0.5 },
  nearDuplicate: { measure: "jaccard-content-words", threshold: 0.6 },
  bands: { high: 0.8, medium: 0.5 },
  perSubject: { share: { core: 1, task: 0.75, deep: 0.5 }, min: 3 },
  durableTypes: ["preference", "user_model_attr", "relationship", "working_style", "constraint", "skill"],
  deadlineMargin: { share: 0.1, minMs: 20, maxMs: 200 },
  ownedResources: { weight: 0.5, types: ["user_model_attr", "project_fact", "resource"], tag: "+owned-resources@1" },
  semanticTag: "+semantic@3",
  semantic: { method: "convex", normalise: "min-max", lexicalSide: "scores", candidateCap: 50, weight: { core: 0.4, task: 0.4, deep: 0.4 } },
  lexical: {
    k1: 1.2,
    b: 0.75,
    fieldWeights: { subject: 1, statement: 1, source: 0.7, neighbours: 0.5 },
    prescoreCap: 50,
    namedSubjectBoost: 1.5,
    dateBoost: 1.5,
    trigram: { minSimilarity: 0.4, minWordLength: 4 },
  },
});

/** The weights of a belief's embedded document (ports/embedder.ts): the lexical fields' own. */
export function documentWeights(policy: RetrievalPolicy): DocumentWeights {
  const w = policy.lexical.fieldWeights;
  return { statement: w.statement, source: w.source, neighbours: w.neighbours };
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
