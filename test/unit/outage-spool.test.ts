import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UnavailableError } from "../../src/domain/errors.js";
import type { Principal } from "../../src/domain/model.js";
import { StoreTimeoutError } from "../../src/store/store-deadline.js";
import { OutageSpool, type ReplaySink } from "../../src/trace/outage-spool.js";
import type { SpooledRecord } from "../../src/trace/spool-record.js";
import { QUARANTINE_FILE, TraceSpool } from "../../src/trace/trace-spool.js";
import { TraceWriter, type TraceSink } from "../../src/trace/trace-writer.js";
import { capturingLogger, WRITER_DEFAULTS } from "../support/pipeline.js";
import { recallTrace } from "../store/store-helpers.js";

/**
 * Issue 44, item 2: the outage spool never stalls. Reads wait only for the
 * traces the spool holds (another principal's GetTrace or erase goes on);
 * a trace the store keeps refusing goes to quarantine and the replay goes
 * on behind it; a batch too big to write goes in halves.
 */

const A: Principal = { tenantId: "t", principalId: "a" };
const B: Principal = { tenantId: "t", principalId: "b" };
const down = () => Object.assign(new Error("connection refused"), { code: "ECONNREFUSED" });

async function eventually(ok: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(ok(), what).toBe(true);
}

describe("the outage spool", () => {
  let dir: string;
  let writer: TraceWriter | undefined;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "recall-outage-unit-"));
  });
  afterEach(async () => {
    await writer?.close(Date.now() + 1000);
    writer = undefined;
    await rm(dir, { recursive: true, force: true });
  });

  /** A writer whose store is down (every batch fails as an outage) and a replay through `replay`. */
  async function writerWithSpool(replay: ReplaySink) {
    const { logger, lines } = capturingLogger();
    const outage = new OutageSpool(await TraceSpool.open(dir, 16 * 1024 * 1024), replay, { retryIntervalMs: 10, batchMax: 8, writeTimeoutMs: 1000 }, logger);
    const sink: TraceSink = { recordBatch: () => Promise.reject(down()) };
    writer = new TraceWriter(sink, { ...WRITER_DEFAULTS, flushDelayMs: 0 }, logger, undefined, outage);
    return { writer, outage, lines };
  }

  it("makes only the principal whose traces it holds wait (GetTrace, citations, erase)", async () => {
    let storeUp = false;
    const replayed: string[] = [];
    const { writer } = await writerWithSpool(async (batch) => {
      if (!storeUp) throw down();
      replayed.push(...batch.map((b) => b.trace.id));
    });
    const t = recallTrace({ turnId: "turn-a" });
    await writer.record(A, t);
    await writer.flush(); // the store is down: the trace goes to the spool
    await writer.record(A, recallTrace()); // and every trace after it, on disk before the reply
    const soon = () => Date.now() + 100;
    // Another principal has nothing in the spool: its reads and its erase go on at once.
    await expect(writer.settle(B, () => true, soon())).resolves.toBeUndefined();
    await expect(writer.forgetPrincipal(B)).resolves.toBe(0);
    // This principal, for a trace that is not in the spool either.
    await expect(writer.settle(A, (k) => k.id === "not-spooled", soon())).resolves.toBeUndefined();
    // Its own spooled trace is waited for, within the deadline, then UNAVAILABLE.
    await expect(writer.settle(A, (k) => k.id === t.id, soon())).rejects.toBeInstanceOf(UnavailableError);
    await expect(writer.settle(A, (k) => k.turnId === "turn-a", soon())).rejects.toBeInstanceOf(UnavailableError);
    await expect(writer.forgetPrincipal(A)).rejects.toBeInstanceOf(UnavailableError);
    // Once replayed it is in the store: the wait ends.
    const waiting = writer.settle(A, (k) => k.id === t.id, Date.now() + 5000);
    storeUp = true;
    await waiting;
    expect(replayed).toContain(t.id);
  });

  it("quarantines a trace the store keeps refusing, and replays the ones behind it", async () => {
    const replayed: string[] = [];
    const poison = recallTrace();
    const { writer, outage, lines } = await writerWithSpool(async (batch) => {
      if (batch.some((b) => b.trace.id === poison.id)) throw new Error('invalid input syntax for type uuid: "x"');
      replayed.push(...batch.map((b) => b.trace.id));
    });
    const before = recallTrace();
    const after = Array.from({ length: 5 }, () => recallTrace());
    for (const t of [before, poison, ...after]) await writer.record(A, t);
    await writer.flush();
    await eventually(() => !outage.active, "the spool drains");
    expect(replayed).toEqual([before, ...after].map((t) => t.id));
    expect(writer.metrics.quarantined).toBe(1);
    expect(writer.metrics.replayed).toBe(6);
    expect(await readFile(join(dir, QUARANTINE_FILE), "utf8")).toContain(poison.id);
    expect(lines.find((l) => l.msg === "trace spool record cannot be replayed; moved to the quarantine file")).toMatchObject({ traceId: poison.id });
  });

  it("writes a batch too big for the store in halves", async () => {
    const sizes: number[] = [];
    const { writer, outage } = await writerWithSpool(async (batch: readonly SpooledRecord[]) => {
      sizes.push(batch.length);
      if (batch.length > 2) throw new StoreTimeoutError();
    });
    for (let i = 0; i < 8; i++) await writer.record(A, recallTrace());
    await writer.flush();
    await eventually(() => !outage.active, "the spool drains");
    expect(writer.metrics.replayed).toBe(8);
    expect(writer.metrics.quarantined).toBe(0);
    expect(sizes.slice(0, 3)).toEqual([8, 4, 2]);
  });
});
