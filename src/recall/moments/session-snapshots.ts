import type { Principal, RecallTrace } from "../../domain/model.js";
import type { SqlClient } from "../../store/sql-client.js";
import { snapshotKeyPrefix } from "./snapshot.js";
import { SESSION_SNAPSHOT_CHANNEL, type StoredSnapshot } from "../../store/traces/trace-rows.js";

/**
 * What each session's latest snapshot showed (its returned belief ids),
 * known in process, so an in-turn recall's corrections lookup costs no round
 * trip. A session opens with a snapshot and then recalls every turn; the
 * snapshot's ids never change, only a newer snapshot (or a deletion)
 * replaces them. Kept fresh the way heads are (recall/moments/head-tracker.ts):
 *
 * - a snapshot recorded through this sidecar is known at once, before its
 *   trace is written (read your writes, without waiting for the write);
 * - listening: every snapshot trace written, and every session deletion,
 *   NOTIFYs SESSION_SNAPSHOT_CHANNEL, from every sidecar sharing the
 *   database; what is known is served until a notification about its
 *   session names another snapshot. A (re)established listening connection
 *   drops everything: notifications may have been missed meanwhile;
 * - polling (no notification connection): what is known is served for at
 *   most `pollMs`, then read again.
 *
 * A session with no snapshot is remembered as such too (an empty list).
 */

export interface SessionSnapshotOptions {
  /** The session's latest snapshot trace in the store. */
  read(p: Principal, sessionId: string, storeDeadline?: number): Promise<StoredSnapshot | null>;
  /** Writes the session's snapshot traces still queued in this process, so `read` finds them (trace/trace-writer.ts). */
  settle(p: Principal, sessionId: string, deadlineAt: number): Promise<void>;
  /** The notification connection; null means poll. */
  listener: Pick<SqlClient, "listen"> | null;
  pollMs: number;
  maxSessions: number;
  now: () => number;
}

interface Known {
  /** null: the session has no snapshot. */
  snapshot: StoredSnapshot | null;
  /** When it was read or recorded (polling serves it for pollMs from then). */
  at: number;
}

export class SessionSnapshots {
  private readonly known = new Map<string, Known>();
  /** Bumped whenever something known may have changed, so a read that started before cannot store what it read. */
  private generation = 0;
  private unlisten: (() => Promise<void>) | undefined;

  constructor(private readonly options: SessionSnapshotOptions) {}

  async start(): Promise<void> {
    if (!this.options.listener) return;
    this.unlisten = await this.options.listener.listen(
      SESSION_SNAPSHOT_CHANNEL,
      (payload) => this.onNotify(payload),
      () => this.reset(),
    );
  }

  async stop(): Promise<void> {
    await this.unlisten?.().catch(() => {});
    this.unlisten = undefined;
    this.reset();
  }

  /**
   * The belief ids the session's latest snapshot returned (none when it has
   * no snapshot). `storeDeadline` bounds the read (store/store-deadline.ts).
   */
  async returned(p: Principal, sessionId: string, deadlineAt: number, storeDeadline?: number): Promise<readonly string[]> {
    const key = sessionKeyOf(p, sessionId);
    const known = this.known.get(key);
    if (known && this.fresh(known)) return known.snapshot?.returned ?? [];
    const generation = this.generation;
    const at = this.options.now();
    await this.options.settle(p, sessionId, deadlineAt);
    const stored = await this.options.read(p, sessionId, storeDeadline);
    // Only what something keeps fresh is remembered: listening, or polling.
    const keeping = this.unlisten !== undefined || !this.options.listener;
    if (keeping && generation === this.generation) this.remember(key, { snapshot: stored, at });
    return stored?.returned ?? [];
  }

  /** A snapshot recorded through this sidecar (its trace queued, perhaps not yet written). */
  recorded(p: Principal, trace: Pick<RecallTrace, "id" | "sessionId" | "createdAt" | "returned">): void {
    if (trace.sessionId === "") return;
    const key = sessionKeyOf(p, trace.sessionId);
    const snapshot: StoredSnapshot = { traceId: trace.id, createdAt: trace.createdAt, returned: trace.returned };
    const known = this.known.get(key);
    this.generation += 1;
    // The store's order decides which snapshot is the session's latest: created_at, then trace id.
    if (known?.snapshot && isLater(known.snapshot, snapshot)) return;
    this.remember(key, { snapshot, at: this.options.now() });
  }

  /** The session's traces were deleted through this sidecar. */
  forgetSession(p: Principal, sessionId: string): void {
    this.generation += 1;
    this.known.delete(sessionKeyOf(p, sessionId));
  }

  /** The principal was erased: nothing of its sessions is kept. */
  forgetPrincipal(p: Principal): void {
    this.generation += 1;
    const prefix = snapshotKeyPrefix(p);
    for (const key of [...this.known.keys()]) if (key.startsWith(prefix)) this.known.delete(key);
  }

  get size(): number {
    return this.known.size;
  }

  private fresh(known: Known): boolean {
    return this.options.listener !== null || this.options.now() - known.at < this.options.pollMs;
  }

  private onNotify(payload: string): void {
    const notice = parseSessionNotice(payload);
    if (!notice) return;
    const key = sessionKeyOf(notice.principal, notice.sessionId);
    this.generation += 1;
    // Our own snapshot's write coming back keeps what we know; anything else is read again when asked.
    if (notice.traceId !== null && this.known.get(key)?.snapshot?.traceId === notice.traceId) return;
    this.known.delete(key);
  }

  private remember(key: string, known: Known): void {
    this.known.delete(key);
    this.known.set(key, known);
    if (this.known.size > this.options.maxSessions) this.known.delete(this.known.keys().next().value!);
  }

  private reset(): void {
    this.generation += 1;
    this.known.clear();
  }
}

/** True when `a` is after `b` in the store's order of a session's snapshots (created_at DESC, trace_id). */
function isLater(a: StoredSnapshot, b: StoredSnapshot): boolean {
  const dt = a.createdAt.getTime() - b.createdAt.getTime();
  return dt > 0 || (dt === 0 && a.traceId < b.traceId);
}

/** A SESSION_SNAPSHOT_CHANNEL payload: a snapshot trace written (its id), or the session's traces deleted (null). */
export function parseSessionNotice(payload: string): { principal: Principal; sessionId: string; traceId: string | null } | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.slice(0, 3).some((x) => typeof x !== "string")) return null;
  const [tenantId, principalId, sessionId, traceId] = parsed as [string, string, string, unknown];
  return { principal: { tenantId, principalId }, sessionId, traceId: typeof traceId === "string" ? traceId : null };
}

/** A session's key in the in-process records: tenant, principal and session, never one without the others. */
export function sessionKeyOf(p: Principal, sessionId: string): string {
  return JSON.stringify([p.tenantId, p.principalId, sessionId]);
}
