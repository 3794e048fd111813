/**
 * Typed domain errors. The server maps each to one gRPC status in one place
 * (server/errors.ts); anything else leaves as INTERNAL without its message.
 */

export class InvalidArgumentError extends Error {
  override readonly name = "InvalidArgumentError";
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

export class NotFoundError extends Error {
  override readonly name = "NotFoundError";
}

export class PermissionDeniedError extends Error {
  override readonly name = "PermissionDeniedError";
}

export class FailedPreconditionError extends Error {
  override readonly name = "FailedPreconditionError";
}

/** The store (or another dependency) cannot be reached right now; retrying later may work. */
export class UnavailableError extends Error {
  override readonly name = "UnavailableError";
}

/** Network and server-state failures of either store: the dependency is down, not the request wrong. */
const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "57P01", // admin_shutdown
  "57P02", // crash_shutdown
  "57P03", // cannot_connect_now
  "53300", // too_many_connections
  // A statement or lock wait cut off by the timeouts a transaction sets from its deadline.
  "57014", // query_canceled (statement_timeout)
  "55P03", // lock_not_available (lock_timeout)
  "25P03", // idle_in_transaction_session_timeout
]);

export function isUnavailable(error: unknown): boolean {
  if (error instanceof UnavailableError) return true;
  if (typeof error !== "object" || error === null) return false;
  const code = String((error as { code?: unknown }).code ?? "");
  if (UNAVAILABLE_CODES.has(code) || code.startsWith("08")) return true;
  const message = String((error as { message?: unknown }).message ?? "");
  return /PGlite is closed|write CONNECTION_CLOSED|Connection terminated/i.test(message);
}
