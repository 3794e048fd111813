import { randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity, ts } from "../support/grpc-fixtures.js";
import { PGBOUNCER_MISSING, SIDECAR_KINDS } from "../support/pgbouncer.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

/** The three retrieval moments over real gRPC, on both stores and through PgBouncer. */
describe.each(SIDECAR_KINDS)("retrieval moments over gRPC (%s)", (kind) => {
  let sidecar: SidecarProcess;
  let c: Clients;
  beforeAll(async () => {
    sidecar = await startSidecarProcess(kind);
    c = connect(sidecar.address);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  const result = async (me: Json, request: Json) => {
    const events = await serverStream(c.memory, "Recall", request, me);
    return events[events.length - 1]!.result as Json;
  };
  const snapshot = (me: Json, extra: Json = {}) =>
    result(me, { moment: "MOMENT_SNAPSHOT", session_id: extra.session_id ?? randomUUID(), query: { current_scope: "veetbot", ...(extra.query ?? {}) }, ...extra });
  const durable = (n: number) =>
    Array.from({ length: n }, (_, i) => beliefMsg({ statement: `Andy's preference number ${i} is recorded here.`, subject: `Andy ${i}` }));

  it("serves a repeated session-open from the cache, byte-identical, until a write moves the watermark", async () => {
    const me = newIdentity();
    await unary(c.write, "PutBeliefs", { beliefs: durable(3) }, me);
    const first = await snapshot(me);
    const second = await snapshot(me);
    expect(first.from_cache).toBe(false);
    expect(second.from_cache).toBe(true);
    expect(second.rendered).toBe(first.rendered);
    expect(second.snapshot_watermark).toBe(first.snapshot_watermark);
    // The hit's reply carries its cached result's encoding (server/wire/cached-result.ts): decoded by an
    // independent client, it is the first result but for its own trace id.
    expect(second.trace_id).not.toBe(first.trace_id);
    expect({ ...second, trace_id: first.trace_id, from_cache: false }).toEqual(first);
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: second.trace_id }, me);
    expect(trace.rendered_sha256).toBeDefined();

    // Read your writes: the very next open after a write through this sidecar misses.
    await unary(c.write, "PutBeliefs", { beliefs: durable(4).slice(3) }, me);
    const third = await snapshot(me);
    expect(third.from_cache).toBe(false);
    expect(third.items).toHaveLength(4);
    expect(Number(third.snapshot_watermark)).toBe(Number(first.snapshot_watermark) + 1);

    const metrics = await (await fetch(`http://${sidecar.address}/metrics`)).text();
    expect(metrics).toMatch(/^recall_snapshot_cache_hits_total [1-9]/m);
    expect(metrics).toMatch(/^recall_snapshot_cache_misses_total [1-9]/m);
  });

  it("answers a JSON client (Connect) with whole messages: a cached snapshot's items, an arm's candidates", async () => {
    const me = newIdentity();
    await unary(c.write, "PutBeliefs", { beliefs: durable(3) }, me);
    const request = { moment: "MOMENT_SNAPSHOT", query: { current_scope: "veetbot" } };
    const first = await snapshot(me, request);
    const hit = (await connectJsonStream("Recall", { ...request, session_id: randomUUID() }, me)).at(-1)!.result as Json;
    expect(hit.fromCache).toBe(true);
    expect(hit.items.map((i: Json) => i.beliefId)).toEqual(first.items.map((i: Json) => i.belief_id));
    expect(hit.items.map((i: Json) => i.statement)).toEqual(first.items.map((i: Json) => i.statement));

    const turn = { moment: "MOMENT_IN_TURN", query: { current_scope: "veetbot", text: "what does Andy prefer" } };
    const arms = (events: Json[], id: string, rank: string) =>
      events.filter((e) => e.arm).map((e) => ({ arm: e.arm.arm, candidates: (e.arm.candidates ?? []).map((x: Json) => [x[id], x[rank]]) }));
    const inJson = arms(await connectJsonStream("Recall", turn, me), "beliefId", "rank");
    const inBinary = arms(await serverStream(c.memory, "Recall", turn, me), "belief_id", "rank");
    expect(inJson.flatMap((a) => a.candidates).length).toBeGreaterThan(0);
    expect(inBinary).toEqual(inJson);
  });

  /** A server-streaming call in the Connect protocol's JSON form over HTTP/1.1: its messages, enveloped. */
  const connectJsonStream = async (method: string, request: Json, me: Json): Promise<Json[]> => {
    const body = Buffer.from(JSON.stringify(request));
    const prefix = Buffer.alloc(5);
    prefix.writeUInt32BE(body.length, 1);
    const res = await fetch(`http://${sidecar.address}/memory.v1.MemoryService/${method}`, {
      method: "POST",
      headers: { "content-type": "application/connect+json", "connect-protocol-version": "1", "x-tenant-id": me.tenant, "x-principal-id": me.principal },
      body: Buffer.concat([prefix, body]),
    });
    expect(res.headers.get("content-type")).toBe("application/connect+json");
    const bytes = Buffer.from(await res.arrayBuffer());
    const messages: Json[] = [];
    for (let at = 0; at < bytes.length; ) {
      const [flags, length] = [bytes[at]!, bytes.readUInt32BE(at + 1)];
      const message = JSON.parse(bytes.subarray(at + 5, at + 5 + length).toString("utf8")) as Json;
      // Flag 2 is the end of the stream: an error, if any, and the trailers.
      if (flags & 2) expect(message.error).toBeUndefined();
      else messages.push(message);
      at += 5 + length;
    }
    return messages;
  };

  it("sizes the snapshot by session type and by the declared context window", async () => {
    const me = newIdentity();
    await unary(c.write, "PutBeliefs", { beliefs: durable(30) }, me);
    const interactive = await snapshot(me);
    expect(interactive.items).toHaveLength(27); // two thirds of 40, no priming set without a goal
    const child = await snapshot(me, { session_type: "SESSION_TYPE_CHILD" });
    expect(child.items).toHaveLength(10); // two thirds of 15
    const narrow = await snapshot(me, { context_window_tokens: 8000 }); // 2% = 160 tokens
    expect(narrow.truncated).toBe(true);
    expect(narrow.tokens).toBeLessThanOrEqual(160);
    expect(narrow.items.length).toBeGreaterThan(0);
    expect(narrow.items.length).toBeLessThan(27);
  });

  it("keeps a priming set from the opening goal beside the durable core", async () => {
    const me = newIdentity();
    const project = Array.from({ length: 20 }, (_, i) =>
      beliefMsg({ subject: `billing component ${i}`, statement: `The billing service fact ${i} concerns invoices.`, belief_type: "project_fact", scope_level: "SCOPE_LEVEL_PROJECT", portability: "PORTABILITY_CONTEXTUAL" }),
    );
    await unary(c.write, "PutBeliefs", { beliefs: [...durable(30), ...project] }, me);
    const s = await snapshot(me, { query: { text: "fix the billing service invoices" } });
    const types = s.items.map((i: Json) => i.belief_type);
    expect(types.filter((t: string) => t === "preference")).toHaveLength(27);
    expect(types.filter((t: string) => t === "project_fact")).toHaveLength(13);
  });

  it("leaves dated facts past their expiry out of a current snapshot, but not out of in-turn recall", async () => {
    const me = newIdentity();
    const dated = beliefMsg({ statement: "Andy is on holiday until March.", belief_type: "user_model_attr", expires_hint: ts("2026-03-01T00:00:00Z") });
    const lasting = beliefMsg({ statement: "Andy prefers mornings.", belief_type: "preference" });
    await unary(c.write, "PutBeliefs", { beliefs: [dated, lasting] }, me);
    const s = await snapshot(me);
    expect(s.items.map((i: Json) => i.belief_id)).toEqual([lasting.belief_id]);
    const turn = await result(me, { moment: "MOMENT_IN_TURN", query: { text: "is Andy on holiday" } });
    expect(turn.items.map((i: Json) => i.belief_id)).toContain(dated.belief_id);
  });

  it("corrects a snapshot belief in the user turn with the exact line, which budget pressure cannot drop", async () => {
    const me = newIdentity();
    const session = randomUUID();
    const home = beliefMsg({ statement: "Andy lives in Madrid.", belief_type: "user_model_attr", predicate_key: "home" });
    await unary(c.write, "PutBeliefs", { beliefs: [home, ...durable(5)] }, me);
    const snap = await snapshot(me, { session_id: session });
    expect(snap.items.map((i: Json) => i.belief_id)).toContain(home.belief_id);

    const correction = beliefMsg({ statement: "Andy lives in Lisbon.", belief_type: "user_model_attr", predicate_key: "home", valid_from: ts("2026-07-24T00:00:00Z"), recorded_at: ts("2026-07-24T00:00:00Z") });
    await unary(c.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: home.belief_id, kind: "REJECTION_KIND_CHANGED", correction }, me);
    const newFact = beliefMsg({ statement: "Andy adopted a cat named Miso.", belief_type: "relationship" });
    await unary(c.write, "PutBeliefs", { beliefs: [newFact] }, me);

    const turn = await result(me, {
      moment: "MOMENT_IN_TURN",
      session_id: session,
      snapshot_watermark: snap.snapshot_watermark,
      query: { current_scope: "veetbot", text: "anything new about pets?", budget_tokens: 1 },
    });
    const short = (id: string) => `m:${id.replace(/-/g, "").slice(0, 8)}`;
    const line = `correction: [${short(home.belief_id)}] no longer holds as of 2026-07-24T00:00:00Z; superseded by [${short(correction.belief_id)}].`;
    expect(turn.rendered.split("\n")[0]).toBe(line);
    expect(turn.corrections).toEqual([
      { belief_id: home.belief_id, superseded_by: correction.belief_id, no_longer_holds_as_of: ts("2026-07-24T00:00:00Z") },
    ]);
    // The delta made the new beliefs candidates; the 1-token budget dropped them, not the correction.
    expect(turn.items).toEqual([]);
    expect(turn.truncated).toBe(true);

    const roomy = await result(me, {
      moment: "MOMENT_IN_TURN",
      session_id: session,
      snapshot_watermark: snap.snapshot_watermark,
      query: { current_scope: "veetbot", text: "anything new about pets?" },
    });
    const ids = roomy.items.map((i: Json) => i.belief_id);
    expect(ids).toContain(newFact.belief_id);
    expect(ids).toContain(correction.belief_id);
    expect(ids).not.toContain(home.belief_id);
    // The snapshot itself is never re-rendered for the session: a cached re-open still has Madrid.
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: roomy.trace_id }, me);
    expect(trace.corrected).toEqual([home.belief_id]);
    expect(trace.delta_after).toBe(snap.snapshot_watermark);
  });

  it("corrects what the session's earlier in-turn recalls showed, with no snapshot; another principal's session of the same id gets none", async () => {
    const me = newIdentity();
    const other = { ...me, principal: `other-${me.principal}` };
    const session = randomUUID();
    const old = beliefMsg({ statement: "Andy's parking spot is P-17.", belief_type: "user_model_attr", predicate_key: "parking" });
    await unary(c.write, "PutBeliefs", { beliefs: [old] }, me);
    const ask = { moment: "MOMENT_IN_TURN", session_id: session, query: { current_scope: "veetbot", text: "where does Andy park", subjects: ["Andy"] } };
    const first = await result(me, ask);
    expect(first.items.map((i: Json) => i.belief_id)).toEqual([old.belief_id]);
    const theirs = await result(other, ask);

    const successor = beliefMsg({ statement: "Andy's parking spot is P-42.", belief_type: "user_model_attr", predicate_key: "parking", valid_from: ts("2026-07-24T00:00:00Z") });
    await unary(c.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: old.belief_id, kind: "REJECTION_KIND_CHANGED", correction: successor }, me);
    const later = await result(me, { ...ask, snapshot_watermark: first.snapshot_watermark });
    expect(later.corrections).toEqual([{ belief_id: old.belief_id, superseded_by: successor.belief_id, no_longer_holds_as_of: ts("2026-07-24T00:00:00Z") }]);
    expect(later.rendered).toMatch(/^correction: \[m:[0-9a-f]{8}\] no longer holds as of 2026-07-24T00:00:00Z; superseded by \[m:[0-9a-f]{8}\]\.\n/);
    expect(later.items.map((i: Json) => i.belief_id)).toEqual([successor.belief_id]);
    // A historical question shows what held then: it is not what the session was told holds now.
    const historical = randomUUID();
    const then = await result(me, { ...ask, session_id: historical, query: { ...ask.query, as_of: ts("2026-07-01T00:00:00Z") } });
    expect(then.items.map((i: Json) => i.belief_id)).toEqual([old.belief_id]);
    const afterHistorical = await result(me, { ...ask, session_id: historical, snapshot_watermark: first.snapshot_watermark });
    expect(afterHistorical.corrections).toEqual([]);

    const theirsLater = await result(other, { ...ask, snapshot_watermark: theirs.snapshot_watermark });
    expect(theirsLater.corrections).toEqual([]);
    expect(theirsLater.rendered).not.toContain("correction:");
  });

  it("gives a child run its own scoped recall and budget, not the parent's snapshot", async () => {
    const me = newIdentity();
    const parentCore = durable(5);
    const task = beliefMsg({ subject: "parser", statement: "The parser module uses a Pratt parser.", belief_type: "project_fact", scope_level: "SCOPE_LEVEL_PROJECT" });
    await unary(c.write, "PutBeliefs", { beliefs: [...parentCore, task] }, me);
    const child = await result(me, { moment: "MOMENT_CHILD_RUN", run_id: "child-1", query: { current_scope: "veetbot", text: "how does the parser module work" } });
    expect(child.items.map((i: Json) => i.belief_id)).toEqual([task.belief_id]);
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: child.trace_id }, me);
    expect(trace.moment).toBe("MOMENT_CHILD_RUN");
    expect(trace.query.max_items).toBe(15);
    expect(trace.query.budget_tokens).toBe(500);
  });

  it("rejects a watermark outside in-turn recall", async () => {
    const me = newIdentity();
    const err = await serverStream(c.memory, "Recall", { moment: "MOMENT_SNAPSHOT", snapshot_watermark: "3", query: {} }, me).catch((e) => e);
    expect(err.details).toBe("snapshot_watermark: only applies to MOMENT_IN_TURN");
  });
});

describe("in-turn corrections across a restart (pglite)", () => {
  it("a restarted sidecar corrects what the session was shown before the restart, read from its stored traces", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "recall-it-restart-"));
    try {
      const me = newIdentity();
      const session = randomUUID();
      const old = beliefMsg({ statement: "Andy's parking spot is P-17.", belief_type: "user_model_attr", predicate_key: "parking" });
      const ask = { moment: "MOMENT_IN_TURN", session_id: session, query: { current_scope: "veetbot", text: "where does Andy park", subjects: ["Andy"] } };
      const recallOn = async (c: Clients, request: Json) => {
        const events = await serverStream(c.memory, "Recall", request, me);
        return events[events.length - 1]!.result as Json;
      };

      const before = await startSidecarProcess("pglite", {}, { dataDir });
      const c1 = connect(before.address);
      await unary(c1.write, "PutBeliefs", { beliefs: [old] }, me);
      const first = await recallOn(c1, ask);
      expect(first.items.map((i: Json) => i.belief_id)).toEqual([old.belief_id]);
      c1.close();
      expect(await before.stop()).toBe(0);

      const after = await startSidecarProcess("pglite", {}, { dataDir });
      const c2 = connect(after.address);
      try {
        const successor = beliefMsg({ statement: "Andy's parking spot is P-42.", belief_type: "user_model_attr", predicate_key: "parking", valid_from: ts("2026-07-24T00:00:00Z") });
        await unary(c2.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: old.belief_id, kind: "REJECTION_KIND_CHANGED", correction: successor }, me);
        const later = await recallOn(c2, { ...ask, snapshot_watermark: first.snapshot_watermark });
        expect(later.corrections.map((x: Json) => x.belief_id)).toEqual([old.belief_id]);
        expect(later.rendered.startsWith("correction: ")).toBe(true);
      } finally {
        c2.close();
        expect(await after.stop()).toBe(0);
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.skipIf(PGBOUNCER_MISSING === undefined)("retrieval moments over gRPC (pgbouncer)", () => {
  it.skip(PGBOUNCER_MISSING ?? "", () => {});
});
