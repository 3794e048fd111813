import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { SessionShown, type SessionShownOptions } from "../../src/recall/moments/session-shown.js";
import { SESSION_SNAPSHOT_CHANNEL } from "../../src/store/traces/trace-rows.js";

const p: Principal = { tenantId: "t", principalId: "p" };
const otherPrincipal: Principal = { tenantId: "t", principalId: "q" };
const otherTenant: Principal = { tenantId: "u", principalId: "p" };

/** The stored in-turn traces' ids (what the store would answer, latest first), counting reads and settles. */
function store() {
  const state = { rows: new Map<string, string[]>(), reads: 0, settles: 0 };
  return Object.assign(state, {
    async read(q: Principal, sessionId: string, limit: number): Promise<readonly string[]> {
      state.reads += 1;
      return (state.rows.get(JSON.stringify([q.tenantId, q.principalId, sessionId])) ?? []).slice(0, limit);
    },
    async settle(): Promise<void> {
      state.settles += 1;
    },
  });
}

/** A notification connection the test drives: notify() delivers, reconnect() re-establishes it. */
function listener() {
  let handler: { onNotify: (payload: string) => void; onConnect?: () => void } | undefined;
  return {
    async listen(channel: string, onNotify: (payload: string) => void, onConnect?: () => void) {
      expect(channel).toBe(SESSION_SNAPSHOT_CHANNEL);
      handler = { onNotify, onConnect };
      onConnect?.();
      return async () => void (handler = undefined);
    },
    notify: (payload: unknown[]) => handler?.onNotify(JSON.stringify(payload)),
    reconnect: () => handler?.onConnect?.(),
  };
}

const shown = (db: ReturnType<typeof store>, o: Partial<SessionShownOptions> = {}) =>
  new SessionShown({ read: db.read, settle: db.settle, listener: null, pollMs: 1000, now: () => 0, maxIds: 1000, maxIdsPerSession: 100, ...o });
const key = (q: Principal, sessionId: string) => JSON.stringify([q.tenantId, q.principalId, sessionId]);

describe("what sessions' in-turn recalls showed", () => {
  it("serves what this sidecar's recalls returned, after one read of the stored traces", async () => {
    const db = store();
    const sessions = shown(db);
    sessions.recorded(p, "s", ["a", "b"]);
    // The lookup writes the queued traces first (settle), so the store has them.
    db.rows.set(key(p, "s"), ["b", "a"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["a", "b"]);
    sessions.recorded(p, "s", ["c", "a"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["b", "c", "a"]);
    expect([db.reads, db.settles]).toEqual([1, 1]);
  });

  it("after a restart, reads the session's stored traces once, keeping what was recorded while it read", async () => {
    const db = store();
    db.rows.set(key(p, "s"), ["late", "early"]);
    const sessions = shown(db);
    const reading = sessions.shown(p, "s", Infinity);
    sessions.recorded(p, "s", ["now", "early"]);
    expect(await reading).toEqual(["late", "now", "early"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["late", "now", "early"]);
    expect(db.reads).toBe(1);
  });

  it("polling, reads the stored traces again after pollMs: a deletion through another sidecar is seen", async () => {
    const db = store();
    let now = 0;
    const sessions = shown(db, { now: () => now });
    sessions.recorded(p, "s", ["a"]);
    db.rows.set(key(p, "s"), ["a"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["a"]);
    db.rows.delete(key(p, "s"));
    now = 999;
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["a"]);
    now = 1000;
    expect(await sessions.shown(p, "s", Infinity)).toEqual([]);
    expect(db.reads).toBe(2);
  });

  it("listening, forgets a session whose traces another sidecar deleted, and everything on a reconnect", async () => {
    const db = store();
    const bus = listener();
    const sessions = shown(db, { listener: bus });
    await sessions.start();
    db.rows.set(key(p, "s"), ["a"]);
    db.rows.set(key(p, "s2"), ["b"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["a"]);
    expect(await sessions.shown(p, "s2", Infinity)).toEqual(["b"]);
    // A snapshot written is not ours to follow; the session's traces deleted (no trace id) are.
    bus.notify(["t", "p", "s", "some-trace"]);
    expect(sessions.size.sessions).toBe(2);
    db.rows.delete(key(p, "s"));
    bus.notify(["t", "p", "s", null]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual([]);
    bus.reconnect();
    expect(sessions.size).toEqual({ sessions: 0, ids: 0 });
    expect(await sessions.shown(p, "s2", Infinity)).toEqual(["b"]);
    expect(db.reads).toBe(4);
    await sessions.stop();
  });

  it("keys by tenant, principal and session: another principal's session of the same id never yields its ids", async () => {
    const db = store();
    db.rows.set(key(p, "s"), ["shown-to-p"]);
    const sessions = shown(db);
    sessions.recorded(p, "s", ["shown-to-p"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["shown-to-p"]);
    expect(await sessions.shown(otherPrincipal, "s", Infinity)).toEqual([]);
    expect(await sessions.shown(otherTenant, "s", Infinity)).toEqual([]);
    expect(await sessions.shown(p, "s2", Infinity)).toEqual([]);
    // A principal id that looks like a key's continuation is still another principal.
    expect(await sessions.shown({ tenantId: "t", principalId: 'p","s' }, "", Infinity)).toEqual([]);
  });

  it("is bounded: a session keeps its latest ids, and the least recently used session leaves first", async () => {
    const db = store();
    const sessions = shown(db, { maxIds: 5, maxIdsPerSession: 3 });
    sessions.recorded(p, "s1", ["a", "b", "c", "d"]);
    expect(sessions.size).toEqual({ sessions: 1, ids: 3 });
    db.rows.set(key(p, "s1"), ["d", "c", "b", "a"]);
    expect(await sessions.shown(p, "s1", Infinity)).toEqual(["b", "c", "d"]);
    sessions.recorded(p, "s2", ["x", "y"]);
    sessions.recorded(p, "s3", ["z"]);
    // s1 (3) + s2 (2) + s3 (1) is over 5: s1, the least recently used, left.
    expect(sessions.size).toEqual({ sessions: 2, ids: 3 });
    db.rows.set(key(p, "s2"), ["y", "x"]);
    expect(await sessions.shown(p, "s2", Infinity)).toEqual(["x", "y"]);
    expect(sessions.size).toEqual({ sessions: 2, ids: 3 });
  });

  it("forgets a deleted session and an erased principal, and a read that started before cannot bring them back", async () => {
    const db = store();
    const sessions = shown(db);
    sessions.recorded(p, "s", ["a"]);
    sessions.recorded(p, "s2", ["b"]);
    sessions.recorded(otherPrincipal, "s", ["c"]);
    sessions.forgetSession(p, "s");
    expect(sessions.size.sessions).toBe(2);
    sessions.forgetPrincipal(p);
    expect(sessions.size).toEqual({ sessions: 1, ids: 1 });

    db.rows.set(key(p, "s"), ["stale"]);
    const reading = sessions.shown(p, "s", Infinity);
    sessions.forgetPrincipal(p);
    expect(await reading).toEqual(["stale"]);
    expect(sessions.size).toEqual({ sessions: 1, ids: 1 });
  });
});
