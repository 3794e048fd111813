import { pino, type Logger } from "pino";

export type { Logger };

/** JSON logs to stderr, so stdout stays free for CLI output. */
export function createLogger(level: string): Logger {
  return pino({ level, base: { service: "recall" } }, pino.destination(2));
}
