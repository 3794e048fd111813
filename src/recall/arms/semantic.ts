import type { Embedder } from "../../ports/embedder.js";
import type { SemanticStore } from "../../store/candidates/semantic-store.js";
import type { SemanticRanking, SemanticSimilarity } from "../../domain/semantic-calibration.js";
import type { EligibilityFilter } from "../../domain/hard-filter.js";
import type { CandidateSource } from "../../ports/candidate-source.js";
import type { RecallArm } from "./arm.js";
import type { Profile } from "../../domain/model.js";
import type { RetrievalPolicy } from "../policy.js";

/** What the semantic arm needs: the embedder of the stored vectors, their store, and what a similarity is worth. */
export interface SemanticSearch {
  embedder: Embedder;
  store: SemanticStore;
  similarity: SemanticSimilarity;
  /** Its cap and fusion for one evaluation run (default: the policy's, semanticRankingFor). */
  ranking?: SemanticRanking;
}

/** The semantic arm's cap and fusion for a recall of `profile`: the search's own when set, else the policy's. */
export function semanticRankingFor(policy: RetrievalPolicy, profile: Profile, semantic: SemanticSearch): SemanticRanking {
  if (semantic.ranking) return semantic.ranking;
  const { method, normalise, lexicalSide, candidateCap, weight } = policy.semantic;
  return { method, normalise, lexicalSide, candidateCap, weight: weight[profile] };
}

/**
 * Semantic arm (optional, RECALL_SEMANTIC=on): embeds the query text under
 * the recall's deadline, then an exact scan by cosine distance of the
 * principal's eligible, embedded beliefs, none below the calibrated minimum
 * similarity (semantic-calibration.ts): in process from the principal index's
 * int8 vectors when `source` is that index, else one SQL query. An embedder
 * outage fails the arm, which the pipeline reports in arms_degraded; the
 * recall goes on without it.
 * `deadline`: the recall's store deadline (store/store-deadline.ts).
 */
export function semanticArm(
  semantic: SemanticSearch,
  source: CandidateSource,
  filter: EligibilityFilter,
  text: string | null,
  cap: number,
  deadline?: number,
): RecallArm {
  return {
    name: "semantic",
    async run(signal) {
      if (!text || text.trim() === "") return [];
      const [vector] = await semantic.embedder.embed([text], signal, "query");
      const minSimilarity = semantic.similarity.min;
      const held = await source.semanticCandidates?.(filter, { embedderId: semantic.store.storedId(semantic.embedder.id), vector: vector!, minSimilarity }, cap, { signal });
      return held ?? semantic.store.semanticCandidates(filter, semantic.embedder.id, vector!, cap, minSimilarity, { signal, deadline });
    },
  };
}
