import type { EligibilityFilter } from "../../domain/hard-filter.js";
import type { CandidateSource } from "../../ports/candidate-source.js";
import type { RecallArm } from "./arm.js";

/**
 * Delta arm (in-turn recalls that carry the session's snapshot watermark):
 * beliefs created, reinforced or superseded after the snapshot was taken,
 * which the frozen snapshot cannot show. A minimum-position bound, no anchors.
 */
export function deltaArm(source: CandidateSource, filter: EligibilityFilter, afterPosition: number, cap: number): RecallArm {
  return {
    name: "delta",
    async run(signal) {
      return source.deltaCandidates(filter, afterPosition, cap, { signal });
    },
  };
}
