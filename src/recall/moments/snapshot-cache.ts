/**
 * The session-open snapshot, cached in process. The key holds the snapshot
 * watermark (the principal's store head) and everything else that changes
 * the bytes, so a hit is always byte-identical to a fresh render, and any
 * write for the principal moves the head and misses. Bounded by bytes, least
 * recently used first out.
 */

export interface CacheStats {
  hits: number;
  misses: number;
  evictions: number;
  entries: number;
  bytes: number;
  maxBytes: number;
}

export class SnapshotCache<V> {
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  private bytes = 0;
  private hits = 0;
  private misses = 0;
  private evictions = 0;

  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) {
      this.misses += 1;
      return undefined;
    }
    this.hits += 1;
    // Re-insert: Map order is the recency order.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  set(key: string, value: V): void {
    const bytes = this.sizeOf(value) + key.length;
    if (bytes > this.maxBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.bytes;
    }
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    while (this.bytes > this.maxBytes) {
      const [oldestKey, oldest] = this.entries.entries().next().value!;
      this.entries.delete(oldestKey);
      this.bytes -= oldest.bytes;
      this.evictions += 1;
    }
  }

  /** Drops every entry whose key starts with `prefix` (an erased principal's snapshots); returns how many. */
  deleteByPrefix(prefix: string): number {
    let dropped = 0;
    for (const [key, entry] of this.entries) {
      if (!key.startsWith(prefix)) continue;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
      dropped += 1;
    }
    return dropped;
  }

  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, evictions: this.evictions, entries: this.entries.size, bytes: this.bytes, maxBytes: this.maxBytes };
  }
}
