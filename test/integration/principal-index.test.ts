import { setTimeout as delay } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * The principal index over real gRPC, two sidecar processes sharing one
 * PostgreSQL database: the first recall of a principal is answered from SQL
 * while the index loads; then recalls are answered from the index, which
 * sees a write through its own sidecar at once, and a write through the
 * other sidecar within the staleness bound (RECALL_INDEX_HEAD_CHECK_MS),
 * whether or not the notification arrived.
 */
const BOUND_MS = 300;

describe("principal index across two sidecars (postgres)", () => {
  let database: { url: string; drop(): Promise<void> };
  let a: SidecarProcess;
  let b: SidecarProcess;
  let ca: Clients;
  let cb: Clients;
  beforeAll(async () => {
    database = await freshPostgresDatabase();
    a = await startSidecarProcess("postgres", { RECALL_INDEX_HEAD_CHECK_MS: String(BOUND_MS) }, { databaseUrl: database.url });
    b = await startSidecarProcess("postgres", {}, { databaseUrl: database.url });
    ca = connect(a.address);
    cb = connect(b.address);
  });
  afterAll(async () => {
    ca?.close();
    cb?.close();
    expect(await a?.stop()).toBe(0);
    expect(await b?.stop()).toBe(0);
    await database?.drop();
  });

  const recallText = async (c: Clients, me: Json, text: string): Promise<Json> => {
    const events = await serverStream(c.memory, "Recall", { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text } }, me);
    return events[events.length - 1]!.result as Json;
  };
  const metric = async (s: SidecarProcess, name: string): Promise<number> => {
    const text = await (await fetch(`http://${s.address}/metrics`)).text();
    const m = text.match(new RegExp(`^${name} (\\S+)$`, "m"));
    if (!m) throw new Error(`no metric ${name}:\n${text}`);
    return Number(m[1]);
  };
  const statements = (r: Json) => (r.items as Json[]).map((i) => i.statement as string);

  it("answers from SQL first, then from the index, current to this sidecar's and the other sidecar's writes", async () => {
    const me = newIdentity();
    await unary(ca.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy drinks espresso every morning." })] }, me);

    // The first recall does not wait for the load: SQL answers, the index loads in the background.
    const fallbacks = await metric(a, "recall_index_sql_fallbacks_total");
    expect(statements(await recallText(ca, me, "espresso"))).toEqual(["Andy drinks espresso every morning."]);
    expect(await metric(a, "recall_index_sql_fallbacks_total")).toBe(fallbacks + 1);
    for (let i = 0; i < 100 && (await metric(a, "recall_index_principals")) < 1; i++) await delay(50);
    expect(await metric(a, "recall_index_loads_total")).toBeGreaterThanOrEqual(1);

    const hits = await metric(a, "recall_index_hits_total");
    expect(statements(await recallText(ca, me, "espresso"))).toEqual(["Andy drinks espresso every morning."]);
    expect(await metric(a, "recall_index_hits_total")).toBe(hits + 1);

    // Read your writes: acknowledged means indexed.
    await unary(ca.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy keeps a marmalade jar on the espresso machine." })] }, me);
    expect(statements(await recallText(ca, me, "marmalade"))).toEqual(["Andy keeps a marmalade jar on the espresso machine."]);

    // A write through the other sidecar is seen by this one's next recall once the bound has passed.
    await unary(cb.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy grows quinces on the balcony." })] }, me);
    await delay(BOUND_MS + 100);
    expect(statements(await recallText(ca, me, "quinces"))).toEqual(["Andy grows quinces on the balcony."]);
    expect(await metric(a, "recall_index_hits_total")).toBe(hits + 3);
    expect(await metric(a, "recall_index_deltas_total")).toBeGreaterThanOrEqual(2);
  });

  it("corrects a session's snapshot opened through the other sidecar, after this one saw the session without one, and forgets it once deleted", async () => {
    const me = newIdentity();
    const session = `s-${me.principal}`;
    const vim = beliefMsg({ statement: "Andy's editor is Vim.", predicate_key: "editor" });
    await unary(ca.write, "PutBeliefs", { beliefs: [vim] }, me);
    const inTurn = async (c: Clients, watermark: string): Promise<Json> => {
      const events = await serverStream(
        c.memory,
        "Recall",
        { moment: "MOMENT_IN_TURN", session_id: session, snapshot_watermark: watermark, query: { current_scope: "veetbot", text: "which editor" } },
        me,
      );
      return events[events.length - 1]!.result as Json;
    };
    // B is asked about the session before any snapshot exists: it learns "no snapshot".
    expect((await inTurn(cb, "0")).corrections).toEqual([]);

    // The session opens through A; then its belief is replaced by a successor written on its own.
    const events = await serverStream(ca.memory, "Recall", { moment: "MOMENT_SNAPSHOT", session_id: session, query: { current_scope: "veetbot" } }, me);
    const snap = events[events.length - 1]!.result as Json;
    expect((snap.items as Json[]).map((i) => i.belief_id)).toEqual([vim.belief_id]);
    const helix = beliefMsg({ statement: "Andy's editor is Helix.", predicate_key: "editor", supersedes: [vim.belief_id] });
    await unary(ca.write, "PutBeliefs", { beliefs: [helix] }, me);

    // A knows its own snapshot at once; B follows A's snapshot write through its notification.
    expect((await inTurn(ca, snap.snapshot_watermark)).corrections.map((c: Json) => c.belief_id)).toEqual([vim.belief_id]);
    let seen: Json[] = [];
    for (let i = 0; i < 40 && seen.length === 0; i++) {
      seen = (await inTurn(cb, snap.snapshot_watermark)).corrections as Json[];
      if (seen.length === 0) await delay(50);
    }
    expect(seen.map((c) => c.belief_id)).toEqual([vim.belief_id]);

    // Deleted through A: neither sidecar corrects a snapshot that is gone.
    await unary(ca.write, "DeleteSessionTraces", { session_id: session }, me);
    expect((await inTurn(ca, snap.snapshot_watermark)).corrections).toEqual([]);
    let after: Json[] = [{}];
    for (let i = 0; i < 40 && after.length > 0; i++) {
      after = (await inTurn(cb, snap.snapshot_watermark)).corrections as Json[];
      if (after.length > 0) await delay(50);
    }
    expect(after).toEqual([]);
  });
});
