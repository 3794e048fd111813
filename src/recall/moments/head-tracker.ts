import type { Principal } from "../../domain/model.js";
import { principalKey } from "../../domain/principal-key.js";
import { ERASED_MARKER } from "../../store/erase-principal.js";
import { HEAD_CHANNEL, type StoreHead } from "../../store/memory-store.js";
import type { SqlClient } from "../../store/sql-client.js";

/**
 * Told that a principal was erased: everything stored for it up to `position`
 * was deleted (not superseded), so in-process state derived from it (cached
 * snapshots, indexes) must be dropped rather than updated by a delta.
 */
export type ErasedListener = (p: Principal, position: number) => void;

/**
 * Each principal's store head (the snapshot watermark), known in process, so
 * a cached snapshot (or an in-process index) can be served without asking the
 * database whether memory changed. Two ways to stay fresh:
 *
 * - listening: every write that moves a head NOTIFYs it (store/memory-store.ts),
 *   on PostgreSQL to every sidecar sharing the database. A known head is
 *   served until a notification moves it. When the listening connection is
 *   (re)established, everything known is dropped: notifications may have
 *   been missed while it was down.
 * - polling: with no notification connection (behind a transaction-mode
 *   pooler, where LISTEN cannot work, and no direct URL), a known head is
 *   served for at most `pollMs`, then read again. A write through another
 *   sidecar is seen within `pollMs` plus one query.
 *
 * Either way a write through this sidecar is seen by its very next read
 * (`forget`).
 */

/** Where heads are read from when not known. */
export interface HeadSource {
  /** `deadline`: the caller's store deadline (store/store-deadline.ts). */
  head(p: Principal, deadline?: number): Promise<StoreHead>;
}

export interface HeadTrackerOptions {
  /** The notification connection; null means poll. */
  listener: Pick<SqlClient, "listen"> | null;
  /** Polling: how long a head read is served before it is read again. */
  pollMs: number;
  maxPrincipals: number;
  now: () => number;
}

export type HeadFreshness = "listening" | "polling";

/** Default polling interval, and the staleness bound it gives. */
export const DEFAULT_HEAD_POLL_MS = 1000;

interface KnownHead {
  head: StoreHead;
  /** When it was read (polling) or last confirmed. */
  at: number;
}

export class HeadTracker {
  private readonly heads = new Map<string, KnownHead>();
  /** Bumped on every reset, so a load that started before it cannot store a stale head. */
  private generation = 0;
  private unlisten: (() => Promise<void>) | undefined;
  private started = false;
  private readonly options: HeadTrackerOptions;
  private readonly erasedListeners = new Set<ErasedListener>();
  /** The last erasure announced per principal, so this sidecar's own erase is announced once, not again by its NOTIFY. */
  private readonly lastErased = new Map<string, number>();

  /** `store` is the default listener too (a store with `db`), unless `options.listener` says otherwise. */
  constructor(
    private readonly store: HeadSource & { db?: Pick<SqlClient, "listen"> },
    options: Partial<HeadTrackerOptions> = {},
  ) {
    this.options = {
      listener: options.listener === undefined ? (store.db ?? null) : options.listener,
      pollMs: options.pollMs ?? DEFAULT_HEAD_POLL_MS,
      maxPrincipals: options.maxPrincipals ?? 10_000,
      now: options.now ?? Date.now,
    };
  }

  /** How this tracker stays fresh: a consumer caching by head can tell how stale a head may be. */
  get freshness(): HeadFreshness {
    return this.options.listener ? "listening" : "polling";
  }

  /** The most a served head can lag a commit by another sidecar: null while listening (a notification's delivery). */
  get stalenessBoundMs(): number | null {
    return this.options.listener ? null : this.options.pollMs;
  }

  async start(): Promise<void> {
    this.started = true;
    if (!this.options.listener) return;
    this.unlisten = await this.options.listener.listen(
      HEAD_CHANNEL,
      (payload) => this.onNotify(payload),
      () => this.reset(),
    );
  }

  async stop(): Promise<void> {
    this.started = false;
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    this.reset();
  }

  /**
   * The head, from memory when known (and, polling, recent enough); otherwise
   * one query, bounded by the caller's store `deadline`, remembered.
   */
  async head(p: Principal, deadline?: number): Promise<StoreHead> {
    const key = principalKey(p);
    const known = this.heads.get(key);
    if (known && this.fresh(known)) return known.head;
    const generation = this.generation;
    const at = this.options.now();
    const loaded = await this.store.head(p, deadline);
    // Not started (or not listening yet) means nothing would keep it fresh: do not remember it.
    const keeping = this.started && (this.unlisten !== undefined || !this.options.listener);
    if (keeping && generation === this.generation) {
      const now = this.heads.get(key);
      // A notification that arrived while loading may already know a later head.
      if (!now || now.head.position <= loaded.position || !this.fresh(now)) this.remember(key, { head: loaded, at });
    }
    return this.heads.get(key)?.head ?? loaded;
  }

  /**
   * Forgets a principal's head after a write through this sidecar, so the
   * writer reads its own write at once instead of waiting for the
   * notification (or the next poll) to come round.
   */
  forget(p: Principal): void {
    this.generation += 1;
    this.heads.delete(principalKey(p));
  }

  /**
   * Subscribes to erasures of any principal: this sidecar's own (at once) and,
   * when listening, other sidecars' (through the head NOTIFY, with the
   * "erased" marker). Each erasure is announced once per position. Returns
   * the unsubscribe function. (Polling consumers compare
   * `StoreHead.erasedPosition` with their own position instead.)
   */
  onErased(listener: ErasedListener): () => void {
    this.erasedListeners.add(listener);
    return () => this.erasedListeners.delete(listener);
  }

  /** An erasure through this sidecar: the head is forgotten (reloaded on next use) and listeners are told. */
  erased(p: Principal, position: number): void {
    this.forget(p);
    const key = principalKey(p);
    if ((this.lastErased.get(key) ?? -1) >= position) return;
    this.lastErased.set(key, position);
    if (this.lastErased.size > this.options.maxPrincipals) this.lastErased.delete(this.lastErased.keys().next().value!);
    for (const listener of this.erasedListeners) listener(p, position);
  }

  get size(): number {
    return this.heads.size;
  }

  private fresh(known: KnownHead): boolean {
    return this.options.listener !== null || this.options.now() - known.at < this.options.pollMs;
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
    const key = principalKey({ tenantId, principalId });
    const known = this.heads.get(key);
    // Only principals already asked about are tracked; others load on first use.
    if (known && position > known.head.position) {
      const head = { position, updatedAt: new Date(updatedAt), erasedPosition: known.head.erasedPosition };
      this.remember(key, { head, at: this.options.now() });
    }
  }

  private remember(key: string, known: KnownHead): void {
    this.heads.delete(key);
    this.heads.set(key, known);
    if (this.heads.size > this.options.maxPrincipals) this.heads.delete(this.heads.keys().next().value!);
  }

  private reset(): void {
    this.generation += 1;
    this.heads.clear();
  }
}
