import { createHash, randomUUID } from "node:crypto";
import { appendFile, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodePayload, parseHeader } from "../../src/trace/spool-record.js";
import { joinRankedTexts } from "../../src/trace/spooled-ranked.js";
import { connect, failure, grpc, unary } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startProxiedSidecar, type ProxiedSidecar } from "../support/proxied-sidecar.js";
import { startSidecarProcess } from "../support/sidecar-process.js";

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
const QUARANTINE_FILE = "trace-spool.quarantine";
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
const READS = 20;

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch((e: unknown) => e as T);
    if (ok(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const SIDECAR_ENV = { RECALL_HEALTH_INTERVAL_MS: "100", RECALL_TRACE_RETRY_INTERVAL_MS: "200", RECALL_TRACE_RETRY_QUEUE_MAX: "5" };

/** A proxied sidecar spooling to a folder of its own, for the describe block that calls it. */
function spoolingSidecar(env: Record<string, string> = {}): { s: ProxiedSidecar; spoolDir: string } {
  const state = {} as { s: ProxiedSidecar; spoolDir: string };
  beforeAll(async () => {
    state.spoolDir = await mkdtemp(join(tmpdir(), "recall-spool-"));
    state.s = await startProxiedSidecar({ ...SIDECAR_ENV, RECALL_TRACE_SPOOL_DIR: state.spoolDir, ...env });
  });
  afterAll(async () => {
    await state.s?.stop();
    await rm(state.spoolDir, { recursive: true, force: true });
  });
  return state;
}

const health = (s: ProxiedSidecar, service: string) => unary(s.c.health, "Check", { service }, {}).then((r) => r.status as string);

describe("recall through a PostgreSQL outage (outage spool)", () => {
  const sidecar = spoolingSidecar();
  const me = newIdentity();

  it("answers reads from the spool, refuses writes, and replays every trace exactly once", async () => {
    const { s, spoolDir } = sidecar;
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
  // A few traces (a one-belief trace record is about 1.5 KiB).
  const sidecar = spoolingSidecar({ RECALL_TRACE_SPOOL_MB: "0.01" });
  const me = newIdentity();

  it("fails reads UNAVAILABLE once the spool is full, and says so in health", async () => {
    const { s } = sidecar;
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

describe("a spool of large traces and a damaged record (issue 44, outage spool)", () => {
  const sidecar = spoolingSidecar();

  it("replays every trace after a restart, quarantines the damage, and GetTrace shows what was ranked", async () => {
    const { s, spoolDir } = sidecar;
    const me = newIdentity();
    const other = newIdentity();
    // 100 beliefs of ~8,000 characters: the previous spool wrote each trace of them as a line of megabytes.
    const beliefs = Array.from({ length: 100 }, (_, i) =>
      beliefMsg({ subject: "veetbot", statement: `veetbot deploy note ${i}: ${"the release train waits for the canary, then it rolls out. ".repeat(130)}`.slice(0, 7990) }),
    );
    const statements = new Map(beliefs.map((b) => [b.belief_id as string, b.statement as string]));
    await unary(s.c.write, "PutBeliefs", { beliefs }, me);
    await unary(s.c.write, "PutBeliefs", { beliefs: [beliefMsg({ subject: "atlas", statement: "atlas deploys on Fridays." })] }, other);
    for (let i = 0; i < 3; i++) await unary(s.c.memory, "Search", { text: "veetbot deploy release canary" }, me);
    const { result: otherResult } = await unary(s.c.memory, "Search", { text: "how does atlas deploy" }, other);
    await new Promise((r) => setTimeout(r, 500));

    await s.proxy.refuse();
    expect(await eventually(() => health(s, ""), (v) => v === "NOT_SERVING")).toBe("NOT_SERVING");
    const results: { trace_id: string; rendered: string }[] = [];
    for (let i = 0; i < 4; i++) results.push((await unary(s.c.memory, "Search", { text: "veetbot deploy release canary" }, me)).result);
    const spoolPath = join(spoolDir, SPOOL_FILE);
    const spooled = await readFile(spoolPath);
    // Ids and scores, not statements: a few KB a trace.
    expect(spooled.length / results.length).toBeLessThan(16 * 1024);
    expect((await stat(spoolPath)).mode & 0o777).toBe(0o600);
    await s.sidecar.stop();

    // Damage while it is down: a line that is no record, then a trace of the first format (JSON lines) over 1 MiB.
    const headerEnd = spooled.indexOf(10);
    const header = parseHeader(spooled.subarray(0, headerEnd))!;
    const first = decodePayload(header, spooled.subarray(headerEnd + 1, headerEnd + 1 + header.payloadBytes));
    const [full] = (await joinRankedTexts([first], async () => new Map(beliefs.map((b) => [b.belief_id as string, { subject: "veetbot", statement: b.statement as string }])))).batch;
    const ranked = full!.trace.ranked!;
    expect(ranked.length).toBeGreaterThan(0);
    const copies = Math.ceil((1.5 * 1024 * 1024) / JSON.stringify(ranked).length);
    const big = { ...full!.trace, id: randomUUID(), ranked: Array.from({ length: copies }, () => ranked).flat() };
    const line = JSON.stringify({ principal: full!.principal, trace: big }, function (this: Record<string, unknown>, key: string, value: unknown) {
      const raw = this[key];
      return raw instanceof Date ? { $date: raw.toISOString() } : value;
    });
    expect(line.length).toBeGreaterThan(1024 * 1024);
    await appendFile(spoolPath, `not a trace at all\n${line}\n`);

    await s.proxy.restore();
    const restarted = await startSidecarProcess("pglite", { ...SIDECAR_ENV, RECALL_DATABASE_URL: s.proxy.via(s.databaseUrl), RECALL_TRACE_SPOOL_DIR: spoolDir });
    const c = connect(restarted.address);
    try {
      // Another principal's trace is read at once, whatever the spool holds.
      expect((await unary(c.memory, "GetTrace", { trace_id: otherResult.trace_id }, other)).trace.id).toBe(otherResult.trace_id);
      for (const r of results) {
        const { trace } = await eventually(() => unary(c.memory, "GetTrace", { trace_id: r.trace_id }, me), (v) => v?.trace?.id === r.trace_id);
        expect(trace?.id, restarted.logs().slice(-3000)).toBe(r.trace_id);
        // What the recall ranked, texts joined back, and the hash of the bytes it returned.
        expect(trace.rendered_sha256).toBe(sha256(r.rendered));
        expect(trace.ranked.length).toBeGreaterThan(0);
        for (const item of trace.ranked) expect(item.statement).toBe(statements.get(item.belief_id));
      }
      const { trace: bigTrace } = await eventually(() => unary(c.memory, "GetTrace", { trace_id: big.id }, me), (v) => v?.trace?.id === big.id);
      expect(bigTrace.ranked).toHaveLength(big.ranked.length);
      expect((await eventually(() => stat(spoolPath), (st) => st.size === 0)).size).toBe(0);
      const quarantine = join(spoolDir, QUARANTINE_FILE);
      expect(await readFile(quarantine, "utf8")).toContain("not a trace at all");
      expect((await stat(quarantine)).mode & 0o777).toBe(0o600);
      expect(restarted.logs()).toContain("trace spool record cannot be replayed; moved to the quarantine file");
    } finally {
      c.close();
      await restarted.stop();
    }
  });
});
