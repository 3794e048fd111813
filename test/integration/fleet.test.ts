import { randomUUID } from "node:crypto";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { PGBOUNCER_MISSING, startPgBouncer, type RunningPgBouncer } from "../support/pgbouncer.js";
import { startSidecarProcess, type SidecarProcess } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

/**
 * Many sidecars, one database: three sidecar processes on one PostgreSQL
 * database, started at once on an empty one (their migrations race). A write
 * through any of them is in the others' next snapshot within the stated
 * bound (a cached snapshot is dropped when the head moves), and the trace
 * sweep runs on one sidecar per interval, not on all three.
 *
 * - direct: every sidecar LISTENs; a write is seen as soon as its NOTIFY arrives.
 * - pgbouncer: all three through one PgBouncer in transaction mode; the first
 *   LISTENs on a direct URL (RECALL_DATABASE_LISTEN_URL), the other two have
 *   none and poll their heads every POLL_MS.
 */

const POLL_MS = 300;
/** Generous: the stated bounds are milliseconds (LISTEN) and POLL_MS plus a query (polling). */
const SEEN_WITHIN_MS = 10_000;
const SWEEP_MS = 250;

const VARIANTS = [
  { name: "direct", pooled: false },
  ...(PGBOUNCER_MISSING ? [] : [{ name: "pgbouncer", pooled: true }]),
];

describe.each(VARIANTS)("three sidecars on one database ($name)", ({ pooled }) => {
  let database: { url: string; drop(): Promise<void> };
  let pooler: RunningPgBouncer | undefined;
  let sidecars: SidecarProcess[] = [];
  let clients: Clients[] = [];

  beforeAll(async () => {
    database = await freshPostgresDatabase();
    pooler = pooled ? await startPgBouncer(database.url) : undefined;
    const common = { RECALL_TRACE_SWEEP_INTERVAL_MS: String(SWEEP_MS), RECALL_LOG_LEVEL: "debug" };
    const env = (i: number): Record<string, string> =>
      !pooler
        ? common
        : {
            ...common,
            RECALL_DATABASE_POOLER: "transaction",
            RECALL_HEAD_POLL_MS: String(POLL_MS),
            ...(i === 0 ? { RECALL_DATABASE_LISTEN_URL: database.url } : {}),
          };
    // All at once on an empty database: the migrations race, and the advisory lock settles it.
    sidecars = await Promise.all([0, 1, 2].map((i) => startSidecarProcess("postgres", env(i), { databaseUrl: pooler?.url ?? database.url })));
    clients = sidecars.map((s) => connect(s.address));
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    const codes = await Promise.all(sidecars.map((s) => s.stop()));
    await pooler?.stop();
    await database?.drop();
    expect(codes.every((code) => code === 0)).toBe(true);
  });

  const snapshot = async (i: number, me: Json) => {
    const events = await serverStream(clients[i]!.memory, "Recall", { moment: "MOMENT_SNAPSHOT", session_id: randomUUID(), query: { current_scope: "veetbot" } }, me);
    return events[events.length - 1]!.result as Json;
  };

  it("tells how each sidecar keeps its heads fresh", () => {
    const modes = sidecars.map((s) => /"heads":"(listening|polling)"/.exec(s.logs())?.[1]);
    expect(modes).toEqual(pooled ? ["listening", "polling", "polling"] : ["listening", "listening", "listening"]);
  });

  it(
    "shows a write through any one sidecar in the others' next snapshot within the bound, dropping their cached one",
    async () => {
      const me = newIdentity();
      await unary(clients[0]!.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy keeps European hours." })] }, me);
      for (let writer = 0; writer < 3; writer++) {
        // Every sidecar holds a cached snapshot of the current memory.
        for (let i = 0; i < 3; i++) {
          await snapshot(i, me);
          await until(async () => (await snapshot(i, me)).from_cache === true);
        }
        const statement = `Andy's fact number ${writer} was written through sidecar ${writer}.`;
        await unary(clients[writer]!.write, "PutBeliefs", { beliefs: [beliefMsg({ statement, subject: `Andy ${writer}` })] }, me);
        // Read your writes: the writer's very next open has it.
        expect((await snapshot(writer, me)).rendered).toContain(statement);
        for (const other of [0, 1, 2].filter((i) => i !== writer)) {
          const started = Date.now();
          let seen: Json | undefined;
          while (!seen) {
            const r = await snapshot(other, me);
            if (r.rendered.includes(statement)) seen = r;
            else if (Date.now() - started > SEEN_WITHIN_MS) throw new Error(`sidecar ${other} did not see sidecar ${writer}'s write`);
            else await new Promise((r) => setTimeout(r, 25));
          }
          expect(seen.from_cache).toBe(false);
        }
      }
    },
  );

  it("sweeps due traces once across the fleet: one sidecar per interval", async () => {
    const identities = [newIdentity(), newIdentity(), newIdentity()];
    for (const [i, me] of identities.entries()) {
      await unary(clients[i]!.write, "PutBeliefs", { beliefs: [beliefMsg()] }, me);
      await snapshot(i, me);
    }
    // Their operator window is over (the setting's minimum is an hour: moved by hand).
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const tenants = identities.map((me) => me.tenant);
      // Traces are written in batches a few milliseconds after the reply: wait until all three are stored.
      await until(async () => {
        const stored = await sql`SELECT count(*)::int AS n FROM recall_traces WHERE tenant_id = ANY(${tenants})`;
        return Number(stored[0]!.n) >= 3;
      });
      const due = await sql`UPDATE recall_traces SET operator_fields_expire_at = now() - interval '1 minute'
        WHERE tenant_id = ANY(${tenants}) RETURNING 1`;
      expect(due.length).toBeGreaterThanOrEqual(3);
      await until(async () => {
        const left = await sql`SELECT count(*)::int AS n FROM recall_traces WHERE tenant_id = ANY(${tenants}) AND candidates IS NOT NULL`;
        return left[0]!.n === 0;
      });
      const expired = () =>
        sidecars
          .flatMap((s) => s.logs().split("\n"))
          .filter((l) => l.includes('"msg":"trace sweep"'))
          .reduce((sum, l) => sum + (JSON.parse(l) as { sweep: { expired: number } }).sweep.expired, 0);
      // Logs are written asynchronously: the sweep's line can follow its commit by a moment.
      await until(async () => expired() >= due.length).catch(() => {});
      expect(expired()).toBe(due.length);
      // The others' ticks found the lease taken.
      const skipped = sidecars.filter((s) => s.logs().includes("trace sweep skipped: another sidecar holds the lease"));
      expect(skipped.length).toBeGreaterThanOrEqual(1);
    } finally {
      await sql.end();
    }
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(PGBOUNCER_MISSING === undefined)("three sidecars on one database (pgbouncer)", () => {
  it.skip(PGBOUNCER_MISSING ?? "", () => {});
});
