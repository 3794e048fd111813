import type { EligibilityFilter } from "../hard-filter.js";
import type { MemoryStore } from "../../store/memory-store.js";
import type { RecallArm } from "./arm.js";

/**
 * Delta arm (in-turn recalls that carry the session's snapshot watermark):
 * beliefs created, reinforced or superseded after the snapshot was taken,
 * which the frozen snapshot cannot show. A minimum-position bound, no anchors.
 */
export function deltaArm(store: MemoryStore, filter: EligibilityFilter, afterPosition: number, cap: number): RecallArm {
  return {
    name: "delta",
    async run(signal) {
      return store.deltaCandidates(filter, afterPosition, cap, { signal });
    },
  };
}
