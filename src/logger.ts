import { pino, type Logger } from "pino";
import { safeErrorLog } from "./safe-error-log.js";

export type { Logger };

/**
 * JSON logs to stderr, so stdout stays free for CLI output; times in ISO 8601 (UTC). Errors are logged without the data they were about.
 * Written asynchronously: a synchronous write of the per-call line blocked the event loop on every
 * call (about 1 ms a call when the reading end of stderr is slow to drain). pino flushes what is
 * buffered when the process exits, so only a hard kill or a power cut can lose the last lines.
 */
export function createLogger(level: string): Logger {
  return pino(
    { level, base: { service: "recall" }, timestamp: pino.stdTimeFunctions.isoTime, serializers: { err: safeErrorLog } },
    pino.destination({ dest: 2, sync: false }),
  );
}
