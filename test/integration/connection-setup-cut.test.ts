import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpc, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import type { FaultProxy } from "../support/fault-proxy.js";
import { startProxiedSidecar, type ProxiedSidecar } from "../support/proxied-sidecar.js";
import type { SidecarProcess } from "../support/sidecar-process.js";

/**
 * postgres.js sets up each new connection with a query of its own (the array
 * types, `fetch_types`) whose promise nobody holds when the connection was
 * opened for a reserved connection, as every transaction here is. A cut
 * during that query rejected it unhandled and ended the sidecar
 * (porsager/postgres#1192); it must cost at most the calls in flight.
 */
describe("a PostgreSQL connection lost while postgres.js sets it up", () => {
  let running: ProxiedSidecar | undefined;
  let sidecar: SidecarProcess;
  let proxy: FaultProxy;
  let c: Clients;
  const me = newIdentity();

  beforeAll(async () => {
    // No health probe during the test: only its own writes open connections.
    running = await startProxiedSidecar({ RECALL_HEALTH_INTERVAL_MS: "600000" });
    ({ sidecar, proxy, c } = running);
  });
  afterAll(() => running?.stop());

  it("keeps serving: the writes in flight go through on the next connection or fail UNAVAILABLE", async () => {
    const first = beliefMsg({ statement: "Andy keeps bees on the roof." });
    await unary(c.write, "PutBeliefs", { beliefs: [first] }, me);

    // Every pool connection goes; the next transactions open new ones, and each new one's setup query is cut.
    // postgres.js then loses the transaction's request for a connection: that write fails at its deadline.
    proxy.reset();
    proxy.cutWhenSent("typarray", 3);
    const beliefs = [0, 1, 2, 3].map((n) => beliefMsg({ statement: `Andy sold jar ${n} of honey.` }));
    const outcomes = await Promise.all(
      beliefs.map((b) =>
        unary(c.write, "PutBeliefs", { beliefs: [b] }, me, 3000).then(
          () => ({ id: b.belief_id as string, code: grpc.status.OK }),
          (e: { code: grpc.status }) => ({ id: b.belief_id as string, code: e.code }),
        ),
      ),
    );
    await new Promise((r) => setTimeout(r, 500));

    const state = `exit code ${sidecar.child.exitCode}, signal ${sidecar.child.signalCode}; its log ends:\n${sidecar.logs().slice(-3000)}`;
    expect(proxy.cuts, state).toBeGreaterThan(0);
    expect(sidecar.child.exitCode, state).toBeNull();
    for (const o of outcomes) expect([grpc.status.OK, grpc.status.UNAVAILABLE], state).toContain(o.code);

    // Still serving, every acknowledged write is there, and a new one lands.
    const health = await unary(c.health, "Check", { service: "" }, {});
    expect(health.status).toBe("SERVING");
    const last = beliefMsg({ statement: "Andy bought a new hive." });
    expect((await unary(c.write, "PutBeliefs", { beliefs: [last] }, me)).written).toBe(1);
    const { result } = await unary(c.memory, "Search", { text: "Andy honey bees hive", limit: 20 }, me);
    const found = new Set(result.items.map((i: Json) => i.belief_id as string));
    const acknowledged = [first.belief_id, last.belief_id, ...outcomes.filter((o) => o.code === grpc.status.OK).map((o) => o.id)];
    expect(acknowledged.filter((id) => !found.has(id))).toEqual([]);
    // Failed means not written.
    expect(outcomes.filter((o) => o.code !== grpc.status.OK && found.has(o.id))).toEqual([]);
    expect(sidecar.logs()).toContain("a PostgreSQL connection failed while postgres.js set it up");
  });
});
