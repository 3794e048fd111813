import { Writable } from "node:stream";
import { pino } from "pino";
import type { Moment, Principal, RecallContext, SensitivityLevel } from "../../src/domain/model.js";
import { SENSITIVITY } from "../../src/domain/model.js";
import type { Logger } from "../../src/log/logger.js";
import { recall, type PipelineDeps, type RecallOutcome } from "../../src/recall/pipeline.js";
import { RETRIEVAL_POLICY } from "../../src/recall/policy.js";
import { requestedQuery, type RequestedQuery } from "../../src/recall/query-former.js";
import type { MemoryStore } from "../../src/store/memory-store.js";
import { TraceWriter, type TraceSink, type TraceWriterOptions } from "../../src/trace/trace-writer.js";

/** Runs the real pipeline against a real store, as the server does, for store-level tests. */

export type LogLine = Record<string, unknown> & { level: number; msg: string };

/** A pino logger whose lines are kept, parsed, for assertions. */
export function capturingLogger(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  return { logger: pino({ level: "info" }, stream), lines };
}

/** Queued traces wait for the test to flush them (runRecall does), so what a test sees never depends on a timer. */
export const WRITER_DEFAULTS: TraceWriterOptions = {
  timeoutMs: 5_000,
  queueMax: 100,
  retryIntervalMs: 60_000,
  maxAttempts: 3,
  flushDelayMs: 60_000,
  batchMax: 50,
};

/** A trace writer over a sink, or over a store's trace table. */
export function traceWriter(sink: TraceSink | MemoryStore, logger: Logger, options: Partial<TraceWriterOptions> = {}): TraceWriter {
  return new TraceWriter("recordBatch" in sink ? sink : sink.traces, { ...WRITER_DEFAULTS, ...options }, logger);
}

export function pipelineDeps(store: MemoryStore, traces: PipelineDeps["traces"], clock = () => new Date()): PipelineDeps {
  return { store, traces, policy: RETRIEVAL_POLICY, clock, traceRetentionHours: 24, heads: store };
}

/** What a caller sends; unset numbers are 0 and unset options undefined, as from a request. */
export function requested(overrides: Partial<RequestedQuery> = {}): RequestedQuery {
  return requestedQuery({ currentScope: "veetbot", ...overrides });
}

export interface RecallOptions {
  kind?: Moment | "search";
  sessionId?: string;
  turnId?: string;
  surfaceId?: string;
  ceiling?: SensitivityLevel;
}

/** One recall through the pipeline, drained; a trace writer's queue is then flushed, so the trace is in the store (or failed). */
export async function runRecall(deps: PipelineDeps, principal: Principal, query: RequestedQuery, o: RecallOptions = {}): Promise<RecallOutcome> {
  const kind = o.kind ?? "in_turn";
  const context: RecallContext = {
    moment: kind === "search" ? "in_turn" : kind,
    sessionType: "interactive",
    contextWindowTokens: 0,
    snapshotWatermark: null,
    sessionId: o.sessionId ?? "s-1",
    runId: "run-1",
    turnId: o.turnId ?? "",
    surface: { surfaceId: o.surfaceId ?? "cli", sensitivityCeiling: o.ceiling ?? SENSITIVITY.restricted },
  };
  const pipeline = recall(deps, { principal, query, context, kind, deadlineAt: Date.now() + 10_000, signal: new AbortController().signal });
  let step = await pipeline.next();
  while (!step.done) step = await pipeline.next();
  if (deps.traces instanceof TraceWriter) await deps.traces.flush();
  return step.value;
}
