import { pino, type Logger } from "pino";
import { safeErrorLog } from "./safe-error-log.js";

export type { Logger };

/** JSON logs to stderr, so stdout stays free for CLI output; times in ISO 8601 (UTC). Errors are logged without the data they were about. */
export function createLogger(level: string): Logger {
  return pino(
    { level, base: { service: "recall" }, timestamp: pino.stdTimeFunctions.isoTime, serializers: { err: safeErrorLog } },
    pino.destination(2),
  );
}
