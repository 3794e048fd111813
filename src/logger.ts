import { pino, type Logger } from "pino";

export type { Logger };

/** JSON logs to stderr, so stdout stays free for CLI output; times in ISO 8601 (UTC). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "recall" }, timestamp: pino.stdTimeFunctions.isoTime }, pino.destination(2));
}
