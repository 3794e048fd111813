import { SpanStatusCode, type Tracer } from "@opentelemetry/api";
import type { ArmObserver, RecallArm } from "../recall/arms/arm.js";
import type { TraceSink } from "../trace/trace-writer.js";

/** A child span per recall arm run: `recall.arm lexical`, with the moment and the candidates it returned. */
export function armSpans(tracer: Tracer): ArmObserver {
  return {
    wrap: (arm: RecallArm, moment: string): RecallArm => ({
      name: arm.name,
      run: (signal) =>
        tracer.startActiveSpan(`recall.arm ${arm.name}`, { attributes: { "recall.arm": arm.name, "recall.moment": moment } }, async (span) => {
          try {
            const candidates = await arm.run(signal);
            span.setAttribute("recall.arm.candidates", candidates.length);
            return candidates;
          } catch (error) {
            // Abandoned at the deadline (aborted) or failed: the arm is degraded.
            span.setStatus({ code: SpanStatusCode.ERROR, message: signal.aborted ? "abandoned at the deadline" : "arm failed" });
            throw error;
          } finally {
            span.end();
          }
        }),
    }),
    outcome: () => {},
  };
}

/**
 * A span per trace batch write (`recall.trace_write`, with the recall trace ids it holds). Batches are
 * written after the recalls answered, from the writer's queue, so the span is a trace of its own; the
 * ids join it to the recalls' server spans (whose logs carry the same trace ids).
 */
export function tracedTraceSink(sink: TraceSink, tracer: Tracer): TraceSink {
  return {
    recordBatch: (batch) =>
      tracer.startActiveSpan(
        "recall.trace_write",
        { attributes: { "recall.trace_count": batch.length, "recall.trace_ids": batch.map((q) => q.trace.id) } },
        async (span) => {
          try {
            return await sink.recordBatch(batch);
          } catch (error) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: "trace write failed" });
            throw error;
          } finally {
            span.end();
          }
        },
      ),
  };
}
