import type { Principal } from "../../domain/model.js";
import { sessionKeyOf as keyOf } from "./session-snapshots.js";
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
 * - A session this process has not yet looked up (a restart, an eviction,
 *   the session's first recall here) is read once from its stored in-turn
 *   traces and merged with what was recorded meanwhile; after that it is
 *   served from memory. Another sidecar's recalls for the same session are
 *   seen only through that one read: a session is served by one sidecar.
 * - Bounded: the latest `maxIdsPerSession` ids of a session (older ones
 *   leave first and are no longer corrected), and `maxIds` over all
 *   sessions, the least recently used session leaving first.
 */

export interface SessionShownOptions {
  /** The ids the session's stored in-turn traces returned, the most recently shown first, at most `limit`. */
  read(p: Principal, sessionId: string, limit: number, storeDeadline?: number): Promise<readonly string[]>;
  /** Writes the session's in-turn traces still queued in this process, so `read` finds them. */
  settle(p: Principal, sessionId: string, deadlineAt: number): Promise<void>;
  maxIds: number;
  maxIdsPerSession: number;
}

interface Shown {
  /** Insertion order is the order of showing: the oldest first, the first to leave. */
  ids: Set<string>;
  /** False until the stored traces were read into it: it may lack what the session was shown before. */
  complete: boolean;
}

export class SessionShown {
  private readonly known = new Map<string, Shown>();
  private ids = 0;
  /** Bumped when a session or principal is forgotten, so a read that started before cannot bring it back. */
  private generation = 0;

  constructor(private readonly options: SessionShownOptions) {}

  /** The ids the session was shown by its in-turn recalls and searches (its latest, within the bound). */
  async shown(p: Principal, sessionId: string, deadlineAt: number, storeDeadline?: number): Promise<readonly string[]> {
    const key = keyOf(p, sessionId);
    const known = this.known.get(key);
    if (known?.complete) {
      this.touch(key, known);
      return [...known.ids];
    }
    const generation = this.generation;
    await this.options.settle(p, sessionId, deadlineAt);
    const stored = await this.options.read(p, sessionId, this.options.maxIdsPerSession, storeDeadline);
    if (generation !== this.generation) return stored;
    // Stored ids are older than any recorded since this process looked: they go first.
    const merged: Shown = { ids: new Set([...stored].reverse()), complete: true };
    showLatest(merged.ids, this.known.get(key)?.ids ?? []);
    this.drop(key);
    this.put(key, merged);
    return [...merged.ids];
  }

  /** A recall of the session returned `returned` (as current, not as of a past time). */
  recorded(p: Principal, sessionId: string, returned: readonly string[]): void {
    if (sessionId === "" || returned.length === 0) return;
    const key = keyOf(p, sessionId);
    const known = this.known.get(key) ?? { ids: new Set<string>(), complete: false };
    this.drop(key);
    showLatest(known.ids, returned);
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

  private touch(key: string, shown: Shown): void {
    this.known.delete(key);
    this.known.set(key, shown);
  }

  private drop(key: string): void {
    const old = this.known.get(key);
    if (!old) return;
    this.known.delete(key);
    this.ids -= old.ids.size;
  }

  /** Stores `shown` as the most recently used session, then trims to the bounds. */
  private put(key: string, shown: Shown): void {
    for (const id of shown.ids) {
      if (shown.ids.size <= this.options.maxIdsPerSession) break;
      shown.ids.delete(id);
    }
    this.known.set(key, shown);
    this.ids += shown.ids.size;
    while (this.ids > this.options.maxIds && this.known.size > 1) this.drop(this.known.keys().next().value!);
  }
}

/** Adds `ids` as the latest shown: one shown again moves to the end. */
function showLatest(shown: Set<string>, ids: Iterable<string>): void {
  for (const id of ids) {
    shown.delete(id);
    shown.add(id);
  }
}
