import { describe, expect, it } from "vitest";
import type { Principal } from "../../src/domain/model.js";
import { SessionSnapshots } from "../../src/recall/moments/session-snapshots.js";
import { SESSION_SNAPSHOT_CHANNEL, type StoredSnapshot } from "../../src/store/traces/trace-rows.js";

const p: Principal = { tenantId: "t", principalId: "p" };
const other: Principal = { tenantId: "t", principalId: "q" };

/** The stored snapshots (what the store would answer), counting reads and settles. */
function store() {
  const state = { rows: new Map<string, StoredSnapshot>(), reads: 0, settles: 0 };
  return Object.assign(state, {
    async read(q: Principal, sessionId: string): Promise<StoredSnapshot | null> {
      state.reads += 1;
      return state.rows.get(`${q.principalId}/${sessionId}`) ?? null;
    },
    async settle(): Promise<void> {
      state.settles += 1;
    },
  });
}

/** A notification connection the test drives: notify() delivers, reconnect() re-establishes it. */
function listener() {
  const handlers = new Map<string, { onNotify: (payload: string) => void; onConnect?: () => void }>();
  return {
    async listen(channel: string, onNotify: (payload: string) => void, onConnect?: () => void) {
      handlers.set(channel, { onNotify, onConnect });
      onConnect?.();
      return async () => void handlers.delete(channel);
    },
    notify(payload: unknown[]) {
      handlers.get(SESSION_SNAPSHOT_CHANNEL)?.onNotify(JSON.stringify(payload));
    },
    reconnect() {
      handlers.get(SESSION_SNAPSHOT_CHANNEL)?.onConnect?.();
    },
  };
}

const snapshot = (traceId: string, at: number, returned: string[]) => ({ traceId, createdAt: new Date(at), returned });
const trace = (id: string, sessionId: string, at: number, returned: string[]) => ({ id, sessionId, createdAt: new Date(at), returned });

describe("session snapshots, listening", () => {
  it("serves what it read, a session without a snapshot included, until a notification names another snapshot", async () => {
    const db = store();
    const bus = listener();
    const sessions = new SessionSnapshots({ read: db.read, settle: db.settle, listener: bus, pollMs: 1000, maxSessions: 100, now: () => 0 });
    await sessions.start();
    expect(await sessions.returned(p, "s", Infinity)).toEqual([]);
    expect(await sessions.returned(p, "s", Infinity)).toEqual([]);
    expect(db.reads).toBe(1);
    expect(db.settles).toBe(1);

    // Another sidecar opens the session: its write's notification makes the next lookup read again.
    db.rows.set("p/s", snapshot("b", 10, ["x"]));
    bus.notify(["t", "p", "s", "b"]);
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["x"]);
    expect(db.reads).toBe(2);
    // Another principal's session of the same name is its own.
    expect(await sessions.returned(other, "s", Infinity)).toEqual([]);
    expect(db.reads).toBe(3);

    // Deleted elsewhere (trace id null): read again.
    db.rows.delete("p/s");
    bus.notify(["t", "p", "s", null]);
    expect(await sessions.returned(p, "s", Infinity)).toEqual([]);
    expect(db.reads).toBe(4);

    // A re-established connection may have missed notifications: everything is read again.
    bus.reconnect();
    await sessions.returned(p, "s", Infinity);
    expect(db.reads).toBe(5);
    await sessions.stop();
  });

  it("knows a snapshot recorded through this sidecar at once, keeps it when its own write is notified, and keeps the store's latest", async () => {
    const db = store();
    const bus = listener();
    const sessions = new SessionSnapshots({ read: db.read, settle: db.settle, listener: bus, pollMs: 1000, maxSessions: 100, now: () => 0 });
    await sessions.start();
    sessions.recorded(p, trace("a", "s", 20, ["x", "y"]));
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["x", "y"]);
    bus.notify(["t", "p", "s", "a"]);
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["x", "y"]);
    expect(db.reads).toBe(0);

    // An older snapshot (created before, or at the same time with a later id) does not replace it.
    sessions.recorded(p, trace("b", "s", 10, ["z"]));
    sessions.recorded(p, trace("c", "s", 20, ["z"]));
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["x", "y"]);
    sessions.recorded(p, trace("d", "s", 30, ["z"]));
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["z"]);
    // A trace outside any session is not a session's snapshot.
    sessions.recorded(p, trace("e", "", 40, ["w"]));
    expect(sessions.size).toBe(1);
    await sessions.stop();
  });

  it("forgets a session deleted, and a principal erased, through this sidecar", async () => {
    const db = store();
    const sessions = new SessionSnapshots({ read: db.read, settle: db.settle, listener: listener(), pollMs: 1000, maxSessions: 100, now: () => 0 });
    await sessions.start();
    sessions.recorded(p, trace("a", "s1", 1, ["x"]));
    sessions.recorded(p, trace("b", "s2", 1, ["y"]));
    sessions.recorded(other, trace("c", "s1", 1, ["z"]));
    sessions.forgetSession(p, "s1");
    expect(await sessions.returned(p, "s1", Infinity)).toEqual([]);
    expect(db.reads).toBe(1);
    sessions.forgetPrincipal(p);
    expect(await sessions.returned(p, "s2", Infinity)).toEqual([]);
    expect(await sessions.returned(other, "s1", Infinity)).toEqual(["z"]);
    expect(db.reads).toBe(2);
    await sessions.stop();
  });

  it("does not store a read that a notification overtook", async () => {
    const db = store();
    const bus = listener();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowRead = async (q: Principal, sessionId: string) => {
      const before = await db.read(q, sessionId);
      await gate;
      return before;
    };
    const sessions = new SessionSnapshots({ read: slowRead, settle: db.settle, listener: bus, pollMs: 1000, maxSessions: 100, now: () => 0 });
    await sessions.start();
    const reading = sessions.returned(p, "s", Infinity);
    await Promise.resolve();
    db.rows.set("p/s", snapshot("b", 10, ["x"]));
    bus.notify(["t", "p", "s", "b"]);
    release();
    expect(await reading).toEqual([]);
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["x"]);
    await sessions.stop();
  });

  it("keeps at most maxSessions, least recently stored first out", async () => {
    const db = store();
    const sessions = new SessionSnapshots({ read: db.read, settle: db.settle, listener: listener(), pollMs: 1000, maxSessions: 2, now: () => 0 });
    await sessions.start();
    for (const s of ["s1", "s2", "s3"]) sessions.recorded(p, trace(s, s, 1, [s]));
    expect(sessions.size).toBe(2);
    expect(await sessions.returned(p, "s1", Infinity)).toEqual([]);
    expect(await sessions.returned(p, "s3", Infinity)).toEqual(["s3"]);
    await sessions.stop();
  });
});

describe("session snapshots, polling", () => {
  it("serves what it knows for pollMs, then reads again", async () => {
    const db = store();
    let now = 0;
    const sessions = new SessionSnapshots({ read: db.read, settle: db.settle, listener: null, pollMs: 1000, maxSessions: 100, now: () => now });
    await sessions.start();
    sessions.recorded(p, trace("a", "s", 1, ["x"]));
    db.rows.set("p/s", snapshot("b", 5, ["y"])); // a newer snapshot through another sidecar
    now = 999;
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["x"]);
    now = 1000;
    expect(await sessions.returned(p, "s", Infinity)).toEqual(["y"]);
    expect(db.reads).toBe(1);
    await sessions.stop();
  });
});
