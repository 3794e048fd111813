import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpc, serverStream, unary, type Json } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startProxiedSidecar, type ProxiedSidecar } from "../support/proxied-sidecar.js";

/**
 * Every RPC bounds its own store calls by its store deadline, which each
 * handler passes down explicitly (ADR 0003): with the path to PostgreSQL
 * stalled, every call that needs the store answers before the client's
 * deadline, UNAVAILABLE (or OK where the pipeline can degrade), never the
 * client's own DEADLINE_EXCEEDED, which is what a store call left without
 * a deadline produces. The principal index is off, so recalls read SQL.
 */
const CALL_DEADLINE_MS = 2000;

describe("store deadlines of every RPC, with PostgreSQL stalled", () => {
  let s: ProxiedSidecar | undefined;
  const me = newIdentity();
  const fresh = newIdentity();
  let belief: Json;
  let traceId = "";

  beforeAll(async () => {
    s = await startProxiedSidecar({ RECALL_INDEX_MB: "0", RECALL_HEALTH_INTERVAL_MS: "200" });
    const { c } = s;
    belief = beliefMsg({ statement: "Andy prefers concise writing." });
    await unary(c.write, "PutBeliefs", { beliefs: [belief] }, me);
    await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg({ session_id: "s1" })] }, me);
    const events = await serverStream(c.memory, "Recall", { session_id: "s1", turn_id: "t1", query: { text: "concise writing" } }, me);
    traceId = (events.at(-1)!.result as Json).trace_id as string;
    // Written, so GetTrace reads the store rather than the queue.
    await new Promise((r) => setTimeout(r, 500));
  });
  afterAll(() => s?.stop());

  it("answers each call before its deadline: UNAVAILABLE or a degraded OK, never DEADLINE_EXCEEDED", async () => {
    const { c, proxy, sidecar } = s!;
    const calls: Record<string, () => Promise<unknown>> = {
      PutBeliefs: () => unary(c.write, "PutBeliefs", { beliefs: [beliefMsg()] }, me, CALL_DEADLINE_MS),
      AppendEpisodes: () => unary(c.write, "AppendEpisodes", { episodes: [episodeMsg()] }, me, CALL_DEADLINE_MS),
      SetPersonaEntry: () => unary(c.write, "SetPersonaEntry", { belief_id: belief.belief_id }, me, CALL_DEADLINE_MS),
      RemovePersonaEntry: () => unary(c.write, "RemovePersonaEntry", { belief_id: belief.belief_id }, me, CALL_DEADLINE_MS),
      PutSubjectAliases: () => unary(c.write, "PutSubjectAliases", { aliases: [{ alias: "Andrew", subject: "Andy" }] }, me, CALL_DEADLINE_MS),
      RecordCitations: () => unary(c.write, "RecordCitations", { trace_id: traceId, belief_ids: [belief.belief_id] }, me, CALL_DEADLINE_MS),
      RejectBelief: () =>
        unary(c.write, "RejectBelief", { rejection_id: randomUUID(), belief_id: belief.belief_id, kind: "REJECTION_KIND_NOT_TRUE" }, me, CALL_DEADLINE_MS),
      DeleteSessionTraces: () => unary(c.write, "DeleteSessionTraces", { session_id: "s-other" }, me, CALL_DEADLINE_MS),
      ErasePrincipal: () => unary(c.write, "ErasePrincipal", { tenant_id: fresh.tenant, principal_id: fresh.principal }, fresh, CALL_DEADLINE_MS),
      // A principal not seen before: its head is read from the store.
      Recall: () => serverStream(c.memory, "Recall", { query: { text: "concise writing" } }, newIdentity(), CALL_DEADLINE_MS),
      // The session's snapshot scope is read from the store.
      Search: () => unary(c.memory, "Search", { text: "concise writing", session_id: "s1" }, me, CALL_DEADLINE_MS),
      RecallEpisodes: () => unary(c.memory, "RecallEpisodes", { session_id: "s1" }, me, CALL_DEADLINE_MS),
      "GetTrace (operator)": () => unary(c.memory, "GetTrace", { trace_id: traceId }, me, CALL_DEADLINE_MS),
      "GetTrace (user view)": () => unary(c.memory, "GetTrace", { turn_id: "t1" }, me, CALL_DEADLINE_MS),
    };
    proxy.stall();
    try {
      const outcomes = await Promise.all(
        Object.entries(calls).map(async ([name, call]) => {
          const code = await call().then(
            () => grpc.status.OK,
            (e: grpc.ServiceError) => e.code,
          );
          return [name, grpc.status[code]] as const;
        }),
      );
      const late = outcomes.filter(([, code]) => code === "DEADLINE_EXCEEDED").map(([name]) => name);
      expect(late, "calls whose store work outlived the call").toEqual([]);
      // The writes cannot degrade: each is told its write did not happen (or may have).
      const writes = outcomes.filter(([name]) => !["Recall", "Search", "RecallEpisodes"].includes(name) && !name.startsWith("GetTrace"));
      expect(writes.filter(([, code]) => code !== "UNAVAILABLE")).toEqual([]);
    } finally {
      await proxy.restore();
    }
    expect(sidecar.child.exitCode).toBeNull();
  });
});
