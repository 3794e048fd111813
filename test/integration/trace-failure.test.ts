import { createHash, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { connect, failure, grpc, serverStream, unary, type Json } from "../support/grpc-client.js";
import { beliefMsg, newIdentity } from "../support/grpc-fixtures.js";
import { startSidecarProcess, type OwnedStorage } from "../support/sidecar-process.js";
import { freshPostgresDatabase } from "../support/stores.js";

/** Each test starts one or two sidecar processes: more time than the default on a busy machine. */
const PROCESS_TESTS_MS = 120_000;

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

function logLines(logs: string): Json[] {
  return logs
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Json);
}

async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch((e: unknown) => e as T);
    if (ok(value) || Date.now() > until) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The trace write fails for real inside the sidecar process
 * (RECALL_FAULT_TRACE_WRITE_FAILURES fails the first N writes as a lost
 * store would), and over real gRPC the behaviour is the documented one:
 * the recall answers, the failure is logged at error with the trace id, the
 * trace is written by the retry or at shutdown, and a full queue fails the
 * recall rather than answer untraced.
 */
/**
 * The in-memory retry path, as PGlite has it and PostgreSQL with the outage spool off
 * (outage-spool.test.ts covers the spool, which takes over on PostgreSQL by default).
 */
const IN_MEMORY_RETRY = { RECALL_TRACE_SPOOL_MB: "0" };

describe.each(["pglite", "postgres"] as const)("trace write failures over gRPC (%s)", (kind) => {
  async function ownedStorage(): Promise<OwnedStorage & { dispose(): Promise<void> }> {
    if (kind === "postgres") {
      const database = await freshPostgresDatabase();
      return { databaseUrl: database.url, dispose: database.drop };
    }
    const dataDir = await mkdtemp(join(tmpdir(), "recall-tf-"));
    return { dataDir, dispose: () => rm(dataDir, { recursive: true, force: true }) };
  }

  const ask = async (c: ReturnType<typeof connect>, me: Json, turn: string) => {
    const events = await serverStream(c.memory, "Recall", { session_id: "s", turn_id: turn, query: { text: "bees on the roof" } }, me);
    return events[events.length - 1]!.result as Json;
  };

  it("answers, logs the failure at error with the trace id, and the background retry writes the trace", async () => {
    const sidecar = await startSidecarProcess(kind, { ...IN_MEMORY_RETRY, RECALL_FAULT_TRACE_WRITE_FAILURES: "1", RECALL_TRACE_RETRY_INTERVAL_MS: "100" });
    const c = connect(sidecar.address);
    try {
      const me = newIdentity();
      const b = beliefMsg({ statement: "Andy keeps bees on the roof." });
      await unary(c.write, "PutBeliefs", { beliefs: [b] }, me);
      const result = await ask(c, me, "t1");
      expect(result.items.map((i: Json) => i.belief_id)).toEqual([b.belief_id]);
      const found = await eventually(
        () => unary(c.memory, "GetTrace", { trace_id: result.trace_id }, me),
        (r) => (r as Json).trace?.id === result.trace_id,
      );
      expect(found.trace.rendered_sha256).toBe(sha256(result.rendered));
      // The process's log lines reach this test through a pipe, possibly after the RPC answer.
      await eventually(
        async () => {
          const logged = logLines(sidecar.logs());
          return (
            logged.some((l) => l.msg === "queued trace recorded") &&
            logged.some((l) => l.msg === "memory.recalled" && (l.event as Json)?.traceId === result.trace_id)
          );
        },
        (seen) => seen === true,
      );
      const lines = logLines(sidecar.logs());
      expect(lines.find((l) => l.msg === "trace write failed; queued for retry")).toMatchObject({ level: 50, traceId: result.trace_id });
      expect(lines.find((l) => l.msg === "queued trace recorded")).toMatchObject({ traceId: result.trace_id });
      expect(lines.find((l) => l.msg === "memory.recalled")).toMatchObject({ event: { traceId: result.trace_id, type: "memory.recalled" } });
      expect(sidecar.logs()).not.toContain("bees");
    } finally {
      c.close();
      expect(await sidecar.stop()).toBe(0);
    }
  }, PROCESS_TESTS_MS);

  it("refuses a recall when the retry queue is full, and flushes the queued trace at shutdown", async () => {
    const storage = await ownedStorage();
    const env = { ...IN_MEMORY_RETRY, RECALL_FAULT_TRACE_WRITE_FAILURES: "2", RECALL_TRACE_RETRY_QUEUE_MAX: "1", RECALL_TRACE_RETRY_INTERVAL_MS: "600000" };
    const me = newIdentity();
    let queued: Json;
    const first = await startSidecarProcess(kind, env, storage);
    const c1 = connect(first.address);
    try {
      await unary(c1.write, "PutBeliefs", { beliefs: [beliefMsg({ statement: "Andy keeps bees on the roof." })] }, me);
      queued = await ask(c1, me, "t1");
      // Its trace waits in the queue (no retry will run before shutdown), and is read from there.
      const waiting = (await unary(c1.memory, "GetTrace", { trace_id: queued.trace_id }, me)).trace;
      expect(waiting.rendered_sha256).toBe(sha256(queued.rendered));
      const refused = await failure(ask(c1, me, "t2"));
      expect([refused.code, refused.details]).toEqual([grpc.status.UNAVAILABLE, "memory store unavailable; retry later"]);
    } finally {
      c1.close();
      expect(await first.stop()).toBe(0);
    }
    const lines = logLines(first.logs());
    expect(lines.find((l) => l.msg === "trace cannot be recorded and the retry queue is full; failing the recall")).toMatchObject({ level: 50 });
    expect(lines.find((l) => l.msg === "queued trace recorded")).toMatchObject({ traceId: queued!.trace_id });
    expect(lines.find((l) => l.msg === "trace writer closed")).toMatchObject({ metrics: { failed: 1, refused: 1, retried: 1, lost: 0 } });

    // A new process on the same store finds the flushed trace; the refused recall left none.
    const second = await startSidecarProcess(kind, {}, storage);
    const c2 = connect(second.address);
    try {
      const { trace } = await unary(c2.memory, "GetTrace", { trace_id: queued!.trace_id }, me);
      expect(trace.rendered_sha256).toBe(sha256(queued!.rendered));
      const view = (await unary(c2.memory, "GetTrace", { turn_id: "t1" }, me)).view;
      expect(view.beliefs).toHaveLength(1);
      expect((await failure(unary(c2.memory, "GetTrace", { turn_id: "t2" }, me))).code).toBe(grpc.status.NOT_FOUND);
      expect((await failure(unary(c2.memory, "GetTrace", { trace_id: randomUUID() }, me))).code).toBe(grpc.status.NOT_FOUND);
    } finally {
      c2.close();
      expect(await second.stop()).toBe(0);
      await storage.dispose();
    }
  }, PROCESS_TESTS_MS);
});
