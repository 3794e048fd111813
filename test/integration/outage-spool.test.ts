import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { failure, grpc, unary } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startProxiedSidecar, type ProxiedSidecar } from "../support/proxied-sidecar.js";

/**
 * Issue 38, item 7: recall through a PostgreSQL outage. Loaded principals'
 * reads keep answering while PostgreSQL refuses connections (behind a proxy),
 * far past the in-memory trace queue (5 here): each trace goes to the local
 * spool, on disk before the reply; writes answer UNAVAILABLE. Health tells
 * the two services apart. When PostgreSQL is back the spool is replayed in
 * order, each trace exactly once, and every trace id handed out during the
 * outage is readable through GetTrace. A full spool fails reads UNAVAILABLE.
 */

const SPOOL_FILE = "trace-spool.jsonl";
const READS = 20;

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch((e: unknown) => e as T);
    if (ok(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function start(spoolDir: string, env: Record<string, string> = {}): Promise<ProxiedSidecar> {
  return startProxiedSidecar({
    RECALL_HEALTH_INTERVAL_MS: "100",
    RECALL_TRACE_RETRY_INTERVAL_MS: "200",
    RECALL_TRACE_RETRY_QUEUE_MAX: "5",
    RECALL_TRACE_SPOOL_DIR: spoolDir,
    ...env,
  });
}

const health = (s: ProxiedSidecar, service: string) => unary(s.c.health, "Check", { service }, {}).then((r) => r.status as string);

describe("recall through a PostgreSQL outage (outage spool)", () => {
  let s: ProxiedSidecar;
  let spoolDir: string;
  const me = newIdentity();

  beforeAll(async () => {
    spoolDir = await mkdtemp(join(tmpdir(), "recall-spool-"));
    s = await start(spoolDir);
  });
  afterAll(async () => {
    await s?.stop();
    await rm(spoolDir, { recursive: true, force: true });
  });

  it("answers reads from the spool, refuses writes, and replays every trace exactly once", async () => {
    await unary(s.c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "veetbot", statement: "veetbot deploys to Fly.io." })] }, me);
    // Loads the principal's index: its reads no longer need the database.
    for (let i = 0; i < 3; i++) await unary(s.c.memory, "Search", { text: "how does veetbot deploy" }, me);
    await new Promise((r) => setTimeout(r, 500));

    await s.proxy.refuse();
    expect(await eventually(() => health(s, ""), (v) => v === "NOT_SERVING")).toBe("NOT_SERVING");
    expect(await health(s, "memory.v1.MemoryService")).toBe("SERVING");
    expect(await health(s, "memory.v1.MemoryWriteService")).toBe("NOT_SERVING");

    const traceIds: string[] = [];
    for (let i = 0; i < READS; i++) {
      const { result } = await unary(s.c.memory, "Search", { text: "how does veetbot deploy" }, me);
      expect(result.items.length).toBeGreaterThan(0);
      traceIds.push(result.trace_id as string);
    }
    // On disk before each reply.
    const spooled = await readFile(join(spoolDir, SPOOL_FILE), "utf8");
    for (const id of traceIds) expect(spooled).toContain(id);
    const write = await failure(unary(s.c.write, "PutBeliefs", { beliefs: [beliefMsg()] }, me));
    expect(write.code).toBe(grpc.status.UNAVAILABLE);

    await s.proxy.restore();
    expect(await eventually(() => health(s, ""), (v) => v === "SERVING")).toBe("SERVING");
    expect(await health(s, "memory.v1.MemoryWriteService")).toBe("SERVING");
    for (const id of traceIds) {
      const { trace } = await eventually(() => unary(s.c.memory, "GetTrace", { trace_id: id }, me), (r) => r?.trace?.id === id);
      expect(trace.id).toBe(id);
    }
    expect((await eventually(() => stat(join(spoolDir, SPOOL_FILE)), (st) => st.size === 0)).size).toBe(0);

    const sql = postgres(s.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql<{ trace_id: string; n: number }[]>`
        SELECT trace_id::text, count(*)::int AS n FROM recall_traces WHERE trace_id::text = ANY(${traceIds}) GROUP BY trace_id`;
      expect(rows).toHaveLength(READS);
      for (const row of rows) expect(row.n).toBe(1);
    } finally {
      await sql.end();
    }
    expect(s.sidecar.logs()).toContain("database cannot take traces; spooling them to disk");
    expect(s.sidecar.logs()).toContain("trace spool replayed");
  });
});

describe("a full outage spool (outage spool)", () => {
  let s: ProxiedSidecar;
  let spoolDir: string;
  const me = newIdentity();

  beforeAll(async () => {
    spoolDir = await mkdtemp(join(tmpdir(), "recall-spool-"));
    // A few traces (a one-belief trace line is about 1.5 KiB).
    s = await start(spoolDir, { RECALL_TRACE_SPOOL_MB: "0.01" });
  });
  afterAll(async () => {
    await s?.stop();
    await rm(spoolDir, { recursive: true, force: true });
  });

  it("fails reads UNAVAILABLE once the spool is full, and says so in health", async () => {
    await unary(s.c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "veetbot", statement: "veetbot deploys to Fly.io." })] }, me);
    for (let i = 0; i < 3; i++) await unary(s.c.memory, "Search", { text: "how does veetbot deploy" }, me);
    await s.proxy.refuse();
    expect(await eventually(() => health(s, ""), (v) => v === "NOT_SERVING")).toBe("NOT_SERVING");
    const outcomes: (number | "OK")[] = [];
    for (let i = 0; i < 20; i++) {
      outcomes.push(await unary(s.c.memory, "Search", { text: "how does veetbot deploy" }, me, 2_000).then(() => "OK" as const, (e: { code: number }) => e.code));
    }
    expect(outcomes, JSON.stringify(outcomes) + s.sidecar.logs().split("\n").filter((l) => /spool|trace/.test(l) && !/"msg":"call"/.test(l)).slice(-12).join("\n")).toContain(grpc.status.UNAVAILABLE);
    expect(outcomes.filter((o) => o !== "OK" && o !== grpc.status.UNAVAILABLE)).toEqual([]);
    expect(await eventually(() => health(s, "memory.v1.MemoryService"), (v) => v === "NOT_SERVING")).toBe("NOT_SERVING");
    await s.proxy.restore();
  });
});
