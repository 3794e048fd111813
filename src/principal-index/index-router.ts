import type { Principal } from "../domain/model.js";
import type { CandidateRouter, CandidateSource } from "../ports/candidate-source.js";
import type { SqlClient } from "../store/sql-client.js";
import { beforeDeadline, boundTo, StoreTimeoutError } from "../store/store-deadline.js";
import { listenForRowChanges } from "./change-feed.js";
import { ByteLru } from "./eviction.js";
import { applyDelta, lexemeLookup, loadIndex } from "./freshness.js";
import { emptyIndexStats, type IndexStats } from "./index-stats.js";
import type { IndexLookups, PrincipalIndex } from "./one-principal-index.js";
import type { VectorsOf } from "./loading.js";
import type { WarmEntry } from "./warm-list.js";
import { principalKey as keyOf, principalOfKey } from "../domain/principal-key.js";

export interface PrincipalIndexOptions {
  /** RECALL_INDEX_MB in bytes; 0 turns the index off (every recall reads SQL). */
  maxBytes: number;
  /**
   * The staleness bound: an index whose head was not confirmed (by a recall
   * seeing the tracked head, or a write through this sidecar) for this long
   * reads the head from the store before answering, so a lost or late
   * notification cannot serve stale memory for longer.
   */
  headCheckMs: number;
  /** How long after a principal's first unindexed recall its load starts (default LOAD_DELAY_MS). */
  loadDelayMs?: number;
  /** After a failed load, the principal is not retried for this long. */
  retryAfterMs?: number;
  clock?: () => number;
  onLoadError?: (p: Principal, error: unknown) => void;
  /** After a load installed an index: background work that warms what its recalls will need (sidecar/start-sidecar.ts: the safety scan). */
  onLoaded?: (beliefs: readonly { statement: string; beliefType: string }[]) => Promise<void>;
}

/** See scheduleLoad. */
const LOAD_DELAY_MS = 250;
/**
 * A background load is the sidecar's work, not the call's that scheduled it:
 * it runs under its own store deadline (a 100k-belief principal loads in
 * seconds), never the call's, which has usually passed by the time it starts.
 */
const LOAD_TIMEOUT_MS = 60_000;

interface Entry {
  index: PrincipalIndex;
  /** When the index was last known current to the store's head. */
  verifiedAt: number;
  /** Deltas apply one at a time per principal. */
  updating: Promise<void>;
  readonly bytes: number;
}

/**
 * The in-process principal indexes, and the router that picks a recall's
 * candidate source: the principal's index, brought up to the head first,
 * when it is loaded; otherwise the SQL source, while the index loads in the
 * background (the first call never waits for a load).
 */
/** The head a recall saw: its position and, when known, the position of the principal's last erasure. */
export interface HeadSeen {
  position: number;
  erasedPosition?: number | null;
}

export class PrincipalIndexes implements CandidateRouter {
  readonly stats: IndexStats;
  private readonly lru: ByteLru<Entry>;
  private readonly loading = new Map<string, Promise<void>>();
  private readonly scheduled = new Set<string>();
  private readonly failedAt = new Map<string, number>();
  /** Bumped per principal by drop(): a load that started before cannot install what it read. */
  private readonly generations = new Map<string, number>();
  private readonly lookups: IndexLookups;
  private readonly clock: () => number;
  /** Whose vectors the indexes hold (holdVectors); null: none, the semantic arm reads SQL. */
  private vectorsOf: VectorsOf = null;
  /** Rows changed (feedback, a vector saved) while their principal's index loaded: re-read once it is in. */
  private readonly changedWhileLoading = new Map<string, Set<string>>();

  constructor(
    private readonly store: { readonly db: SqlClient; readonly candidates: CandidateSource; head(p: Principal, deadline?: number): Promise<HeadSeen> },
    private readonly options: PrincipalIndexOptions,
  ) {
    this.stats = emptyIndexStats(options.maxBytes);
    this.clock = options.clock ?? Date.now;
    this.lru = new ByteLru<Entry>(options.maxBytes, () => {
      this.stats.evictions += 1;
    });
    this.lookups = { lexemes: lexemeLookup(store.db) };
  }

  private unlisten: (() => Promise<void>) | undefined;
  private stopped = false;

  /** Follows row changes the head does not announce (feedback, erasure), from every sidecar. */
  async start(): Promise<void> {
    if (!this.enabled) return;
    this.unlisten = await listenForRowChanges(this.store.db, {
      onRows: (p, ids) => {
        if (ids === null) this.drop(p);
        else void this.refresh(p, ids);
      },
      // Missed notifications cannot be told apart: start again from the store.
      onReconnect: () => this.dropAll(),
    });
  }

  async stop(): Promise<void> {
    // Loads in flight end with the store's close: not a failure worth a warning.
    this.stopped = true;
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
  }

  get enabled(): boolean {
    return this.options.maxBytes > 0;
  }

  /**
   * With the semantic arm on, before any index loads: every index holds its
   * beliefs' current vectors of `embedderId` (the stored id) and answers the
   * arm in process. Not called (the arm off), no vector is read or held.
   */
  holdVectors(embedderId: string): void {
    if (this.lru.size > 0 || this.loading.size > 0) throw new Error("principal index: vectors must be chosen before any index loads");
    this.vectorsOf = embedderId;
  }

  /**
   * The principal's index, current to `head`, or the SQL source. `deadline`:
   * the call's store deadline, which bounds the head check and the delta
   * (the SQL source returned is unbounded: the caller bounds its reads).
   */
  async sourceFor(p: Principal, head: HeadSeen, deadline?: number): Promise<CandidateSource> {
    const key = keyOf(p);
    let entry = this.enabled ? this.lru.get(key) : undefined;
    let target = head.position;
    if (entry && this.clock() - entry.verifiedAt > this.options.headCheckMs) {
      this.stats.headChecks += 1;
      const stored = await this.store.head(p, deadline);
      target = Math.max(target, stored.position);
      head = { position: target, erasedPosition: Math.max(head.erasedPosition ?? 0, stored.erasedPosition ?? 0) };
    }
    // An erasure deleted rows: no delta above the index's position can say so, so the index is rebuilt.
    if (entry && (head.erasedPosition ?? 0) > entry.index.position) {
      this.drop(p);
      entry = undefined;
    }
    if (!entry) {
      this.stats.sqlFallbacks += 1;
      if (this.enabled) this.scheduleLoad(p);
      return this.store.candidates;
    }
    if (entry.index.position < target) {
      try {
        await this.updateBeforeDeadline(key, entry, target, [], deadline);
      } catch {
        // A delta that cannot land in time (a stalled store) must not hold the call past its deadline:
        // the index goes, and SQL answers (or reports the store UNAVAILABLE) within the deadline.
        this.drop(p);
        this.stats.sqlFallbacks += 1;
        return this.store.candidates;
      }
    }
    entry.verifiedAt = this.clock();
    this.stats.hits += 1;
    return entry.index;
  }

  /**
   * Loads (or reloads) a principal's index now; resolves once it serves. A
   * load is the sidecar's work, not a call's: its store deadline is its own.
   */
  async load(p: Principal, deadline = Date.now() + LOAD_TIMEOUT_MS): Promise<void> {
    const key = keyOf(p);
    const running = this.loading.get(key);
    if (running) return running;
    const generation = this.generations.get(key) ?? 0;
    const started = this.clock();
    const work = loadIndex(boundTo(this.store.db, deadline), p, this.lookups, this.vectorsOf)
      .then((index) => {
        if ((this.generations.get(key) ?? 0) !== generation) return;
        // One principal larger than the whole bound is not kept (it would evict everything, then itself).
        if (index.bytes > this.options.maxBytes) throw new Error(`principal index: ${index.bytes} bytes exceed RECALL_INDEX_MB`);
        const ms = this.clock() - started;
        this.stats.loads += 1;
        this.stats.loadMsLast = ms;
        this.stats.loadMsTotal += ms;
        this.failedAt.delete(key);
        this.lru.set(key, entryFor(index, this.clock()));
        this.refreshGauges();
        // A page read before such a change holds the row as it was: read it again now.
        const changed = this.changedWhileLoading.get(key);
        if (changed) void this.refresh(p, [...changed]);
        if (this.options.onLoaded) {
          this.stats.warming += 1;
          void this.options.onLoaded(index.scanItems()).finally(() => (this.stats.warming -= 1));
        }
      })
      .finally(() => {
        this.loading.delete(key);
        this.changedWhileLoading.delete(key);
      });
    this.loading.set(key, work);
    return work;
  }

  /**
   * Loads the given principals' indexes one after another, for a restarted
   * sidecar (principal-index/warm-list.ts). One at a time, so the calls that
   * arrive meanwhile keep the pool; a principal asked for first loads on its
   * own (its first call answered from SQL) and is not loaded twice. Failures
   * are counted and logged like a background load's; `stopped` ends the walk.
   */
  async warm(principals: readonly Principal[], stopped: () => boolean = () => false): Promise<number> {
    const loaded: string[] = [];
    for (const p of principals) {
      if (stopped() || !this.enabled) break;
      const key = keyOf(p);
      if (this.lru.has(key)) continue;
      await this.loadInBackground(p);
      if (this.lru.has(key)) loaded.push(key);
    }
    // Loaded most recent first, which left the least recent as the most recently used: put the list's order back.
    for (const key of loaded.reverse()) this.lru.get(key);
    return loaded.length;
  }

  /** The loaded principals, most recently used first, with their approximate bytes: the warm list. */
  recentFirst(): WarmEntry[] {
    const out: WarmEntry[] = [];
    for (const [key, entry] of this.lru.items()) out.push({ ...principalOfKey(key), bytes: entry.bytes });
    return out.reverse();
  }

  /**
   * After a write through this sidecar, before it is acknowledged: brings a
   * loaded index up to the store's head, re-reading `beliefIds` too (feedback
   * changes utility without moving the head). On failure the index is
   * dropped, never left stale: SQL serves until it reloads. `deadline`: the
   * write's store deadline; a refresh on another sidecar's notification has none.
   */
  async refresh(p: Principal, beliefIds: readonly string[] = [], deadline?: number): Promise<void> {
    const key = keyOf(p);
    const entry = this.lru.get(key);
    if (!entry) {
      if (this.loading.has(key) && beliefIds.length > 0) {
        const changed = this.changedWhileLoading.get(key) ?? new Set<string>();
        for (const id of beliefIds) changed.add(id);
        this.changedWhileLoading.set(key, changed);
      }
      return;
    }
    try {
      await this.updateBeforeDeadline(key, entry, null, beliefIds, deadline);
      entry.verifiedAt = this.clock();
    } catch {
      this.drop(p);
    }
  }

  /**
   * Forgets a principal's index (and any load in flight). The entry point for
   * an erasure: deleted rows are not a delta above a position, so whatever
   * deletes a principal's rows drops the index, locally and on notification.
   */
  drop(p: Principal): void {
    const key = keyOf(p);
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1);
    this.lru.delete(key);
    this.refreshGauges();
  }

  dropAll(): void {
    for (const key of [...this.lru.keys()]) this.drop(principalOfKey(key));
  }

  /**
   * A principal's first recall usually comes in a burst (the snapshot, then
   * the first turns): the load starts a moment later so it does not compete
   * with them for the pool's connections.
   */
  private scheduleLoad(p: Principal): void {
    const key = keyOf(p);
    if (this.scheduled.has(key) || this.loading.has(key)) return;
    this.scheduled.add(key);
    setTimeout(() => {
      this.scheduled.delete(key);
      void this.loadInBackground(p);
    }, this.options.loadDelayMs ?? LOAD_DELAY_MS).unref();
  }

  private async loadInBackground(p: Principal): Promise<void> {
    const key = keyOf(p);
    const failed = this.failedAt.get(key);
    if (failed !== undefined && this.clock() - failed < (this.options.retryAfterMs ?? 5_000)) return;
    try {
      await this.load(p);
    } catch (error) {
      if (this.stopped) return;
      this.stats.loadFailures += 1;
      this.failedAt.set(key, this.clock());
      this.options.onLoadError?.(p, error);
    }
  }

  /** `update`, waited for no longer than the call's store deadline (an earlier delta may be stuck in the chain). */
  private updateBeforeDeadline(
    key: string,
    entry: Entry,
    target: number | null,
    beliefIds: readonly string[],
    deadline: number | undefined,
  ): Promise<void> {
    return beforeDeadline(this.update(key, entry, target, beliefIds, deadline), deadline, () => new StoreTimeoutError());
  }

  /** Chained per principal; the delta's statements are bounded by the deadline of the call that asked for it. */
  private update(key: string, entry: Entry, target: number | null, beliefIds: readonly string[], deadline: number | undefined): Promise<void> {
    const next = entry.updating.then(async () => {
      if (target !== null && entry.index.position >= target && beliefIds.length === 0) return;
      await applyDelta(boundTo(this.store.db, deadline), entry.index, target, beliefIds);
      this.stats.deltas += 1;
      if (this.lru.get(key) === entry) this.lru.set(key, entry);
      this.refreshGauges();
    });
    // A failed delta leaves the chain usable for the next caller.
    entry.updating = next.catch(() => {});
    return next;
  }

  private refreshGauges(): void {
    this.stats.principals = this.lru.size;
    this.stats.bytes = this.lru.bytes;
    this.stats.beliefs = 0;
    this.stats.vectors = 0;
    this.stats.vectorBytes = 0;
    for (const entry of this.lru.values()) {
      this.stats.beliefs += entry.index.size;
      this.stats.vectors += entry.index.vectorRows;
      this.stats.vectorBytes += entry.index.vectorBytes;
    }
  }
}

function entryFor(index: PrincipalIndex, now: number): Entry {
  return {
    index,
    verifiedAt: now,
    updating: Promise.resolve(),
    get bytes() {
      return index.bytes;
    },
  };
}
