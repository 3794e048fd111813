import { describe, expect, it } from "vitest";
import { UnavailableError } from "../../src/domain/errors.js";
import type { Principal } from "../../src/domain/model.js";
import type { QueuedTrace, TraceSink } from "../../src/trace/trace-writer.js";
import { capturingLogger, traceWriter } from "../support/pipeline.js";
import { recallTrace } from "../store/store-helpers.js";

/**
 * The writer's policy over a scripted sink (the real-store failure paths are
 * in test/store/trace-writer.test.ts): what is batched, read through,
 * queued, refused, dropped, lost.
 */

const P: Principal = { tenantId: "t", principalId: "p" };
const transient = () => Object.assign(new Error("connection reset"), { code: "ECONNRESET" });

type Step = "ok" | "transient" | "permanent" | "hang";

/**
 * A sink that follows a script, one step per batch: "ok", "transient",
 * "permanent" (fails while the batch holds a trace in `poisoned`, else
 * writes), or "hang" (until released).
 */
function scripted(...script: Step[]) {
  const written: string[] = [];
  const batches: string[][] = [];
  const poisoned = new Set<string>();
  const hung: (() => void)[] = [];
  const write = (batch: readonly QueuedTrace[]) => {
    const ids = batch.map((b) => b.trace.id);
    written.push(...ids);
    batches.push(ids);
    return new Set(ids);
  };
  const sink: TraceSink = {
    recordBatch(batch) {
      const step = script.shift() ?? "ok";
      if (step === "transient") return Promise.reject(transient());
      if (step === "permanent" || batch.some((b) => poisoned.has(b.trace.id))) return Promise.reject(new Error("value too long for type"));
      if (step === "hang") return new Promise((resolve) => hung.push(() => resolve(write(batch))));
      return Promise.resolve(write(batch));
    },
  };
  return { sink, written, batches, poisoned, release: () => hung.splice(0).forEach((r) => r()) };
}

async function eventually(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
}

describe("TraceWriter", () => {
  it("answers once the trace is queued, and writes everything queued in one batch", async () => {
    const { sink, written, batches } = scripted();
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(sink, logger);
    const [a, b, c] = [recallTrace(), recallTrace(), recallTrace()];
    for (const t of [a, b, c]) await writer.record(P, t);
    // Queued, not written: the recall did not wait for the store.
    expect(written).toEqual([]);
    expect(writer.backlog).toBe(3);
    await writer.flush();
    expect(batches).toEqual([[a.id, b.id, c.id]]);
    expect(writer.metrics).toMatchObject({ written: 3, batches: 1, failed: 0 });
    expect(writer.backlog).toBe(0);
    expect(lines.filter((l) => l.msg === "memory.recalled").map((l) => (l.event as { traceId: string }).traceId)).toEqual([a.id, b.id, c.id]);
  });

  it("flushes on its own after the flush delay, without anyone calling flush", async () => {
    const { sink, written } = scripted();
    const writer = traceWriter(sink, capturingLogger().logger, { flushDelayMs: 1 });
    const t = recallTrace();
    await writer.record(P, t);
    await eventually(() => written.length > 0);
    expect(written).toEqual([t.id]);
  });

  it("a trace queued while a batch is being written waits the flush delay, to share its statement with the next ones", async () => {
    const { sink, batches, release } = scripted("hang");
    const writer = traceWriter(sink, capturingLogger().logger, { flushDelayMs: 200 });
    const [a, b, c, d] = [recallTrace(), recallTrace(), recallTrace(), recallTrace()];
    await writer.record(P, a);
    // a is being written (the write hangs), so no longer queued.
    await eventually(() => writer.queuedTraceIds().length === 0);
    // Queued during a's write (a commit waits for its WAL flush).
    await writer.record(P, b);
    await writer.record(P, c);
    release();
    await new Promise((r) => setTimeout(r, 10));
    await writer.record(P, d);
    await eventually(() => batches.length === 2);
    expect(batches).toEqual([[a.id], [b.id, c.id, d.id]]);
  });

  it("splits the queue into batches of at most batchMax, oldest first", async () => {
    const { sink, batches } = scripted();
    const writer = traceWriter(sink, capturingLogger().logger, { batchMax: 2 });
    const ts = Array.from({ length: 5 }, () => recallTrace());
    for (const t of ts) await writer.record(P, t);
    await writer.flush();
    expect(batches).toEqual([[ts[0]!.id, ts[1]!.id], [ts[2]!.id, ts[3]!.id], [ts[4]!.id]]);
  });

  it("reads a waiting trace through the queue, for its own principal only", async () => {
    const { sink } = scripted("transient");
    const writer = traceWriter(sink, capturingLogger().logger);
    const t = recallTrace();
    await writer.record(P, t);
    expect(writer.pending(P, t.id)).toBe(t);
    // Another principal of the tenant, and the same principal id in another tenant, find nothing.
    expect(writer.pending({ tenantId: "t", principalId: "q" }, t.id)).toBeUndefined();
    expect(writer.pending({ tenantId: "u", principalId: "p" }, t.id)).toBeUndefined();
    await writer.flush(); // fails: still waiting, still readable
    expect(writer.pending(P, t.id)).toBe(t);
    await writer.flush();
    expect(writer.pending(P, t.id)).toBeUndefined();
  });

  it("settles: writes the principal's waiting traces a read needs, and returns at once when there are none", async () => {
    const { sink, batches } = scripted();
    const writer = traceWriter(sink, capturingLogger().logger);
    await writer.settle(P, () => true);
    expect(batches).toEqual([]);
    const mine = recallTrace({ sessionId: "s" });
    await writer.record(P, mine);
    // Another principal's trace is not a reason to write.
    await writer.settle({ tenantId: "t", principalId: "q" }, () => true);
    expect(batches).toEqual([]);
    await writer.settle(P, (t) => t.sessionId === "other");
    expect(batches).toEqual([]);
    await writer.settle(P, (t) => t.sessionId === "s");
    expect(batches).toEqual([[mine.id]]);
  });

  it("retries transient failures (bounded by the queue), in order", async () => {
    const { sink, written } = scripted("transient", "transient", "transient", "transient");
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(sink, logger, { maxAttempts: 2 });
    const [a, b] = [recallTrace(), recallTrace()];
    await writer.record(P, a);
    await writer.record(P, b);
    for (let i = 0; i < 4; i++) await writer.flush();
    expect(writer.queuedTraceIds()).toEqual([a.id, b.id]);
    await writer.flush();
    expect(written).toEqual([a.id, b.id]);
    expect(writer.metrics).toMatchObject({ failed: 2, retried: 2, dropped: 0 });
    // Each trace's first failure is logged at error with its id.
    expect(lines.filter((l) => l.msg === "trace write failed; queued for retry").map((l) => l.traceId)).toEqual([a.id, b.id]);
    expect(lines.filter((l) => l.msg === "queued trace recorded").map((l) => l.traceId)).toEqual([a.id, b.id]);
  });

  it("isolates a trace failing for a non-transient reason: the others are written, it is dropped after maxAttempts", async () => {
    const { sink, written, poisoned } = scripted();
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(sink, logger, { maxAttempts: 3 });
    const [good1, bad, good2] = [recallTrace(), recallTrace(), recallTrace()];
    poisoned.add(bad.id);
    for (const t of [good1, bad, good2]) await writer.record(P, t);
    await writer.flush(); // the batch fails: each is tried alone from now on
    expect(written).toEqual([]);
    await writer.flush(); // good1 written; bad fails (attempt 2), stops the round
    await writer.flush(); // bad: attempt 3, dropped; good2 written
    expect(written).toEqual([good1.id, good2.id]);
    expect(writer.queuedTraceIds()).toEqual([]);
    expect(writer.metrics).toMatchObject({ failed: 3, retried: 2, dropped: 1 });
    expect(lines.find((l) => l.msg === "trace dropped after repeated write failures")).toMatchObject({ level: 50, traceId: bad.id, trace: { id: bad.id } });
  });

  it("refuses a recall with UNAVAILABLE while queueMax traces wait", async () => {
    const { sink } = scripted("transient");
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(sink, logger, { queueMax: 2 });
    await writer.record(P, recallTrace());
    await writer.record(P, recallTrace());
    await expect(writer.record(P, recallTrace())).rejects.toBeInstanceOf(UnavailableError);
    await writer.flush(); // fails: both still wait for their retry, and still hold their slots
    await expect(writer.record(P, recallTrace())).rejects.toBeInstanceOf(UnavailableError);
    expect(writer.metrics).toMatchObject({ refused: 2, failed: 2 });
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toContain("trace cannot be recorded and the retry queue is full; failing the recall");
    await writer.flush();
    await expect(writer.record(P, recallTrace())).resolves.toBeUndefined();
  });

  it("writes the next batch beside a slow one, which keeps its queue slot until it lands", async () => {
    const { sink, written, release } = scripted("hang", "ok");
    const writer = traceWriter(sink, capturingLogger().logger, { timeoutMs: 1, queueMax: 2 });
    const [slow, next] = [recallTrace(), recallTrace()];
    await writer.record(P, slow);
    await writer.flush();
    expect(writer.metrics.slow).toBe(1);
    expect(writer.backlog).toBe(1);
    expect(writer.pending(P, slow.id)).toBe(slow);
    await writer.record(P, next);
    await writer.flush();
    expect(written).toEqual([next.id]);
    release();
    await writer.close(Date.now() + 1000);
    expect(written).toEqual([next.id, slow.id]);
    expect(writer.metrics).toMatchObject({ slow: 1, written: 2, refused: 0, lost: 0 });
  });

  it("a slow write that then fails is queued, not lost", async () => {
    let reject: (e: unknown) => void = () => {};
    const sink: TraceSink = { recordBatch: () => new Promise((_, r) => (reject = r)) };
    const writer = traceWriter(sink, capturingLogger().logger, { timeoutMs: 1 });
    const t = recallTrace();
    await writer.record(P, t);
    await writer.flush();
    expect(writer.queuedTraceIds()).toEqual([]);
    reject(transient());
    await new Promise((r) => setImmediate(r));
    expect(writer.queuedTraceIds()).toEqual([t.id]);
    expect(writer.backlog).toBe(1);
  });

  it("at shutdown writes what it can, and logs the rest as lost with user-safe fields", async () => {
    const { sink, written } = scripted("transient");
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(sink, logger);
    const t = recallTrace();
    await writer.record(P, t);
    await writer.close(Date.now() + 1000);
    expect(written).toEqual([t.id]);
    const failing = traceWriter({ recordBatch: () => Promise.reject(transient()) }, logger);
    const lost = recallTrace();
    await failing.record(P, lost);
    expect((await failing.close(Date.now() + 30)).lost).toBe(1);
    expect(lines.find((l) => l.msg === "trace not recorded before shutdown: lost")).toMatchObject({ level: 50, traceId: lost.id, trace: { id: lost.id } });
  });
});

describe("TraceWriter.settle without a deadline", () => {
  it("waits for the write however long it takes", async () => {
    let finish: () => void = () => {};
    const sink: TraceSink = { recordBatch: (batch) => new Promise((resolve) => (finish = () => resolve(new Set(batch.map((b) => b.trace.id))))) };
    const writer = traceWriter(sink, capturingLogger().logger);
    const t = recallTrace();
    await writer.record(P, t);
    let settled = false;
    const settling = writer.settle(P, () => true).then(() => (settled = true));
    await new Promise((r) => setTimeout(r, 50));
    expect(settled).toBe(false);
    finish();
    await settling;
    expect(writer.pending(P, t.id)).toBeUndefined();
  });
});
