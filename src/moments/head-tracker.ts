import type { Principal } from "../domain/model.js";
import { ERASED_MARKER } from "../store/erase-principal.js";
import { HEAD_CHANNEL, type MemoryStore, type StoreHead } from "../store/memory-store.js";

/**
 * Told that a principal was erased: everything stored for it up to `position`
 * was deleted (not superseded), so in-process state derived from it (cached
 * snapshots, indexes) must be dropped rather than updated by a delta.
 */
export type ErasedListener = (p: Principal, position: number) => void;

/**
 * Each principal's store head (the snapshot watermark), known in process.
 * Every write that moves a head NOTIFYs it (store/memory-store.ts), on
 * PostgreSQL to every sidecar sharing the database, so a cached snapshot can
 * be served without asking the database whether memory changed. When the
 * listening connection is (re)established, everything known is dropped:
 * notifications may have been missed while it was down.
 */
export class HeadTracker {
  private readonly heads = new Map<string, StoreHead>();
  /** Bumped on every reset, so a load that started before it cannot store a stale head. */
  private generation = 0;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly erasedListeners = new Set<ErasedListener>();
  /** The last erasure announced per principal, so this sidecar's own erase is announced once, not again by its NOTIFY. */
  private readonly lastErased = new Map<string, number>();

  constructor(
    private readonly store: MemoryStore,
    private readonly maxPrincipals = 10_000,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.store.db.listen(
      HEAD_CHANNEL,
      (payload) => this.onNotify(payload),
      () => this.reset(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    this.reset();
  }

  /** The head, from memory when known; otherwise one query, remembered. */
  async head(p: Principal): Promise<StoreHead> {
    const key = keyOf(p.tenantId, p.principalId);
    const known = this.heads.get(key);
    if (known) return known;
    const generation = this.generation;
    const loaded = await this.store.head(p);
    // Not listening (yet) means nothing would keep it fresh: do not remember it.
    if (this.unlisten && generation === this.generation && !this.heads.has(key)) this.remember(key, loaded);
    return this.heads.get(key) ?? loaded;
  }

  /**
   * Forgets a principal's head after a write through this sidecar, so the
   * writer reads its own write at once instead of waiting for the
   * notification to come round (other sidecars catch up through it).
   */
  forget(p: Principal): void {
    this.generation += 1;
    this.heads.delete(keyOf(p.tenantId, p.principalId));
  }

  /**
   * Subscribes to erasures of any principal: this sidecar's own (at once) and,
   * on PostgreSQL, other sidecars' (through the head NOTIFY, with the
   * "erased" marker). Each erasure is announced once per position. Returns
   * the unsubscribe function.
   */
  onErased(listener: ErasedListener): () => void {
    this.erasedListeners.add(listener);
    return () => this.erasedListeners.delete(listener);
  }

  /** An erasure through this sidecar: the head is forgotten (reloaded on next use) and listeners are told. */
  erased(p: Principal, position: number): void {
    this.forget(p);
    const key = keyOf(p.tenantId, p.principalId);
    if ((this.lastErased.get(key) ?? -1) >= position) return;
    this.lastErased.set(key, position);
    if (this.lastErased.size > this.maxPrincipals) this.lastErased.delete(this.lastErased.keys().next().value!);
    for (const listener of this.erasedListeners) listener(p, position);
  }

  get size(): number {
    return this.heads.size;
  }

  private onNotify(payload: string): void {
    let parsed: [string, string, number, string, string?];
    try {
      parsed = JSON.parse(payload) as [string, string, number, string, string?];
    } catch {
      return;
    }
    const [tenantId, principalId, position, updatedAt, marker] = parsed;
    if (marker === ERASED_MARKER) {
      this.erased({ tenantId, principalId }, position);
      return;
    }
    const key = keyOf(tenantId, principalId);
    const known = this.heads.get(key);
    // Only principals already asked about are tracked; others load on first use.
    if (known && position > known.position) this.remember(key, { position, updatedAt: new Date(updatedAt), erasedPosition: known.erasedPosition });
  }

  private remember(key: string, head: StoreHead): void {
    this.heads.delete(key);
    this.heads.set(key, head);
    if (this.heads.size > this.maxPrincipals) this.heads.delete(this.heads.keys().next().value!);
  }

  private reset(): void {
    this.generation += 1;
    this.heads.clear();
  }
}

function keyOf(tenantId: string, principalId: string): string {
  return JSON.stringify([tenantId, principalId]);
}
