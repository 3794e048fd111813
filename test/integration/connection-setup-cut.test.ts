import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grpc, unary } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startProxiedSidecar, type ProxiedSidecar } from "../support/proxied-sidecar.js";

/**
 * postgres.js sets up each new connection with a query of its own (the array
 * types, `fetch_types`) whose promise nobody holds when the connection was
 * opened for a reserved connection, as every transaction here is. A cut
 * during that query rejected it unhandled and ended the sidecar
 * (porsager/postgres#1192), and dropped the transaction's request for a
 * connection, which then waited out its deadline. Neither may cost a call.
 */
describe("a PostgreSQL connection lost while postgres.js sets it up", () => {
  let s: ProxiedSidecar | undefined;
  const me = newIdentity();

  beforeAll(async () => {
    // No health probe during the test: only its own writes open connections.
    s = await startProxiedSidecar({ RECALL_HEALTH_INTERVAL_MS: "600000" });
  });
  afterAll(() => s?.stop());

  it("keeps serving: the writes in flight go through on the next connection", async () => {
    const { sidecar, proxy, c } = s!;
    const first = beliefMsg({ statement: "Andy keeps bees on the roof." });
    await unary(c.write, "PutBeliefs", { beliefs: [first] }, me);

    // Every pool connection goes; the next transactions open new ones, and each new one's setup query is cut.
    // postgres.js then drops the transaction's request for a connection; it is asked again (postgres-client.ts).
    // Episodes, not beliefs: PutBeliefs reads (short-id neighbours) before its transaction, so a cut
    // would fall on that read's ordinary connection instead of a transaction's reserved one.
    proxy.reset();
    proxy.cutWhenSent("typarray", 3);
    const episodes = [0, 1, 2, 3].map((n) => episodeMsg({ content: `Andy sold jar ${n} of honey.` }));
    const outcomes = await Promise.all(
      episodes.map((e) =>
        unary(c.write, "AppendEpisodes", { episodes: [e] }, me, 3000).then(
          () => ({ id: e.episode_id as string, code: grpc.status.OK }),
          (err: { code: grpc.status }) => ({ id: e.episode_id as string, code: err.code }),
        ),
      ),
    );
    await new Promise((r) => setTimeout(r, 500));

    const state = `exit code ${sidecar.child.exitCode}, signal ${sidecar.child.signalCode}; its log ends:\n${sidecar.logs().slice(-3000)}`;
    expect(proxy.cuts, state).toBeGreaterThan(0);
    expect(sidecar.child.exitCode, state).toBeNull();
    expect(outcomes.map((o) => o.code), state).toEqual(outcomes.map(() => grpc.status.OK));

    // Still serving, every acknowledged write is there, and a new one lands.
    const health = await unary(c.health, "Check", { service: "" }, {});
    expect(health.status).toBe("SERVING");
    const last = beliefMsg({ statement: "Andy bought a new hive." });
    expect((await unary(c.write, "PutBeliefs", { beliefs: [last] }, me)).written).toBe(1);
    const direct = postgres(s!.databaseUrl, { max: 1, onnotice: () => {} });
    const rows = await direct<{ id: string }[]>`
      SELECT belief_id::text AS id FROM beliefs WHERE tenant_id = ${me.tenant} AND principal_id = ${me.principal}
      UNION ALL SELECT episode_id::text FROM episodes WHERE tenant_id = ${me.tenant} AND principal_id = ${me.principal}`;
    await direct.end();
    const found = new Set(rows.map((r) => r.id));
    const acknowledged = [first.belief_id, last.belief_id, ...outcomes.filter((o) => o.code === grpc.status.OK).map((o) => o.id)];
    expect(acknowledged.filter((id) => !found.has(id))).toEqual([]);
    expect(sidecar.logs()).toContain("a PostgreSQL connection failed while postgres.js set it up");
  });

  it("starts a transaction again on another connection when its BEGIN is cut before an answer", async () => {
    // A pool connection that died before postgres.js noticed (a reset, a restart) takes the next BEGIN down with it.
    const { sidecar, proxy, c } = s!;
    const cutsBefore = proxy.cuts;
    proxy.cutWhenSent("BEGIN", 1);
    const belief = beliefMsg({ statement: "Andy moved the hives to the orchard." });
    const answer = await unary(c.write, "PutBeliefs", { beliefs: [belief] }, me, 3000);
    expect(proxy.cuts - cutsBefore, sidecar.logs().slice(-2000)).toBe(1);
    expect(answer.written).toBe(1);
    const direct = postgres(s!.databaseUrl, { max: 1, onnotice: () => {} });
    const rows = await direct<{ n: number }[]>`
      SELECT count(*)::int AS n FROM beliefs WHERE tenant_id = ${me.tenant} AND principal_id = ${me.principal} AND belief_id = ${belief.belief_id as string}::uuid`;
    await direct.end();
    expect(rows[0]!.n).toBe(1);
  });
});
