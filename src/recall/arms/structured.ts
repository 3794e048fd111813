import type { EligibilityFilter } from "../../domain/hard-filter.js";
import type { CandidateSource, StructuredAnchors } from "../../ports/candidate-source.js";
import type { RecallArm } from "./arm.js";

/**
 * Structured arm (always on): direct lookup by subject (alias-expanded),
 * belief type and, when asked, direct ownership statements. With no anchors
 * it is skipped, except for the core profile, where the durable types are the
 * anchors (the snapshot has no query text).
 */
export function structuredArm(source: CandidateSource, filter: EligibilityFilter, anchors: StructuredAnchors, cap: number): RecallArm {
  return {
    name: "structured",
    async run(signal) {
      if (anchors.subjects.length === 0 && anchors.types.length === 0 && !anchors.owned) return [];
      return source.structuredCandidates(filter, anchors, cap, { signal });
    },
  };
}
