import { UnavailableError } from "../domain/errors.js";
import type { TraceSink } from "./trace-writer.js";

/**
 * Testing and drills only (RECALL_FAULT_TRACE_WRITE_FAILURES): the first
 * `failures` trace writes (batches) fail as if the store had gone away, so the retry
 * path can be exercised end to end over real gRPC.
 */
export function failingFirstWrites(sink: TraceSink, failures: number): TraceSink {
  let left = failures;
  return {
    recordBatch(batch) {
      if (left > 0) {
        left -= 1;
        return Promise.reject(new UnavailableError("fault injection: trace write failed"));
      }
      return sink.recordBatch(batch);
    },
  };
}
