import { pino, type Logger } from "pino";
import { safeErrorLog } from "./safe-error-log.js";

export type { Logger };

/** JSON logs to stderr, so stdout stays free for CLI output. Errors are logged without the data they were about. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "recall" }, serializers: { err: safeErrorLog } }, pino.destination(2));
}
