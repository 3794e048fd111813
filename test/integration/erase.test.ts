import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { describe, expect, it, vi } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Clients, type Json } from "../support/grpc-client.js";
import { beliefMsg, episodeMsg, newIdentity } from "../support/grpc-fixtures.js";
import { useSidecar } from "../support/local-sidecar.js";
import { CLI, startSidecarProcess } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

const run = promisify(execFile);

/** ErasePrincipal over real gRPC, on both stores, and `recall erase`. */
describe.each(["pglite", "postgres"] as const)("ErasePrincipal over gRPC (%s)", (kind) => {
  const { sidecar, c } = useSidecar(kind);

  const snapshot = async (me: Json) => {
    const events = await serverStream(c.memory, "Recall", { moment: "MOMENT_SNAPSHOT", session_id: "s-open", query: { current_scope: "veetbot" } }, me);
    return events[events.length - 1]!.result as Json;
  };
  const confirm = (me: Json) => ({ tenant_id: me.tenant, principal_id: me.principal });
  /** Waits until the sidecar's trace writer has nothing queued (/metrics). */
  const writerIdle = () =>
    vi.waitFor(
      async () => {
        const text = await (await fetch(`http://${sidecar.address}/metrics`)).text();
        expect(/^recall_trace_writer_backlog (\S+)$/m.exec(text)?.[1]).toBe("0");
      },
      { timeout: 10_000, interval: 20 },
    );
  const seed = async (me: Json) => {
    const b = beliefMsg({ statement: "Andy prefers concise writing." });
    await unary(c.write, "AppendEpisodes", { episodes: [episodeMsg()] }, me);
    await unary(c.write, "PutBeliefs", { beliefs: [b] }, me);
    await unary(c.write, "PutSubjectAliases", { aliases: [{ alias: "Andrew", subject: "Andy" }] }, me);
    return b;
  };

  it("erases the caller's memory, drops its cached snapshot, and leaves everyone else's alone", async () => {
    const me = newIdentity();
    const neighbour = { tenant: me.tenant, principal: `n-${randomUUID().slice(0, 8)}` };
    const twin = { tenant: `other-${randomUUID().slice(0, 8)}`, principal: me.principal };
    const mine = await seed(me);
    for (const p of [neighbour, twin]) await seed(p);
    const open = await snapshot(me);
    expect(open.items.map((i: Json) => i.belief_id)).toEqual([mine.belief_id]);
    expect((await snapshot(me)).from_cache).toBe(true);
    // Both snapshot traces written first: erasure drops a trace still queued instead of deleting it,
    // and the counts below are of rows deleted.
    await writerIdle();

    const erased = await unary(c.write, "ErasePrincipal", confirm(me), me);
    expect(erased.deleted).toMatchObject({ beliefs: 1, episodes: 1, subject_aliases: 1, recall_traces: 2, recalled_events: 2 });
    expect(Number(erased.store_position)).toBeGreaterThan(Number(open.snapshot_watermark));

    // Right after: no cached snapshot of the erased memory, nothing found.
    const after = await snapshot(me);
    expect(after.from_cache).toBe(false);
    expect(after.items).toEqual([]);
    // Erased with nothing written since: no memory at all, and the result says so.
    expect(after.no_memory).toBe(true);
    expect(open.no_memory).toBe(false);
    const search = await unary(c.memory, "Search", { text: "concise writing" }, me);
    expect(search.result.items).toEqual([]);
    expect((await failure(unary(c.memory, "GetTrace", { trace_id: open.trace_id }, me))).code).toBe(grpc.status.NOT_FOUND);

    for (const p of [neighbour, twin]) {
      const theirs = await snapshot(p);
      expect(theirs.items).toHaveLength(1);
    }
  });

  it("is idempotent", async () => {
    const me = newIdentity();
    await seed(me);
    const first = await unary(c.write, "ErasePrincipal", confirm(me), me);
    const second = await unary(c.write, "ErasePrincipal", confirm(me), me);
    expect(Object.values(second.deleted).every((n) => n === 0)).toBe(true);
    expect(second.store_position).toBe(first.store_position);
  });

  it("erases only the caller: the confirmation must repeat the caller's own identity", async () => {
    const me = newIdentity();
    const victim = { tenant: me.tenant, principal: `v-${randomUUID().slice(0, 8)}` };
    await seed(victim);
    const other = await failure(unary(c.write, "ErasePrincipal", confirm(victim), me));
    expect(other.code).toBe(grpc.status.PERMISSION_DENIED);
    const missing = await failure(unary(c.write, "ErasePrincipal", { tenant_id: me.tenant }, me));
    expect([missing.code, missing.details.split(":")[0]]).toEqual([grpc.status.INVALID_ARGUMENT, "principal_id"]);
    expect((await snapshot(victim)).items).toHaveLength(1);
  });
});

describe("erasure seen by another sidecar on the same PostgreSQL database", () => {
  it("stops serving the erased principal's cached snapshot once the erase is committed elsewhere", async () => {
    const database = await freshPostgresDatabase();
    const one = await startSidecarProcess("postgres", {}, { databaseUrl: database.url });
    const two = await startSidecarProcess("postgres", {}, { databaseUrl: database.url });
    const c1 = connect(one.address);
    const c2 = connect(two.address);
    try {
      const me = newIdentity();
      await unary(c1.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy prefers concise writing." })] }, me);
      const open = async (c: Clients) => {
        const events = await serverStream(c.memory, "Recall", { moment: "MOMENT_SNAPSHOT", session_id: "s", query: {} }, me);
        return events[events.length - 1]!.result as Json;
      };
      expect((await open(c2)).items).toHaveLength(1);
      expect((await open(c2)).from_cache).toBe(true);

      // Through the CLI this time, beside both running sidecars.
      const erased = await run(process.execPath, [CLI, "erase", "--tenant", me.tenant, "--principal", me.principal], {
        env: { PATH: process.env.PATH ?? "", RECALL_DATABASE_URL: database.url },
      });
      expect(erased.stdout).toMatch(/^erased .*: .*beliefs 1.*; store position 2\n$/);

      // The NOTIFY reaches the other sidecar within moments; before the fix it served the cached bytes forever.
      await vi.waitFor(async () => expect((await open(c2)).items).toEqual([]), { timeout: 10_000, interval: 100 });
      expect((await open(c1)).items).toEqual([]);
    } finally {
      c1.close();
      c2.close();
      await one.stop();
      await two.stop();
      await database.drop();
    }
  });

  it("recall erase: --help exits 0, a usage error exits 2 with one line", async () => {
    const env = { PATH: process.env.PATH ?? "", RECALL_DATA_DIR: "memory://" };
    const help = await run(process.execPath, [CLI, "erase", "--help"], { env });
    expect(help.stdout).toContain("usage: recall erase --tenant T --principal P");
    const bad = await run(process.execPath, [CLI, "erase", "--tenant", "t"], { env }).then(
      () => ({ code: 0, stderr: "" }),
      (e: { code: number; stderr: string }) => e,
    );
    expect([bad.code, bad.stderr]).toEqual([2, "usage: recall erase --tenant T --principal P\n"]);
  });
});
