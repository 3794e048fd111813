import type { Principal } from "../../domain/model.js";
import type { SqlClient } from "../../store/sql-client.js";
import { SESSION_SNAPSHOT_CHANNEL } from "../../store/traces/trace-rows.js";
import { parseSessionNotice, sessionKeyOf as keyOf } from "./session-snapshots.js";
import { snapshotKeyPrefix } from "./snapshot.js";

/**
 * What each session's in-turn recalls and searches have shown as current,
 * kept in process, so an in-turn recall with a watermark can correct what
 * the session was shown after its snapshot too (an MCP host has no snapshot
 * at all: every recollection it saw came from memory_recall or
 * memory_search). The snapshot's own ids are SessionSnapshots'.
 *
 * Keyed by tenant, principal and session: another principal's session of
 * the same id is another entry, never merged and never read.
 *
 * - What this sidecar's recalls returned is known at once (before their
 *   traces are written).
 * - A session is read from its stored in-turn traces (after writing this
 *   process's queued ones) the first time it is looked up here (after a
 *   restart, an eviction), and then kept fresh as SessionSnapshots is:
 *   listening, a notification that the session's traces were deleted
 *   forgets it, and a (re)established listening connection forgets
 *   everything; polling, what was read is read again after `pollMs`.
 *   Another sidecar's recalls of the session are seen only at such a read:
 *   a session is served by one sidecar.
 * - Bounded: the latest `maxIdsPerSession` ids of a session (older ones
 *   leave first and are no longer corrected), and `maxIds` over all
 *   sessions, the least recently used session leaving first.
 */

export interface SessionShownOptions {
  /** The ids the session's stored in-turn traces returned, the most recently shown first, at most `limit`. */
  read(p: Principal, sessionId: string, limit: number, storeDeadline?: number): Promise<readonly string[]>;
  /** Writes the session's in-turn traces still queued in this process, so `read` finds them. */
  settle(p: Principal, sessionId: string, deadlineAt: number): Promise<void>;
  /** The notification connection; null means poll. */
  listener: Pick<SqlClient, "listen"> | null;
  pollMs: number;
  now: () => number;
  maxIds: number;
  maxIdsPerSession: number;
}

interface Shown {
  /** Each id with the sequence number of the recall that last showed it (0: read from the store); the oldest first. */
  ids: Map<string, number>;
  /** When the stored traces were read into it; null: not yet (it may lack what the session was shown before). */
  readAt: number | null;
}

export class SessionShown {
  private readonly known = new Map<string, Shown>();
  private ids = 0;
  /** Numbers the recalls recorded, so a read keeps exactly what was recorded while it ran. */
  private sequence = 0;
  /** Bumped when sessions are forgotten, so a read that started before cannot bring them back. */
  private generation = 0;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly options: SessionShownOptions) {}

  async start(): Promise<void> {
    if (!this.options.listener) return;
    this.unlisten = await this.options.listener.listen(SESSION_SNAPSHOT_CHANNEL, (payload) => this.onNotify(payload), () => this.reset());
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    this.reset();
  }

  /** The ids the session was shown by its in-turn recalls and searches (its latest, within the bound). */
  async shown(p: Principal, sessionId: string, deadlineAt: number, storeDeadline?: number): Promise<readonly string[]> {
    const key = keyOf(p, sessionId);
    const known = this.known.get(key);
    if (known && this.fresh(known)) {
      this.known.delete(key);
      this.known.set(key, known);
      return [...known.ids.keys()];
    }
    const [generation, since, at] = [this.generation, this.sequence, this.options.now()];
    await this.options.settle(p, sessionId, deadlineAt);
    const stored = await this.options.read(p, sessionId, this.options.maxIdsPerSession, storeDeadline);
    if (generation !== this.generation) return stored;
    // The store has everything recorded before the read (settled); what was recorded since comes after it.
    const ids = new Map([...stored].reverse().map((id) => [id, 0]));
    for (const [id, n] of this.known.get(key)?.ids ?? []) if (n > since) showLatest(ids, [id], n);
    // Only what something keeps fresh is kept as read: listening, or polling.
    const keeping = this.unlisten !== undefined || !this.options.listener;
    this.drop(key);
    this.put(key, { ids, readAt: keeping ? at : null });
    return [...ids.keys()];
  }

  /** A recall of the session returned `returned` (as current, not as of a past time). */
  recorded(p: Principal, sessionId: string, returned: readonly string[]): void {
    if (sessionId === "" || returned.length === 0) return;
    const key = keyOf(p, sessionId);
    const known = this.known.get(key) ?? { ids: new Map<string, number>(), readAt: null };
    this.drop(key);
    this.sequence += 1;
    showLatest(known.ids, returned, this.sequence);
    this.put(key, known);
  }

  /** The session's traces were deleted: what it was shown is forgotten with them. */
  forgetSession(p: Principal, sessionId: string): void {
    this.generation += 1;
    this.drop(keyOf(p, sessionId));
  }

  /** The principal was erased: nothing of its sessions is kept. */
  forgetPrincipal(p: Principal): void {
    this.generation += 1;
    const prefix = snapshotKeyPrefix(p);
    for (const key of [...this.known.keys()]) if (key.startsWith(prefix)) this.drop(key);
  }

  /** Sessions and ids held. */
  get size(): { sessions: number; ids: number } {
    return { sessions: this.known.size, ids: this.ids };
  }

  private fresh(known: Shown): boolean {
    if (known.readAt === null) return false;
    return this.options.listener !== null || this.options.now() - known.readAt < this.options.pollMs;
  }

  /** A snapshot written is SessionSnapshots' business; a session's traces deleted (no trace id) are ours. */
  private onNotify(payload: string): void {
    const notice = parseSessionNotice(payload);
    if (notice && notice.traceId === null) this.forgetSession(notice.principal, notice.sessionId);
  }

  private drop(key: string): void {
    const old = this.known.get(key);
    if (!old) return;
    this.known.delete(key);
    this.ids -= old.ids.size;
  }

  /** Stores `shown` as the most recently used session, then trims to the bounds. */
  private put(key: string, shown: Shown): void {
    for (const id of shown.ids.keys()) {
      if (shown.ids.size <= this.options.maxIdsPerSession) break;
      shown.ids.delete(id);
    }
    this.known.set(key, shown);
    this.ids += shown.ids.size;
    while (this.ids > this.options.maxIds && this.known.size > 1) this.drop(this.known.keys().next().value!);
  }

  private reset(): void {
    this.generation += 1;
    this.known.clear();
    this.ids = 0;
  }
}

/** Adds `ids` as the latest shown, numbered `n`: one shown again moves to the end. */
function showLatest(shown: Map<string, number>, ids: Iterable<string>, n: number): void {
  for (const id of ids) {
    shown.delete(id);
    shown.set(id, n);
  }
}
