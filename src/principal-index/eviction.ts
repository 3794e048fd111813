/**
 * The loaded indexes, least recently used first out, bounded by their
 * approximate bytes (RECALL_INDEX_MB). An evicted principal is served from
 * SQL and reloads on demand.
 */
export class ByteLru<V extends { readonly bytes: number }> {
  private readonly entries = new Map<string, V>();

  constructor(
    readonly maxBytes: number,
    private readonly onEvict: (key: string, value: V) => void = () => {},
  ) {}

  get(key: string): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Map order is the recency order.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Without touching the recency order. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Inserts or re-inserts (sizes change as deltas apply), then evicts down to the bound. */
  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.trim();
  }

  delete(key: string): boolean {
    return this.entries.delete(key);
  }

  /** Evicts least recently used entries while over the bound (sizes are re-read: deltas grow them). */
  trim(): void {
    while (this.bytes > this.maxBytes && this.entries.size > 0) {
      const [key, value] = this.entries.entries().next().value!;
      this.entries.delete(key);
      this.onEvict(key, value);
    }
  }

  get bytes(): number {
    let sum = 0;
    for (const v of this.entries.values()) sum += v.bytes;
    return sum;
  }

  keys(): IterableIterator<string> {
    return this.entries.keys();
  }

  /** Least recently used first. */
  items(): IterableIterator<[string, V]> {
    return this.entries.entries();
  }

  values(): IterableIterator<V> {
    return this.entries.values();
  }

  get size(): number {
    return this.entries.size;
  }
}
