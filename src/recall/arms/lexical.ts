import type { EligibilityFilter } from "../hard-filter.js";
import type { MemoryStore } from "../../store/memory-store.js";
import type { RecallArm } from "./arm.js";

/**
 * Lexical arm (always on): PostgreSQL full-text search over subject and
 * statement with OR semantics (strict AND matches nothing for most real
 * questions), ranked by ts_rank with a deterministic tie-break.
 */
export function lexicalArm(store: MemoryStore, filter: EligibilityFilter, terms: readonly string[], cap: number): RecallArm {
  return {
    name: "lexical",
    async run(signal) {
      return store.lexicalCandidates(filter, terms, cap, { signal });
    },
  };
}
