import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * Traces are written off the critical path, so a trace id may be handed out
 * before its trace is in the store. Over real gRPC, with the flush held back
 * (RECALL_TRACE_FLUSH_MS at its maximum), every reader goes through the
 * queue: GetTrace answers from it, the user view and RecordCitations write
 * the trace first. Never NOT_FOUND for the caller; always NOT_FOUND for
 * another principal or tenant.
 */
describe.each(["pglite", "postgres"] as const)("reading traces through the write queue over gRPC (%s)", (kind) => {
  let sidecar: SidecarProcess;
  let c: Clients;

  beforeAll(async () => {
    sidecar = await startSidecarProcess(kind, { RECALL_TRACE_FLUSH_MS: "1000" });
    c = connect(sidecar.address);
  });
  afterAll(async () => {
    c?.close();
    expect(await sidecar?.stop()).toBe(0);
  });

  const recall = async (identity: Json, request: Json): Promise<Json> => {
    const events = await serverStream(c.memory, "Recall", request, identity);
    return events[events.length - 1]!.result;
  };

  async function justRecalled() {
    const me = newIdentity();
    const b = beliefMsg({ statement: "Andy keeps bees on the roof." });
    await unary(c.write, "PutBeliefs", { beliefs: [b] }, me);
    const result = await recall(me, { session_id: "s", turn_id: "t1", query: { text: "bees on the roof" } });
    expect(result.items.map((i: Json) => i.belief_id)).toEqual([b.belief_id]);
    return { me, b, result };
  }

  it("GetTrace finds a trace id just handed out, bound to the bytes; another principal or tenant does not", async () => {
    const { me, result } = await justRecalled();
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: result.trace_id }, me);
    expect(trace.id).toBe(result.trace_id);
    expect(trace.rendered_sha256).toBe(sha256(result.rendered));
    for (const intruder of [{ ...me, principal: `${me.principal}-x` }, { ...me, tenant: `${me.tenant}-x` }]) {
      const denied = await failure(unary(c.memory, "GetTrace", { trace_id: result.trace_id }, intruder));
      expect([denied.code, denied.details]).toEqual([grpc.status.NOT_FOUND, "trace not found"]);
      const noView = await failure(unary(c.memory, "GetTrace", { turn_id: "t1" }, intruder));
      expect(noView.code).toBe(grpc.status.NOT_FOUND);
    }
  });

  it("the user view of a turn just recalled shows it", async () => {
    const { me, b } = await justRecalled();
    const { view } = await unary(c.memory, "GetTrace", { turn_id: "t1" }, me);
    expect(view.beliefs.map((x: Json) => x.belief_id)).toEqual([b.belief_id]);
  });

  it("RecordCitations through a trace just handed out records them; another principal's citation is NOT_FOUND", async () => {
    const { me, b, result } = await justRecalled();
    const intruder = { ...me, principal: `${me.principal}-x` };
    const denied = await failure(unary(c.write, "RecordCitations", { trace_id: result.trace_id, belief_ids: [b.belief_id] }, intruder));
    expect(denied.code).toBe(grpc.status.NOT_FOUND);
    const { recorded } = await unary(c.write, "RecordCitations", { trace_id: result.trace_id, belief_ids: [b.belief_id] }, me);
    expect(recorded).toBe(1);
    const { trace } = await unary(c.memory, "GetTrace", { trace_id: result.trace_id }, me);
    expect(trace.cited).toEqual([b.belief_id]);
  });

  it("a cached snapshot's trace answers in full, from the queue and from the store", async () => {
    const me = newIdentity();
    await unary(c.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy prefers concise writing." })] }, me);
    const open = (session: string) => recall(me, { moment: "MOMENT_SNAPSHOT", session_id: session, query: { current_scope: "veetbot" } });
    const first = await open("s1");
    const hit = await open("s2");
    expect(hit.from_cache).toBe(true);
    const queued = (await unary(c.memory, "GetTrace", { trace_id: hit.trace_id }, me)).trace;
    // A citation writes the queue first; from then on the hit is read from the store.
    const cited = hit.items[0].belief_id;
    expect((await unary(c.write, "RecordCitations", { trace_id: hit.trace_id, belief_ids: [cited] }, me)).recorded).toBe(1);
    const stored = (await unary(c.memory, "GetTrace", { trace_id: hit.trace_id }, me)).trace;
    expect(stored.cited).toEqual([cited]);
    const original = (await unary(c.memory, "GetTrace", { trace_id: first.trace_id }, me)).trace;
    expect(original.ranked.length).toBeGreaterThan(0);
    for (const trace of [queued, stored]) {
      expect(trace.session_id).toBe("s2");
      expect(trace.rendered_sha256).toBe(sha256(hit.rendered));
      expect(trace.returned).toEqual(original.returned);
      expect(trace.ranked).toEqual(original.ranked);
    }
  });
});
