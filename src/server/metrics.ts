import type { CacheStats } from "../moments/snapshot-cache.js";

/**
 * GET /metrics in the Prometheus text format, served on the RPC port (over
 * HTTP/1.1 or HTTP/2). Small on purpose: the snapshot cache's counters and
 * how many principals' heads are tracked in process.
 */
export interface MetricsSource {
  snapshotCache: CacheStats;
  trackedHeads: number;
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
  ] as const;
  return lines.map(([name, type, help, value]) => `# HELP ${name} ${help}\n# TYPE ${name} ${type}\n${name} ${value}\n`).join("");
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
