import { Counter, Gauge, type Registry } from "prom-client";
import type { IndexStats } from "../principal-index/index-stats.js";

/**
 * The in-process principal indexes' statistics (loads, load time, hits, SQL
 * fallbacks, deltas, evictions, size), read at scrape time under the names
 * they were first served with.
 */
const COUNTERS: [string, string, (s: IndexStats) => number][] = [
  ["recall_index_loads_total", "Principal indexes loaded (first loads and reloads).", (s) => s.loads],
  ["recall_index_load_failures_total", "Principal index loads that failed.", (s) => s.loadFailures],
  ["recall_index_load_seconds_total", "Time spent loading principal indexes.", (s) => s.loadMsTotal / 1000],
  ["recall_index_hits_total", "Recalls answered from a principal index.", (s) => s.hits],
  ["recall_index_sql_fallbacks_total", "Recalls answered by SQL because the principal's index was not loaded.", (s) => s.sqlFallbacks],
  ["recall_index_deltas_total", "Deltas applied to principal indexes.", (s) => s.deltas],
  ["recall_index_head_checks_total", "Head checks made because the staleness bound passed without news.", (s) => s.headChecks],
  ["recall_index_evictions_total", "Principal indexes evicted to stay within RECALL_INDEX_MB.", (s) => s.evictions],
];
const GAUGES: [string, string, (s: IndexStats) => number][] = [
  ["recall_index_load_seconds_last", "Duration of the last principal index load.", (s) => s.loadMsLast / 1000],
  ["recall_index_principals", "Principals indexed in process.", (s) => s.principals],
  ["recall_index_warming", "Loaded indexes whose background warm-up (safety prescan) is still running.", (s) => s.warming],
  ["recall_index_beliefs", "Beliefs held by the principal indexes.", (s) => s.beliefs],
  ["recall_index_bytes", "Approximate bytes held by the principal indexes.", (s) => s.bytes],
  ["recall_index_max_bytes", "The principal indexes' byte bound (RECALL_INDEX_MB).", (s) => s.maxBytes],
  ["recall_index_vectors", "Beliefs whose semantic-arm vector the principal indexes hold.", (s) => s.vectors],
  ["recall_index_vector_bytes", "Bytes of semantic-arm vectors in the principal indexes (part of recall_index_bytes).", (s) => s.vectorBytes],
];

export function registerIndexMetrics(registry: Registry, read: () => IndexStats): void {
  for (const [name, help, value] of COUNTERS) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value(read()));
      },
    });
  }
  for (const [name, help, value] of GAUGES) {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value(read()));
      },
    });
  }
}
