import { describe, expect, it } from "vitest";
import { UnavailableError } from "../../src/domain/errors.js";
import type { Principal, RecallTrace } from "../../src/domain/model.js";
import type { TraceSink } from "../../src/trace/trace-writer.js";
import { capturingLogger, traceWriter } from "../support/pipeline.js";
import { recallTrace } from "../store/store-helpers.js";

/**
 * The writer's policy over a scripted sink (the real-store failure paths are
 * in test/store/trace-writer.test.ts): what is queued, refused, dropped, lost.
 */

const P: Principal = { tenantId: "t", principalId: "p" };
const transient = () => Object.assign(new Error("connection reset"), { code: "ECONNRESET" });

/** A sink that follows a script: "ok", "transient", "permanent", or "hang" (until released). */
function scripted(...script: ("ok" | "transient" | "permanent" | "hang")[]) {
  const written: string[] = [];
  const hung: (() => void)[] = [];
  const sink: TraceSink = {
    recordTrace(_p: Principal, trace: RecallTrace) {
      const step = script.shift() ?? "ok";
      if (step === "transient") return Promise.reject(transient());
      if (step === "permanent") return Promise.reject(new Error("value too long for type"));
      if (step === "hang") return new Promise((resolve) => hung.push(() => resolve(written.push(trace.id) > 0)));
      written.push(trace.id);
      return Promise.resolve(true);
    },
  };
  return { sink, written, release: () => hung.splice(0).forEach((r) => r()) };
}

describe("TraceWriter", () => {
  it("writes through and logs memory.recalled when the store answers", async () => {
    const { sink, written } = scripted("ok");
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(sink, logger);
    const t = recallTrace();
    await writer.record(P, t);
    expect(written).toEqual([t.id]);
    expect(writer.metrics).toMatchObject({ written: 1, failed: 0 });
    expect(lines.filter((l) => l.msg === "memory.recalled")).toHaveLength(1);
  });

  it("retries transient failures forever (bounded by the queue), in order", async () => {
    const { sink, written } = scripted("transient", "transient", "transient", "transient", "transient");
    const writer = traceWriter(sink, capturingLogger().logger, { maxAttempts: 2 });
    const [a, b] = [recallTrace(), recallTrace()];
    await writer.record(P, a);
    await writer.record(P, b);
    for (let i = 0; i < 3; i++) await writer.flush();
    expect(writer.queuedTraceIds()).toEqual([a.id, b.id]);
    await writer.flush();
    expect(written).toEqual([a.id, b.id]);
    expect(writer.metrics).toMatchObject({ failed: 2, retried: 2, dropped: 0 });
  });

  it("drops a trace failing for a non-transient reason after maxAttempts, logging its user-safe fields", async () => {
    const { sink, written } = scripted("permanent", "permanent", "permanent", "ok");
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(sink, logger, { maxAttempts: 3 });
    const [bad, good] = [recallTrace(), recallTrace()];
    await writer.record(P, bad); // attempt 1
    await writer.flush(); // attempt 2
    expect(writer.queuedTraceIds()).toEqual([bad.id]);
    await writer.flush(); // attempt 3: dropped
    expect(writer.queuedTraceIds()).toEqual([]);
    expect(writer.metrics.dropped).toBe(1);
    await writer.record(P, good);
    expect(written).toEqual([good.id]);
    expect(lines.find((l) => l.msg === "trace dropped after repeated write failures")).toMatchObject({ level: 50, traceId: bad.id, trace: { id: bad.id } });
  });

  it("holds a queue slot for a slow write; with no slot left the recall is refused", async () => {
    const { sink, written, release } = scripted("hang", "ok");
    const writer = traceWriter(sink, capturingLogger().logger, { timeoutMs: 1, queueMax: 1 });
    const [slow, next] = [recallTrace(), recallTrace()];
    await writer.record(P, slow);
    expect(writer.backlog).toBe(1);
    await expect(writer.record(P, next)).resolves.toBeUndefined(); // written at once: the store answered
    release();
    await writer.close(Date.now() + 1000);
    expect(written.sort()).toEqual([slow.id, next.id].sort());
    expect(writer.metrics).toMatchObject({ slow: 1, written: 1, refused: 0, lost: 0 });
  });

  it("refuses a recall whose write is slow while the queue is full", async () => {
    const { sink, release } = scripted("hang", "hang");
    const writer = traceWriter(sink, capturingLogger().logger, { timeoutMs: 1, queueMax: 1 });
    await writer.record(P, recallTrace());
    await expect(writer.record(P, recallTrace())).rejects.toBeInstanceOf(UnavailableError);
    expect(writer.metrics).toMatchObject({ slow: 1, refused: 1 });
    release();
    await writer.close(Date.now() + 1000);
  });

  it("never waits past the call's deadline, however long the write timeout", async () => {
    const { sink, written, release } = scripted("hang");
    const writer = traceWriter(sink, capturingLogger().logger, { timeoutMs: 3_600_000 });
    const t = recallTrace();
    // Were the recall waiting out the hour-long timeout, this would never resolve.
    await writer.record(P, t, Date.now());
    expect(writer.metrics.slow).toBe(1);
    release();
    await writer.close(Date.now() + 1000);
    expect(written).toEqual([t.id]);
  });

  it("a slow write that then fails is queued, not lost", async () => {
    let reject: (e: unknown) => void = () => {};
    const sink: TraceSink = { recordTrace: () => new Promise((_, r) => (reject = r)) };
    const writer = traceWriter(sink, capturingLogger().logger, { timeoutMs: 1 });
    const t = recallTrace();
    await writer.record(P, t);
    reject(transient());
    await new Promise((r) => setImmediate(r));
    expect(writer.queuedTraceIds()).toEqual([t.id]);
    expect(writer.backlog).toBe(1);
  });
});
