import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { UnavailableError } from "../../src/domain/errors.js";
import type { Principal } from "../../src/domain/model.js";
import { MemoryStore } from "../../src/store/memory-store.js";
import { FaultySqlClient } from "../support/faulty-sql.js";
import { STORE_KINDS } from "../support/stores.js";
import { belief, newPrincipal } from "../support/fixtures.js";
import { capturingLogger, pipelineDeps, requested, runRecall, traceWriter } from "../support/pipeline.js";
import { useStore } from "./store-helpers.js";

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * "Never delays the answer beyond a bounded amount and is never lost
 * silently": the trace write fails or stalls for real (the real store behind
 * a client that drops or holds the trace's statements), and the recall still
 * answers, the trace is queued, logged at error with its id, counted, and
 * written once the store is back.
 */
describe.each(STORE_KINDS)("trace writes that fail ($kind)", ({ open }) => {
  const store = useStore(open);

  async function setup(options: Parameters<typeof traceWriter>[2] = {}) {
    const faulty = new FaultySqlClient(store().db, /INSERT INTO recall_traces/);
    const faultyStore = new MemoryStore(faulty);
    const { logger, lines } = capturingLogger();
    const writer = traceWriter(faultyStore, logger, options);
    const deps = pipelineDeps(faultyStore, writer);
    const p: Principal = newPrincipal();
    const b = belief({ subject: "bees", statement: "Andy keeps bees on the roof." });
    await store().putBeliefs(p, [b]);
    const ask = (turnId = "t-1") => runRecall(deps, p, requested({ text: "bees on the roof" }), { turnId });
    return { faulty, writer, lines, p, b, ask };
  }

  it("answers, queues the trace, logs it at error with its id and counts it; the retry writes it", async () => {
    const { faulty, writer, lines, p, b, ask } = await setup();
    faulty.fail();
    const { result } = await ask();
    expect(result.items.map((i) => i.beliefId)).toEqual([b.beliefId]);
    expect(faulty.failures).toBe(1);
    expect(await store().getTrace(p, result.traceId)).toBeNull();
    expect(writer.queuedTraceIds()).toEqual([result.traceId]);
    expect(writer.metrics).toMatchObject({ written: 0, failed: 1, retried: 0, refused: 0 });
    const error = lines.find((l) => l.msg === "trace write failed; queued for retry");
    expect(error).toMatchObject({ level: 50, traceId: result.traceId });

    // Still down: a retry round keeps it.
    await writer.flush();
    expect(writer.queuedTraceIds()).toEqual([result.traceId]);

    faulty.heal();
    await writer.flush();
    expect(writer.queuedTraceIds()).toEqual([]);
    expect(writer.metrics).toMatchObject({ retried: 1, lost: 0, dropped: 0 });
    const trace = await store().getTrace(p, result.traceId);
    expect(trace?.renderedSha256).toBe(sha256(result.rendered));
    expect(trace?.returned).toEqual([b.beliefId]);
    // The outbox row came with it, and so did the memory.recalled log line.
    expect((await store().traces.recalledEvents(p)).map((e) => e.traceId)).toEqual([result.traceId]);
    expect(lines.find((l) => l.msg === "memory.recalled")).toMatchObject({ event: { traceId: result.traceId, type: "memory.recalled" } });
  });

  it("fails the recall with UNAVAILABLE rather than answer untraced when the retry queue is full", async () => {
    const { faulty, writer, lines, p, ask } = await setup({ queueMax: 1 });
    faulty.fail();
    const first = await ask("t-1");
    await expect(ask("t-2")).rejects.toBeInstanceOf(UnavailableError);
    expect(writer.metrics).toMatchObject({ failed: 1, refused: 1 });
    expect(lines.filter((l) => l.level === 50).map((l) => l.msg)).toContain("trace cannot be recorded and the retry queue is full; failing the recall");
    faulty.heal();
    await writer.flush();
    expect(await store().getTrace(p, first.result.traceId)).not.toBeNull();
    expect((await store().traces.recalledEvents(p)).map((e) => e.payload.turnId)).toEqual(["t-1"]);
  });

  it("answers without waiting for a write that outlives its bound, and the write still lands", async () => {
    const { faulty, writer, p, ask } = await setup({ timeoutMs: 20 });
    faulty.hold();
    // Were the recall waiting for the held write, this would never resolve.
    const { result } = await ask();
    expect(writer.metrics).toMatchObject({ slow: 1, written: 0 });
    expect(writer.backlog).toBe(1);
    expect(await store().getTrace(p, result.traceId)).toBeNull();
    faulty.heal();
    await writer.close(Date.now() + 10_000);
    expect(await store().getTrace(p, result.traceId)).not.toBeNull();
    expect(writer.metrics.lost).toBe(0);
  });

  it("flushes queued traces at shutdown", async () => {
    const { faulty, writer, p, ask } = await setup();
    faulty.fail();
    const a = await ask("t-1");
    const b = await ask("t-2");
    faulty.heal();
    const metrics = await writer.close(Date.now() + 10_000);
    expect(metrics).toMatchObject({ failed: 2, retried: 2, lost: 0 });
    for (const { result } of [a, b]) expect((await store().getTrace(p, result.traceId))?.id).toBe(result.traceId);
  });

  it("logs every trace still queued when shutdown's time is up as lost, with its id, and counts it", async () => {
    const { faulty, writer, lines, p, ask } = await setup();
    faulty.fail();
    const { result } = await ask();
    const metrics = await writer.close(Date.now() + 50);
    expect(metrics.lost).toBe(1);
    const lost = lines.find((l) => l.msg === "trace not recorded before shutdown: lost");
    expect(lost).toMatchObject({ level: 50, traceId: result.traceId, trace: { id: result.traceId, renderedSha256: sha256(result.rendered) } });
    // User-safe fields only: no statement or query text in the log.
    expect(JSON.stringify(lost)).not.toContain("bees");
    faulty.heal();
    expect(await store().getTrace(p, result.traceId)).toBeNull();
  });

  it("a retry of a write that did land changes nothing (idempotent by trace id)", async () => {
    const { p, ask } = await setup();
    const { trace } = await ask();
    expect(await store().recordTrace(p, trace)).toBe(false);
    expect(await store().traces.recalledEvents(p, { all: true })).toHaveLength(1);
  });
});
