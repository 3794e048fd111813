import { Counter, Gauge, type Registry } from "prom-client";
import type { CacheStats } from "../recall/moments/snapshot-cache.js";

/**
 * The snapshot cache and the head tracker, under the names /metrics has
 * always had (recall_snapshot_cache_*, recall_tracked_heads), read at scrape
 * time.
 */
export function registerCacheMetrics(registry: Registry, read: () => { snapshotCache: CacheStats; trackedHeads: number }): void {
  const counters = [
    ["recall_snapshot_cache_hits_total", "Snapshot recalls served from the in-process cache.", "hits"],
    ["recall_snapshot_cache_misses_total", "Snapshot recalls that had to be rendered.", "misses"],
    ["recall_snapshot_cache_evictions_total", "Cached snapshots evicted to stay within the byte bound.", "evictions"],
  ] as const;
  for (const [name, help, field] of counters) {
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read().snapshotCache[field]);
      },
    });
  }
  const gauges = [
    ["recall_snapshot_cache_entries", "Snapshots currently cached.", (s: ReturnType<typeof read>) => s.snapshotCache.entries],
    ["recall_snapshot_cache_bytes", "Approximate bytes held by the snapshot cache.", (s: ReturnType<typeof read>) => s.snapshotCache.bytes],
    ["recall_snapshot_cache_max_bytes", "The snapshot cache's byte bound.", (s: ReturnType<typeof read>) => s.snapshotCache.maxBytes],
    ["recall_tracked_heads", "Principals whose store head is known in process.", (s: ReturnType<typeof read>) => s.trackedHeads],
  ] as const;
  for (const [name, help, value] of gauges) {
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
