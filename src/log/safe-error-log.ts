/**
 * How an error appears in a log line: its kind, code and message, never the
 * data it was about. Driver errors carry the statement's parameters (PGlite
 * attaches `params` and `query`; PostgreSQL's `detail` and `where` quote the
 * failing row or parameter), which hold belief, query and episode text; none
 * of that is copied. Ids and counts are logged by the callers, next to `err`.
 */

/** Fields of an error that hold names and codes, never values. */
const SAFE_FIELDS = [
  "code",
  "errno",
  "syscall",
  "address",
  "port",
  "severity",
  "routine",
  "schema_name",
  "table_name",
  "column_name",
  "constraint_name",
] as const;

export interface LoggedError {
  type: string;
  message: string;
  stack?: string;
  cause?: LoggedError;
  [field: string]: unknown;
}

export function safeErrorLog(error: unknown, depth = 0): LoggedError | unknown {
  if (!(error instanceof Error)) return typeof error === "object" && error !== null ? { type: "non-error" } : error;
  const driver = isDriverError(error);
  const message = driver ? withoutQuotedValue(error.message) : error.message;
  const logged: LoggedError = { type: error.name || error.constructor.name, message };
  for (const field of SAFE_FIELDS) {
    const value = (error as unknown as Record<string, unknown>)[field];
    if (typeof value === "string" || typeof value === "number") logged[field] = value;
  }
  // A stack starts with the message, so a driver error's starts with the redacted one.
  if (error.stack) logged.stack = driver ? error.stack.replace(/^.*$/m, `${logged.type}: ${message}`) : error.stack;
  if (error.cause !== undefined && depth < 3) logged.cause = safeErrorLog(error.cause, depth + 1) as LoggedError;
  return logged;
}

/** An error the database answered with (SQLSTATE), or one a driver decorated with the statement. */
function isDriverError(error: Error): boolean {
  const e = error as unknown as Record<string, unknown>;
  return (typeof e.code === "string" && /^[0-9A-Z]{5}$/.test(e.code)) || "params" in e || "parameters" in e || "query" in e;
}

/**
 * PostgreSQL puts the offending value last, quoted: `invalid input syntax for
 * type uuid: "…"`. Identifiers quoted mid-sentence (`relation "beliefs"`) stay.
 */
function withoutQuotedValue(message: string): string {
  return message.replace(/: ".*"$/s, ': "…"');
}
