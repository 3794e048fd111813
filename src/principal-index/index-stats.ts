/** The principal index's counters, read by the /metrics renderer. */
export interface IndexStats {
  /** Indexes loaded (first loads and reloads after eviction). */
  loads: number;
  /** Loads that failed (the principal stays on SQL and is retried later). */
  loadFailures: number;
  /** Sum and last of load times, milliseconds. */
  loadMsTotal: number;
  loadMsLast: number;
  /** Recalls answered from an index. */
  hits: number;
  /** Recalls answered by the SQL arms because the principal's index was not loaded (yet). */
  sqlFallbacks: number;
  /** Deltas applied (head moved, or a write through this sidecar). */
  deltas: number;
  /** Head checks made because no notification arrived within the staleness bound. */
  headChecks: number;
  evictions: number;
  /** Loaded indexes whose warm-up (the safety prescan) is still running in the background. */
  warming: number;
  /** Principals indexed now, their beliefs and approximate bytes, and the bound. */
  principals: number;
  beliefs: number;
  bytes: number;
  maxBytes: number;
  /** Of those, beliefs holding a vector for the semantic arm, and the vectors' bytes (part of `bytes`). */
  vectors: number;
  vectorBytes: number;
}

export function emptyIndexStats(maxBytes: number): IndexStats {
  return {
    loads: 0,
    loadFailures: 0,
    loadMsTotal: 0,
    loadMsLast: 0,
    hits: 0,
    sqlFallbacks: 0,
    deltas: 0,
    headChecks: 0,
    evictions: 0,
    warming: 0,
    principals: 0,
    beliefs: 0,
    bytes: 0,
    maxBytes,
    vectors: 0,
    vectorBytes: 0,
  };
}
