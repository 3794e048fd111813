import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { SessionShown } from "../../src/recall/moments/session-shown.js";

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

const shown = (db: ReturnType<typeof store>, bounds: { maxIds?: number; maxIdsPerSession?: number } = {}) =>
  new SessionShown({ read: db.read, settle: db.settle, maxIds: bounds.maxIds ?? 1000, maxIdsPerSession: bounds.maxIdsPerSession ?? 100 });

describe("what sessions' in-turn recalls showed", () => {
  it("serves what this sidecar's recalls returned, after one read of the stored traces", async () => {
    const db = store();
    const sessions = shown(db);
    sessions.recorded(p, "s", ["a", "b"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["a", "b"]);
    sessions.recorded(p, "s", ["c", "a"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["b", "c", "a"]);
    expect([db.reads, db.settles]).toEqual([1, 1]);
  });

  it("after a restart, reads the session's stored traces once and merges what was recorded meanwhile", async () => {
    const db = store();
    db.rows.set(JSON.stringify(["t", "p", "s"]), ["late", "early"]);
    const sessions = shown(db);
    // A search of the session before its first lookup here: the stored ids still come back, older first.
    sessions.recorded(p, "s", ["now", "early"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["late", "now", "early"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["late", "now", "early"]);
    expect(db.reads).toBe(1);
  });

  it("keys by tenant, principal and session: another principal's session of the same id never yields its ids", async () => {
    const db = store();
    db.rows.set(JSON.stringify(["t", "p", "s"]), ["stored-of-p"]);
    const sessions = shown(db);
    sessions.recorded(p, "s", ["shown-to-p"]);
    expect(await sessions.shown(p, "s", Infinity)).toEqual(["stored-of-p", "shown-to-p"]);
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
    expect(await sessions.shown(p, "s1", Infinity)).toEqual(["b", "c", "d"]);
    sessions.recorded(p, "s2", ["x", "y"]);
    sessions.recorded(p, "s3", ["z"]);
    // s1 (3) + s2 (2) + s3 (1) is over 5: s1, the least recently used, left.
    expect(sessions.size).toEqual({ sessions: 2, ids: 3 });
    expect(await sessions.shown(p, "s2", Infinity)).toEqual(["x", "y"]);
    expect(await sessions.shown(p, "s1", Infinity)).toEqual([]);
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

    db.rows.set(JSON.stringify(["t", "p", "s"]), ["stale"]);
    const reading = sessions.shown(p, "s", Infinity);
    sessions.forgetPrincipal(p);
    expect(await reading).toEqual(["stale"]);
    expect(sessions.size).toEqual({ sessions: 1, ids: 1 });
  });
});
