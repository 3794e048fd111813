import type { CacheStats } from "../moments/snapshot-cache.js";
import type { IndexStats } from "../principal-index/index-stats.js";

/**
 * GET /metrics in the Prometheus text format, served on the RPC port (over
 * HTTP/1.1 or HTTP/2). Small on purpose: the snapshot cache's counters and
 * how many principals' heads are tracked in process.
 */
export interface MetricsSource {
  snapshotCache: CacheStats;
  trackedHeads: number;
  principalIndex?: IndexStats;
}

export function renderMetrics(m: MetricsSource): string {
  const c = m.snapshotCache;
  const lines = [
    ["recall_snapshot_cache_hits_total", "counter", "Snapshot recalls served from the in-process cache.", c.hits],
    ["recall_snapshot_cache_misses_total", "counter", "Snapshot recalls that had to be rendered.", c.misses],
    ["recall_snapshot_cache_evictions_total", "counter", "Cached snapshots evicted to stay within the byte bound.", c.evictions],
    ["recall_snapshot_cache_entries", "gauge", "Snapshots currently cached.", c.entries],
    ["recall_snapshot_cache_bytes", "gauge", "Approximate bytes held by the snapshot cache.", c.bytes],
    ["recall_snapshot_cache_max_bytes", "gauge", "The snapshot cache's byte bound.", c.maxBytes],
    ["recall_tracked_heads", "gauge", "Principals whose store head is known in process.", m.trackedHeads],
    ...indexLines(m.principalIndex),
  ] as const;
  return lines.map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`).join("");
}

function indexLines(s: IndexStats | undefined): [string, "counter" | "gauge", string, number][] {
  if (!s) return [];
  return [
    ["recall_index_loads_total", "counter", "Principal indexes loaded (first loads and reloads).", s.loads],
    ["recall_index_load_failures_total", "counter", "Principal index loads that failed.", s.loadFailures],
    ["recall_index_load_seconds_total", "counter", "Time spent loading principal indexes.", s.loadMsTotal / 1000],
    ["recall_index_load_seconds_last", "gauge", "Duration of the last principal index load.", s.loadMsLast / 1000],
    ["recall_index_hits_total", "counter", "Recalls answered from a principal index.", s.hits],
    ["recall_index_sql_fallbacks_total", "counter", "Recalls answered by SQL because the principal's index was not loaded.", s.sqlFallbacks],
    ["recall_index_deltas_total", "counter", "Deltas applied to principal indexes.", s.deltas],
    ["recall_index_head_checks_total", "counter", "Head checks made because the staleness bound passed without news.", s.headChecks],
    ["recall_index_evictions_total", "counter", "Principal indexes evicted to stay within RECALL_INDEX_MB.", s.evictions],
    ["recall_index_principals", "gauge", "Principals indexed in process.", s.principals],
    ["recall_index_beliefs", "gauge", "Beliefs held by the principal indexes.", s.beliefs],
    ["recall_index_bytes", "gauge", "Approximate bytes held by the principal indexes.", s.bytes],
    ["recall_index_max_bytes", "gauge", "The principal indexes' byte bound (RECALL_INDEX_MB).", s.maxBytes],
  ];
}

export function metricsEndpoint(read: () => MetricsSource) {
  // Structural types: connect-node hands over HTTP/1.1 and HTTP/2 objects alike.
  return (
    req: { method?: string; url?: string },
    res: { writeHead(status: number, headers: Record<string, string>): unknown; end(body: string): unknown },
  ) => {
    if (req.method === "GET" && req.url === "/metrics") {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
      res.end(renderMetrics(read()));
      return;
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("not found\n");
  };
}
