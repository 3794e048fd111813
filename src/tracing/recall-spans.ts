import { SpanStatusCode, type Tracer } from "@opentelemetry/api";
import type { Principal, RecallTrace } from "../domain/model.js";
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

/** A span per trace write (first attempts, under the RPC's span, and retries, on their own). */
export function tracedTraceSink(sink: TraceSink, tracer: Tracer): TraceSink {
  return {
    recordTrace: (principal: Principal, trace: RecallTrace) =>
      tracer.startActiveSpan("recall.trace_write", { attributes: { "recall.trace_id": trace.id } }, async (span) => {
        try {
          return await sink.recordTrace(principal, trace);
        } catch (error) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: "trace write failed" });
          throw error;
        } finally {
          span.end();
        }
      }),
  };
}
