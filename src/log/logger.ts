import { pino, type Logger } from "pino";
import { safeErrorLog } from "./safe-error-log.js";
import { RECALLED_EVENT } from "../domain/recalled-event.js";

export type { Logger };

/**
 * JSON logs to stderr, so stdout stays free for CLI output; times in ISO 8601 (UTC). Errors are logged without the data they were about.
 * Written asynchronously and in batches: a synchronous write of the per-call line blocked the event
 * loop on every call (about 1 ms a call when the reading end of stderr is slow to drain), and even an
 * asynchronous write per line handed each one to a worker thread (0.25 ms a call on average, 1 ms at
 * p95, on a busy 2-core machine). So the per-call lines (PER_CALL_LINES: "call", a recall's no-memory line,
 * and each recorded trace's memory.recalled event) are written once LOG_BATCH_BYTES have gathered, or after
 * LOG_FLUSH_MS at the latest; any other line (start-up, "listening", a warning, an error) is written
 * at once, with whatever call lines wait before it. pino flushes what is buffered
 * when the process exits, so only a hard kill or a power cut can lose call lines (at most
 * LOG_FLUSH_MS of them).
 */
export function createLogger(level: string): Logger {
  const destination = pino.destination({ dest: 2, sync: false, minLength: LOG_BATCH_BYTES });
  setInterval(() => destination.flush(), LOG_FLUSH_MS).unref();
  return pino(
    {
      level,
      base: { service: "recall" },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: safeErrorLog },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args);
          if (!PER_CALL_LINES.has(args[1])) destination.flush();
        },
      },
    },
    destination,
  );
}

/** The message of the per-call line (server/request-log.ts). */
export const CALL_LINE = "call";

/** The second line of a recall whose principal holds no memory (never written, or erased with nothing since). */
export const NO_MEMORY_LINE =
  "recall of a principal with no memory: nothing was ever written for this tenant and principal (or it was erased); check the ids the caller sends";

/** The lines written once per call, batched; any other is written at once. */
const PER_CALL_LINES: ReadonlySet<unknown> = new Set([CALL_LINE, NO_MEMORY_LINE, RECALLED_EVENT]);

const LOG_BATCH_BYTES = 4096;
const LOG_FLUSH_MS = 250;
