import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import type { TraceSink } from "../trace/trace-writer.js";

/**
 * The trace writer's numbers, read through two small seams so the writer
 * itself stays free of metrics: its counters and backlog (any object with
 * `backlog` and `metrics`, read at scrape time), and its store side, timed by
 * wrapping the sink it writes batches through.
 */

/** What the writer shows: a backlog and named counters (written, failed, dropped, …, numbers only). */
export interface TraceWriterStats {
  readonly backlog: number;
  readonly metrics: object;
}

const counts = (writer: TraceWriterStats) => Object.entries(writer.metrics) as [string, number][];

/** Outcomes after which a trace will never be written. */
const GIVEN_UP = ["dropped", "lost", "quarantined"];

export function registerTraceWriterMetrics(registry: Registry, writer: TraceWriterStats): void {
  new Gauge({
    name: "recall_trace_writer_backlog",
    help: "Traces waiting to be written: queued for retry plus slow writes still running.",
    registers: [registry],
    collect() {
      this.set(writer.backlog);
    },
  });
  new Counter({
    name: "recall_trace_writes_total",
    help: "Trace writes by outcome: written, slow, failed (queued), retried, refused (queue full), dropped, lost, quarantined (spool).",
    labelNames: ["outcome"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, n] of counts(writer)) this.inc({ outcome }, n);
    },
  });
  new Counter({
    name: "recall_trace_writes_given_up_total",
    help: "Traces that will never be written (dropped after repeated failures, lost at shutdown, or quarantined from the outage spool).",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(counts(writer).reduce((sum, [outcome, n]) => sum + (GIVEN_UP.includes(outcome) ? n : 0), 0));
    },
  });
}

/** Times every batch write the trace writer makes (first attempts and retries) and counts the failed ones. */
export function timedTraceSink(sink: TraceSink, registry: Registry): TraceSink {
  const duration = new Histogram({
    name: "recall_trace_write_duration_seconds",
    help: "Duration of one trace batch write to the store (the writer's flush latency), by outcome (ok, error).",
    labelNames: ["outcome"],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return {
    async recordBatch(batch) {
      const end = duration.startTimer();
      try {
        const written = await sink.recordBatch(batch);
        end({ outcome: "ok" });
        return written;
      } catch (error) {
        end({ outcome: "error" });
        throw error;
      }
    },
  };
}
